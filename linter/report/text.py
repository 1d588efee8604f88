"""``path:line:col: CODE [level] message``, one per line, then a summary."""

from __future__ import annotations

from mlcost_lint.pricing import totals, with_cost
from mlcost_lint.report import ReportInput

COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "note": "\x1b[36m"}
BOLD, DIM, RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def summary_line(counts: dict[str, int], files: int) -> str:
    total = sum(counts.values())
    if not total:
        return f"No findings in {files} file{'s' if files != 1 else ''}."
    parts = [f"{counts[level]} {level}{'s' if counts[level] != 1 else ''}"
             for level in ("error", "warning", "note") if counts.get(level)]
    return f"Found {total} finding{'s' if total != 1 else ''} ({', '.join(parts)}) in {files} file{'s' if files != 1 else ''}."


def cost_lines(data: ReportInput) -> list[str]:
    """The cost totals line, and the price table's notices (its age)."""
    t = totals(data.findings)
    return ([t.text()] if t.any else []) + list(data.price_notices)


def render(data: ReportInput) -> str:
    lines = []
    counts = {"error": 0, "warning": 0, "note": 0}
    for f in data.findings:
        level = f.level.value
        counts[level] += 1
        loc = f"{f.location.path}:{f.location.line}:{f.location.column}:"
        marker = " [*]" if id(f) in data.fixable else ""
        if data.color:
            lines.append(f"{BOLD}{loc}{RESET} {COLORS[level]}{f.code}{RESET} [{level}]{marker} {with_cost(f)}")
        else:
            lines.append(f"{loc} {f.code} [{level}]{marker} {with_cost(f)}")
    if data.quiet:   # -q: the findings only
        return "".join(line + "\n" for line in lines)
    lines.append(summary_line(counts, data.files_scanned))
    lines.extend(cost_lines(data))
    lines.extend(data.notices)
    if data.fixable:
        lines.append(f"[*] {len(data.fixable)} fixable with the `--fix` option.")
    return "\n".join(lines) + "\n"
