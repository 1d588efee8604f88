"""One lint run, stage by stage: discover -> parse -> model -> link -> rules
-> suppress. Reporting is the caller's (the CLI, tests)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from mlcost_lint.config import Settings
from mlcost_lint.discover import STDIN_DISPLAY, Discovery, SourceFile, discover
from mlcost_lint.engine import RuleFailure, run_rules, selected_rules
from mlcost_lint.model.project import Project
from mlcost_lint.parse import parse_bytes, parse_path, sniff_kind
from mlcost_lint.parse.document import FileKind, ParsedFile
from mlcost_lint.rule import Finding
from mlcost_lint.suppress import SuppressionResult, apply_suppressions


@dataclass(slots=True)
class LintOptions:
    jobs: int | None = None            # parse processes; None = number of CPUs
    use_cache: bool = True
    cache_dir: Path | None = None
    var_files: list[str] = field(default_factory=list)
    cli_vars: dict[str, str] = field(default_factory=dict)
    stdin: bytes | None = None         # the bytes of "-", read by the caller


@dataclass(slots=True)
class LintResult:
    findings: list[Finding]
    suppressed: list[Finding]
    files: list[ParsedFile]
    project: Project
    suppression: SuppressionResult
    rule_failures: list[RuleFailure]


def parse_all(files: list[SourceFile], settings: Settings, options: LintOptions) -> list[ParsedFile]:
    max_bytes = int(settings.max_file_size_mb * 1_000_000)
    out: list[ParsedFile] = []
    for sf in files:
        if sf.display == STDIN_DISPLAY and str(sf.path) == "-":
            data = options.stdin if options.stdin is not None else sys.stdin.buffer.read()
            out.append(parse_bytes(data[: max_bytes + 1], sf.display, sniff_kind(data),
                                   max_depth=settings.max_nesting_depth))
        else:
            out.append(parse_path(sf.path, sf.display, sf.kind, max_bytes=max_bytes,
                                  max_depth=settings.max_nesting_depth))
    return out


def lint(paths: list[str], settings: Settings, options: LintOptions | None = None) -> LintResult:
    options = options or LintOptions()
    found: Discovery = discover(paths, settings.exclude, settings.root)
    parsed = parse_all(found.files, settings, options)
    # Discovery problems (unreadable folders, missing paths) are reported like parse errors.
    if found.errors:
        holder = ParsedFile(path="", kind=FileKind.YAML, errors=list(found.errors))
        parsed.append(holder)
    var_files = []
    if options.var_files:
        var_files = parse_all([SourceFile(Path(v), v, FileKind.TERRAFORM_VARS) for v in options.var_files],
                              settings, options)
    project = build_model(parsed, settings, var_files, options.cli_vars)
    failures: list[RuleFailure] = []
    findings = run_rules(project, settings, selected_rules(settings), failures)
    by_path = {pf.path: pf for pf in parsed}
    result = apply_suppressions(findings, by_path, settings.per_file_ignores, settings.root)
    return LintResult(result.kept, result.suppressed, parsed, project, result, failures)


def build_model(parsed: list[ParsedFile], settings: Settings, var_files: list[ParsedFile],
                cli_vars: dict[str, str]) -> Project:
    from mlcost_lint.link import link_project
    from mlcost_lint.model.build import build_project

    project = build_project(parsed, settings, var_files=var_files, cli_vars=cli_vars)
    link_project(project, settings)
    return project
