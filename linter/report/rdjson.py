"""reviewdog's Diagnostic Format, one JSON document (``reviewdog -f=rdjson``).

    {"source": {"name": "mlcost-lint", "url": ...},
     "diagnostics": [{"message", "location": {"path", "range": {"start": {"line", "column"}}},
                      "severity": "ERROR" | "WARNING" | "INFO",
                      "code": {"value": "MLC301", "url": <rule docs>},
                      "suggestions": [{"range": {"start", "end"}, "text"}],   # where --fix has one
                      "related_locations": [{"message", "location"}]}]}

A suggestion is the ``--fix`` edit as replaced lines: the range covers whole
lines (end exclusive, at column 1 of the line after) and ``text`` is the new
lines, so reviewdog can offer it as a suggested change on the pull request.
"""

from __future__ import annotations

import difflib
import json

from mlcost_lint.report import ReportInput
from mlcost_lint import DOCS_URL
from mlcost_lint.report.sarif import help_uri

_SEVERITY = {"error": "ERROR", "warning": "WARNING", "note": "INFO"}


def _position(line: int, column: int) -> dict:
    return {"line": line, "column": column}


def suggestions(fix: object, read_source) -> list[dict]:
    """The fix's edits as line replacements, or [] when it cannot be computed."""
    from mlcost_lint.fix import rewrite

    edits = list(getattr(fix, "edits", ()))
    if not edits or len({e.path for e in edits}) != 1:
        return []
    lines = read_source(edits[0].path)
    if lines is None:
        return []
    old = "\n".join(lines) + "\n"
    new, _why = rewrite(old, edits)
    if new is None or new == old:
        return []
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out.append({"range": {"start": _position(i1 + 1, 1), "end": _position(i2 + 1, 1)},
                    "text": "".join(new_lines[j1:j2])})
    return out


def render(data: ReportInput) -> str:
    by_code = {r.code: r for r in data.rules}
    diagnostics = []
    for f in data.findings:
        loc = f.location
        start = _position(loc.line, loc.column)
        item: dict = {
            "message": f.message,
            "location": {"path": loc.path, "range": {"start": start}},
            "severity": _SEVERITY[f.level.value],
            "code": {"value": f.code},
        }
        rule = by_code.get(f.code)
        if rule is not None:
            item["code"]["url"] = help_uri(rule)
        fix = data.fixes.get(id(f))
        if fix is not None:
            found = suggestions(fix, data.read_source)
            if found:
                item["suggestions"] = found
        if f.related:
            item["related_locations"] = [
                {"message": r.message, "location": {"path": r.location.path,
                                                    "range": {"start": _position(r.location.line, r.location.column)}}}
                for r in f.related]
        diagnostics.append(item)
    doc = {"source": {"name": "mlcost-lint", "url": DOCS_URL.split("/blob/")[0]}, "diagnostics": diagnostics}
    return json.dumps(doc, indent=2) + "\n"
