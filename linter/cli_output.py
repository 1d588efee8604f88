"""What a lint run prints besides the findings: colour, the report itself
(to stdout or ``--output``), the one-line summary on stderr when the report
goes to a file, the line that counts what was skipped and why, and
``--verbose``. Kept out of cli.py so the command stays about options."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

COLOR_CHOICES = ("auto", "always", "never")


def use_color(choice: str, fmt: str, output: str | None) -> bool:
    """``--color``: ``always``/``never`` win; ``auto`` honours NO_COLOR (any
    non-empty value turns colour off) then FORCE_COLOR (non-empty and not
    "0" turns it on), else colour only on a terminal. Only text and full
    are ever coloured; a report written with ``-o`` only with ``always``."""
    if fmt not in ("text", "full") or choice == "never":
        return False
    if choice == "always":
        return True
    if output:
        return False
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force != "0":
        return True
    return sys.stdout.isatty()


def skipped_line(result: Any, report_paths: set[str] | None) -> str | None:
    """One line counting what was not linted and why, or None. With explicit
    files (pre-commit) only those files count, not the project context."""
    counts: Counter[str] = Counter()
    for entry in result.read_as:
        if report_paths is not None and entry.path not in report_paths:
            continue
        if entry.category in ("helm", "not-ours", "not-slurm", "skipped"):
            counts[entry.category] += 1
    for skip in result.skipped:
        if report_paths is None or skip.explicit:
            counts[skip.reason] += 1
    if not counts:
        return None

    def n(key: str, one: str, many: str) -> str:
        return f"{counts[key]} {one if counts[key] == 1 else many}"

    parts = []
    if counts["helm"]:
        parts.append(n("helm", "Helm template", "Helm templates")
                     + " (pipe `helm template` output to `mlcost-lint -`)")
    if counts["gitignore"]:
        parts.append(n("gitignore", "path", "paths") + " ignored by .gitignore")
    if counts["exclude"]:
        parts.append(n("exclude", "path", "paths") + " excluded (exclude / extend-exclude)")
    if counts["skipped"]:
        parts.append(n("skipped", "file", "files") + " not readable as text")
    if counts["not-slurm"]:
        parts.append(n("not-slurm", "shell script", "shell scripts") + " without #SBATCH lines")
    if counts["not-ours"]:
        parts.append(n("not-ours", "YAML/JSON file that is", "YAML/JSON files that are")
                     + " not Kubernetes, training configs or Terraform")
    return f"Skipped {'; '.join(parts)}; -v lists them."


def explicit_exclusions(result: Any) -> str | None:
    """One stderr line when a file named on the command line was excluded."""
    from mlcost_lint.redact import escape_controls

    named = [s for s in result.skipped if s.explicit]
    if not named:
        return None
    shown = ", ".join(f"{s.display} (by '{s.detail}')" for s in named[:5])
    more = f" and {len(named) - 5} more" if len(named) > 5 else ""
    verb = "is" if len(named) == 1 else "are"
    return escape_controls(f"mlcost-lint: {shown}{more} {verb} excluded by the configuration; not linted "
                           "(remove it from exclude / extend-exclude to lint it)")


def verbose(result: Any, report_paths: set[str] | None) -> None:
    from mlcost_lint.verbose import file_lines, workload_lines

    for line in file_lines(result, report_paths) + workload_lines(result.project, report_paths):
        click.echo(f"mlcost-lint: {line}", err=True)


def emit(run: Any, rules: list[Any], fmt: str, output: str | None, statistics: bool,
         fixable: frozenset[int], notices: list[str], errors: list[Any], *,
         color: bool, quiet: bool, fail: Any, fixes: dict[int, Any] | None = None,
         stdin: bytes | None = None,
         prices: tuple[list[str], dict[str, object]] = ([], {})) -> None:
    """Render and write the report. With ``--output`` the summary line (and
    the skipped line) still goes to stderr, so a failing CI step says why."""
    from mlcost_lint.discover import STDIN_DISPLAY
    from mlcost_lint.report import ReportInput, renderer, source_reader
    from mlcost_lint.report.text import summary_line

    # source lines of `-` come from the bytes read on stdin, never a file named stdin
    data = ReportInput(findings=run.findings, rules=rules, files_scanned=run.files_reported, color=color,
                       fixable=fixable, secrets=run.result.secrets, notices=notices, errors=errors, quiet=quiet,
                       fixes=fixes or {}, read_source=source_reader(stdin, STDIN_DISPLAY),
                       price_notices=prices[0], price_info=prices[1])
    if statistics:
        from mlcost_lint.report.statistics import render_json, render_text

        report = render_json(data) if fmt == "json" else render_text(data)
    else:
        report = renderer(fmt)(data)
        if fmt == "github":
            _write_step_summary(data)
    if output:
        try:
            Path(output).write_text(report, encoding="utf-8")
        except OSError as exc:
            fail(f"--output: cannot write {output}: {exc.strerror or exc}")
        if not quiet:
            counts = Counter(f.level.value for f in run.findings)
            click.echo(f"{summary_line(dict(counts), run.files_reported)} Report written to {output}.", err=True)
            for line in notices:
                if line.startswith("Skipped "):
                    click.echo(line, err=True)
    else:
        # color=: click strips escape codes when stdout is not a terminal,
        # which would make --color always / FORCE_COLOR do nothing in CI logs.
        click.echo(report, nl=False, color=color)


def _write_step_summary(data: Any) -> None:
    """GitHub's job summary: every finding as Markdown (the annotations
    show at most 10 per level). Appended, as GitHub expects; a file that
    cannot be written costs one line on stderr, never the report."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    from mlcost_lint.report.github import step_summary

    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(step_summary(data))
    except OSError as exc:
        click.echo(f"mlcost-lint: cannot write the job summary to $GITHUB_STEP_SUMMARY: {exc.strerror or exc}",
                   err=True)
