"""Cyclic garbage collection paused while long-lived objects are built.

A run builds tens of thousands of small objects that live until it ends:
parse results, the model and its links, entries loaded from the cache (a
project index, a Terraform summary, a folder walk: about 100,000 objects
each on bench/'s 8,000 files). Every collection while they are built walks
them and finds next to nothing, so collection is paused while a stage
builds them and they are then frozen (``gc.freeze``): later collections
skip them. Measured on bench/: warm parse 3 x faster and the model stage
about 40% faster (2,000 files); the full collections of the model and
link stages were 0.71 s there and 3.64 s on 4 copies of it, the one step
that grew faster than the input (issue 17, item 4); a pre-commit hook on
8,000 files spent 30-40 ms collecting while it loaded the cache's entries,
8-10 ms with them frozen.

Each pause unfreezes what earlier pauses froze first, so a process that
lints many times (tests, editors) can still collect a previous run's
objects: what stays frozen is at most the current run's.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.unfreeze()   # a previous pause's frozen objects become collectable again
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


__all__ = ["gc_paused"]
