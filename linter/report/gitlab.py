"""GitLab Code Quality (``artifacts: reports: codequality``): a JSON array
of issues in the subset of the Code Climate format GitLab reads.

    [{"type": "issue", "check_name": "MLC102", "description": "...",
      "content": {"body": "<rule summary> Fix: ..."}, "categories": ["Performance"],
      "severity": "critical" | "major" | "minor",
      "fingerprint": "<32 hex>", "location": {"path": "...", "lines": {"begin": 3}}}]

``fingerprint`` is the finding's stable fingerprint (rule, path and the
object's logical address, never the line: the same as JSON and SARIF), so
GitLab's merge-request widget tracks an issue across edits that move lines
and shows only new and fixed ones.
"""

from __future__ import annotations

import json

from mlcost_lint.report import ReportInput, fingerprints

# GitLab: info, minor, major, critical, blocker. An error blocks a merge in
# CI already (exit 1); "critical" puts it at the top of the widget.
_SEVERITY = {"error": "critical", "warning": "major", "note": "minor"}


def render(data: ReportInput) -> str:
    by_code = {r.code: r for r in data.rules}
    issues = []
    for f, fp in zip(data.findings, fingerprints(data.findings)):
        rule = by_code.get(f.code)
        body = rule.summary if rule else ""
        if rule is not None and rule.fix:
            body = f"{body.rstrip('.')}. Fix: {rule.fix}" if body else f"Fix: {rule.fix}"
        issue = {
            "type": "issue",
            "check_name": f.code if rule is None else f"{f.code} {rule.name}",
            "description": f.message,
            "content": {"body": body},
            # Code Climate's categories; cost waste is closest to "Performance".
            "categories": ["Performance"],
            "severity": _SEVERITY[f.level.value],
            "fingerprint": fp,
            "location": {"path": f.location.path, "lines": {"begin": f.location.line}},
        }
        if f.location.end_line and f.location.end_line >= f.location.line:
            issue["location"]["lines"]["end"] = f.location.end_line
        issues.append(issue)
    return json.dumps(issues, indent=2) + "\n"
