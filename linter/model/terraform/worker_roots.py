"""Terraform root modules evaluated by the parse workers of a cold run.

A cold run parses in worker processes and used to send every .tf file's
tree to the parent, which then evaluated every root module itself while
the workers parsed the rest (parse_stage._ModelFeed). On the real corpus
(2,366 files, 744 .tf, 2 CPUs) that was the largest piece of the parent's
work: sending the trees and evaluating 174 roots, 0.6-0.8 s of a 3 s run.

Here the .tf and .tfvars files are split into *groups* before they are
parsed: directories joined by the local module sources their text names
(``source = "../modules/x"``, found by a pattern over the bytes), each
directory whole; a set of joined directories larger than a worker's share
(ten environments calling one set of modules) is split by its roots, each
group holding some roots and every directory they reach (a module shared
by two groups is parsed in both and sent by one). One worker task parses a
group and evaluates its root modules with the same code the parent runs
(build_terraform, recording each root's evaluation as the root cache
does: root_cache.RootEvaluation), and sends the parent each file without
its tree (its outline, as a file from the parse cache has) and the
evaluations. The parent replays an evaluation where it would evaluate that
root (:class:`WorkerRoots`, given to build_terraform as its root cache), so
the model is the one a serial run builds, in the same order and with the
same budget accounting.

The parent replays a root only when the worker had everything its
evaluation reads: every directory the root reaches in the call graph the
parent builds from every file's outline is in the group, and so is every
scanned module directory the evaluation looked up. Any other root (a
pattern that missed a call, a group with a .tf.json file, a worker that
failed, the budget) is evaluated by the parent, which then loads the trees
it needs (cache_trees.HclTrees: from the parse cache, or parsed again from
the bytes).
"""

from __future__ import annotations

import pickle
import posixpath
import re
from typing import Any, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.terraform import dir_of
from mlcost_lint.parse.document import TERRAFORM_KINDS, FileKind

# A local module source in a .tf file's text: what ModuleSource's outline
# names (parse.hcl.outline_of), and more (any `..source = "./..."`
# attribute): a superset only joins more directories into one group. It
# starts with a literal, which the regex engine searches for fast (a leading
# \b made it try every position: 45 ms over the real corpus's 2.3 MB of .tf).
_LOCAL_SOURCE = re.compile(rb'source\s*=\s*"(\.\.?/[^"\\\n]*)"')


@dataclass(slots=True)
class TerraformGroup:
    """Files (by position in the caller's list) of module directories that
    call only each other, or, for a large set of such directories, of some
    of its roots and every directory they reach. ``extra``: the members
    another group sends (a module shared by roots in two groups is parsed
    in both, sent by one). ``evaluate``: the worker evaluates its roots (not
    when a directory has a .tf.json file, which the parent reads)."""

    members: list
    dirs: frozenset
    evaluate: bool
    extra: frozenset = frozenset()


def terraform_groups(files: list[tuple[str, FileKind, bytes | None]],
                     max_bytes: float | None = None) -> list[TerraformGroup]:
    """Groups of ``files`` (display path, kind, bytes); every Terraform
    file (.tf, .tf.json, .tfvars) is sent by exactly one group, other files
    are in none. A set of joined directories over ``max_bytes`` is split by
    its roots (as the text names its calls), so that workers share it."""
    by_dir: dict[str, list[int]] = {}
    for i, (path, kind, _) in enumerate(files):
        if kind in TERRAFORM_KINDS and kind is not FileKind.TERRAFORM_PLAN:
            by_dir.setdefault(dir_of(path), []).append(i)
    parent = {d: d for d in by_dir}
    calls: dict[str, set[str]] = {}

    def find(d: str) -> str:
        while parent[d] != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    for d, members in by_dir.items():
        for i in members:
            path, kind, data = files[i]
            if kind is not FileKind.TERRAFORM or not data:
                continue
            for match in _LOCAL_SOURCE.finditer(data):
                child = posixpath.normpath(posixpath.join(d, match.group(1).decode("utf-8", "replace")))
                if child in parent and child != d:
                    calls.setdefault(d, set()).add(child)
                    a, b = find(d), find(child)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
    joined: dict[str, list[str]] = {}
    for d in sorted(by_dir):
        joined.setdefault(find(d), []).append(d)
    size = {d: sum(len(files[i][2] or b"") for i in members) for d, members in by_dir.items()}
    groups = []
    for dirs in joined.values():
        evaluate = all(files[i][1] is not FileKind.TERRAFORM_JSON for d in dirs for i in by_dir[d])
        whole = TerraformGroup(sorted(i for d in dirs for i in by_dir[d]), frozenset(dirs), evaluate)
        total = sum(size[d] for d in dirs)
        if max_bytes is None or not evaluate or total <= max_bytes:
            groups.append(whole)
            continue
        split = _split(dirs, calls, by_dir, size, max_bytes)
        # worth it when the shared modules parsed again are small (not when every root of the set
        # calls one large module: the examples of a module repository)
        again = sum(len(files[i][2] or b"") for g in split for i in g.extra)
        groups.extend(split if again <= _MAX_PARSED_AGAIN * total else [whole])
    return groups


# A set of joined directories is split by its roots only if the modules
# parsed again in more than one group are at most this share of its bytes:
# on the real corpus, splitting every set over a share parsed 2.3 MB of
# its 2.3 MB of .tf twice (module repositories whose examples all call the
# module) and made the cold run 0.6 s slower.
_MAX_PARSED_AGAIN = 0.25


def _split(dirs: list[str], calls: dict[str, set[str]], by_dir: dict[str, list[int]], size: dict[str, int],
           max_bytes: float) -> list[TerraformGroup]:
    """One large set of joined directories as groups of roots with all they
    reach, up to ``max_bytes`` a group (a root that reaches more is a group
    of its own); the directories no root reaches go with the first group."""
    called = {c for d in dirs for c in calls.get(d, ())}
    roots = [d for d in dirs if d not in called]
    reach: dict[str, set[str]] = {}
    for r in roots:
        seen, stack = {r}, [r]
        while stack:
            for c in calls.get(stack.pop(), ()):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        reach[r] = seen
    bins: list[set[str]] = []
    for r in sorted(roots, key=lambda r: -sum(size[d] for d in reach[r])):
        for b in bins:
            if sum(size[d] for d in b | reach[r]) <= max_bytes:
                b |= reach[r]
                break
        else:
            bins.append(set(reach[r]))
    if not bins:
        bins.append(set())
    bins[0] |= set(dirs) - set().union(*bins)
    sent: set[str] = set()
    out = []
    for b in bins:
        extra = frozenset(i for d in b & sent for i in by_dir[d])
        sent |= b
        out.append(TerraformGroup(sorted(i for d in b for i in by_dir[d]), frozenset(b), True, extra))
    return out


def preload() -> None:
    """Import what evaluating a root imports, before the parse workers are
    forked: once here (the parent imports it to replay anyway), not in each
    worker (24 modules, 10-20 ms a process)."""
    from mlcost_lint.model.terraform import (  # noqa: F401
        addresses, blocks, budget, builder, declarations, dependencies, evaluator, functions, functions_collections,
        functions_encoding, functions_numbers, functions_registry, functions_strings, plan, regions, registry,
        registry_s3, root_cache, tfjson)


@dataclass(slots=True)
class GroupInputs:
    """What a root's evaluation reads besides its directories' files: the
    evaluation budget, the ``--var-file`` files (parsed) and ``--var`` values."""

    max_evaluation_steps: int
    var_files: list
    cli_vars: dict


class _Recorder:
    """A root cache that holds nothing and keeps what build_terraform
    stores: each root's evaluation, pickled as it is stored (before
    anything after the roots touches the resources)."""

    def __init__(self) -> None:
        self.dir_files: dict[str, list[str]] = {}
        self.meanings: dict[str, str] = {}
        self.called: dict[str, set[str]] = {}
        self.found: dict[str, tuple[tuple[str, ...], bytes]] = {}

    def manifest_key(self, root: str, var_paths: list[str]) -> str:
        return root

    def lookup(self, key: Any) -> None:
        return None

    def store(self, key: Any, dirs: Iterable[str], evaluation: Any) -> None:
        self.found[key] = (tuple(sorted(set(dirs))), pickle.dumps(evaluation, protocol=pickle.HIGHEST_PROTOCOL))


def evaluate_group(parsed: list, inputs: GroupInputs) -> dict[str, tuple[tuple[str, ...], bytes]]:
    """Worker side: the root evaluations of one group's parsed files (the
    files the parent's ProjectBuilder.terraform would take: no errors, not
    skipped), by root directory: (directories read, pickled RootEvaluation).
    Empty when anything fails: the parent then evaluates those roots."""
    from mlcost_lint.model.terraform import build_terraform

    files = [pf for pf in parsed if pf is not None and not pf.errors and not pf.skipped_reason
             and pf.kind in TERRAFORM_KINDS]
    if not any(pf.kind is FileKind.TERRAFORM for pf in files):
        return {}
    recorder = _Recorder()
    try:
        build_terraform(files, _Budgeted(inputs.max_evaluation_steps), var_files=inputs.var_files,
                        cli_vars=inputs.cli_vars, root_cache=recorder, jobs=1)
    except Exception:  # noqa: BLE001 - RecursionError included: the parent evaluates, and reports, itself
        return {}
    return recorder.found


@dataclass(frozen=True, slots=True)
class _Budgeted:
    """The one setting build_terraform reads."""

    max_evaluation_steps: int


class WorkerRoots:
    """Parent side: the evaluations the workers sent, given to
    build_terraform as its root cache (with the run's own root cache, if
    any, behind it: an evaluation replayed from a worker is stored there
    too, for the next run). A root is replayed only as the module
    docstring says; a key is ``("worker", root, disk key)``. It serves
    build_terraform with one job (no prefetch: ProjectBuilder.terraform),
    so it answers only what one job asks of a root cache."""

    def __init__(self, disk: Any = None) -> None:
        self.disk = disk
        # root dir -> (its group's directories, directories its evaluation read, (evaluation, its pickle))
        self.found: dict[str, tuple[frozenset, tuple[str, ...], tuple[Any, bytes]]] = {}
        self._dir_files: dict[str, list[str]] = {}
        self._meanings: dict[str, str] = {}
        self.called: dict[str, set[str]] = {}

    def add(self, dirs: frozenset, found: dict[str, tuple[tuple[str, ...], bytes]]) -> None:
        """A worker's evaluations, unpickled now: while the workers still
        parse, not when Terraform is modelled after the last of them."""
        for root, (read, payload) in found.items():
            self.found[root] = (dirs, read, (pickle.loads(payload), payload))

    # build_terraform sets these on its root cache: the disk cache needs them too
    @property
    def dir_files(self) -> dict[str, list[str]]:
        return self._dir_files

    @dir_files.setter
    def dir_files(self, value: dict[str, list[str]]) -> None:
        self._dir_files = value
        if self.disk is not None:
            self.disk.dir_files = value

    @property
    def meanings(self) -> dict[str, str]:
        return self._meanings

    @meanings.setter
    def meanings(self, value: dict[str, str]) -> None:
        self._meanings = value
        if self.disk is not None:
            self.disk.meanings = value

    def manifest_key(self, root: str, var_paths: list[str]) -> Any:
        disk_key = self.disk.manifest_key(root, var_paths) if self.disk is not None else None
        if self._usable(root):
            return ("worker", root, disk_key)
        return disk_key

    def _usable(self, root: str) -> bool:
        hit = self.found.get(root)
        if hit is None:
            return False
        group, read, _ = hit
        from mlcost_lint.model.terraform import _reachable

        # the worker had every directory the root reaches in the parent's call graph, and every
        # scanned directory its evaluation looked up (a call the pattern missed fails here)
        return _reachable([root], self.called) <= group and all(d in group or d not in self._dir_files for d in read)

    def lookup(self, key: Any) -> Any:
        if isinstance(key, tuple):
            _, root, disk_key = key
            _, read, (evaluation, payload) = self.found.pop(root)
            if disk_key is not None:    # for the next run: the worker's pickle, not pickled again
                self.disk.store(disk_key, read, evaluation, payload)
            return evaluation
        return self.disk.lookup(key) if self.disk is not None else None

    def store(self, key: Any, dirs: Iterable[str], evaluation: Any) -> None:
        if isinstance(key, tuple):
            key = key[2]
        if key is not None and self.disk is not None:
            self.disk.store(key, dirs, evaluation)


__all__ = ["GroupInputs", "TerraformGroup", "WorkerRoots", "evaluate_group", "preload", "terraform_groups"]
