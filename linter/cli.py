"""The command line: ``mlcost-lint [PATHS]...``, ``mlcost-lint rules``,
``mlcost-lint explain CODE``.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it;
2 usage or configuration error (one line on stderr, never a traceback), or
an internal error (a rule that raised; the report still lists every other
finding, --debug prints the traceback).
"""

from __future__ import annotations

import os
import sys
from dataclasses import field
from pathlib import Path
from typing import Any

import click

from mlcost_lint import __version__
from mlcost_lint.cli_output import COLOR_CHOICES
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.report import FORMATS

FAIL_ON = ("error", "warning", "note", "never")
# More parse processes than this only costs memory (each is a copy of the parser).
MAX_JOBS = 256
_LEVEL_RANK = {"error": 3, "warning": 2, "note": 1}


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


class _DefaultToCheck(click.Group):
    """``mlcost-lint PATHS`` runs ``check``; ``rules``, ``explain`` and
    ``prices`` are subcommands only as the first word, exactly so spelled
    (``./prices`` is a path)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        elif args[0] != "check" and os.path.exists(args[0]):
            click.echo(f"mlcost-lint: note: '{args[0]}' is a subcommand here; to lint the path, run "
                       f"mlcost-lint ./{args[0]}", err=True)
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="mlcost-lint", message="%(prog)s %(version)s")
def cli() -> None:
    """Find cost waste in ML training infrastructure: Terraform, Kubernetes
    manifests and training configs. Run `mlcost-lint PATHS` (default `.`);
    every option of a lint run is listed by `mlcost-lint check --help`."""


@cli.command("check", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=str)
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text", show_default=True,
              help="Output format: text (one line per finding), full (grouped by file, with the source "
                   "line, a caret and the fix), json, sarif, github (Actions annotations and job summary), "
                   "rdjson (reviewdog), gitlab (Code Quality), junit.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE.")
@click.option("--select", multiple=True, help="Only these rules: codes, prefixes (MLC2) or names; comma-separated.")
@click.option("--extend-select", multiple=True,
              help="Add these rules to the default set (or to select): codes, prefixes or names; comma-separated.")
@click.option("--ignore", multiple=True, help="Skip these rules: codes, prefixes or names; comma-separated.")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="warning", show_default=True,
              help="Exit 1 when a finding is at or above this level.")
@click.option("--exit-zero", is_flag=True, help="Always exit 0 unless there is a usage or config error.")
@click.option("--statistics", is_flag=True, help="Show the number of findings per rule instead of the findings.")
@click.option("--sort", "sort_by", type=click.Choice(["location", "cost"]), default="location", show_default=True,
              help="Order of findings: by path and line, or by estimated cost (highest first, unpriced last).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config file (.mlcost-lint.toml or pyproject.toml).")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False),
              help="Report only findings not recorded in this baseline file.")
@click.option("--write-baseline", "write_baseline_file", type=click.Path(dir_okay=False),
              help="Record every current finding in this baseline file and exit 0.")
@click.option("--baseline-report-stale", is_flag=True,
              help="With --baseline: list baseline entries that no longer match any finding.")
@click.option("--fix", "apply_fix", is_flag=True, help="Apply safe fixes to YAML training configs.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Show the fixes as a unified diff without writing; exit 1 if there are any.")
@click.option("--project-root", type=click.Path(file_okay=False, exists=True), default=None,
              help="When FILES are given, read this folder too for cross-file links "
                   "(default: the config file's folder, else the git root).")
@click.option("--no-project-context", is_flag=True,
              help="When FILES are given, read only those files (no cross-file context).")
@click.option("--var-file", multiple=True, type=click.Path(dir_okay=False), help="Terraform variables file (repeatable).")
@click.option("--var", "tf_vars", multiple=True, help="Terraform variable NAME=VALUE (repeatable).")
@click.option("--jobs", type=click.IntRange(min=1, max=MAX_JOBS), default=None,
              help=f"Parse processes (default: CPU count, at most {MAX_JOBS}).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the parse cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, help="Cache folder (default .mlcost_lint_cache).")
@click.option("--exclude", "exclude", multiple=True,
              help="Skip files and folders matching GLOB (replaces the config's exclude; repeatable, comma-separated).")
@click.option("--extend-exclude", "extend_exclude", multiple=True,
              help="Skip these too, on top of the config's exclude (repeatable, comma-separated).")
@click.option("--respect-gitignore/--no-respect-gitignore", "respect_gitignore", default=None,
              help="Skip what .gitignore and .git/info/exclude ignore (default: on; config respect-gitignore).")
@click.option("-v", "--verbose", is_flag=True,
              help="Per file, what it was read as or why it was skipped; per workload, the links made "
                   "and why no node pool matched (stderr).")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only: no summary or notices.")
@click.option("--color", "color_choice", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colour text output; auto honours NO_COLOR and FORCE_COLOR.")
@click.option("--show-settings", is_flag=True,
              help="Print the effective settings and where each value came from, then exit.")
@click.option("--debug", is_flag=True, help="Print the traceback of an internal error.")
def check(paths: tuple[str, ...], fmt: str, output: str | None, select: tuple[str, ...],
          extend_select: tuple[str, ...], ignore: tuple[str, ...],
          fail_on: str, exit_zero: bool, statistics: bool, sort_by: str, config_file: str | None,
          baseline_file: str | None,
          write_baseline_file: str | None, baseline_report_stale: bool, apply_fix: bool, show_diff: bool,
          project_root: str | None, no_project_context: bool, var_file: tuple[str, ...],
          tf_vars: tuple[str, ...], jobs: int | None, no_cache: bool, cache_dir: str | None,
          exclude: tuple[str, ...], extend_exclude: tuple[str, ...], respect_gitignore: bool | None,
          verbose: bool, quiet: bool, color_choice: str, show_settings: bool, debug: bool) -> None:
    """Lint PATHS (files or folders; `-` reads standard input).

    Given only files (as pre-commit passes them), mlcost-lint still reads the
    rest of the project for cross-file links, and reports only findings
    located in those files."""
    from mlcost_lint.config import ConfigError
    from mlcost_lint.engine import selected_rule_info, selection_notices
    from mlcost_lint.pipeline import LintOptions

    # only a run given a baseline imports its module (8 ms), and only such a run can raise its error
    baseline_errors: tuple[type[Exception], ...] = ()
    if baseline_file or write_baseline_file:
        from mlcost_lint.baseline import BaselineError

        baseline_errors = (BaselineError,)
    targets = list(paths) or ["."]
    if baseline_report_stale and not baseline_file:
        _fail("--baseline-report-stale needs --baseline FILE")
    if verbose and quiet:
        _fail("-v/--verbose and -q/--quiet cannot be used together")
    # A mistyped CI path must not pass as "no findings" (product.md, v2 additions).
    for target in targets:
        if target != "-" and not os.path.lexists(target):
            what = "matched no file (glob)" if any(c in target for c in "*?[") else "does not exist"
            _fail(f"path '{target}' {what}")
    for name in var_file:
        if not os.path.isfile(name):
            _fail(f"--var-file '{name}' does not exist or is not a file")
    try:
        first = Path(targets[0]) if targets[0] != "-" else Path.cwd()
        settings = _settings(config_file, first, select, extend_select, ignore, exclude, extend_exclude,
                             respect_gitignore)
        if settings.prices_file is not None:
            from mlcost_lint.pricing import table_for

            table_for(settings)     # a bad [prices] file is a config error before any work
        if show_settings:
            from mlcost_lint.show_settings import render

            click.echo(render(settings, first), nl=False)
            sys.exit(0)
        cli_vars = {}
        for item in tf_vars:
            if "=" not in item:
                raise ConfigError(f"--var: expected NAME=VALUE, got '{item}'")
            name, value = item.split("=", 1)
            cli_vars[name.strip()] = value
        baseline = _load_baseline(baseline_file)
        stdin = _read_stdin(int(settings.max_file_size_mb * 1_000_000)) if "-" in targets else None
        options = LintOptions(jobs=jobs, use_cache=not no_cache,
                              cache_dir=Path(cache_dir) if cache_dir else None,
                              var_files=list(var_file), cli_vars=cli_vars, stdin=stdin,
                              # -v lists the model, --fix/--diff edit from it: those rebuild it
                              reuse_run=not (verbose or apply_fix or show_diff))
        scope = _scope(targets, settings, project_root, no_project_context, options)
        run = _run(scope, settings, options, baseline)
        rules = selected_rule_info(settings)

        if write_baseline_file:
            from mlcost_lint import baseline as baseline_mod

            n = baseline_mod.write(run.before_baseline, Path(write_baseline_file))
            click.echo(f"mlcost-lint: wrote {n} finding{'s' if n != 1 else ''} to baseline {write_baseline_file}",
                       err=True)
            sys.exit(0)

        if apply_fix or show_diff:
            run = _fix(run, scope, settings, options, baseline, write=not show_diff)
            if show_diff:
                sys.exit(1 if run.fixed else 0)
    except (ConfigError, *baseline_errors) as exc:
        _fail(str(exc))
        return
    from mlcost_lint import cli_output
    from mlcost_lint.report import ToolError

    excluded = cli_output.explicit_exclusions(run.result)
    if excluded and not quiet:
        click.echo(excluded, err=True)
    if scope.nothing_ours and not run.findings:
        # Only files that are not ours (pre-commit passing a workflow or
        # package.json): nothing was linted and there is nothing to say.
        if verbose:
            cli_output.verbose(run.result, scope.report_paths)
        if fmt not in ("text", "full"):
            cli_output.emit(run, selected_rule_info(settings), fmt, output, statistics, frozenset(), [], [],
                            color=False, quiet=True, fail=_fail)
        sys.exit(0)
    errors = [ToolError(f.code, f.error, f.path) for f in run.result.rule_failures]
    for error, failure in zip(errors, run.result.rule_failures):
        click.echo(f"mlcost-lint: {error.text()}", err=True)
        if debug:
            click.echo(failure.traceback.rstrip(), err=True)
    if verbose:
        cli_output.verbose(run.result, scope.report_paths)
    if baseline_report_stale and run.stale:
        _report_stale(run.stale, baseline_file or "")
    fixable: frozenset[int] = frozenset()
    fixes: dict[int, Any] = {}
    if (not apply_fix and fmt in ("text", "full", "rdjson")) or statistics:
        fixes = {id(f): run.result.fixes[id(f)] for f in run.findings if id(f) in run.result.fixes}
        fixable = frozenset(fixes)
    if sort_by == "cost":
        from mlcost_lint.pricing import sort_by_cost

        run.findings = sort_by_cost(run.findings)
    notices = selection_notices(settings, rules)
    skipped = cli_output.skipped_line(run.result, scope.report_paths)
    if skipped:
        notices = [skipped, *notices]
    stdin_bytes = None
    if stdin is not None and stdin.size <= len(stdin.head):
        stdin_bytes = stdin.head   # over the size limit it was not parsed: no source lines
    cli_output.emit(run, rules, fmt, output, statistics, fixable, notices, errors,
                    color=cli_output.use_color(color_choice, fmt, output), quiet=quiet, fail=_fail, fixes=fixes,
                    stdin=stdin_bytes, prices=_price_report(settings))
    if errors:
        sys.exit(2)     # an internal error is never a pass, whatever --exit-zero/--fail-on say
    if run.files_reported == 0 and not run.findings:
        click.echo("mlcost-lint: warning: no Terraform, Kubernetes, training-config or other supported file "
                   f"found in {' '.join(targets)}", err=True)
    if not (verbose or output or stdin is not None) and run.result.cache_writer is not None:
        # Everything this run printed came from these inputs: the same
        # command over them again may print it without linting (replay.py).
        from mlcost_lint import replay

        read = [*var_file, *(p for p in (config_file, baseline_file, settings.source, settings.prices_file) if p)]
        replay.allow([*run.result.watched, *map(str, read)], scope.lint_paths, run.result.cache_writer)
    if exit_zero or fail_on == "never":
        sys.exit(0)
    threshold = _LEVEL_RANK[fail_on]
    sys.exit(1 if any(_LEVEL_RANK[f.level.value] >= threshold for f in run.findings) else 0)


def _settings(config_file: str | None, first: Path, select: tuple[str, ...], extend_select: tuple[str, ...],
              ignore: tuple[str, ...], exclude: tuple[str, ...], extend_exclude: tuple[str, ...],
              respect_gitignore: bool | None) -> Any:
    """The config file's settings with the command line applied on top
    (each value's origin recorded for --show-settings)."""
    from mlcost_lint.config import load_settings
    from mlcost_lint.engine import check_selectors

    settings = load_settings(Path(config_file) if config_file else None, first)
    cli_select, cli_extend, cli_ignore = _split(select), _split(extend_select), _split(ignore)
    if settings.source:
        check_selectors(settings.select + settings.extend_select + settings.ignore, settings.source)
        for pattern, codes in settings.per_file_ignores.items():
            check_selectors(codes, f"{settings.source}: per-file-ignores '{pattern}'")
    check_selectors(cli_select, "--select")
    check_selectors(cli_extend, "--extend-select")
    check_selectors(cli_ignore, "--ignore")

    def origin(name: str, option: str, replaced: bool) -> None:
        before = settings.origins.get(name)
        settings.origins[name] = option if replaced or not before else f"{before} + {option}"

    if cli_select:
        settings.select = cli_select
        origin("select", "--select", True)
    if cli_extend:
        settings.extend_select = [*settings.extend_select, *cli_extend]
        origin("extend_select", "--extend-select", False)
    if cli_ignore:
        settings.ignore = [*settings.ignore, *cli_ignore]
        origin("ignore", "--ignore", False)
    if exclude:
        settings.exclude = _split(exclude)
        origin("exclude", "--exclude", True)
    if extend_exclude:
        settings.extend_exclude = [*settings.extend_exclude, *_split(extend_exclude)]
        origin("extend_exclude", "--extend-exclude", False)
    if respect_gitignore is not None:
        settings.respect_gitignore = respect_gitignore
        origin("respect_gitignore", "--respect-gitignore" if respect_gitignore else "--no-respect-gitignore", True)
    return settings


# ------------------------------------------------------------ helpers ---

def _read_stdin(max_bytes: int) -> "StdinData":
    """Standard input, keeping at most ``max_bytes + 1`` bytes in memory but
    counting all of it, so an oversized stream is refused with its size."""
    from mlcost_lint.parse_stage import StdinData

    kept = bytearray()
    total = 0
    while True:
        chunk = sys.stdin.buffer.read(1 << 20)
        if not chunk:
            break
        total += len(chunk)
        if len(kept) <= max_bytes:
            kept += chunk[: max_bytes + 1 - len(kept)]
    return StdinData(bytes(kept), total)


@dataclass(slots=True)
class _Scope:
    """What to read and what to report on. ``report_paths`` is None when
    everything read is reported (folders, stdin); with explicit files it is
    their display paths, and ``lint_paths`` adds the project root."""

    lint_paths: list[str]
    report_paths: set[str] | None
    # Explicit files none of which is ours: read alone, reported silently.
    nothing_ours: bool = False


@dataclass(slots=True)
class _Run:
    result: Any
    findings: list[Any]
    before_baseline: list[Any]
    stale: list[Any] = field(default_factory=list)
    files_reported: int = 0
    fixed: int = 0


def _scope(targets: list[str], settings: Any, project_root: str | None, no_context: bool,
           options: Any) -> _Scope:
    from mlcost_lint.discover import display_path
    from mlcost_lint.gitignore import git_root

    files_only = all(t != "-" and Path(t).is_file() for t in targets)
    if not files_only:
        return _Scope(targets, None)
    cwd = Path.cwd()
    report = {display_path(Path(t), cwd) for t in targets}
    if no_context:
        return _Scope(targets, report)
    if not _any_ours(targets, settings, options):
        # A workflow or package.json from pre-commit: the project is not read.
        return _Scope(targets, report, nothing_ours=True)
    if project_root is not None:
        root: Path | None = Path(project_root)
    elif settings.source:
        root = Path(settings.root)
    else:
        root = git_root(Path(targets[0]).resolve().parent)
    if root is None:
        return _Scope(targets, report)
    return _Scope([display_path(root, cwd), *targets], report)


def _any_ours(targets: list[str], settings: Any, options: Any) -> bool:
    """Whether any explicit file is something we read (Terraform, a
    Kubernetes object, a training config, a Helm template, or a file of ours
    that does not parse), from those files alone: parsed (through the cache)
    and modelled, without the project around them."""
    from mlcost_lint.discover import discover
    from mlcost_lint.model.build import build_project
    from mlcost_lint.model.read_as import read_as
    from mlcost_lint.parse_stage import parse_all

    found = discover(targets, settings.all_excludes, settings.root)
    if not found.files:
        return bool(found.errors)
    if any(sf.kind.value.startswith("terraform") for sf in found.files):
        return True
    parsed = parse_all(found.files, settings, options, targets)
    return any(entry.ours for entry in read_as(build_project(parsed, settings)))


def _in_scope(finding: Any, report: set[str]) -> bool:
    # Only findings located in the given files, like ruff and TFLint: the
    # rest of the project is context for links, not something to report
    # (a CI run over the whole tree reports the others).
    return finding.location.path in report


def _run(scope: _Scope, settings: Any, options: Any, baseline: Any) -> _Run:
    from mlcost_lint.engine import selected_rule_info
    from mlcost_lint.pipeline import lint
    from mlcost_lint.suppress import finish_unused

    if scope.report_paths is not None:
        from dataclasses import replace

        options = replace(options, report_paths=frozenset(scope.report_paths))
    result = lint(scope.lint_paths, settings, options)
    by_path = {pf.path: pf for pf in result.files}
    findings = finish_unused(result.suppression, by_path, selected_rule_info(settings), settings.per_file_ignores,
                             settings.root, scope.report_paths)
    if scope.report_paths is not None:
        findings = [f for f in findings if _in_scope(f, scope.report_paths)]
        reported = sum(1 for pf in result.files if pf.path in scope.report_paths and not pf.skipped_reason)
    else:
        reported = sum(1 for pf in result.files if pf.path and not pf.skipped_reason)
    run = _Run(result, findings, findings, files_reported=reported)
    if baseline is not None:
        from mlcost_lint import baseline as baseline_mod

        linted = scope.report_paths if scope.report_paths is not None else \
            {pf.path for pf in result.files if pf.path}
        match = baseline_mod.apply(findings, baseline,
                                   judged_paths=baseline_mod.relative_paths(linted, baseline),
                                   judged_codes={r.code for r in selected_rule_info(settings)})
        run.findings, run.stale = match.new, match.stale
    return run


def _load_baseline(baseline_file: str | None) -> Any:
    if not baseline_file:
        return None
    from mlcost_lint import baseline as baseline_mod

    return baseline_mod.load(Path(baseline_file))


def _fix(run: _Run, scope: _Scope, settings: Any, options: Any, baseline: Any, write: bool) -> _Run:
    from mlcost_lint.fix import apply_fixes, fixes_for, unified_diff
    from mlcost_lint.redact import text_cleaner

    fixes = fixes_for(run.findings, run.result.project)
    outcome = apply_fixes(fixes, write=write)
    for path, why in outcome.refused:
        click.echo(f"mlcost-lint: not fixed: {path}: {why}", err=True)
    n = len(outcome.applied)
    if not write:
        for path, (old, new) in sorted(outcome.changed.items()):
            click.echo(unified_diff(path, old, new, text_cleaner(run.result.secrets, keep_tabs=True)), nl=False)
        click.echo(f"Would fix {n} finding{'s' if n != 1 else ''} in {len(outcome.changed)} "
                   f"file{'s' if len(outcome.changed) != 1 else ''}.", err=True)
        run.fixed = n
        return run
    if outcome.changed:
        run = _run(scope, settings, options, baseline)
    run.fixed = n
    click.echo(f"Fixed {n} finding{'s' if n != 1 else ''} ({len(run.findings)} remaining).", err=True)
    return run


def _report_stale(stale: list[Any], baseline_file: str) -> None:
    from mlcost_lint.redact import escape_controls

    click.echo(f"mlcost-lint: {len(stale)} stale baseline entr{'ies' if len(stale) != 1 else 'y'} in "
               f"{baseline_file} (no longer found; update it with --write-baseline):", err=True)
    for e in stale:
        # Entries come from a committed file: escaped, so a line break cannot start a "::error" line.
        click.echo(escape_controls(f"  {e.code} {e.path} {e.address}") + (f" (x{e.missing})" if e.missing > 1 else ""),
                   err=True)


def _price_report(settings: Any) -> tuple[list[str], dict[str, object]]:
    """(summary notices, table facts) of the run's price table."""
    from mlcost_lint.pricing import price_info, stale_notice, table_facts_for

    table = table_facts_for(settings)
    notice = stale_notice(table)
    return ([notice] if notice else []), price_info(table, settings.prices_discount)


@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt: str) -> None:
    """List the rule catalogue."""
    from mlcost_lint.registry import rule_index

    rules = rule_index()
    if fmt == "json":
        import json

        click.echo(json.dumps([{"code": r.code, "name": r.name, "level": r.level.value,
                                "confidence": r.confidence.value, "category": r.category.value,
                                "summary": r.summary} for r in rules], indent=2))
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        click.echo(f"{r.code}  {r.name:<{width}}  {r.level.value:<7}  {r.category.value:<11}  {r.summary}")


@cli.command("explain")
@click.argument("code")
def explain_command(code: str) -> None:
    """Print a rule's documentation (code or name)."""
    from mlcost_lint.engine import rule_by_code_or_name

    rule = rule_by_code_or_name(code)
    if rule is None:
        _fail(f"unknown rule '{code}' (see `mlcost-lint rules`)")
        return
    click.echo(f"# {rule.code} {rule.name}\n")
    click.echo(f"Level: {rule.level.value} · Confidence: {rule.confidence.value} · Category: {rule.category.value}\n")
    click.echo(rule.docs())


@cli.command("prices")
@click.argument("type_name", metavar="[TYPE]", required=False)
@click.option("--region", help="Only rows of this region.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Config file whose [prices] (discount, file) applies.")
def prices_command(type_name: str | None, region: str | None, fmt: str, config_file: str | None) -> None:
    """Show the price table: its date and source, and the rows of TYPE (an
    instance/machine type or VM size, a GCP accelerator or TPU slice, or a
    GPU model such as A100 or L4)."""
    from mlcost_lint.config import ConfigError, load_settings
    from mlcost_lint.pricing import price_rows, stale_notice, table_for

    try:
        settings = load_settings(Path(config_file) if config_file else None, Path.cwd())
        table = table_for(settings)
    except ConfigError as exc:
        _fail(str(exc))
        return
    rows = price_rows(table, type_name, region) if (type_name or region) else []
    info = table.info
    if fmt == "json":
        import json

        from mlcost_lint.pricing import price_info

        click.echo(json.dumps({"table": price_info(table, settings.prices_discount), "rows": rows}, indent=2))
        return
    click.echo(f"Price table: {len(table.rows)} rows, list prices in USD per hour, as of {info.date}")
    click.echo(f"Source: {info.source}")
    click.echo(f"Source date: {info.source_date}; built {info.built}")
    if table.override:
        click.echo(f"Rows replaced from: {table.override}")
    if settings.prices_discount:
        click.echo(f"Discount: {settings.prices_discount:.0%} off list prices in findings ([prices] discount)")
    notice = stale_notice(table)
    if notice:
        click.echo(notice)
    if not (type_name or region):
        counts: dict[str, int] = {}
        for row in table.rows:
            counts[row.cloud] = counts.get(row.cloud, 0) + 1
        click.echo("Rows per cloud: " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
        click.echo("Run `mlcost-lint prices TYPE [--region R]` for the rows of a type (p4d.24xlarge, a2-highgpu-1g, "
                   "Standard_NC24ads_A100_v4, v5litepod-8, L4).")
        return
    if not rows:
        what = " ".join(filter(None, [type_name, f"in {region}" if region else None]))
        click.echo(f"No row for {what}: price unknown.")
        sys.exit(1)
    header = ("cloud", "type", "accelerators", "region", "on-demand", "per accel.", "spot (median)", "note")
    table_rows = [(r["cloud"], r["name"], r["accelerators"], r["region"], _usd(r["on_demand_usd_per_hour"]),
                   _usd(r["on_demand_per_accelerator"]), _usd(r["spot_usd_per_hour_median"]), r["note"])
                  for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *table_rows)]
    for line in (header, *table_rows):
        click.echo("  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip())


def _usd(value: float | None) -> str:
    from mlcost_lint.pricing import usd_rate

    return "-" if value is None else usd_rate(value)


def _fail(message: str) -> None:
    click.echo(f"mlcost-lint: error: {message}", err=True)
    sys.exit(2)


def main() -> None:
    try:
        cli.main(standalone_mode=False, prog_name="mlcost-lint")
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(0)
    except click.UsageError as exc:
        _fail(exc.format_message().splitlines()[0] if exc.format_message() else "usage error")
    except click.Abort:
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        _fail(exc.format_message())
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(0)
