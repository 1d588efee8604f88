"""Suppression comments: ``# mlcost-lint: ignore[MLC101,MLC3] reason`` (or
``//``, or an HCL block comment ``/* mlcost-lint: ignore[MLC101] reason */``
opened on the line of the directive).

Read from the raw text at parse time (cheap, cached with the parse result):
the parsers drop comments, and JSON has none.
"""

from __future__ import annotations

import re

from mlcost_lint.parse.document import Suppression

_DIRECTIVE = re.compile(
    r"(?P<open>#|//|/\*)\s*mlcost-lint:\s*(?P<kind>ignore-file|ignore)\b"
    r"(?:\[(?P<codes>[^\]]*)\])?(?P<reason>.*)$"
)
_COMMENT_ONLY = re.compile(r"^\s*(?:#|//|/\*)")


def scan(text: str) -> tuple[list[Suppression], frozenset[int]]:
    """Suppressions and the set of comment-only line numbers (1-based).
    Only suppression reads those lines, to find a directive above a
    finding: a file with no directive has none to give (most files; the
    line walk was 4% of parsing the real corpus's files, profiled)."""
    suppressions: list[Suppression] = []
    comment_lines: set[int] = set()
    if "mlcost-lint" not in text:
        return suppressions, frozenset()
    for number, line in enumerate(text.splitlines(), start=1):
        comment_only = bool(_COMMENT_ONLY.match(line))
        if comment_only and line.lstrip().startswith("/*"):
            close = line.find("*/")
            # `/* ... */ resource "x" "y" {` is a code line with a comment in front.
            comment_only = close < 0 or not line[close + 2:].strip()
        if comment_only:
            comment_lines.add(number)
        if "mlcost-lint" not in line:
            continue
        m = _DIRECTIVE.search(line)
        if not m:
            continue
        reason = m.group("reason")
        if m.group("open") == "/*":
            end = reason.find("*/")
            if end >= 0:
                reason = reason[:end]
        codes = tuple(c.strip().upper() if c.strip().upper().startswith("MLC") else c.strip()
                      for c in (m.group("codes") or "").split(",") if c.strip())
        suppressions.append(Suppression(
            line=number,
            codes=codes,
            whole_file=m.group("kind") == "ignore-file",
            comment_only_line=comment_only,
            reason=reason.strip(" -:—"),
            column=m.start() + 1,
        ))
    return suppressions, frozenset(comment_lines)
