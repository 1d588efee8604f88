"""Which files of the project a run reads when the project index
(mlcost_lint.project_slice) allows a slice, and whether what it read was
enough: the files a reporting run (the pre-commit hook) reads, and those an
incremental whole run reads (the slice of the files changed since the last
whole run: mlcost_lint.incremental). slice_plan.SlicePlan plans a run with
them.

The slice is used only when the reported and changed files offer the same
names as then (so every other file's links are as the index has them), no
more than MAX_CHANGED other files changed, and every file added or removed
since reaches others only through its own joins (may_be_added, may_go: a
workload, not a config, a ConfigMap, Terraform or a file every slice
reads). A changed file whose meaning (ParsedFile.meaning: its tree or
documents, not its comments) is the index's counts as unchanged; a changed
Terraform file is read with all of Terraform unless a summary of its
meaning is kept. The run checks afterwards that the reported and changed
files' workloads linked no config outside the slice (``closed``) and that
nothing missed; when what it lacked was files the index has, the slice is
widened to them once (``widened``), otherwise the whole project is read,
as before, and a fresh index is written. Values of the files left out that
look secret still reach the redaction (Project.outside_secrets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.project_slice import _needs_all, offers, stand_ins_of

if TYPE_CHECKING:
    from mlcost_lint.model.absent import Absent
    from mlcost_lint.model.project import Project
    from mlcost_lint.parse.document import ParsedFile
    from mlcost_lint.project_slice import IndexedFile, ProjectIndex

# A slice above this share of the project's files saves too little to be
# worth the index's bookkeeping: the whole project is read.
MAX_SHARE = 0.6
# Past this many other files changed since the index (besides Terraform), a
# reporting run reads the whole project (and writes a fresh index).
MAX_CHANGED = 64


@dataclass(slots=True)
class Slice:
    files: set[str]        # what the run reads
    joined: set[str]       # the reported files and the files linked to them, closed over links
    removed: tuple[str, ...] = ()   # files the index has that are gone (may_go): in ``joined``, their findings go


def changed_since(index: ProjectIndex, keys: dict[str, str | None]) -> list[str]:
    """The files whose content (parse key) is not what the index recorded."""
    get = index.files.get
    return [path for path, key in keys.items() if (entry := get(path)) is not None and entry.key != key]


def added_since(index: ProjectIndex, keys: dict[str, str | None]) -> list[str]:
    """The files the index does not have (new since it was written)."""
    return sorted(keys.keys() - index.files.keys())


def removed_since(index: ProjectIndex, keys: dict[str, str | None]) -> list[str]:
    """The files the index has that are gone."""
    return sorted(index.files.keys() - keys.keys())


def may_go(entry: IndexedFile) -> bool:
    """Whether a file removed since the index leaves a slice enough: one
    that reached others only through its joins (may_be_added, as the index
    recorded it); those are read again without it."""
    return not entry.needs_all and not entry.terraform and not entry.stand_ins


def may_be_added(pf: ParsedFile) -> bool:
    """Whether a file new since the index can be read with a slice: one that
    reaches others only through its own links (a workload, a Slurm job): not
    Terraform, not a file every slice reads, and offering no name another
    file may resolve to it (a config, a ConfigMap: who names them is not in
    the index)."""
    return not _needs_all(pf) and not stand_ins_of(pf)


def select(index: ProjectIndex, keys: dict[str, str | None], reported: dict[str, ParsedFile],
           changed: dict[str, ParsedFile] | None = None, same: Iterable[str] = (),
           since: Iterable[str] | None = None) -> Slice | None:
    """The files to read for the reported files (display path -> their
    parse result now), or None when the whole project must be read: a
    file added or removed that reaches more than its joins, a reported or
    changed file that needs the whole project (a file that changes the
    model of others) or offers other names than before, or a slice that is
    most of the project.

    ``changed``: the other files changed since the index was written (the
    first hook after a pull), Terraform aside; they are read with their
    links, as the reported files are. Their names are those of before, so
    every other file's links are as the index has them; their own links are
    what the run finds (closed() checks them). Changed Terraform files make
    the slice read Terraform itself unless a summary of their content is
    kept (the caller's choice).

    ``same``: other files changed whose meaning is the index's (same_meaning):
    no file reads them differently, so they count as unchanged.

    ``since``: changed_since(index, keys), when the caller has it.

    A file new since the index is read as a changed one when it is among
    ``reported`` or ``changed`` and may_be_added; its links are what the
    run finds (the caller widens the slice to what they reach: widened).
    A file gone since the index (may_go) joins the slice with its joins,
    which are read again without it."""
    files = index.files
    changed = changed or {}
    same = set(same)
    if None in keys.values():
        return None
    removed: list[str] = []     # set when the files are not the index's
    if keys.keys() != files.keys():
        removed = removed_since(index, keys)
        if not all(may_go(files[path]) for path in removed):
            return None
        for path in added_since(index, keys):
            pf = reported.get(path) or changed.get(path)
            if pf is None or not may_be_added(pf):
                return None
    if any(path not in reported and path not in changed and path not in same and not files[path].terraform
           for path in (changed_since(index, keys) if since is None else since)):
        return None
    for path, pf in (*reported.items(), *changed.items()):
        old = files.get(path)
        if old is None:
            continue        # added: checked above
        if old.needs_all or _needs_all(pf) or offers(stand_ins_of(pf)) != offers(old.stand_ins):
            return None
    # a removed file's joins are read again without it (it is in ``joined``: its findings go)
    joined = closure(index, [*reported, *changed, *removed])
    chosen = joined | {path for path, entry in files.items() if entry.needs_all}
    return Slice(chosen, joined, tuple(removed)) if small(index, chosen) else None


def closure(index: ProjectIndex, seeds: Iterable[str]) -> set[str]:
    """``seeds`` and every file joined to them, closed over the index's joins."""
    files = index.files
    todo = list(seeds)
    joined = set(todo)
    while todo:
        entry = files.get(todo.pop())
        for other in entry.partners if entry is not None else ():     # an added file: its links are found
            if other not in joined:
                joined.add(other)
                todo.append(other)
    return joined


def small(index: ProjectIndex, chosen: set[str]) -> bool:
    """Whether a slice reading ``chosen`` is worth it (MAX_SHARE). Terraform
    files count for nothing: a TerraformSummary usually stands for them."""
    files = index.files
    others = sum(1 for entry in files.values() if not entry.terraform)
    return sum(1 for path in chosen if path not in files or not files[path].terraform) <= MAX_SHARE * others


def absent_of(index: ProjectIndex, chosen: set[str]) -> "Absent":
    """The stand-ins of the configs and ConfigMaps the slice does not read, in scan order."""
    from mlcost_lint.model.absent import Absent, AbsentConfig

    absent = Absent()
    for path, entry in index.files.items():
        if path in chosen:
            continue
        for item in entry.stand_ins:
            (absent.configs if isinstance(item, AbsentConfig) else absent.config_maps).append(item)
    return absent


# -- after the run: whether the slice was enough -------------------------------

def closed(project: "Project", plan: Slice, reported: Iterable[str]) -> bool:
    """Whether the reported files' workloads linked only configs joined to
    them before: a reported workload that now names another config needs
    that config's other runners (a launch-line override holds only when
    all of them pass the same flags), which the slice may not have read."""
    reported = set(reported)
    return all(link.config.document.path in plan.joined for link in project.links.configs
               if link.workload.document.path in reported)


def widened(index: ProjectIndex, plan: Slice, project: "Project", reported: Iterable[str]) -> Slice | None:
    """The slice a run over ``plan`` should have read, when what it lacked
    was files the index has: those a decision needed (model.absent, every
    miss naming its files) and the configs the reported workloads now link
    outside their joins (closed), each with its joins (closure: a config's
    other runners). None when it lacked something else (a Terraform
    resource left out), nothing can be named, or the slice grows too large."""
    needed = project.absent.needed if project.absent is not None else set()
    if needed is None:
        return None
    reported = set(reported)
    wanted = set(needed) | {link.config.document.path for link in project.links.configs
                            if link.workload.document.path in reported and link.config.document.path not in plan.joined}
    if not wanted or any(path not in index.files for path in wanted):
        return None
    extra = closure(index, wanted)
    wider = Slice(plan.files | extra, plan.joined | extra, plan.removed)
    return wider if small(index, wider.files) else None


def outside_secrets(index: ProjectIndex, chosen: set[str]) -> frozenset[str]:
    """The secret-looking values of the files a slice does not read. Not
    Terraform's: a slice reads its files or a summary holding their secrets
    (and the index may have older Terraform content than the summary)."""
    values: set[str] = set()
    for path, entry in index.files.items():
        if path not in chosen and entry.secrets and not entry.terraform:
            values |= entry.secrets
    return frozenset(values)
