"""The report stage: findings to text, full (grouped), JSON, SARIF or GitHub
annotations, and per-rule statistics.

Every reporter takes the same :class:`ReportInput` and returns a string;
none of them decides anything about findings.
"""

from __future__ import annotations

import hashlib
from dataclasses import field
from typing import Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.rule import Finding, Rule

FORMATS = ("text", "full", "json", "sarif", "github", "rdjson", "gitlab", "junit")


# A reported file is read again for its source lines; it was parsed under
# max-file-size-mb, so a file larger than this has changed since.
SOURCE_MAX_BYTES = 256 * 1024 * 1024


def source_lines(data: bytes) -> list[str] | None:
    """The lines of a file's bytes as the full format shows them; None for binary."""
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", "replace").splitlines()


def read_source_lines(path: str, max_bytes: int = SOURCE_MAX_BYTES) -> list[str] | None:
    """The lines of a reported file, read again from disk (only the full
    format calls this, and only for files that have findings). None when the
    file cannot be read (deleted since, replaced by a FIFO or device, over
    ``max_bytes``, not text). Standard input is never read from disk: the
    caller passes a reader that knows it (:func:`source_reader`)."""
    from mlcost_lint.safe_io import read_regular

    try:
        data = read_regular(path, max_bytes)
    except OSError:
        return None
    return source_lines(data)


def source_reader(stdin: bytes | None, stdin_display: str = "stdin",
                  max_bytes: int = SOURCE_MAX_BYTES) -> Callable[[str], list[str] | None]:
    """``read_source`` for a run: the path of standard input gives the bytes
    read from it (kept in memory; a file of that name in the working folder
    is never opened), every other path is read again from disk."""
    def read(path: str) -> list[str] | None:
        if path == stdin_display:
            return source_lines(stdin) if stdin is not None else None
        return read_source_lines(path, max_bytes)

    return read


@dataclass(frozen=True, slots=True)
class ToolError:
    """An internal error (a rule that raised): in JSON ``errors``, SARIF
    ``toolExecutionNotifications``, and the reason for exit 2."""

    code: str              # the rule
    message: str           # one line
    path: str | None = None

    def text(self) -> str:
        where = f" while checking {self.path}" if self.path else ""
        return f"internal error in {self.code}{where} (other rules still ran): {self.message}"


@dataclass(slots=True)
class ReportInput:
    findings: list[Finding]
    rules: list[type[Rule]]            # every rule that ran (SARIF describes them all)
    files_scanned: int = 0
    color: bool = False
    extras: dict[str, object] = field(default_factory=dict)
    # Source lines of a reported path (the full format's caret view).
    read_source: Callable[[str], list[str] | None] = read_source_lines
    # id() of findings that `--fix` can fix (shown as [*], like ruff).
    fixable: frozenset[int] = frozenset()
    # Secret values of the project (LintResult.secrets): reporters that print
    # source text hide them, as finding messages already are.
    secrets: frozenset[str] = frozenset()
    # Lines the text summary adds about which rules ran (opt-in rules off, or
    # running on suggested values): engine.selection_notices.
    notices: list[str] = field(default_factory=list)
    errors: list[ToolError] = field(default_factory=list)
    # -q/--quiet: text and full print the findings only (no summary, no notices).
    quiet: bool = False
    # id() of a finding -> its mlcost_lint.fix.Fix (rdjson suggestions).
    fixes: dict[int, object] = field(default_factory=dict)
    # Summary lines about the price table (older than 180 days), and what
    # the table is (date, source, discount) for SARIF run.properties.
    price_notices: list[str] = field(default_factory=list)
    price_info: dict[str, object] = field(default_factory=dict)


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
    elif fmt == "full":
        from mlcost_lint.report.full import render
    elif fmt == "json":
        from mlcost_lint.report.json_report import render
    elif fmt == "sarif":
        from mlcost_lint.report.sarif import render
    elif fmt == "github":
        from mlcost_lint.report.github import render
    elif fmt == "rdjson":
        from mlcost_lint.report.rdjson import render
    elif fmt == "gitlab":
        from mlcost_lint.report.gitlab import render
    elif fmt == "junit":
        from mlcost_lint.report.junit import render
    else:  # the CLI only offers FORMATS
        raise ValueError(fmt)
    return render
