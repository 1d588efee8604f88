"""``--statistics``: how many findings each rule produced, like ruff's.

Text: one line per rule, most frequent first::

    12  MLC102  [ ] missing-cost-labels
     3  MLC301  [*] no-checkpoint-cleanup

``[*]`` marks rules whose findings here `--fix` can fix. When findings are
priced, a cost column totals each rule (always-on per month, held while
running per hour) and a last line totals the run. JSON: a list of
``{"code", "name", "level", "count", "fixable", "cost"?}``.
"""

from __future__ import annotations

import json
from collections import Counter

from mlcost_lint.pricing import Totals, totals
from mlcost_lint.report import ReportInput


def _cost_text(t: Totals) -> str:
    parts = []
    if t.month_findings:
        parts.append(f"{'at least ' if t.month_at_least else ''}~${t.month:,.0f}/month")
    if t.hour_findings:
        parts.append(f"{'at least ' if t.hour_at_least else ''}~${t.hour:,.2f}/hour")
    if t.unknown and not parts:
        parts.append("price unknown")
    return " + ".join(parts)


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
        priced = totals(f for f in data.findings if f.code == code)
        if priced.any or priced.unknown:
            rows[-1]["cost"] = priced.as_dict()
    return rows


def render_text(data: ReportInput) -> str:
    rows = _rows(data)
    if not rows:
        return ""
    width = len(str(rows[0]["count"]))
    code_width = max(len(r["code"]) for r in rows)
    any_fix = any(r["fixable"] for r in rows)
    all_costs = totals(data.findings)
    costs = {r["code"]: _cost_text(totals(f for f in data.findings if f.code == r["code"])) for r in rows} \
        if all_costs.any else {}
    name_width = max(len(r["name"]) for r in rows)
    lines = []
    for r in rows:
        marker = ("[*] " if r["fixable"] else "[ ] ") if any_fix else ""
        line = f"{r['count']:>{width}}  {r['code']:<{code_width}}  {marker}{r['name']}"
        if costs.get(r["code"]):
            line = f"{line:<{width + code_width + len(marker) + name_width + 4}}  {costs[r['code']]}"
        lines.append(line.rstrip())
    if costs:
        lines.append(f"{sum(r['count'] for r in rows):>{width}}  total  {_cost_text(all_costs)}")
    return "\n".join(lines) + "\n"


def render_json(data: ReportInput) -> str:
    return json.dumps(_rows(data), indent=2) + "\n"
