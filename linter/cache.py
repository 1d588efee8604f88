"""A content-addressed cache of parse results.

Key: SHA-256 of the file's bytes, its display path and kind, the tool
version and the settings that change parsing. Entries are pickles signed
with an HMAC whose key lives outside the project (in the user's cache
folder), so a cache folder committed to a repository, corrupted on disk or
written by another version is ignored and rebuilt, never trusted. Writes are
atomic (temp file + rename), so concurrent runs sharing a folder see whole
entries or none.

A repository can commit a ``.mlcost_lint_cache`` of its own, so nothing in
the folder is taken on trust (see README "Security"):

- No symbolic link is followed: the cache root, and any folder between the
  project and it, must not be a link (else no cache for the run, and
  :class:`CacheUnavailable` says why); every folder and entry below it is
  opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a link
  swapped in during the run is refused too. Old version folders are removed
  with the descriptor-based ``shutil.rmtree``, which never follows links.
- An entry is read only when it is a regular file (``fstat`` after opening,
  non-blocking so a FIFO cannot hang the run) and at most
  ``max_entry_bytes`` long.
- Loading can never run code: the unpickler resolves only the parse-result
  classes of this package (dataclasses and enums of
  ``mlcost_lint.parse.document``, ``mlcost_lint.parse.hcl`` and
  ``mlcost_lint.model.core``); any other global is an error, so the entry is
  a miss. The signature check comes first in any case.
- The signing key is never one from inside the scanned tree (a checkout
  whose ``XDG_CACHE_HOME`` points inside it could commit the key) and never
  shorter than 32 bytes (a short or empty key file is replaced).

Layout::

    .mlcost_lint_cache/
        CACHEDIR.TAG        backup tools skip the folder
        .gitignore          "*": never committed by accident
        v0.1.0/ab/ab12....pkl   a parse result (ab = first two hex digits of its key); a .tf
                                file's tree is an entry of its own (mlcost_lint.cache_trees)
        v0.1.0/r3/r3f0....pkl   a whole run's outcome (mlcost_lint.run_cache)

A run of another version removes the version folders that are not its own
(an upgrade never leaves the old entries behind), and the current folder is
pruned to a bounded size, oldest first (scanned after a run that wrote many
entries, else at most every ten minutes: ``.last-prune`` dates the last scan). Workers of a parallel run write
entries themselves (:class:`CacheWriter` is small and picklable), so the
parent neither pickles nor writes the results it receives.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import os
import pickle
import stat
import time
import weakref
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterable

from mlcost_lint import __version__
from mlcost_lint.cache_io import SUPPORTED as CACHE_IO_SUPPORTED
from mlcost_lint.cache_io import (KEY_BYTES, KEY_FILE_MAX, SIG_LEN, WRITE_FLAGS, close_all, close_fd, inside,
                                  key_folder, open_dir, read_regular_at, sign, signed, write_atomic)
from mlcost_lint.gc_pause import gc_paused
from mlcost_lint.lean_dataclass import dataclass

DEFAULT_DIR = ".mlcost_lint_cache"
MAX_ENTRIES = 20_000
MAX_BYTES = 512 * 1024 * 1024
# Entries that hold one run's outcome (run_cache.RUN_PREFIX) or output
# (replay.PREFIX): each state of the tree leaves one, only the latest few are
# ever read again, and at 8,000 files each is about 10 MB. They are dropped
# first, oldest first; then everything else, oldest first. Dropped by age
# alone, a cache past MAX_BYTES after some 25 runs dropped the parse entries
# written by the first run (reading does not refresh an entry's time), and the
# next run parsed every file again (20 s on bench/'s 8,000 files).
_DROPPED_FIRST = ("r", "p")
# An entry read longer after it was written than this gets its time set to
# now, so prune's "oldest first" means "used longest ago": the parse results
# and evaluated roots every run reads go after the results of contents since
# changed, which no run reads again.
_REFRESH_SECONDS = 600
# A parse result pickles to about 3x its source (measured on the corpus and
# bench/); the pipeline passes a bound from max-file-size-mb.
DEFAULT_MAX_ENTRY_BYTES = 64 * 1024 * 1024
_STALE_TMP_SECONDS = 3600      # a temp file this old belongs to a killed run
# The limits are checked by a scan of every entry (0.08 s at 13,000 entries),
# so a run that wrote little scans only when the last scan is this old: a
# pre-commit hook writes one or two entries per run. A run that wrote many
# scans at once, so between scans the folder grows by fewer than
# _PRUNE_WRITES entries per run.
_PRUNE_INTERVAL_SECONDS = 600
_PRUNE_WRITES = 256
_PRUNE_STAMP = ".last-prune"
# Entries from this size up load with collection paused (gc_pause): the
# index, summary and walk a hook loads on 8,000 files are 1-2 MB each.
_LARGE_PAYLOAD = 64 * 1024
_CACHEDIR_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
                 b"# This file is a cache directory tag created by mlcost-lint.\n"
                 b"# For information about cache directory tags see https://bford.info/cachedir/\n")


class CacheUnavailable(Exception):
    """The cache cannot be used safely this run; the message says why."""


# -- loading without running code ---------------------------------------------

# The modules whose plain data classes (dataclasses and enums defined there)
# an entry may hold: parse results, evaluated Terraform roots
# (model.terraform.root_cache), and the run cache's findings, prices,
# fixes and read-as lines (mlcost_lint.run_cache). Imported on first use.
_DATA_MODULES = frozenset({
    "mlcost_lint.parse.document", "mlcost_lint.parse.hcl", "mlcost_lint.parse.slurm", "mlcost_lint.model.core",
    "mlcost_lint.rule", "mlcost_lint.pricing", "mlcost_lint.fix", "mlcost_lint.model.read_as",
    "mlcost_lint.run_cache", "mlcost_lint.model.cloud", "mlcost_lint.model.terraform.root_cache",
    # a parse result's FileModel (model.build.read_file_model): its workloads,
    # training configs, jobs and the catalogue entries they name
    "mlcost_lint.model.build", "mlcost_lint.model.kubernetes", "mlcost_lint.model.training",
    "mlcost_lint.model.managed", "mlcost_lint.model.batch", "mlcost_lint.catalogue",
    # the index a reporting run chooses the files it reads by (mlcost_lint.project_slice)
    "mlcost_lint.project_slice", "mlcost_lint.model.absent",
    # folder walks kept between runs (mlcost_lint.discover_cache)
    "mlcost_lint.discover", "mlcost_lint.discover_cache",
    # the last whole run's findings per file (mlcost_lint.incremental)
    "mlcost_lint.incremental",
})
# Module-level singletons an entry may name (evaluated Terraform values hold UNKNOWN).
_SINGLETONS = frozenset({("mlcost_lint.model.core", "UNKNOWN")})


@functools.lru_cache(maxsize=None)
def _data_class(module: str, name: str) -> type | None:
    import importlib

    if module not in _DATA_MODULES or name.startswith("_") or "." in name:
        return None
    obj = vars(importlib.import_module(module)).get(name)
    if (module, name) in _SINGLETONS:
        return obj
    if isinstance(obj, type) and obj.__module__ == module and (dataclasses.is_dataclass(obj) or issubclass(obj, Enum)):
        return obj
    return None


class _ParseResultUnpickler(pickle.Unpickler):
    """Resolves only this package's plain data classes (and the UNKNOWN
    value, which is not callable): a pickle that names anything else
    (``os.system``, ``builtins.eval``, a class with side effects, a dotted
    attribute path) fails to load."""

    def find_class(self, module: str, name: str) -> Any:
        cls = _data_class(module, name)
        if cls is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not a parse-result class")
        return cls


def load_payload(payload: bytes, start: int = 0) -> Any:
    """The value pickled in ``payload`` from ``start`` on (a bytes object is
    read in place: io.BytesIO shares it)."""
    data = io.BytesIO(payload)
    data.seek(start)
    return _ParseResultUnpickler(data).load()


# -- links and the signing key ------------------------------------------------

def _link_between(base: Path, target: Path) -> Path | None:
    """The first component from ``base`` (exclusive) down to ``target``
    (inclusive) that is a symbolic link; ``target`` alone when it is not
    under ``base``."""
    base, target = Path(os.path.abspath(base)), Path(os.path.abspath(target))
    try:
        parts = target.relative_to(base).parts
        current = base
    except ValueError:
        parts, current = (target.name,), target.parent
    for part in parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def _user_key(scan_roots: Iterable[Path] = ()) -> bytes:
    """The signing key: 32 random bytes in the user's cache folder, made on
    first use. Raises CacheUnavailable when the only key there is to use
    could have come with the scanned files."""
    base = Path(key_folder())
    holder = inside(base, [os.path.realpath(r) for r in scan_roots])
    if holder is not None:
        raise CacheUnavailable(f"the cache key folder {base} is inside the scanned tree {holder} "
                               "(set XDG_CACHE_HOME outside the repository)")
    key_file = base / "cache.key"
    if key_file.is_symlink():
        raise CacheUnavailable(f"the cache key {key_file} is a symbolic link")
    data = read_regular_at(str(key_file), None, KEY_FILE_MAX)
    if data is not None and len(data) >= KEY_BYTES:
        return data[:KEY_BYTES]
    key = os.urandom(KEY_BYTES)
    try:
        base.mkdir(parents=True, exist_ok=True)
        dir_fd = open_dir(base)
        try:
            if data is None and not os.path.lexists(key_file):
                tmp = f".tmp-{os.getpid()}-{os.urandom(8).hex()}"
                fd = os.open(tmp, WRITE_FLAGS, 0o600, dir_fd=dir_fd)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(key)
                try:
                    os.link(tmp, "cache.key", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # first writer wins
                except FileExistsError:
                    pass
                finally:
                    os.unlink(tmp, dir_fd=dir_fd)
            else:
                # Empty, short or unreadable: never sign with it, replace it.
                write_atomic(dir_fd, "cache.key", key, 0o600)
        finally:
            close_fd(dir_fd)
    except OSError:
        return key  # no writable home: the cache still works for this process
    stored = read_regular_at(str(key_file), None, KEY_FILE_MAX)
    if stored is None or len(stored) < KEY_BYTES:
        return key
    return stored[:KEY_BYTES]


# -- writing entries -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CacheWriter:
    """What a worker process needs to write entries: the version folder and
    the signing key. Sent to workers instead of the whole cache."""

    folder: Path
    secret: bytes

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pkl"

    def put_payload(self, key: str, payload: bytes) -> bool:
        """Write an already pickled value. Atomic; False when the disk said
        no or a folder on the way is a link."""
        fds: list[int] = []
        try:
            fds.append(open_dir(self.folder.parent))
            fds.append(open_dir(self.folder.name, fds[-1], create=True))
            fds.append(open_dir(key[:2], fds[-1], create=True))
            write_atomic(fds[-1], f"{key}.pkl", sign(self.secret, key, payload) + payload)
            return True
        except OSError:
            return False
        finally:
            for fd in reversed(fds):
                close_fd(fd)


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """What made the cached entries. A change to the code that wrote them
    (a new field on ParsedFile) must never load entries of the old shape,
    also within one version number (development builds, editable installs,
    where an old entry raised AttributeError in the model stage). That code
    is the parse stage, the secrets found at parse time (secrets.py,
    credentials.py), the cleaned message texts kept under this salt
    (redact.py, cleaned_texts.py) and, since a parse result carries what
    the file adds to the model (ParsedFile.model), the model readers and
    the catalogues they use: every file of the package, by its stat stamp
    (fingerprint.py; a write to a file always moves its stamp)."""
    from mlcost_lint.fingerprint import package_fingerprint

    return hashlib.sha256(package_fingerprint().encode()).hexdigest()[:16]


class ParseCache:
    """Raises CacheUnavailable when the folder cannot be used safely."""

    def __init__(self, folder: Path, settings_fingerprint: str, *, scan_roots: Iterable[Path] = (),
                 base: Path | None = None, max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES) -> None:
        if not CACHE_IO_SUPPORTED:
            raise CacheUnavailable("this system cannot open files without following links (no O_NOFOLLOW "
                                   "and folder descriptors), which the cache needs to be safe")
        self.root = folder
        self.folder = folder / f"v{__version__}"
        self.salt = f"{__version__}|{code_fingerprint()}|{settings_fingerprint}".encode()
        self.max_entry_bytes = max_entry_bytes
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._used: set[str] = set()    # keys read this run: pruning keeps them
        # More such keys, made only when a prune scans (keep_later).
        self._used_later: list[Callable[[], Iterable[str]]] = []
        self._dir_fds: dict[str, int] = {}    # "" = the version folder, else a shard (_shard_fd)
        weakref.finalize(self, close_all, self._dir_fds)
        link = _link_between(base or Path.cwd(), folder)
        if link is not None:
            raise CacheUnavailable(f"{link} is a symbolic link")
        self._key = _user_key(scan_roots)
        self._prepare_root()

    def _prepare_root(self) -> None:
        """Mark the folder as a cache (for backup tools and git) and drop the
        folders of other versions. Fails the cache (not the run) when the
        folder is a link or cannot be made."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            root_fd = open_dir(self.root)
        except OSError as exc:
            raise CacheUnavailable(f"cannot open {self.root}: {exc.strerror or exc}") from None
        try:
            for name, content in (("CACHEDIR.TAG", _CACHEDIR_TAG), (".gitignore", b"# Created by mlcost-lint\n*\n")):
                try:
                    st = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode):
                        continue
                except FileNotFoundError:
                    pass
                write_atomic(root_fd, name, content)
            for entry in os.scandir(root_fd):
                # Only folders that look like ours ("v" + a version): a
                # cache-dir pointed at the wrong place must not lose data.
                if entry.is_dir(follow_symlinks=False) and entry.name.startswith("v") \
                        and entry.name != self.folder.name and entry.name[1:2].isdigit():
                    import shutil   # only here: its import (bz2, lzma) is a cost on every run

                    shutil.rmtree(entry.name, dir_fd=root_fd, ignore_errors=True)
                elif entry.name == self.folder.name and entry.is_symlink():
                    os.unlink(entry.name, dir_fd=root_fd)   # ours to replace, never to follow
        except OSError:
            pass
        finally:
            close_fd(root_fd)

    def writer(self) -> CacheWriter:
        return CacheWriter(self.folder, self._key)

    def key(self, data: bytes, display: str, kind: str) -> str:
        h = hashlib.sha256()
        h.update(self.salt)
        h.update(b"\0" + display.encode("utf-8", "surrogatepass") + b"\0" + kind.encode() + b"\0")
        h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pkl"

    def _shard_fd(self, shard: str) -> int | None:
        """A descriptor of the shard folder, opened (without following a
        link) once per cache object and kept: a run reads thousands of
        entries, and three folder opens per entry were most of the system
        calls of a warm pre-commit run. A folder that is not there yet is
        not remembered (a worker may create it)."""
        fds = self._dir_fds
        fd = fds.get(shard)
        if fd is not None:
            return fd
        try:
            if "" not in fds:
                root_fd = open_dir(self.root)
                try:
                    fds[""] = open_dir(self.folder.name, root_fd)
                finally:
                    close_fd(root_fd)
            fd = fds[shard] = open_dir(shard, fds[""])
        except OSError:
            return None
        return fd

    def _read_entry(self, key: str) -> bytes | None:
        fd = self._shard_fd(key[:2])
        if fd is None:
            return None
        return read_regular_at(f"{key}.pkl", fd, self.max_entry_bytes + SIG_LEN, refresh_after=_REFRESH_SECONDS)

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (not whether it loads):
        for entries that are costly to build and never change under their
        key (project_slice.TerraformSummary). Kept like one read."""
        fd = self._shard_fd(key[:2])
        if fd is None:
            return False
        try:
            st = os.stat(f"{key}.pkl", dir_fd=fd, follow_symlinks=False)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size <= SIG_LEN:
            return False
        self._used.add(key)
        return True

    def close(self) -> None:
        """Close the kept folder descriptors (also done when the object is collected)."""
        close_all(self._dir_fds)     # the same dict the finalizer holds: nothing is closed twice

    def get(self, key: str) -> Any | None:
        blob = self._read_entry(key)
        if blob is None or not signed(blob, self._key, key):
            self.misses += 1
            return None
        try:
            if len(blob) < _LARGE_PAYLOAD + SIG_LEN:
                value = load_payload(blob, SIG_LEN)
            else:
                with gc_paused():   # an index, a summary, a walk: objects that live for the run
                    value = load_payload(blob, SIG_LEN)
        except Exception:
            self.misses += 1
            return None
        self.hits += 1
        self._used.add(key)
        return value

    def keep(self, key: str) -> None:
        """An entry this run may read later (cache_trees.py): pruned last."""
        self._used.add(key)

    def keep_later(self, keys: Callable[[], Iterable[str]]) -> None:
        """Entries pruned last, as keep(), with ``keys`` called only when a
        prune scans the folder: most runs do not, and a hook on bench/'s
        8,000-file tree spent 0.01 s naming the entries of every file."""
        self._used_later.append(keys)

    def put(self, key: str, value: Any) -> None:
        try:
            payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return
        self.put_payload(key, payload)

    def put_payload(self, key: str, payload: bytes) -> None:
        if len(payload) <= self.max_entry_bytes and self.writer().put_payload(key, payload):
            self.writes += 1

    def _pruned_recently(self, version_fd: int, now: float) -> bool:
        """Whether the stamp of the last scan is a regular file younger than
        _PRUNE_INTERVAL_SECONDS (one dated in the future does not count: a
        committed cache folder cannot postpone the scan forever)."""
        try:
            st = os.stat(_PRUNE_STAMP, dir_fd=version_fd, follow_symlinks=False)
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and 0 <= now - st.st_mtime < _PRUNE_INTERVAL_SECONDS

    def prune(self) -> None:
        """Keep the folder bounded: drop the oldest entries past the limits,
        and temp files left by killed runs. Runs only after writes, and scans
        only after many writes or when the last scan is old (see
        _PRUNE_INTERVAL_SECONDS)."""
        if self.writes == 0:
            return
        entries: list[tuple[float, int, str, str]] = []
        now = time.time()
        fds: list[int] = []
        try:
            fds.append(open_dir(self.root))
            fds.append(version_fd := open_dir(self.folder.name, fds[-1]))
            if self.writes < _PRUNE_WRITES and self._pruned_recently(version_fd, now):
                return
            for keys in self._used_later:
                self._used.update(keys())
            try:
                write_atomic(version_fd, _PRUNE_STAMP, b"")
            except OSError:
                pass    # scanned every time then, as before there was a stamp
            shards: dict[str, int] = {}
            for sub in os.scandir(version_fd):
                if not sub.is_dir(follow_symlinks=False):
                    continue
                try:
                    shard_fd = open_dir(sub.name, version_fd)
                except OSError:
                    continue
                fds.append(shard_fd)
                shards[sub.name] = shard_fd
                for entry in os.scandir(shard_fd):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if entry.name.endswith(".pkl"):
                        if entry.name[:-4] in self._used:
                            continue    # in use by this run: evict the others first
                        entries.append((st.st_mtime, st.st_size, sub.name, entry.name))
                    elif entry.name.startswith(".tmp-") and now - st.st_mtime > _STALE_TMP_SECONDS:
                        _unlink(entry.name, shard_fd)
            kept = len(self._used)
            total = sum(e[1] for e in entries)
            if kept + len(entries) <= MAX_ENTRIES and total <= MAX_BYTES:
                return
            entries.sort(key=lambda e: (not e[2].startswith(_DROPPED_FIRST), e[0]))
            drop = 0
            while drop < len(entries) and (kept + len(entries) - drop > MAX_ENTRIES or total > MAX_BYTES):
                _, size, shard, name = entries[drop]
                _unlink(name, shards[shard])
                total -= size
                drop += 1
        except OSError:
            return
        finally:
            for fd in reversed(fds):
                close_fd(fd)


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass
