"""What the installed tool is made of, as one string: a cached answer
made by other code must never be taken as this code's.

Light on purpose (os and hashlib only): the replay step (replay.py) asks
for it before anything else is imported.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable


@functools.lru_cache(maxsize=1)
def package_fingerprint() -> str:
    """Every file of the installed package (code, catalogues, price table):
    a rule edited in an editable install must not replay old findings.

    Each file counts by its stat stamp (device, inode, size, mtime and
    ctime in nanoseconds), not its bytes: a write to a file moves its ctime,
    which no program can set back, so a changed file never keeps its stamp
    (git's index trusts the same stamps). Reading all ~330 files cost 12 ms
    on every cached run, more than the rest of a small pre-commit run's
    cache lookups; a reinstall of the same code misses once."""
    return tree_fingerprint(sorted({os.path.realpath(p) for p in _package_folders()}))


def _package_folders() -> list[str]:
    # mlcost_lint.rules is found, not imported: its __init__ imports inspect
    # and dataclasses, a cost the replay step must not pay. (An editable
    # install maps it to a folder of its own, so it is asked for.)
    import importlib.util

    import mlcost_lint

    folders = list(mlcost_lint.__path__)
    spec = importlib.util.find_spec("mlcost_lint.rules")
    if spec is not None and spec.submodule_search_locations:
        folders += list(spec.submodule_search_locations)
    return folders


def tree_fingerprint(roots: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for root in roots:
        for rel, st in _package_files(root):
            digest.update(f"{rel}\0{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}\0"
                          .encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _package_files(root: str) -> list[tuple[str, os.stat_result]]:
    """(path relative to ``root``, stat) of every file under it but compiled
    bytecode, sorted by path."""
    out = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel_dir)))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(rel)
                elif entry.is_file() and not entry.name.endswith((".pyc", ".pyo")):
                    out.append((rel, entry.stat()))
            except OSError:
                continue
    out.sort(key=lambda item: item[0])
    return out
