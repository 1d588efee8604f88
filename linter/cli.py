"""The command line: ``mlcost-lint [PATHS]...``, ``mlcost-lint rules``,
``mlcost-lint explain CODE``.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it;
2 usage or configuration error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from mlcost_lint import __version__

FAIL_ON = ("error", "warning", "note", "never")
_LEVEL_RANK = {"error": 3, "warning": 2, "note": 1}


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


class _DefaultToCheck(click.Group):
    """``mlcost-lint PATHS`` runs ``check``; ``rules`` and ``explain`` are
    subcommands only as the first word."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="mlcost-lint", message="%(prog)s %(version)s")
def cli() -> None:
    """Find cost waste in ML training infrastructure: Terraform, Kubernetes
    manifests and training configs. Run `mlcost-lint PATHS` (default `.`)."""


@cli.command("check", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=str)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE.")
@click.option("--select", multiple=True, help="Only these rules: codes, prefixes (MLC2) or names; comma-separated.")
@click.option("--ignore", multiple=True, help="Skip these rules: codes, prefixes or names; comma-separated.")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="warning", show_default=True,
              help="Exit 1 when a finding is at or above this level.")
@click.option("--exit-zero", is_flag=True, help="Always exit 0 unless there is a usage or config error.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config file (.mlcost-lint.toml or pyproject.toml).")
@click.option("--var-file", multiple=True, type=click.Path(dir_okay=False), help="Terraform variables file (repeatable).")
@click.option("--var", "tf_vars", multiple=True, help="Terraform variable NAME=VALUE (repeatable).")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parse processes (default: CPU count).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the parse cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, help="Cache folder (default .mlcost_lint_cache).")
def check(paths: tuple[str, ...], fmt: str, output: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
          fail_on: str, exit_zero: bool, config_file: str | None, var_file: tuple[str, ...],
          tf_vars: tuple[str, ...], jobs: int | None, no_cache: bool, cache_dir: str | None) -> None:
    """Lint PATHS (files or folders; `-` reads standard input)."""
    from mlcost_lint.config import ConfigError, load_settings
    from mlcost_lint.engine import check_selectors, selected_rules
    from mlcost_lint.pipeline import LintOptions, lint
    from mlcost_lint.report import ReportInput, renderer

    targets = list(paths) or ["."]
    try:
        first = Path(targets[0]) if targets[0] != "-" else Path.cwd()
        settings = load_settings(Path(config_file) if config_file else None, first)
        cli_select, cli_ignore = _split(select), _split(ignore)
        if settings.source:
            check_selectors(settings.select + settings.ignore, settings.source)
            for pattern, codes in settings.per_file_ignores.items():
                check_selectors(codes, f"{settings.source}: per-file-ignores '{pattern}'")
        check_selectors(cli_select, "--select")
        check_selectors(cli_ignore, "--ignore")
        if cli_select:
            settings.select = cli_select
        settings.ignore = [*settings.ignore, *cli_ignore]
        cli_vars = {}
        for item in tf_vars:
            if "=" not in item:
                raise ConfigError(f"--var: expected NAME=VALUE, got '{item}'")
            name, value = item.split("=", 1)
            cli_vars[name.strip()] = value
        stdin = sys.stdin.buffer.read() if "-" in targets else None
        options = LintOptions(jobs=jobs, use_cache=not no_cache,
                              cache_dir=Path(cache_dir) if cache_dir else None,
                              var_files=list(var_file), cli_vars=cli_vars, stdin=stdin)
        result = lint(targets, settings, options)
    except ConfigError as exc:
        _fail(str(exc))
        return
    for failure in result.rule_failures:
        click.echo(f"mlcost-lint: internal error in {failure.code} (other rules still ran): {failure.error}",
                   err=True)
    color = fmt == "text" and output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    report = renderer(fmt)(ReportInput(
        findings=result.findings, rules=selected_rules(settings),
        files_scanned=sum(1 for f in result.files if f.path and not f.skipped_reason), color=color))
    if output:
        try:
            Path(output).write_text(report, encoding="utf-8")
        except OSError as exc:
            _fail(f"--output: cannot write {output}: {exc.strerror or exc}")
    else:
        click.echo(report, nl=False)
    if exit_zero or fail_on == "never":
        sys.exit(0)
    threshold = _LEVEL_RANK[fail_on]
    sys.exit(1 if any(_LEVEL_RANK[f.level.value] >= threshold for f in result.findings) else 0)


@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt: str) -> None:
    """List the rule catalogue."""
    from mlcost_lint.engine import all_rules

    rules = all_rules()
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
