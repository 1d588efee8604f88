"""GitHub Actions workflow commands (``::error file=...``), within what
GitHub shows, and the full list as Markdown for ``$GITHUB_STEP_SUMMARY``.

GitHub displays at most 10 annotations of each level (error, warning,
notice) per step and 50 per job; the rest are dropped without a word. So
the annotations are ordered (errors first, then warnings, then notes, and
by cost within a level: :func:`order` is the one place), at most
:data:`PER_LEVEL` of each level are written, and one plain log line says how
many more there are and where to see them. :func:`step_summary` renders
the cost totals, the top findings by cost, and every finding as a Markdown
table whose columns are :data:`COLUMNS`.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from mlcost_lint.pricing import totals, with_cost

from mlcost_lint.report import ReportInput
from mlcost_lint.rule import Finding

TOP = 10

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}
_RANK = {"error": 0, "warning": 1, "note": 2}
PER_LEVEL = 10          # GitHub: 10 errors + 10 warnings + 10 notices per step


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def order(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then notes; within a level, highest cost
    first (an hourly figure counts as 730 hours), then the report order."""
    return sorted(findings, key=lambda f: (_RANK[f.level.value],
                                           -(f.cost.monthly() if f.cost is not None else -2.0)))


def render(data: ReportInput) -> str:
    names = {r.code: r.name for r in data.rules}
    lines = []
    shown: Counter[str] = Counter()
    for f in order(data.findings):
        level = f.level.value
        if shown[level] >= PER_LEVEL:
            continue
        shown[level] += 1
        title = f"{f.code} {names.get(f.code, '')}".strip()
        props = (f"file={_prop(f.location.path)},line={f.location.line},"
                 f"col={f.location.column},title={_prop(title)}")
        lines.append(f"::{_COMMAND[level]} {props}::{_data(with_cost(f))}")
    hidden = len(data.findings) - sum(shown.values())
    if hidden:
        lines.append(f"mlcost-lint: {hidden} more finding{'s' if hidden != 1 else ''} not annotated (GitHub shows "
                     f"{PER_LEVEL} per level and step): every finding is in the job summary "
                     "($GITHUB_STEP_SUMMARY) and in --format sarif")
    return "\n".join(lines) + ("\n" if lines else "")


def _md(text: str) -> str:
    from mlcost_lint.redact import escape_controls

    return escape_controls(text).replace("|", "\\|").replace("\n", " ").replace("\r", " ")


# (header, cell) per column of the step summary table.
COLUMNS: list[tuple[str, Callable[[Finding, dict[str, str]], str]]] = [
    ("level", lambda f, names: f.level.value),
    ("rule", lambda f, names: f"{f.code} {names.get(f.code, '')}".strip()),
    ("where", lambda f, names: f"`{f.location.path}:{f.location.line}`"),
    ("finding", lambda f, names: f.message),
    ("cost", lambda f, names: f.cost.short() if f.cost is not None else ""),
]


def step_summary(data: ReportInput) -> str:
    """Every finding as Markdown (errors first), for the job summary page."""
    names = {r.code: r.name for r in data.rules}
    counts = Counter(f.level.value for f in data.findings)
    files = data.files_scanned
    if not data.findings:
        return f"### mlcost-lint\n\nNo findings in {files} file{'s' if files != 1 else ''}.\n"
    parts = ", ".join(f"{counts[lv]} {lv}{'s' if counts[lv] != 1 else ''}"
                      for lv in ("error", "warning", "note") if counts[lv])
    out = [f"### mlcost-lint: {len(data.findings)} finding{'s' if len(data.findings) != 1 else ''} ({parts}) "
           f"in {files} file{'s' if files != 1 else ''}"]
    t = totals(data.findings)
    if t.any:
        out += ["", t.text()]
    out += ["", *data.price_notices] if data.price_notices else []
    priced = sorted((f for f in data.findings if f.cost is not None and f.cost.known),
                    key=lambda f: (-f.cost.monthly(), f.sort_key()))
    if priced:
        out += ["", "#### Top findings by cost", "", "| cost | rule | where | finding |", "|---|---|---|---|"]
        for f in priced[:TOP]:
            out.append(f"| {_md(f.cost.short())} | {f.code} | `{_md(f.location.path)}:{f.location.line}` "
                       f"| {_md(f.message)} |")
        if len(priced) > TOP:
            out += ["", f"{len(priced) - TOP} more priced finding{'s' if len(priced) - TOP != 1 else ''} "
                        "in the table below."]
    out += ["", "#### All findings", "",
           "| " + " | ".join(h for h, _ in COLUMNS) + " |",
           "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for f in order(data.findings):
        out.append("| " + " | ".join(_md(cell(f, names)) for _, cell in COLUMNS) + " |")
    return "\n".join(out) + "\n"
