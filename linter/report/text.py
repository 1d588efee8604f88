"""``path:line:col: CODE [level] message``, one per line, then a summary."""

from __future__ import annotations

from mlcost_lint.report import ReportInput

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "note": "\x1b[36m"}
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def summary_line(counts: dict[str, int], files: int) -> str:
    total = sum(counts.values())
    if not total:
        return f"No findings in {files} file{'s' if files != 1 else ''}."
    parts = [f"{counts[level]} {level}{'s' if counts[level] != 1 else ''}"
             for level in ("error", "warning", "note") if counts.get(level)]
    return f"Found {total} finding{'s' if total != 1 else ''} ({', '.join(parts)}) in {files} file{'s' if files != 1 else ''}."


def render(data: ReportInput) -> str:
    lines = []
    counts = {"error": 0, "warning": 0, "note": 0}
    for f in data.findings:
        level = f.level.value
        counts[level] += 1
        loc = f"{f.location.path}:{f.location.line}:{f.location.column}:"
        if data.color:
            lines.append(f"{_BOLD}{loc}{_RESET} {_COLORS[level]}{f.code}{_RESET} [{level}] {f.message}")
        else:
            lines.append(f"{loc} {f.code} [{level}] {f.message}")
    lines.append(summary_line(counts, data.files_scanned))
    return "\n".join(lines) + "\n"
