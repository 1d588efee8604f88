"""GitHub Actions workflow commands: one ``::warning file=...`` annotation each."""

from __future__ import annotations

from mlcost_lint.report import ReportInput

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
        lines.append(f"::{_COMMAND[f.level.value]} {props}::{_data(f.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
