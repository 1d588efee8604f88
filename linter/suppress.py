"""The suppress stage: comments, per-file ignores and unused suppressions.

A ``# mlcost-lint: ignore[CODES]`` comment applies to a finding when it is on
the finding's line, on the comment lines directly above it, or directly above
the first line of the block / mapping the finding flags. ``ignore-file``
applies anywhere in its file. Codes may be codes, prefixes or rule names; an
empty list means every rule.

After matching, a comment that suppressed nothing is itself reported as
MLC002 unused-suppression (:func:`finish_unused`), like ruff's RUF100. Only
codes whose rules all ran are judged, so ``--select`` never makes a comment
look stale. Baselines are applied after this stage (``mlcost_lint.baseline``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import field
from pathlib import Path
from typing import Iterable, Sequence

from mlcost_lint.engine import matches
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.registry import RuleInfo, rule_index
from mlcost_lint.model.core import Location
from mlcost_lint.parse.document import ParsedFile, Suppression
from mlcost_lint.rule import Finding, Level

UNUSED_CODE = "MLC002"


@dataclass(slots=True)
class SuppressionResult:
    kept: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    # (path, suppression line) pairs that removed at least one finding.
    used: set[tuple[str, int]] = field(default_factory=set)
    # For each used suppression, which of its selectors matched a finding
    # (an empty set for a bare `ignore`).
    used_selectors: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    # Whether MLC002 findings were computed (finish_unused ran).
    unused_checked: bool = False


def _rule_for(code: str) -> RuleInfo | None:
    return next((r for r in rule_index() if r.code == code), None)


def _selector_covers(selector: str, code: str, rule: RuleInfo | None) -> bool:
    if rule is not None:
        return matches(selector, rule)
    return code.startswith(selector.upper())


def _covering_selector(suppression: Suppression, code: str) -> str | None:
    """The first selector of ``suppression`` that covers ``code`` ("" for a
    bare ignore), or None."""
    if not suppression.codes:
        return ""
    rule = _rule_for(code)
    return next((s for s in suppression.codes if _selector_covers(s, code, rule)), None)


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
    # A file-wide comment wins, so a line comment made redundant by it is the
    # one reported unused.
    out.sort(key=lambda s: (not s.whole_file, s.line))
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
    rule = _rule_for(finding.code)
    for pattern, selectors in per_file_ignores.items():
        if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
            if any(_selector_covers(s, finding.code, rule) for s in selectors):
                return True
    return False


def _match_one(finding: Finding, files: dict[str, ParsedFile], per_file_ignores: dict[str, list[str]],
               root: Path, result: SuppressionResult, subject_line: int | None = None) -> None:
    pf = files.get(finding.location.path)
    if pf is not None and pf.suppressions:
        for s in _applicable(finding, pf):
            if s.line == subject_line and not s.codes:
                continue   # a bare comment reported unused must not hide its own report
            selector = _covering_selector(s, finding.code)
            if selector is None:
                continue
            key = (finding.location.path, s.line)
            result.used.add(key)
            bucket = result.used_selectors.setdefault(key, set())
            if selector:
                bucket.add(selector)
            result.suppressed.append(finding)
            return
    if per_file_ignored(finding, per_file_ignores, root):
        result.suppressed.append(finding)
    else:
        result.kept.append(finding)


def apply_suppressions(findings: list[Finding], files: dict[str, ParsedFile],
                       per_file_ignores: dict[str, list[str]], root: Path) -> SuppressionResult:
    result = SuppressionResult()
    for finding in findings:
        _match_one(finding, files, per_file_ignores, root, result)
    return result


# ---------------------------------------------------------------- MLC002 ---

def _directive(s: Suppression) -> str:
    kind = "ignore-file" if s.whole_file else "ignore"
    return f"{kind}[{', '.join(s.codes)}]" if s.codes else kind


def _judge(s: Suppression, used: set[str] | None, selected: set[str]) -> tuple[list[str], list[str]]:
    """(unused selectors, unknown selectors) of one comment. A selector is
    unused only when every rule it names ran; MLC002 itself is never judged
    (a comment that exists to silence MLC002 cannot be checked before MLC002
    findings exist)."""
    unused: list[str] = []
    unknown: list[str] = []
    for selector in s.codes:
        if used is not None and selector in used:
            continue
        named = [r for r in rule_index() if matches(selector, r) and r.code != UNUSED_CODE]
        if not named:
            if not any(matches(selector, r) for r in rule_index()):
                unknown.append(selector)
            continue
        if all(r.code in selected for r in named):
            unused.append(selector)
    return unused, unknown


def unused_suppressions(files: Iterable[ParsedFile], result: SuppressionResult,
                        selected: Sequence[RuleInfo], report_paths: set[str] | None = None) -> list[Finding]:
    """MLC002 findings for the comments in ``files`` that suppressed nothing
    (or name codes that matched nothing). Empty when MLC002 is not selected."""
    selected_codes = {r.code for r in selected}
    if UNUSED_CODE not in selected_codes:
        return []
    every_rule_ran = all(r.code in selected_codes for r in rule_index() if r.code != UNUSED_CODE)
    out: list[Finding] = []
    for pf in files:
        if not pf.suppressions or (report_paths is not None and pf.path not in report_paths):
            continue
        for s in pf.suppressions:
            key = (pf.path, s.line)
            where = "file" if s.whole_file else "line"
            if not s.codes:
                if key in result.used or not every_rule_ran:
                    continue
                message = (f"Suppression comment `{_directive(s)}` suppresses no finding on the {where}s "
                           "it covers; remove it")
            else:
                unused, unknown = _judge(s, result.used_selectors.get(key), selected_codes)
                if not unused and not unknown:
                    continue
                parts = []
                if unused:
                    parts.append(f"no {', '.join(unused)} finding on the {where}s it covers")
                if unknown:
                    parts.append(f"unknown code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
                judged = set(unused) | set(unknown)
                remove = "remove it" if judged == set(s.codes) else \
                    f"remove {', '.join(c for c in s.codes if c in judged)} from it"
                message = f"Suppression comment `{_directive(s)}` is unused ({'; '.join(parts)}); {remove}"
            out.append(Finding(
                code=UNUSED_CODE,
                message=message,
                location=Location(pf.path, s.line, getattr(s, "column", 1)),
                address=f"suppression:{_directive(s)}",
                level=Level.NOTE,
            ))
    return out


def finish_unused(result: SuppressionResult, files: dict[str, ParsedFile], selected: Sequence[RuleInfo],
                  per_file_ignores: dict[str, list[str]], root: Path,
                  report_paths: set[str] | None = None) -> list[Finding]:
    """Add MLC002 findings to ``result.kept`` (after matching them against
    suppressions and per-file ignores, so `ignore[MLC002]` works) and return
    the new kept list, sorted. Runs once per result."""
    if result.unused_checked:
        return result.kept
    result.unused_checked = True
    for finding in unused_suppressions(files.values(), result, selected, report_paths):
        _match_one(finding, files, per_file_ignores, root, result, subject_line=finding.location.line)
    result.kept.sort(key=Finding.sort_key)
    return result.kept
