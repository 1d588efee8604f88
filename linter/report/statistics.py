"""``--statistics``: how many findings each rule produced, like ruff's.

Text: one line per rule, most frequent first::

    12  MLC102  [ ] missing-cost-labels
     3  MLC301  [*] no-checkpoint-cleanup

``[*]`` marks rules whose findings here `--fix` can fix. JSON: a list of
``{"code", "name", "level", "count", "fixable"}``.
"""

from __future__ import annotations

import json
from collections import Counter

from mlcost_lint.report import ReportInput


def _rows(data: ReportInput) -> list[dict]:
    names = {r.code: r for r in data.rules}
    counts = Counter(f.code for f in data.findings)
    fixable = Counter(f.code for f in data.findings if id(f) in data.fixable)
    levels = {f.code: f.level.value for f in data.findings}
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = names.get(code)
        rows.append({"code": code, "name": rule.name if rule else "", "level": levels[code],
                     "count": count, "fixable": fixable.get(code, 0) > 0})
    return rows


def render_text(data: ReportInput) -> str:
    rows = _rows(data)
    if not rows:
        return ""
    width = len(str(rows[0]["count"]))
    code_width = max(len(r["code"]) for r in rows)
    any_fix = any(r["fixable"] for r in rows)
    lines = []
    for r in rows:
        marker = ("[*] " if r["fixable"] else "[ ] ") if any_fix else ""
        lines.append(f"{r['count']:>{width}}  {r['code']:<{code_width}}  {marker}{r['name']}")
    return "\n".join(lines) + "\n"


def render_json(data: ReportInput) -> str:
    return json.dumps(_rows(data), indent=2) + "\n"
