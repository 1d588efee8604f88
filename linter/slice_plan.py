"""What a run with a cache reads of the project: a slice of it for a
reporting run (the pre-commit hook: mlcost_lint.project_slice, chosen by
mlcost_lint.slice_choice), the files changed since the last whole run for
an incremental one (mlcost_lint.incremental), and the project index each
run keeps up to date.
pipeline.lint makes the plan, runs its analysis over the slice, and records
what the run read."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, NamedTuple

from mlcost_lint.config import Settings
from mlcost_lint.engine import RuleFailure
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.parse.document import FileKind, ParsedFile
from mlcost_lint.parse_stage import _parse_inputs, read_model
from mlcost_lint.rule import Finding

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache
    from mlcost_lint.incremental import LastRun, Merged
    from mlcost_lint.model.project import Project
    from mlcost_lint.parse_stage import _Input
    from mlcost_lint.pipeline import LintOptions
    from mlcost_lint.project_slice import ProjectIndex, TerraformSummary
    from mlcost_lint.run_cache import CachedRun
    from mlcost_lint.slice_choice import Slice


class Analysis(NamedTuple):
    parsed: list[ParsedFile]
    project: Project | None     # None: an incremental run that read no file (SlicePlan.analyse)
    findings: list[Finding]
    failures: list[RuleFailure]


@dataclass(slots=True)
class Preloaded:
    """The project index (and summary) a hook loads ahead (SlicePlan.preload)."""

    key: str
    index: "ProjectIndex | None"
    summary_key: str | None = None
    summary: "TerraformSummary | None" = None


class SlicePlan:
    """What a reporting run reads of the project (mlcost_lint.project_slice,
    mlcost_lint.slice_choice) and the index it keeps up to date: every run
    with a cache writes one when it read the whole project, and a sliced
    run updates the entries of the reported files and of the other files
    changed since. A whole run that only reports reads the slice of the
    files changed since the last whole run, when that run allows it
    (mlcost_lint.incremental)."""

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
        # Files the index has that are gone (slice_choice.may_go): their entries go, their joins are read.
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
                paths: list[str]) -> "Preloaded | None":
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
            return Preloaded(key, index)
        summary_key = project_slice.terraform_key(key, index, {p: e.key for p, e in index.files.items()
                                                               if e.terraform})
        return Preloaded(key, index, summary_key, project_slice.load_summary(cache, summary_key))

    @classmethod
    def make(cls, cache: ParseCache, settings: Settings, settings_key: str, inputs: list[_Input],
             var_inputs: list[_Input], options: LintOptions, paths: list[str], discovery_errors: bool = False,
             preloaded: "Preloaded | None" = None) -> "SlicePlan | None":
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
        from mlcost_lint import slice_choice

        # files changed or added since the index (a pull), read with the reported ones
        since = slice_choice.changed_since(plan.index, keys)
        plan.changed = [p for p in (*since, *slice_choice.added_since(plan.index, keys)) if p not in reporting]
        others = {p for p in plan.changed if not plan.index.terraform(p)}
        if len(others) > slice_choice.MAX_CHANGED:
            return plan
        # in input order (discovery's: by display path)
        read = [by_path[p] for p in sorted(reporting | others)]
        parsed = {pf.path: pf for pf in _parse_inputs(read, settings, options, cache)}
        same = project_slice.same_meaning(plan.index, {p: parsed[p] for p in others})
        plan.same, plan.changed = sorted(same), [p for p in plan.changed if p not in same]
        plan.slice = slice_choice.select(plan.index, keys, {p: parsed[p] for p in reporting},
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
        from mlcost_lint import slice_choice

        changed = slice_choice.changed_since(index, self.keys)
        terraform_changed = [p for p in changed if index.files[p].terraform]
        # files changed, and files added (slice_choice.may_be_added), read with their links
        others = {p for p in changed if not index.files[p].terraform} | set(slice_choice.added_since(index, self.keys))
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
        plan = slice_choice.select(index, self.keys, {}, {p: pf for p, pf in parsed.items() if p not in same}, same,
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
        joined = slice_choice.closure(index, [*plan.joined, *last_run.dirty, *(everywhere if moved else ())])
        plan = slice_choice.Slice(plan.files | joined, joined, plan.removed)
        if not slice_choice.small(index, plan.files):
            return
        outcome = incremental.outcome(self.cache, last_run)     # loaded last: the largest entry
        if outcome is None:
            return
        # every file the last run had and every file here is either in both or recomputed (added, removed)
        had = {pf.path for pf in outcome.files}
        if had != self.keys.keys() and not all(p in joined for p in had ^ self.keys.keys()):
            return
        # checks reporting at cloud resources read every resource: a summary is not enough for them
        if not moved and not joined:
            # every changed file means what it meant to the last whole run: no finding is recomputed and
            # no slice is read, so the summary's entry is enough (loading it was 6 ms of a touch1% run)
            self.summary = project_slice.UNREAD if self.cache.has(terraform_key) else None
        elif not moved and not any(index.needs_all(p) for p in joined):
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

    def analyse(self, analyse: Callable[..., "Analysis"], inputs: list[_Input]) -> "Analysis | None":
        """``analyse`` over the slice, or None when the slice lacked something
        the reported files depend on (slice_choice.closed, or a decision
        that needed a file left out: model.absent), even where no stage
        guards against it: the caller then reads the whole project. When
        what it lacked was files the index has (a workload that now names
        another config, or a new one), the slice is widened to them and
        read once more (slice_choice.widened): still a slice."""
        from mlcost_lint import project_slice, slice_choice
        from mlcost_lint.model.absent import AbsentResourceError

        if self.last is not None and not self.report and self.summary is not None:
            # Every file means what it meant to the last whole run (comments edited): no finding is
            # recomputed, so no file is read and no model is made (none of its modules is imported).
            return Analysis([], None, [], [])
        if self.summary is project_slice.UNREAD:
            return None     # (not planned: a slice is read only when a finding is recomputed)
        for attempt in range(2):
            chosen = self.slice.files
            try:
                done = analyse([i for i in inputs if i.source.display in chosen],
                               slice_choice.absent_of(self.index, chosen), self.summary, self.report)
            except AbsentResourceError:
                done = None
            reported = {*(self.report_paths or self.slice.joined), *self.changed}
            if done is not None and not done.project.absent.missed \
                    and slice_choice.closed(done.project, self.slice, reported):
                done.project.outside_secrets = slice_choice.outside_secrets(self.index, chosen)
                return done
            wider = slice_choice.widened(self.index, self.slice, done.project, reported) \
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


__all__ = ["Analysis", "Preloaded", "SlicePlan"]
