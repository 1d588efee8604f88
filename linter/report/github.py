"""GitHub Actions workflow commands: one ``::warning file=...`` annotation
each; and the Markdown job summary (top findings by cost, the totals) that
the CLI writes to ``$GITHUB_STEP_SUMMARY`` when it is set."""

from __future__ import annotations

from mlcost_lint.pricing import totals, with_cost
from mlcost_lint.report import ReportInput

TOP = 10

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(data: ReportInput) -> str:
    names = {r.code: r.name for r in data.rules}
    lines = []
    for f in data.findings:
        title = f"{f.code} {names.get(f.code, '')}".strip()
        props = (f"file={_prop(f.location.path)},line={f.location.line},"
                 f"col={f.location.column},title={_prop(title)}")
        lines.append(f"::{_COMMAND[f.level.value]} {props}::{_data(with_cost(f))}")
    return "\n".join(lines) + ("\n" if lines else "")


def _cell(text: str) -> str:
    from mlcost_lint.secrets import escape_controls

    return escape_controls(text).replace("|", "\\|").replace("\n", " ")


def step_summary(data: ReportInput) -> str:
    """Markdown for the job summary: the totals, and the top findings by cost."""
    t = totals(data.findings)
    n = len(data.findings)
    out = ["## mlcost-lint", "", f"{n} finding{'s' if n != 1 else ''} in {data.files_scanned} "
           f"file{'s' if data.files_scanned != 1 else ''}."]
    if t.any:
        out += ["", t.text()]
    out += ["", *data.price_notices] if data.price_notices else []
    priced = sorted((f for f in data.findings if f.cost is not None and f.cost.known),
                    key=lambda f: (-f.cost.monthly(), f.sort_key()))
    if priced:
        out += ["", "### Top findings by cost", "", "| cost | rule | where | finding |", "|---|---|---|---|"]
        for f in priced[:TOP]:
            where = f"{f.location.path}:{f.location.line}"
            out.append(f"| {_cell(f.cost.short())} | {f.code} | `{_cell(where)}` | {_cell(f.message)} |")
        if len(priced) > TOP:
            out.append("")
            out.append(f"{len(priced) - TOP} more priced finding{'s' if len(priced) - TOP != 1 else ''} not shown.")
    return "\n".join(out) + "\n"
