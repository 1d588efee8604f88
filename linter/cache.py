"""A content-addressed cache of parse results.

Key: SHA-256 of the file's bytes, its display path and kind, the tool
version and the settings that change parsing. Entries are pickles signed
with an HMAC whose key lives outside the project (in the user's cache
folder), so a cache folder committed to a repository, corrupted on disk or
written by another version is ignored and rebuilt, never trusted: unpickling
only ever happens after the signature checks. Writes are atomic (temp file
+ rename), so concurrent runs sharing a folder see whole entries or none.

Layout::

    .mlcost_lint_cache/
        CACHEDIR.TAG        backup tools skip the folder
        .gitignore          "*": never committed by accident
        v0.1.0/ab/ab12....pkl

A run of another version removes the version folders that are not its own
(an upgrade never leaves the old entries behind), and the current folder is
pruned to a bounded size, oldest first. Workers of a parallel run write
entries themselves (:class:`CacheWriter` is small and picklable), so the
parent neither pickles nor writes the results it receives.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlcost_lint import __version__

DEFAULT_DIR = ".mlcost_lint_cache"
MAX_ENTRIES = 20_000
MAX_BYTES = 512 * 1024 * 1024
_SIG_LEN = 32
_STALE_TMP_SECONDS = 3600      # a temp file this old belongs to a killed run
_CACHEDIR_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
                 b"# This file is a cache directory tag created by mlcost-lint.\n"
                 b"# For information about cache directory tags see https://bford.info/cachedir/\n")


def _user_key() -> bytes:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlcost-lint"
    key_file = base / "cache.key"
    try:
        data = key_file.read_bytes()
        if len(data) >= 32:
            return data[:32]
    except OSError:
        pass
    key = os.urandom(32)
    try:
        base.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=base)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        os.chmod(tmp, 0o600)
        try:
            os.link(tmp, key_file)  # first writer wins; others read its key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        return key_file.read_bytes()[:32]
    except OSError:
        return key  # no writable home: the cache still works for this process


def _sign(secret: bytes, key: str, payload: bytes) -> bytes:
    return hmac.new(secret, key.encode() + payload, hashlib.sha256).digest()


@dataclass(frozen=True, slots=True)
class CacheWriter:
    """What a worker process needs to write entries: the version folder and
    the signing key. Sent to workers instead of the whole cache."""

    folder: Path
    secret: bytes

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pkl"

    def put_payload(self, key: str, payload: bytes) -> bool:
        """Write an already pickled value. Atomic; False when the disk said no."""
        target = self.path(key)
        tmp = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(_sign(self.secret, key, payload) + payload)
            os.replace(tmp, target)
            return True
        except OSError:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            return False


class ParseCache:
    def __init__(self, folder: Path, settings_fingerprint: str) -> None:
        self.root = folder
        self.folder = folder / f"v{__version__}"
        self.salt = f"{__version__}|{settings_fingerprint}".encode()
        self._key = _user_key()
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._used: set[str] = set()    # keys read this run: pruning keeps them
        self._prepare_root()

    def _prepare_root(self) -> None:
        """Mark the folder as a cache (for backup tools and git) and drop the
        folders of other versions. Never fails the run."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            for name, content in (("CACHEDIR.TAG", _CACHEDIR_TAG), (".gitignore", b"# Created by mlcost-lint\n*\n")):
                marker = self.root / name
                if not marker.exists():
                    fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(content)
                    os.replace(tmp, marker)
            for entry in os.scandir(self.root):
                # Only folders that look like ours ("v" + a version): a
                # cache-dir pointed at the wrong place must not lose data.
                if entry.is_dir(follow_symlinks=False) and entry.name.startswith("v") \
                        and entry.name != self.folder.name and entry.name[1:2].isdigit():
                    shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass

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

    def get(self, key: str) -> Any | None:
        try:
            blob = self._path(key).read_bytes()
        except OSError:
            self.misses += 1
            return None
        sig, payload = blob[:_SIG_LEN], blob[_SIG_LEN:]
        if len(sig) != _SIG_LEN or not hmac.compare_digest(sig, _sign(self._key, key, payload)):
            self.misses += 1
            return None
        try:
            value = pickle.loads(payload)
        except Exception:
            self.misses += 1
            return None
        self.hits += 1
        self._used.add(key)
        return value

    def put(self, key: str, value: Any) -> None:
        try:
            payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return
        self.put_payload(key, payload)

    def put_payload(self, key: str, payload: bytes) -> None:
        if self.writer().put_payload(key, payload):
            self.writes += 1

    def prune(self) -> None:
        """Keep the folder bounded: drop the oldest entries past the limits,
        and temp files left by killed runs. Runs only after writes."""
        if self.writes == 0:
            return
        entries: list[tuple[float, int, str]] = []
        now = time.time()
        try:
            for sub in os.scandir(self.folder):
                if not sub.is_dir(follow_symlinks=False):
                    continue
                for entry in os.scandir(sub.path):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if entry.name.endswith(".pkl"):
                        if entry.name[:-4] in self._used:
                            continue    # in use by this run: evict the others first
                        entries.append((st.st_mtime, st.st_size, entry.path))
                    elif entry.name.startswith(".tmp-") and now - st.st_mtime > _STALE_TMP_SECONDS:
                        _unlink(entry.path)
        except OSError:
            return
        kept = len(self._used)
        total = sum(size for _, size, _ in entries)
        if kept + len(entries) <= MAX_ENTRIES and total <= MAX_BYTES:
            return
        entries.sort()
        drop = 0
        while drop < len(entries) and (kept + len(entries) - drop > MAX_ENTRIES or total > MAX_BYTES):
            _, size, path = entries[drop]
            _unlink(path)
            total -= size
            drop += 1


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
