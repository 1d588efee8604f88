"""A whole run after a few files changed: the findings of the files the
change cannot reach are the last whole run's.

The run cache (run_cache.py) answers an unchanged tree; any change missed
it and re-did every stage over the whole project. With 1% of bench/'s
2,000 files changed, that was about half a cold run, though the findings
of most files could not have changed. Which ones can is what the project
index (project_slice.py) knows for the pre-commit hook: a file's findings
depend on the files joined to it (its link component), the files read by
every slice, what every other file offers by name, the Terraform side as a
summary (project_slice.TerraformSummary), and the project's secret-looking
values. So when

- the index is the one the last whole run left, or one sliced hooks
  changed since (each marks the files its slice joined: LastRun.dirty,
  recomputed as changed files are),
- every changed file other than Terraform offers the same names as before
  and is not one that every slice reads, or means what it meant
  (ParsedFile.meaning: comments edited), and every file added or removed
  since reaches others only through its joins (slice_choice.select),
- Terraform is as the last whole run read it (each .tf file compared by
  its meaning, ParsedFile.meaning: a comment edited that moved no line
  changes nothing), or its summary is equal to the last one (the node
  pools, buckets and other resources links read, with their locations,
  and the secrets of the Terraform side),
- the run's secret-looking values are those of the last run (the stored
  findings were redacted with them), and no rule failed,

the run reads the slice of the changed files (slice_choice.select), with
the files every slice reads and their joins, and every Terraform file when
one changed its meaning (a .tf file whose comments alone changed is read
for its suppressions only). It recomputes the findings located in those
files (and, when it read Terraform, every finding located outside the other
files: the Terraform side's), and takes every other file's findings, its
parsed file as suppression sees it, its fixes and what it was read as from
the last run (a removed file's go with it; a file added is read and
recomputed). When every changed file means what it meant, it reads no
file at all. Suppression, unused-suppression findings and the reporters
then run over the whole as usual. Otherwise it reads the whole project, as before.

The last run is the run cache's entry of it (run_cache.CachedRun), which
every whole run that reports stores; LastRun names it, with the index it
goes with. Each incremental run names its own, so a chain of edits stays
incremental.
bench/incremental_check.py is the gate: the output must be the same as a
run with no cache, file for file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.parse.document import ParsedFile
from mlcost_lint.pickling import pickled_by_fields

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache
    from mlcost_lint.project_slice import ProjectIndex
    from mlcost_lint.rule import Finding
    from mlcost_lint.run_cache import CachedRun

# The findings located outside every file the index counts as other than
# Terraform: in Terraform files, plan files and module files outside the scan.
TERRAFORM_SIDE = "\0terraform"


@pickled_by_fields
@dataclass(slots=True)
class LastRun:
    """Which run-cache entry (run_cache.CachedRun: findings priced, redacted
    and suppressed, the files as suppression sees them, fixes, what each
    file was read as) is the last whole run, and what it goes with."""

    base: str                       # the ProjectIndex.stamp it goes with
    updated: dict[str, str]         # the keys of that index's update entries it goes with
    summary_key: str | None         # project_slice.terraform_key of the Terraform it read
    run: str                        # its run-cache key
    # Files whose findings may differ from the run's since: the joins of the
    # files sliced hooks read after it (mark_dirty). The next whole run
    # recomputes them as it does the files changed since the index.
    dirty: frozenset[str] = frozenset()


def _key(index_key: str) -> str:
    import hashlib

    from mlcost_lint.project_slice import INDEX_PREFIX

    return INDEX_PREFIX + hashlib.sha256(f"last-run\0{index_key}".encode()).hexdigest()[1:]


def _generation(index: "ProjectIndex") -> dict[str, str]:
    return {path: entry.key if entry is not None else "" for path, entry in index.updated.items()}


def load(cache: "ParseCache", index_key: str, index: "ProjectIndex") -> LastRun | None:
    """The last whole run, when it goes with ``index`` as loaded."""
    last = cache.get(_key(index_key))
    if not isinstance(last, LastRun) or last.base != index.stamp or last.updated != _generation(index):
        return None
    cache.keep(last.run)    # its outcome: the next whole run reads it, whoever prunes now
    return last


def outcome(cache: "ParseCache", last: LastRun) -> "CachedRun | None":
    """Its outcome (a run-cache entry, which may have been pruned since)."""
    from mlcost_lint import run_cache

    return run_cache.load(cache, last.run)


def store(cache: "ParseCache", index_key: str, index: "ProjectIndex", summary_key: str | None,
          run_key: str) -> None:
    """After a whole run that stored its outcome under ``run_key``."""
    cache.put(_key(index_key), LastRun(index.stamp, _generation(index), summary_key, run_key))


def mark_dirty(cache: "ParseCache", index_key: str, last: LastRun, index: "ProjectIndex",
               paths: Iterable[str]) -> None:
    """After a sliced hook changed ``index`` (``last`` went with it before):
    the last whole run still holds for every file but ``paths`` (the files
    the hook's slice joined: every file whose findings its changed files
    can reach) and those marked before. Terraform is compared by its files'
    meaning when the next whole run reads (LastRun.summary_key)."""
    cache.put(_key(index_key), LastRun(index.stamp, _generation(index), last.summary_key, last.run,
                                       last.dirty | frozenset(paths)))


def group_of(other_files: set[str]) -> Callable[[str], str]:
    """The group a finding's path belongs to: the path itself for the files
    other than Terraform (``other_files``), TERRAFORM_SIDE for the rest."""
    return lambda path: path if path in other_files else TERRAFORM_SIDE


@dataclass(slots=True)
class Merged:
    findings: list            # every finding before suppression: the recomputed and the reused
    fixes: dict[int, object]  # id(finding) -> Fix, for the reused ones
    files: list[ParsedFile]   # in the run's order
    read_as: list             # in path order


def merge(last: "CachedRun", recomputed: Callable[[str], bool], group: Callable[[str], str], new: list["Finding"],
          order: list[str], parsed: dict[str, ParsedFile], read_as_now: list) -> Merged:
    """The new findings of the recomputed groups with the last run's of the
    others; the files read now with the last run's light copies of the rest
    (``order``: every display path in the run's order)."""
    from mlcost_lint.run_cache import fixes_by_id

    findings = [f for f in new if recomputed(group(f.location.path))]
    fixes = fixes_by_id(last.kept, last.fixes)
    kept_fixes: dict[int, object] = {}
    for f in last.kept:
        if not recomputed(group(f.location.path)):
            findings.append(f)
            if id(f) in fixes:
                kept_fixes[id(f)] = fixes[id(f)]
    findings.extend(f for f in last.suppressed if not recomputed(group(f.location.path)))
    files = {pf.path: pf for pf in last.files}
    gone = files.keys() - set(order)        # files removed since the last run: what they were read as goes
    read_as = {**{r.path: r for r in last.read_as if r.path not in gone}, **{r.path: r for r in read_as_now}}
    return Merged(findings, kept_fixes, [parsed[p] if p in parsed else files[p] for p in order],
                  [read_as[p] for p in sorted(read_as)])
