"""How the parse stage splits its work among worker processes: chunks of
about the same size (``chunks``), runs in input order when the model is
built as results arrive (``ordered_chunks``), and, in a cold run, the
Terraform groups whose roots a worker evaluates kept whole, first
(``fed_chunks``: model/terraform/worker_roots.py). parse_stage._parse_many
hands the chunks to the pool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlcost_lint.parse.document import TERRAFORM_KINDS

if TYPE_CHECKING:
    from mlcost_lint.parse_stage import _ModelFeed, _ParseTask

# Chunks per worker: enough that one slow chunk does not leave the other
# workers idle at the end, few enough that per-chunk overhead stays small.
CHUNKS_PER_JOB = 4
# With the model built while the workers parse (_ModelFeed), chunks are
# runs in input order, not size-balanced bins: more of them, so that the
# last one to finish is short.
FED_CHUNKS_PER_JOB = 8
# A worker that evaluates a Terraform group's roots (worker_roots.py) spends
# about 0.4 x the group's parse time on them (real corpus: 0.42 s evaluating,
# 1.03 s parsing the 797 .tf/.tfvars files, one process).
EVALUATION_WEIGHT = 1.4


def chunks(tasks: list[_ParseTask], n: int) -> list[list[_ParseTask]]:
    """Split by size so each chunk gets about the same number of bytes
    (HCL parsing time is roughly linear in size). Largest first within a
    chunk and chunks in order of load, so the pool starts the long work
    first."""
    buckets: list[list[_ParseTask]] = [[] for _ in range(n)]
    loads = [0] * n
    for task in sorted(tasks, key=lambda t: (-len(t.data or b""), t.index)):
        i = loads.index(min(loads))
        buckets[i].append(task)
        loads[i] += len(task.data or b"")
    return [b for b in buckets if b]


def fed_chunks(tasks: list[_ParseTask], jobs: int, feed: "_ModelFeed") -> list[tuple[list[_ParseTask], Any]]:
    """The chunks of a parse that feeds the model (ordered_chunks), each
    with the Terraform groups whose roots its worker evaluates (None: none).
    In a run that parses every Terraform file now, the .tf and .tfvars files
    come first, each group whole in one chunk (worker_roots.py)."""
    n = jobs * FED_CHUNKS_PER_JOB
    ordered = feed.order(tasks)
    inputs = feed.worker_inputs()
    if inputs is None:
        return [(chunk, None) for chunk in ordered_chunks(ordered, n)]
    from mlcost_lint.model.terraform.worker_roots import terraform_groups

    def size(t: "_ParseTask") -> float:
        length = len(t.data or b"")
        return length * EVALUATION_WEIGHT if t.kind in TERRAFORM_KINDS else length

    share = max(1.0, sum(size(t) for t in ordered) / n)
    # a set of joined directories over a share is split by its roots (modules they share parsed twice)
    groups = terraform_groups([(t.display, t.kind, t.data) for t in ordered], share / EVALUATION_WEIGHT)
    if not any(g.evaluate for g in groups):
        return [(chunk, None) for chunk in ordered_chunks(ordered, n)]
    feed.use_worker_roots()
    grouped = {i for g in groups for i in g.members}
    weights = [sum(len(ordered[i].data or b"") for i in g.members) * (EVALUATION_WEIGHT if g.evaluate else 1.0)
               for g in groups]
    rest = [t for i, t in enumerate(ordered) if i not in grouped]
    # first fit, heaviest first: a group heavier than a share is a chunk of its own
    bins: list[tuple[float, list]] = []
    for g, w in sorted(zip(groups, weights), key=lambda gw: -gw[1]):
        for k, (load, members) in enumerate(bins):
            if load + w <= share:
                bins[k] = (load + w, members + [g])
                break
        else:
            bins.append((w, [g]))
    out: list[tuple[list[_ParseTask], Any]] = []
    for _, in_bin in bins:
        # sent: each file by the one group that does not have it as an extra; then the extras,
        # parsed for the evaluations only
        sent = sorted({i for g in in_bin for i in g.members if i not in g.extra})
        extra = sorted({i for g in in_bin for i in g.members} - set(sent))
        at = {i: k for k, i in enumerate(sent + extra)}
        members_of = [[at[i] for i in g.members] for g in in_bin if g.evaluate]
        out.append(([ordered[i] for i in sent + extra], (inputs, members_of, len(sent)) if members_of else None))
    out.extend((chunk, None) for chunk in ordered_chunks(rest, max(1, n - len(out))) if chunk)
    return out


def ordered_chunks(tasks: list[_ParseTask], n: int) -> list[list[_ParseTask]]:
    """Split ``tasks``, in the order given, into about ``n`` runs of about
    the same number of bytes: the pool hands them out in that order, so the
    results arrive roughly in it (what _ModelFeed wants)."""
    total = sum(len(t.data or b"") for t in tasks)
    share = max(1, total // n)
    chunks: list[list[_ParseTask]] = [[]]
    size = 0
    for task in tasks:
        if size >= share and chunks[-1]:
            chunks.append([])
            size = 0
        chunks[-1].append(task)
        size += len(task.data or b"")
    return chunks


__all__ = ["chunks", "fed_chunks", "ordered_chunks"]
