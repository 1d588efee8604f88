"""Breaking a tie between equally good link candidates by folder.

A monorepo often holds copies of one platform (``east/``, ``west/``, or a
vendored copy per team) with the same config paths, node-group names and
labels in each. A workload then matches one candidate per copy equally
well; the one its maintainer means is the one in its own copy. The
candidate sharing strictly the most leading folders with the referencing
file wins; when none shares a folder, or two share as many, the tie stays
a tie (no link), as before.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


# The same few paths are split again for every tie: 71,000 times on bench/'s
# 4-copy tree (8,000 files), a tenth of its rules stage.
@lru_cache(maxsize=16384)
def _folders(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.replace("\\", "/").split("/") if p not in ("", "."))[:-1]


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def nearest(items: Sequence[T], path_of: Callable[[T], str], near: str) -> T | None:
    """The one item whose file shares strictly the most leading folders
    (at least one) with the file ``near``, or None."""
    home = _folders(near)
    scored = sorted(((_shared(_folders(path_of(item)), home), i) for i, item in enumerate(items)), reverse=True)
    if not scored or scored[0][0] == 0 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return items[scored[0][1]]


__all__ = ["nearest"]
