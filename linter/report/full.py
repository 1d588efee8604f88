"""The ``full`` format: findings grouped by file, each with the offending
line, a caret under the flagged token, the rule name, the one-line fix hint
and the other end of any link. Like ruff's ``full`` output, for terminals.

    k8s/train.yaml
      14:7  warning  MLC102 missing-cost-labels
      PyTorchJob llama-sft pod template Worker lacks cost labels ...
         |
      14 |       labels: {team: research}
         |       ^^^^^^
         = fix: Add the missing keys to the pod template's metadata.labels.
         = related: configs/sft.yaml:3:1: training config launched here

Source lines are read again only for files that have findings.
"""

from __future__ import annotations

import re
from itertools import groupby
from typing import Callable

from mlcost_lint.report import ReportInput
from mlcost_lint.pricing import with_cost
from mlcost_lint.report.text import BOLD, COLORS, DIM, RESET, cost_lines, summary_line

# The token a caret run covers: up to the next space or YAML/HCL punctuation.
_TOKEN = re.compile(r"[^\s:,=\[\]{}()]+")
_TAB = 4


class _Paint:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not text:
            return text
        return "".join(styles) + text + RESET


def _expand(line: str, column: int) -> tuple[str, int]:
    """Tabs to spaces, and the 0-based display column of 1-based ``column``."""
    prefix = line[: max(column - 1, 0)].expandtabs(_TAB)
    return line.expandtabs(_TAB), len(prefix)


def _caret(line: str, column: int, clean: Callable[[str], str]) -> tuple[str, int, int]:
    """The line as shown (tabs expanded, secrets hidden, control characters
    escaped) and where the caret run starts and how wide it is. The whole
    line is cleaned (a key name before the column decides whether the value
    after it is hidden); the caret goes where the cleaned text before the
    column ends."""
    cut = max(column - 1, 0)
    head = clean(line[:cut])
    whole = clean(line)
    shown, start = _expand(whole, len(head) + 1)
    start = min(start, len(shown))
    match = _TOKEN.match(shown, start)
    width = max(len(match.group(0)) if match else 1, 1)
    return shown, start, width


def render(data: ReportInput) -> str:
    from mlcost_lint.redact import text_cleaner

    # Source lines are hidden like messages; tabs are expanded for display,
    # not escaped like other controls.
    clean = text_cleaner(data.secrets, keep_tabs=True)

    paint = _Paint(data.color)
    names = {r.code: r for r in data.rules}
    counts = {"error": 0, "warning": 0, "note": 0}
    out: list[str] = []
    for path, group in groupby(data.findings, key=lambda f: f.location.path):
        items = list(group)
        source = data.read_source(path)
        out.append(paint(path, BOLD))
        for f in items:
            level = f.level.value
            counts[level] += 1
            rule = names.get(f.code)
            where = f"{f.location.line}:{f.location.column}"
            marker = " [*]" if id(f) in data.fixable else ""
            head = (f"  {paint(where, DIM)}  {paint(level, COLORS[level])}  "
                    f"{paint(f.code, BOLD)} {rule.name if rule else ''}{marker}").rstrip()
            out.append(head)
            out.append(f"  {with_cost(f)}")
            gutter = len(str(f.location.line))
            pad = " " * (gutter + 3)
            if source is not None and 1 <= f.location.line <= len(source):
                shown, start, width = _caret(source[f.location.line - 1], f.location.column, clean)
                bar = paint("|", DIM)
                out.append(f"{pad}{bar}")
                out.append(f"  {paint(str(f.location.line), DIM)} {bar} {shown.rstrip()}")
                out.append(f"{pad}{bar} {' ' * start}{paint('^' * width, COLORS[level])}")
            if rule is not None and rule.fix:
                out.append(f"{pad}= {paint('fix', BOLD)}: {rule.fix}")
            for r in f.related:
                text = f": {r.message}" if r.message else ""
                out.append(f"{pad}= related: {r.location}{text}")
            if f.cost is not None:
                out.append(f"{pad}= {paint('cost', BOLD)}: {f.cost.basis}")
            out.append("")
    if data.quiet:   # -q: the findings only
        while out and out[-1] == "":
            out.pop()
        return "\n".join(out) + ("\n" if out else "")
    out.append(summary_line(counts, data.files_scanned))
    out.extend(cost_lines(data))
    out.extend(data.notices)
    if data.fixable:
        n = len(data.fixable)
        out.append(f"[*] {n} fixable with the `--fix` option.")
    return "\n".join(out) + "\n"
