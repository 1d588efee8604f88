"""The JSON format (stable, documented in the README):

    {"tool": {"name": "mlcost-lint", "version": "..."},
     "findings": [{"code", "name", "level", "confidence", "category", "message",
                   "path", "line", "column", "end_line", "address", "fingerprint",
                   "related": [{"path", "line", "column", "message"}],
                   "cost": {"amount_usd", "period", "run_ceiling_usd"?, "basis", "price_date",
                            "at_least"}?}],                # accelerator findings only
     "summary": {"error": n, "warning": n, "note": n, "files": n},
     "cost": {"always_on_usd_per_month", ..., "prices": {"date", "source", ...}},
     "errors": [{"code", "message", "path"}]}     # internal errors (exit 2)
"""

from __future__ import annotations

import json

from mlcost_lint import __version__
from mlcost_lint.pricing import totals
from mlcost_lint.report import ReportInput, fingerprints


def render(data: ReportInput) -> str:
    by_code = {r.code: r for r in data.rules}
    counts = {"error": 0, "warning": 0, "note": 0}
    items = []
    for f, fp in zip(data.findings, fingerprints(data.findings)):
        rule = by_code.get(f.code)
        counts[f.level.value] += 1
        items.append({
            "code": f.code,
            "name": rule.name if rule else None,
            "level": f.level.value,
            "confidence": rule.confidence.value if rule else None,
            "category": rule.category.value if rule else None,
            "message": f.message,     # the cost is in "cost", not repeated here
            "path": f.location.path,
            "line": f.location.line,
            "column": f.location.column,
            "end_line": f.location.end_line,
            "address": f.address,
            "fingerprint": fp,
            "related": [{"path": r.location.path, "line": r.location.line,
                         "column": r.location.column, "message": r.message} for r in f.related],
        })
        if f.cost is not None:
            items[-1]["cost"] = f.cost.as_dict()
    doc = {
        "tool": {"name": "mlcost-lint", "version": __version__},
        "findings": items,
        "summary": {**counts, "files": data.files_scanned},
        "cost": {**totals(data.findings).as_dict(), "prices": dict(data.price_info)},
        "errors": [{"code": e.code, "message": e.message, "path": e.path} for e in data.errors],
    }
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"
