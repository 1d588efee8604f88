"""The report stage: findings to text, JSON, SARIF or GitHub annotations.

Every reporter takes the same :class:`ReportInput` and returns a string;
none of them decides anything about findings.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

from mlcost_lint.rule import Finding, Rule

FORMATS = ("text", "json", "sarif", "github")


@dataclass(slots=True)
class ReportInput:
    findings: list[Finding]
    rules: list[type[Rule]]            # every rule that ran (SARIF describes them all)
    files_scanned: int = 0
    color: bool = False
    extras: dict[str, object] = field(default_factory=dict)


def fingerprints(findings: list[Finding]) -> list[str]:
    """A stable id per finding from rule, path and the object's logical
    address, never the line, so it survives edits that move lines. Repeats
    of the same triple get an occurrence number in output order."""
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        base = f"{f.code}|{f.location.path}|{f.address}"
        n = seen.get(base, 0) + 1
        seen[base] = n
        key = base if n == 1 else f"{base}|{n}"
        out.append(hashlib.sha256(key.encode("utf-8")).hexdigest()[:32])
    return out


def renderer(fmt: str) -> Callable[[ReportInput], str]:
    if fmt == "text":
        from mlcost_lint.report.text import render
    elif fmt == "json":
        from mlcost_lint.report.json_report import render
    elif fmt == "sarif":
        from mlcost_lint.report.sarif import render
    elif fmt == "github":
        from mlcost_lint.report.github import render
    else:  # the CLI only offers FORMATS
        raise ValueError(fmt)
    return render
