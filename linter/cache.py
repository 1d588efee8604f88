"""A content-addressed cache of parse results.

Key: SHA-256 of the file's bytes, its display path and kind, the tool
version and the settings that change parsing. Entries are pickles signed
with an HMAC whose key lives outside the project (in the user's cache
folder), so a cache folder committed to a repository, corrupted on disk or
written by another version is ignored and rebuilt, never trusted: unpickling
only ever happens after the signature checks. Writes are atomic (temp file
+ rename), so concurrent runs sharing a folder see whole entries or none.
The folder is pruned to a bounded size, oldest first.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from mlcost_lint import __version__

DEFAULT_DIR = ".mlcost_lint_cache"
MAX_ENTRIES = 20_000
MAX_BYTES = 512 * 1024 * 1024
_SIG_LEN = 32


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


class ParseCache:
    def __init__(self, folder: Path, settings_fingerprint: str) -> None:
        self.folder = folder / f"v{__version__}"
        self.salt = f"{__version__}|{settings_fingerprint}".encode()
        self._key = _user_key()
        self.hits = 0
        self.misses = 0
        self.writes = 0

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
        if len(sig) != _SIG_LEN or not hmac.compare_digest(sig, self._sign(key, payload)):
            self.misses += 1
            return None
        try:
            value = pickle.loads(payload)
        except Exception:
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: str, value: Any) -> None:
        try:
            payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(self._sign(key, payload) + payload)
            os.replace(tmp, target)
            self.writes += 1
        except OSError:
            try:
                os.unlink(tmp)  # type: ignore[possibly-undefined]
            except (OSError, UnboundLocalError):
                pass

    def _sign(self, key: str, payload: bytes) -> bytes:
        return hmac.new(self._key, key.encode() + payload, hashlib.sha256).digest()

    def prune(self) -> None:
        """Keep the folder bounded: drop the oldest entries past the limits."""
        if self.writes == 0:
            return
        try:
            entries = [(p.stat().st_mtime, p.stat().st_size, p) for p in self.folder.glob("*/*.pkl")]
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        if len(entries) <= MAX_ENTRIES and total <= MAX_BYTES:
            return
        entries.sort()
        while entries and (len(entries) > MAX_ENTRIES or total > MAX_BYTES):
            _, size, path = entries.pop(0)
            try:
                path.unlink()
            except OSError:
                pass
            total -= size
