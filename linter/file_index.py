"""The file index: each file's parse-cache key by its ``stat``, so a run over
files that did not change neither reads nor hashes them (git's index and
ruff's cache do the same; on bench/'s 8,000-file tree reading and hashing
was 0.19 s of a 1.15 s warm run).

An entry is trusted only when the file's device, inode, size, type,
modification and change times are all as recorded. The change time cannot
be set by a user (``touch -d`` and ``cp -p`` set it to now), and a file
replaced by a rename has a new inode. A file changed within
:data:`RACY_SECONDS` before the run that read it is not recorded (git's
"racily clean" entries): a second write in the same timestamp tick, after
the read, would leave its times as recorded, so such a file is read and
hashed again next run.

The index is one entry of the parse cache (signed like every entry, so a
committed cache folder cannot supply one), per working directory and cache
salt (tool version, parse code, parse settings). It only says which key a
file's content had; the content itself is read again whenever something has
to be parsed (a missing parse result, a .tf tree to re-parse).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import field
from typing import TYPE_CHECKING

from mlcost_lint.lean_dataclass import dataclass

if TYPE_CHECKING:
    from mlcost_lint.discover import SourceFile
    from mlcost_lint.cache import ParseCache
    from mlcost_lint.probe_ahead import Probe

# "i" + hex: the index sits in shard folders i0..if, apart from parse entries (00..ff) and runs (r0..rf).
INDEX_PREFIX = "i"
RACY_SECONDS = 2      # FAT and some network file systems keep times in 2-second steps

# (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns, kind)
Stamp = tuple[int, int, int, int, int, str]


def stamp_of(found: "Probe", kind: str) -> Stamp | None:
    """What an entry records of a regular file, or None for anything else."""
    regular, dev, ino, size, mtime_ns, ctime_ns = found
    return (dev, ino, size, mtime_ns, ctime_ns, kind) if regular else None


@dataclass(slots=True)
class FileIndex:
    cache: "ParseCache"
    key: str
    entries: dict[str, tuple[Stamp, str]] = field(default_factory=dict)   # display -> (stamp, parse key)
    # Files changed since this time are not recorded (see RACY_SECONDS).
    trusted_before_ns: int = 0
    seen: dict[str, tuple[Stamp, str]] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def open(cls, cache: "ParseCache", cwd: str) -> "FileIndex":
        h = hashlib.sha256(b"file-index\0" + cache.salt + b"\0" + cwd.encode("utf-8", "surrogatepass"))
        index = cls(cache, INDEX_PREFIX + h.hexdigest()[1:],
                    trusted_before_ns=time.time_ns() - RACY_SECONDS * 1_000_000_000)
        loaded = cache.get(index.key)
        if isinstance(loaded, dict):
            index.entries = loaded
        return index

    def known_keys(self, files: "list[SourceFile]", probes: "list[Probe | None]", max_bytes: int) -> list[str | None]:
        """The parse key recorded for each of ``files`` whose stat (``probes``,
        in order) is unchanged, a regular file of at most ``max_bytes``; None
        for any other (the standard input is never in the index). One loop,
        no call per file: keying bench/'s 8,000 files in a pre-commit hook
        took 16-25 ms with a lookup call each, 8-9 ms so."""
        entries, seen = self.entries, self.seen
        out: list[str | None] = []
        append = out.append
        for sf, found in zip(files, probes):
            key = None
            if found is not None and found[0] and found[3] <= max_bytes:
                display = sf.display
                entry = entries.get(display)
                if entry.__class__ is tuple and len(entry) == 2:
                    recorded, known = entry
                    # stamp_of(found, sf.kind) written out (found[0], a regular file, is tested above)
                    if known.__class__ is str and recorded == (found[1], found[2], found[3], found[4], found[5],
                                                               sf.kind):
                        seen[display] = entry
                        key = known
            append(key)
        return out

    def record(self, display: str, found: "Probe | None", kind: str, key: str) -> None:
        """A file read and hashed this run (``found``: its stat before reading)."""
        stamp = stamp_of(found, kind) if found is not None else None
        if stamp is None or max(stamp[3], stamp[4]) >= self.trusted_before_ns:
            return
        self.seen[display] = (stamp, key)
        if self.entries.get(display) != (stamp, key):
            self.changed = True

    def save(self) -> None:
        """Keep the entries of the files this run saw (a file gone from the
        tree drops out); written only when something changed."""
        if not self.changed and len(self.seen) == len(self.entries):
            return
        self.cache.put(self.key, self.seen)
