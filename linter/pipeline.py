"""One lint run, stage by stage: discover -> parse -> model -> link -> rules
-> suppress. Reporting is the caller's (the CLI, tests). The parse stage
(reading, the parse cache, parse workers) is parse_stage.py's."""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple

from mlcost_lint.config import Settings
from mlcost_lint.discover import Discovery, SourceFile, discover
from mlcost_lint.engine import RuleFailure, run_rules, selected_rule_info
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.parse.document import FileKind, ParsedFile
from mlcost_lint.gc_pause import gc_paused
from mlcost_lint.parse_stage import _open_cache, _parse_inputs, _read_all, parse_jobs, read_model
from mlcost_lint.rule import Finding
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
    from mlcost_lint.incremental import LastRun, Merged
    from mlcost_lint.run_cache import CachedRun
    from mlcost_lint.project_slice import ProjectIndex, Slice, TerraformSummary


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
            preloaded = _SlicePlan.preload(cache, settings_key, var_inputs, options, paths)
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
                report: frozenset[str] | None = options.report_paths) -> _Analysis:
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
        return _Analysis(parsed, project, findings, failures)

    plan = _SlicePlan.make(cache, settings, settings_key, inputs, var_inputs, options, paths, bool(found.errors),
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


class _Analysis(NamedTuple):
    parsed: list[ParsedFile]
    project: Project | None     # None: an incremental run that read no file (_SlicePlan.analyse)
    findings: list[Finding]
    failures: list[RuleFailure]


@dataclass(slots=True)
class _Preloaded:
    """The project index (and summary) a hook loads ahead (_SlicePlan.preload)."""

    key: str
    index: "ProjectIndex | None"
    summary_key: str | None = None
    summary: "TerraformSummary | None" = None


class _SlicePlan:
    """What a reporting run reads of the project (mlcost_lint.project_slice)
    and the index it keeps up to date: every run with a cache writes one
    when it read the whole project, and a sliced run updates the entries of
    the reported files and of the other files changed since. A whole run
    that only reports reads the slice of the files changed since the last
    whole run, when that run allows it (mlcost_lint.incremental)."""

    def __init__(self, cache: ParseCache, key: str, index: "ProjectIndex | None", keys: dict[str, str | None],
                 report_paths: frozenset[str] | None) -> None:
        self.cache = cache
        self.key = key
        self.index = index
        self.keys = keys
        self.report_paths = report_paths
        self.slice: "Slice | None" = None
        # The Terraform side when the slice reads no Terraform file (project_slice.TerraformSummary).
        self.summary: "TerraformSummary | None" = None
        # Files other than the reported ones changed since the index was written (read with the slice).
        self.changed: list[str] = []
        # An incremental whole run (mlcost_lint.incremental): the last whole run, the files whose
        # findings are recomputed (and Terraform's when it is read) and the Terraform files changed.
        self.last_run: "LastRun | None" = None
        self.last: "CachedRun | None" = None
        self.report: frozenset[str] | None = report_paths
        self.terraform_changed: list[str] = []      # Terraform files changed since the index
        self.terraform_moved = False                # Terraform not as the last whole run read it
        self.new_summary: "TerraformSummary | None" = None    # of the Terraform it read, when it changed
        # Terraform files changed since the index, as suppression sees them now, when the run
        # reads no Terraform: their meaning (ParsedFile.meaning) is that of the summary it read.
        self.reread: dict[str, ParsedFile] = {}
        # Other files changed since the index whose meaning is the index's (project_slice.same_meaning):
        # counted as unchanged, their entries rekeyed; in ``reread`` as suppression sees them now.
        self.same: list[str] = []
        # Files the index has that are gone (project_slice.may_go): their entries go, their joins are read.
        self.removed: list[str] = []

    @staticmethod
    def _index_key(cache: ParseCache, settings_key: str, var_inputs: list[_Input], options: LintOptions,
                   paths: list[str]) -> str | None:
        """The project index's key; None for explicit files alone (no project to slice)."""
        from mlcost_lint import project_slice

        if "-" in paths or not any(os.path.isdir(p) for p in paths):
            return None
        return project_slice.index_key(cache, settings_key, os.getcwd(), [i.run_key_part() for i in var_inputs],
                                       options.cli_vars)

    @classmethod
    def preload(cls, cache: ParseCache, settings_key: str, var_inputs: list[_Input], options: LintOptions,
                paths: list[str]) -> "_Preloaded | None":
        """What a reporting run's plan reads (make), loaded before the files
        are keyed, while a helper process stats them (probe_ahead): the
        project index, and the Terraform summary of the index's own Terraform
        files, the one a hook reads when no .tf file changed since."""
        from mlcost_lint import project_slice

        key = cls._index_key(cache, settings_key, var_inputs, options, paths)
        if key is None:
            return None
        index = project_slice.load(cache, key)
        if index is None or var_inputs:     # (--var-file values are evaluated with the files: no summary)
            return _Preloaded(key, index)
        summary_key = project_slice.terraform_key(key, index, {p: e.key for p, e in index.files.items()
                                                               if e.terraform})
        return _Preloaded(key, index, summary_key, project_slice.load_summary(cache, summary_key))

    @classmethod
    def make(cls, cache: ParseCache, settings: Settings, settings_key: str, inputs: list[_Input],
             var_inputs: list[_Input], options: LintOptions, paths: list[str], discovery_errors: bool = False,
             preloaded: "_Preloaded | None" = None) -> "_SlicePlan | None":
        from mlcost_lint import project_slice

        key = cls._index_key(cache, settings_key, var_inputs, options, paths)
        if key is None:
            return None     # explicit files alone: no project to slice
        keys = {i.source.display: i.key for i in inputs}
        reporting = options.report_paths
        # a whole run that only reports may take unchanged files' findings from the last one
        incremental = reporting is None and options.reuse_run and not var_inputs and not discovery_errors
        index = None
        if reporting is not None or incremental:
            index = preloaded.index if preloaded is not None and preloaded.key == key else project_slice.load(cache, key)
        plan = cls(cache, key, index, keys, reporting)
        if plan.index is None:
            return plan
        if reporting is None:
            plan._incremental(settings, options, inputs)
            return plan
        by_path = {i.source.display: i for i in inputs}
        reported = [by_path[p] for p in reporting if p in by_path]
        if len(reported) != len(reporting) or any(i.kind in project_slice.TERRAFORM_KINDS for i in reported):
            return plan
        # files changed or added since the index (a pull), read with the reported ones
        since = project_slice.changed_since(plan.index, keys)
        plan.changed = [p for p in (*since, *project_slice.added_since(plan.index, keys)) if p not in reporting]
        others = {p for p in plan.changed if not plan.index.terraform(p)}
        if len(others) > project_slice.MAX_CHANGED:
            return plan
        # in input order (discovery's: by display path)
        read = [by_path[p] for p in sorted(reporting | others)]
        parsed = {pf.path: pf for pf in _parse_inputs(read, settings, options, cache)}
        same = project_slice.same_meaning(plan.index, {p: parsed[p] for p in others})
        plan.same, plan.changed = sorted(same), [p for p in plan.changed if p not in same]
        plan.slice = project_slice.select(plan.index, keys, {p: parsed[p] for p in reporting},
                                          {p: parsed[p] for p in others if p not in same}, same, since)
        plan.removed = list(plan.slice.removed) if plan.slice is not None else []
        if plan.slice is not None and not var_inputs:   # --var-file values are evaluated with the files
            # changed .tf files stand for Terraform by their meaning (ParsedFile.meaning): comments
            # edited, or a content restored, find the summary kept of it
            reread = plan._meanings([p for p in plan.changed if p not in others], settings, options, inputs)
            summary_key = project_slice.terraform_key(key, plan.index, keys,
                                                      {p: pf.meaning for p, pf in reread.items()})
            plan.summary = preloaded.summary if preloaded is not None and preloaded.index is plan.index \
                and preloaded.summary_key == summary_key else project_slice.load_summary(cache, summary_key)
            if plan.summary is not None:
                plan.slice.files = {p for p in plan.slice.files if not plan.index.terraform(p)}
                plan.reread = reread
        return plan

    def _incremental(self, settings: Settings, options: LintOptions, inputs: list[_Input]) -> None:
        """Plan an incremental whole run (mlcost_lint.incremental) when the last one allows it."""
        from mlcost_lint import cache_trees, incremental, project_slice, run_cache

        index = self.index
        last_run = incremental.load(self.cache, self.key, index)
        if last_run is None:
            return
        changed = project_slice.changed_since(index, self.keys)
        terraform_changed = [p for p in changed if index.files[p].terraform]
        # files changed, and files added (project_slice.may_be_added), read with their links
        others = {p for p in changed if not index.files[p].terraform} | set(project_slice.added_since(index, self.keys))
        # parsed for their meaning; the model only of those whose meaning changed (select reads it),
        # cached with it for the slice read next
        parsed = {pf.path: pf for pf in _parse_inputs([i for i in inputs if i.source.display in others],
                                                      settings, options, self.cache, models=False)}
        same = project_slice.same_meaning(index, parsed)
        others -= same
        for path in sorted(others):
            pf = parsed[path]
            if pf.model is None and self.keys.get(path) is not None:
                read_model(pf)
                if pf.model is not None:
                    cache_trees.store(self.cache, self.keys[path], pf)
        plan = project_slice.select(index, self.keys, {}, {p: pf for p, pf in parsed.items() if p not in same}, same,
                                    changed)
        if plan is None:
            return
        reread = self._meanings(terraform_changed, settings, options, inputs)
        # Terraform as the last whole run read it, or not (sliced hooks since may have changed it)
        terraform_key = project_slice.terraform_key(self.key, index, self.keys,
                                                    {p: pf.meaning for p, pf in reread.items()})
        moved = terraform_key != last_run.summary_key
        everywhere = [p for p, e in index.files.items() if e.needs_all and not e.terraform]
        if any(p not in index.files and p in self.keys for p in last_run.dirty):
            return
        # When Terraform changed, the findings of the files every slice reads (ParallelCluster and Azure ML
        # compute, Karpenter NodePools, kustomizations) are recomputed too: their cloud resources' findings
        # may read any Terraform resource (a budget, a provider), and Terraform is then read whole. The files
        # sliced hooks marked since the last whole run are recomputed as the changed ones are.
        joined = project_slice.closure(index, [*plan.joined, *last_run.dirty, *(everywhere if moved else ())])
        plan = project_slice.Slice(plan.files | joined, joined, plan.removed)
        if not project_slice.small(index, plan.files):
            return
        outcome = incremental.outcome(self.cache, last_run)     # loaded last: the largest entry
        if outcome is None:
            return
        # every file the last run had and every file here is either in both or recomputed (added, removed)
        had = {pf.path for pf in outcome.files}
        if had != self.keys.keys() and not all(p in joined for p in had ^ self.keys.keys()):
            return
        # checks reporting at cloud resources read every resource: a summary is not enough for them
        if not moved and not any(index.needs_all(p) for p in joined):
            self.summary = project_slice.load_summary(self.cache, terraform_key)
        report = set(joined)
        if self.summary is not None:
            plan.files = {p for p in plan.files if not index.terraform(p)}
        else:   # Terraform is read: its findings are recomputed
            report |= {p for p, e in index.files.items() if e.terraform}
        self.slice, self.changed, self.report = plan, sorted(others), frozenset(report)
        self.terraform_changed, self.terraform_moved = terraform_changed, moved
        self.last_run, self.last = last_run, outcome
        self.same, self.removed = sorted(same), list(plan.removed)
        self.reread = {**(reread if self.summary is not None else {}),
                       **{p: run_cache.light(parsed[p]) for p in same}}

    def _meanings(self, paths: list[str], settings: Settings, options: LintOptions,
                  inputs: list[_Input]) -> dict[str, ParsedFile]:
        """The .tf files of ``paths`` (changed since the index) that have a
        meaning (ParsedFile.meaning), parsed now (their trees left in the
        cache), as suppression sees them: the Terraform they stand for may be
        one a summary was kept of (comments edited, or a content restored)."""
        from mlcost_lint import run_cache
        from mlcost_lint.cache_trees import HclTrees

        if not paths:
            return {}
        wanted = set(paths)
        chosen = [i for i in inputs if i.source.display in wanted and i.kind is FileKind.TERRAFORM]
        if not chosen:
            return {}
        parsed = _parse_inputs(chosen, settings, options, self.cache, HclTrees(self.cache, settings.max_nesting_depth))
        return {pf.path: run_cache.light(pf) for pf in parsed if pf.meaning is not None}

    def merge(self, inputs: list[_Input], findings: list[Finding], parsed: list[ParsedFile], project: Project | None,
              secrets: frozenset[str], failures: list[RuleFailure]) -> "Merged | None":
        """The incremental run's findings and files with the last run's, or None
        when they cannot be merged (mlcost_lint.incremental: a secret-looking
        value that came or went, a rule failure, a Terraform summary changed)."""
        from mlcost_lint import incremental, project_slice
        from mlcost_lint.model.read_as import read_as

        last = self.last
        if failures or secrets != last.secrets:
            return None
        if self.terraform_moved:     # the other files' findings hold only while the summary is as it was
            old = project_slice.load_summary(self.cache, self.last_run.summary_key) \
                if self.last_run.summary_key else None
            self.new_summary = project_slice.summarise(project, parsed)
            if old is None or old != self.new_summary:
                return None
        # the files other than Terraform, removed ones included (since the index, or since the last
        # run when a hook removed its entry): their findings are recomputed (none)
        others = {p for p in (*self.keys, *self.removed, *(pf.path for pf in last.files))
                  if not self.index.terraform(p)}
        group = incremental.group_of(others)
        recomputed = self.report | ({incremental.TERRAFORM_SIDE} if self.summary is None else set())
        return incremental.merge(last, recomputed.__contains__, group, findings,
                                 [i.source.display for i in inputs], {**self.reread, **{pf.path: pf for pf in parsed}},
                                 read_as(project) if project is not None else [])

    def analyse(self, analyse: Callable[..., "_Analysis"], inputs: list[_Input]) -> "_Analysis | None":
        """``analyse`` over the slice, or None when the slice lacked something
        the reported files depend on (project_slice.closed, or a decision
        that needed a file left out: model.absent), even where no stage
        guards against it: the caller then reads the whole project. When
        what it lacked was files the index has (a workload that now names
        another config, or a new one), the slice is widened to them and
        read once more (project_slice.widened): still a slice."""
        from mlcost_lint import project_slice
        from mlcost_lint.model.absent import AbsentResourceError

        if self.last is not None and not self.report and self.summary is not None:
            # Every file means what it meant to the last whole run (comments edited): no finding is
            # recomputed, so no file is read and no model is made (none of its modules is imported).
            return _Analysis([], None, [], [])
        for attempt in range(2):
            chosen = self.slice.files
            try:
                done = analyse([i for i in inputs if i.source.display in chosen],
                               project_slice.absent_of(self.index, chosen), self.summary, self.report)
            except AbsentResourceError:
                done = None
            reported = {*(self.report_paths or self.slice.joined), *self.changed}
            if done is not None and not done.project.absent.missed \
                    and project_slice.closed(done.project, self.slice, reported):
                done.project.outside_secrets = project_slice.outside_secrets(self.index, chosen)
                return done
            wider = project_slice.widened(self.index, self.slice, done.project, reported) \
                if done is not None and attempt == 0 else None
            if wider is None:
                break
            self.slice = wider
            if self.last is not None:   # an incremental whole run recomputes what the slice joins
                self.report = frozenset({*(self.report or ()), *wider.joined})
        self.slice = None
        return None

    def record(self, project: Project | None, parsed: list[ParsedFile], run_key: str | None) -> None:
        """Keep the index up to date; ``run_key``: where a whole run stored its
        outcome in the run cache, named for the next incremental run
        (mlcost_lint.incremental)."""
        from mlcost_lint import incremental, project_slice

        index = self.index
        if self.slice is not None:
            now = [p for p in (*(self.report_paths or ()), *self.changed, *self.terraform_changed)
                   if p not in index.files or index.files[p].key != self.keys[p]]
            rekey = [p for p in self.same if index.files[p].key != self.keys[p]]
            # a hook: the last whole run that goes with the index as it was still holds outside its slice
            last_run = incremental.load(self.cache, self.key, index) \
                if (now or self.removed) and self.last is None else None
            if now or rekey or self.removed:
                # (the files read: none when every changed file means what it meant, and no project)
                update: dict = project_slice.changes(index, project, parsed, self.keys, now) if now and parsed else {}
                update.update(project_slice.removals(index, self.removed, update))
                read = {pf.path for pf in parsed}
                rekey += sorted(project_slice.same_meaning(index, {     # Terraform files: comments edited
                    p: pf for p, pf in self.reread.items() if p not in read and p not in self.same}))
                update.update(project_slice.rekeyed(index, self.keys, rekey, update))
                project_slice.store_changes(self.cache, self.key, index, update)
            if last_run is not None:
                incremental.mark_dirty(self.cache, self.key, last_run, index, self.slice.joined)
            if self.summary is None and (self.last is not None or any(index.terraform(p)
                                                                       for p in self.changed)):
                # It read Terraform itself: the summary of that content, for the next hooks.
                self._store_summary(project, parsed, index, self.new_summary)
            if self.last is None:
                return
        else:
            index = project_slice.build(project, parsed, self.keys)
            if index is None:
                return
            self._store_summary(project, parsed, index)
            project_slice.store(self.cache, self.key, index)
        if run_key is not None:
            incremental.store(self.cache, self.key, index, project_slice.terraform_key(self.key, index, self.keys),
                              run_key)

    def _store_summary(self, project: Project, parsed: list[ParsedFile], index: "ProjectIndex",
                       summary: "TerraformSummary | None" = None) -> None:
        from mlcost_lint import project_slice

        summary_key = project_slice.terraform_key(self.key, index, self.keys)
        if any(entry.terraform for entry in index.files.values()) \
                and not self.cache.has(summary_key):     # the same Terraform files: the same summary
            project_slice.store(self.cache, summary_key, summary or project_slice.summarise(project, parsed))


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
