"""The suppress stage: comments, per-file ignores and baselines remove findings.

A ``# mlcost-lint: ignore[CODES]`` comment applies to a finding when it is on
the finding's line, on the comment lines directly above it, or directly above
the first line of the block / mapping the finding flags. ``ignore-file``
applies anywhere in its file. Codes may be codes, prefixes or rule names; an
empty list means every rule.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from mlcost_lint.engine import all_rules, matches
from mlcost_lint.parse.document import ParsedFile, Suppression
from mlcost_lint.rule import Finding


@dataclass(slots=True)
class SuppressionResult:
    kept: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    # (path, suppression) pairs that removed at least one finding (for unused-suppression reports).
    used: set[tuple[str, int]] = field(default_factory=set)


def _covers(suppression: Suppression, code: str) -> bool:
    if not suppression.codes:
        return True
    rule = next((r for r in all_rules() if r.code == code), None)
    for selector in suppression.codes:
        if rule is not None and matches(selector, rule):
            return True
        if rule is None and code.startswith(selector.upper()):
            return True
    return False


def _lines_above(line: int, comment_lines: frozenset[int]) -> list[int]:
    """The run of comment-only lines directly above ``line``."""
    out = []
    current = line - 1
    while current >= 1 and current in comment_lines:
        out.append(current)
        current -= 1
    return out


def _applicable(finding: Finding, pf: ParsedFile) -> list[Suppression]:
    lines = {finding.location.line}
    lines.update(_lines_above(finding.location.line, pf.comment_lines))
    if finding.object_line is not None:
        lines.add(finding.object_line)
        lines.update(_lines_above(finding.object_line, pf.comment_lines))
    out = []
    for s in pf.suppressions:
        if s.whole_file:
            out.append(s)
        elif s.line in lines and (s.line == finding.location.line or s.line == finding.object_line
                                  or s.comment_only_line):
            out.append(s)
    return out


def per_file_ignored(finding: Finding, per_file_ignores: dict[str, list[str]], root: Path) -> bool:
    if not per_file_ignores:
        return False
    path = finding.location.path
    candidates = {path, path.rsplit("/", 1)[-1]}
    try:
        candidates.add(Path(path).resolve().relative_to(root.resolve()).as_posix())
    except (ValueError, OSError):
        pass
    rule = next((r for r in all_rules() if r.code == finding.code), None)
    for pattern, selectors in per_file_ignores.items():
        if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
            if any((rule is not None and matches(s, rule)) or finding.code.startswith(s.upper())
                   for s in selectors):
                return True
    return False


def apply_suppressions(findings: list[Finding], files: dict[str, ParsedFile],
                       per_file_ignores: dict[str, list[str]], root: Path) -> SuppressionResult:
    result = SuppressionResult()
    for finding in findings:
        pf = files.get(finding.location.path)
        hit = None
        if pf is not None and pf.suppressions:
            hit = next((s for s in _applicable(finding, pf) if _covers(s, finding.code)), None)
        if hit is not None:
            result.suppressed.append(finding)
            result.used.add((finding.location.path, hit.line))
        elif per_file_ignored(finding, per_file_ignores, root):
            result.suppressed.append(finding)
        else:
            result.kept.append(finding)
    return result
