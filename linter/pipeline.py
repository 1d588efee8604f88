"""One lint run, stage by stage: discover -> parse -> model -> link -> rules
-> suppress. Reporting is the caller's (the CLI, tests). The parse stage
(reading, the parse cache, parse workers) is parse_stage.py's."""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from mlcost_lint.config import Settings
from mlcost_lint.discover import Discovery, SourceFile, discover
from mlcost_lint.engine import RuleFailure, run_rules, selected_rule_info
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.parse.document import FileKind, ParsedFile
from mlcost_lint.gc_pause import gc_paused
from mlcost_lint.parse_stage import _open_cache, _parse_inputs, _read_all, parse_jobs
from mlcost_lint.rule import Finding
from mlcost_lint.slice_plan import Analysis, SlicePlan
from mlcost_lint.suppress import SuppressionResult, apply_suppressions

if TYPE_CHECKING:
    from mlcost_lint.model.project import Project
    from mlcost_lint import run_cache
    from mlcost_lint.cache import CacheWriter, ParseCache
    from mlcost_lint.cache_trees import HclTrees
    from mlcost_lint.model.build import ProjectBuilder
    from mlcost_lint.model.terraform.root_cache import RootCache
    from mlcost_lint.parse_stage import StdinData, _Input
    from mlcost_lint.model.absent import Absent
    from mlcost_lint.project_slice import TerraformSummary


@dataclass(slots=True)
class LintOptions:
    jobs: int | None = None            # parse processes; None = number of CPUs
    use_cache: bool = True
    cache_dir: Path | None = None
    var_files: list[str] = field(default_factory=list)
    cli_vars: dict[str, str] = field(default_factory=dict)
    stdin: bytes | StdinData | None = None   # the bytes of "-", read by the caller
    # Take the whole run from the run cache when no input changed
    # (mlcost_lint.run_cache). The result then has no model (project None):
    # for callers that only report (the CLI without -v / --fix / --diff).
    reuse_run: bool = False
    # Explicit files with project context (the pre-commit shape): the rest of
    # the project is read for links, but only findings located in these
    # display paths are priced, redacted, matched to suppressions and kept.
    report_paths: frozenset[str] | None = None


@dataclass(slots=True)
class LintResult:
    findings: list[Finding]
    suppressed: list[Finding]
    files: list[ParsedFile]
    project: Project | None          # None when taken from the run cache
    suppression: SuppressionResult
    rule_failures: list[RuleFailure]
    # Secret-looking values of the project, already redacted from findings;
    # for reporters that print source text (mlcost_lint.redact.Redactor).
    secrets: frozenset[str] = frozenset()
    # What discovery did not read and why (.gitignore, exclude): discover.Skip.
    skipped: list = field(default_factory=list)
    # id(kept finding) -> its fix.Fix, for the findings that have one.
    fixes: dict = field(default_factory=dict)
    # What each file was read as (model.read_as.ReadAs), every file.
    read_as: list = field(default_factory=list)
    from_run_cache: bool = False
    # Every path the answer was read from or depends on (discovery's
    # watched paths and the files found), and how to write to the cache
    # this run used (None: no cache): for the replay step (replay.py).
    watched: list[str] = field(default_factory=list)
    cache_writer: CacheWriter | None = None


def lint(paths: list[str], settings: Settings, options: LintOptions | None = None) -> LintResult:
    options = options or LintOptions()
    max_bytes = int(settings.max_file_size_mb * 1_000_000)
    cache = _open_cache(settings, options, max_bytes, list(paths)) if options.use_cache else None
    walks = None
    if cache is not None:
        from mlcost_lint.discover_cache import WalkCache

        walks = WalkCache(cache)
    found: Discovery = discover(paths, settings.all_excludes, settings.root,
                                respect_gitignore=settings.respect_gitignore, walks=walks)
    var_inputs = _read_all([SourceFile(v, v, FileKind.TERRAFORM_VARS) for v in options.var_files],
                           max_bytes, options, cache)
    index = ahead = preloaded = None
    if cache is not None:
        from mlcost_lint import run_cache
        from mlcost_lint.file_index import FileIndex
        from mlcost_lint.probe_ahead import ProbesAhead

        if options.report_paths is not None and parse_jobs(options) > 1:
            # a hook: a helper process stats the tree while this process loads the indexes (probe_ahead)
            ahead = ProbesAhead.start(found.files)
        index = FileIndex.open(cache, os.getcwd())
        # read once: the run key and the Terraform root keys both hold it (and a price file's content)
        settings_key = run_cache.settings_fingerprint(settings)
        if ahead is not None:
            preloaded = SlicePlan.preload(cache, settings_key, var_inputs, options, paths)
    inputs = _read_all(found.files, max_bytes, options, cache, index, ahead.result() if ahead is not None else None)
    if index is not None:
        index.save()
    if cache is not None:
        _keep_parse_results(cache, inputs)
    key = None
    if cache is not None and options.reuse_run and "-" not in paths:
        key = run_cache.run_key(cache, paths=paths, report_paths=options.report_paths, settings_key=settings_key,
                                file_keys=[i.run_key_part() for i in inputs],
                                var_keys=[i.run_key_part() for i in var_inputs],
                                cli_vars=options.cli_vars, cwd=os.getcwd())
        with gc_paused():
            hit = run_cache.load(cache, key)
        if hit is not None:
            cache.close()
            return _with_inputs(_from_run_cache(hit, found), found, cache)
    var_files = _parse_inputs(var_inputs, settings, options, cache) if var_inputs else []

    def analyse(read: list[_Input], absent: "Absent | None" = None, terraform: "TerraformSummary | None" = None,
                report: frozenset[str] | None = options.report_paths) -> Analysis:
        """Model, link and rules over ``read`` (the model is built as files are parsed: _ModelFeed);
        ``report``: the files whose findings are kept (None: every file)."""
        from mlcost_lint.cache_trees import HclTrees
        from mlcost_lint.later_stages import load_later_stages
        from mlcost_lint.model.build import ProjectBuilder

        trees = HclTrees(cache, settings.max_nesting_depth) if cache is not None else None
        builder = ProjectBuilder(
            settings, var_files=var_files, cli_vars=options.cli_vars,
            # asked for when Terraform is evaluated: by then every input's key is final (_read_now)
            root_cache=lambda: _root_cache(cache, settings_key, inputs, var_inputs, options)
            if cache is not None else None,
            hcl_trees=trees, jobs=parse_jobs(options))
        builder.project.absent = absent
        builder.terraform_summary = terraform
        parsed = _parse_inputs(read, settings, options, cache, trees, builder,
                               while_parsing=lambda: load_later_stages(settings))
        # Discovery problems (unreadable folders, missing paths) are reported like parse errors.
        if found.errors:
            holder = ParsedFile(path="", kind=FileKind.YAML, errors=list(found.errors))
            parsed.append(holder)
        project = finish_model(builder, parsed, settings)
        failures: list[RuleFailure] = []
        findings = run_rules(project, settings, selected_rule_info(settings), failures, report)
        if options.report_paths is not None:
            findings = [f for f in findings if f.location.path in options.report_paths]
        return Analysis(parsed, project, findings, failures)

    plan = SlicePlan.make(cache, settings, settings_key, inputs, var_inputs, options, paths, bool(found.errors),
                           preloaded) if cache is not None else None
    # a slice of the project when the index allows one and it held all it needed; else the whole project
    done = plan.analyse(analyse, inputs) if plan is not None and plan.slice is not None else None
    parsed, project, findings, failures = done or analyse(inputs)
    # no project: nothing was read or found, and the secrets are the last run's
    secrets = _price_and_redact(findings, project, settings, cache) if project is not None else plan.last.secrets
    from mlcost_lint.fix import fixes_for
    from mlcost_lint.model.read_as import read_as

    merged = None
    if done is not None and plan.last is not None:
        # an incremental whole run (mlcost_lint.incremental): the last run's findings where nothing changed
        merged = plan.merge(inputs, findings, parsed, project, secrets, failures)
        if merged is None:      # not incremental after all: the whole project
            plan.slice = plan.last = None
            parsed, project, findings, failures = analyse(inputs)
            secrets = _price_and_redact(findings, project, settings, cache)
    if merged is not None:
        files, findings, kept_fixes, read_as_now = merged.files, merged.findings, merged.fixes, merged.read_as
        if os.environ.get("_MLCOST_LINT_TRACE_INCREMENTAL"):     # for bench/incremental_check.py
            import sys

            print(f"mlcost-lint: incremental run: read {len(parsed)} of {len(files)} files", file=sys.stderr)
    else:
        files, kept_fixes, read_as_now = parsed, {}, read_as(project)
    by_path = {pf.path: pf for pf in files}
    # in location order whichever way they were found (a stable sort: rule order within one location)
    findings.sort(key=Finding.sort_key)
    result = apply_suppressions(findings, by_path, settings.per_file_ignores, settings.root)
    # the last run's findings keep its fixes (none for those it found none for): fixes for the new ones
    fix_pairs = fixes_for([f for f in result.kept if id(f) not in kept_fixes], project) if project is not None else []
    fix_pairs += [(f, kept_fixes[id(f)]) for f in result.kept if id(f) in kept_fixes]
    out = LintResult(result.kept, result.suppressed, files, None if merged is not None else project, result,
                     failures, secrets, found.skipped, fixes={id(f): fix for f, fix in fix_pairs},
                     read_as=read_as_now)
    if key is not None and not failures:
        run_cache.store(cache, key, run_cache.CachedRun(
            kept=result.kept, suppressed=result.suppressed, used=result.used, used_selectors=result.used_selectors,
            files=files, secrets=secrets,
            fixes=run_cache.fix_list(result.kept, fix_pairs), read_as=out.read_as))
        cache.keep(key)     # the next incremental run's last run: not what this run's prune drops
    if plan is not None and not failures:
        plan.record(project, parsed, key if options.report_paths is None else None)
    if cache is not None:
        cache.prune()
        cache.close()
    return _with_inputs(out, found, cache)


def _keep_parse_results(cache: "ParseCache", inputs: list[_Input]) -> None:
    """The parse results of the tree as it is now are kept by this run's
    prune, read or not: a hook reads a few of them, and entries are dropped
    oldest first (a read refreshes an entry's time only when it is older
    than cache._REFRESH_SECONDS), so the results the first run wrote went
    before the newer ones of contents since changed, and the next whole run
    parsed every file again (26 s on bench/'s 8,000 files)."""
    snapshot = list(inputs)     # as it is now: the parse stage replaces inputs it reads after all

    def keys() -> Iterator[str]:
        from mlcost_lint.cache_trees import tree_key

        for item in snapshot:
            if item.key is not None:
                yield item.key
                if item.kind is FileKind.TERRAFORM:
                    yield tree_key(item.key)

    cache.keep_later(keys)


def _price_and_redact(findings: list[Finding], project: Project, settings: Settings,
                      cache: "ParseCache | None") -> frozenset[str]:
    """Money on accelerator findings, one pricing step for every rule
    (mlcost_lint.pricing); then no message prints a secret-looking value,
    whichever rule wrote it (mlcost_lint.secrets). Returns the project's
    secret-looking values."""
    from mlcost_lint.pricing import price_findings
    from mlcost_lint.redact import redact_findings

    price_findings(findings, settings)
    if cache is None:
        return redact_findings(findings, project)
    from functools import partial

    from mlcost_lint.cleaned_texts import CleanedTexts

    # messages cleaned by earlier runs are not cleaned again (cleaned_texts.py)
    return redact_findings(findings, project, partial(CleanedTexts, cache))


def _with_inputs(out: LintResult, found: Discovery, cache: ParseCache | None) -> LintResult:
    # The files before what discovery watched: replay.py checks the stamps in
    # this order and stops at the first that moved. An edit moves a file's
    # stamp, not its folder's (which moves when a file is added, removed or
    # renamed) nor a .gitignore asked for; those first, a run after an edit
    # stamped them all (the real corpus: 1,210 folders and 1,209 .gitignore
    # names) to learn it could not replay.
    out.watched = [*(os.fspath(sf.path) for sf in found.files), *found.watched]
    out.cache_writer = cache.writer() if cache is not None else None
    return out


def _from_run_cache(hit: "run_cache.CachedRun", found: Discovery) -> LintResult:
    from mlcost_lint import run_cache

    suppression = SuppressionResult(kept=hit.kept, suppressed=hit.suppressed, used=hit.used,
                                    used_selectors=hit.used_selectors)
    return LintResult(hit.kept, hit.suppressed, hit.files, None, suppression, [], hit.secrets, found.skipped,
                      fixes=run_cache.fixes_by_id(hit.kept, hit.fixes), read_as=hit.read_as, from_run_cache=True)


def _root_cache(cache: ParseCache, settings_key: str, inputs: list[_Input], var_inputs: list[_Input],
                options: LintOptions) -> "RootCache":
    """Evaluated Terraform roots from earlier runs, keyed by their files'
    parse keys and everything else evaluation reads (``settings_key``:
    run_cache.settings_fingerprint)."""
    from mlcost_lint import run_cache
    from mlcost_lint.model.terraform.root_cache import RootCache

    context = "\0".join([
        "terraform-root", run_cache.package_fingerprint(), settings_key,
        *(i.run_key_part() for i in var_inputs), *sorted(f"{k}={v}" for k, v in options.cli_vars.items())])
    return RootCache(cache, {i.source.display: i.key for i in inputs}, context)


def finish_model(builder: "ProjectBuilder", parsed: list[ParsedFile], settings: Settings) -> Project:
    """The model of files already given to ``builder``, and its links."""
    from mlcost_lint.link import link_project

    project = builder.finish(parsed)
    link_project(project, settings)
    return project


def build_model(parsed: list[ParsedFile], settings: Settings, var_files: list[ParsedFile],
                cli_vars: dict[str, str], root_cache: "RootCache | None" = None,
                hcl_trees: "HclTrees | None" = None) -> Project:
    from mlcost_lint.link import link_project
    from mlcost_lint.model.build import build_project

    project = build_project(parsed, settings, var_files=var_files, cli_vars=cli_vars, root_cache=root_cache,
                            hcl_trees=hcl_trees)
    link_project(project, settings)
    return project
