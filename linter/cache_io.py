"""The cache folder's file operations: folders opened without following
links, entries read only when they are small regular files, atomic writes,
and the signing key. Shared by the parse cache (cache.py) and the replay
step (replay.py), which runs before anything else is imported: so this
module uses only os, stat and hmac, and plain string paths.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import time
from collections.abc import Iterable

KEY_BYTES = 32
KEY_FILE_MAX = 4096
SIG_LEN = 32
# Everything here opens folders and files without following a link, relative
# to a folder's descriptor. Where the system cannot (Windows: no O_NOFOLLOW,
# O_DIRECTORY or dir_fd), the cache is not used at all: the parse cache
# refuses to open (cache.CacheUnavailable) and nothing is replayed.
SUPPORTED = (hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
             and os.open in os.supports_dir_fd and os.scandir in os.supports_fd)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
READ_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC


def open_dir(name: str | os.PathLike[str], dir_fd: int | None = None, create: bool = False) -> int:
    """A descriptor of the folder ``name`` (relative to ``dir_fd``), which
    must not be a symbolic link; OSError otherwise."""
    if create:
        try:
            os.mkdir(name, 0o755, dir_fd=dir_fd)
        except FileExistsError:
            pass
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


def close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        close_fd(fd)
    fds.clear()


def close_fd(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def read_regular_at(name: str, dir_fd: int | None, limit: int, refresh_after: float | None = None) -> bytes | None:
    """The bytes of ``name`` when it is a regular file (no link followed,
    never blocking) of at most ``limit`` bytes; None otherwise. With
    ``refresh_after``: a file last modified longer ago than that many
    seconds gets its times set to now (the cache's prune drops the entries
    used longest ago first)."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        # The size fstat gave in one read, into one buffer: a hook reads cache
        # entries of 1-2 MB, and chunks joined afterwards were two more
        # copies of each in fresh memory (page faults cost here); then to the
        # end, should the file have grown since.
        chunks, left, want = [], limit + 1, st.st_size + 1
        while left > 0:
            chunk = os.read(fd, min(left, want))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            want = 1 << 20
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if len(data) > limit:
            return None
        if refresh_after is not None and time.time() - st.st_mtime > refresh_after and os.utime in os.supports_fd:
            try:
                os.utime(fd)
            except OSError:
                pass    # a cache on a read-only mount still reads
        return data
    except OSError:
        return None
    finally:
        close_fd(fd)


def write_atomic(dir_fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """Write ``name`` in the folder ``dir_fd`` as a whole: a new temp file
    (O_EXCL, no link followed) renamed over it. A link at ``name`` is
    replaced, never written through."""
    tmp = f".tmp-{os.getpid()}-{os.urandom(8).hex()}"
    fd = os.open(tmp, WRITE_FLAGS, mode, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


# -- the signing key -----------------------------------------------------------

def key_folder() -> str:
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                        "mlcost-lint")


def inside(path: str | os.PathLike[str], roots: Iterable[str | os.PathLike[str]]) -> str | None:
    """The first of ``roots`` (real paths) that holds ``path`` (or is it)."""
    real = os.path.realpath(path)
    for root in roots:
        root = os.fspath(root)
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return root
    return None


def existing_key(scan_roots: Iterable[str | os.PathLike[str]]) -> bytes | None:
    """The signing key when there is one to trust: a regular file of at
    least KEY_BYTES in the user's cache folder, which is not inside any of
    ``scan_roots`` (a checkout whose XDG_CACHE_HOME points inside it could
    commit the key). Never made here."""
    base = key_folder()
    if inside(base, [os.path.realpath(r) for r in scan_roots]) is not None:
        return None
    key_file = os.path.join(base, "cache.key")
    if os.path.islink(key_file):
        return None
    data = read_regular_at(key_file, None, KEY_FILE_MAX)
    return data[:KEY_BYTES] if data is not None and len(data) >= KEY_BYTES else None


def sign(secret: bytes, key: str, payload: bytes | memoryview) -> bytes:
    """HMAC-SHA256 of ``key`` and then ``payload`` (hashed in place, not joined: entries are 1-2 MB)."""
    mac = hmac.new(secret, key.encode(), hashlib.sha256)
    mac.update(payload)
    return mac.digest()


def signed(blob: bytes, secret: bytes, key: str) -> bool:
    """Whether an entry as written (``sign(...) + payload``) is signed with
    ``secret`` for ``key``; its payload is ``blob[SIG_LEN:]``."""
    return len(blob) >= SIG_LEN and hmac.compare_digest(blob[:SIG_LEN],
                                                        sign(secret, key, memoryview(blob)[SIG_LEN:]))


def verified(blob: bytes, secret: bytes, key: str) -> bytes | None:
    """The payload of an entry as written (``sign(...) + payload``) when its
    signature is ``secret``'s for ``key``; None otherwise."""
    return blob[SIG_LEN:] if signed(blob, secret, key) else None
