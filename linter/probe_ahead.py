"""Every file's stat, taken by a forked child while this process loads the
caches it needs next.

A run with a cache trusts a file's parse key when its stat is as the file
index recorded (mlcost_lint.file_index), so it stats every file of the tree
before it knows what to read. On this project's 2-CPU bench machine a stat
costs 4-6 us (a virtual machine's system calls), 0.04-0.05 s for bench/'s
8,000 files, in a pre-commit hook whose other work on that tree is loading
the file index and the project index (0.04 s, all of it Python holding the
GIL: a thread's stats would wait for it after every call). A child process
stats the files on the other CPU meanwhile and sends the results back as
fixed-size records, unpacked in C.

Only the stats move: the child reads no file's content, writes nothing but
the pipe, and ends with ``os._exit`` (no cleanup, no buffered output of the
parent printed twice). Anything unexpected (no fork, the child failing, a
short answer) leaves the caller to stat the files itself, as before.
"""

from __future__ import annotations

import os
import struct
import sys
from stat import S_ISREG
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mlcost_lint.discover import SourceFile

# (regular file, st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns); a file
# that cannot be stat'ed is a non-regular one of size -1 (read, and failing, as before)
Probe = tuple[bool, int, int, int, int, int]
_RECORD = struct.Struct("<?QQqqq")
_MISSING: Probe = (False, 0, 0, -1, 0, 0)

# Below this many files the stats cost less than the fork (2-4 ms here).
MIN_FILES = 2000


def probe(path: str, follow: bool) -> Probe | None:
    """One file's stat as a Probe, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path, follow_symlinks=follow)
    except OSError:
        return None
    return (S_ISREG(st.st_mode), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class ProbesAhead:
    """A forked child stat'ing ``files``; :meth:`result` collects them."""

    def __init__(self, pid: int, fd: int, count: int) -> None:
        self._pid = pid
        self._fd = fd
        self._count = count

    @classmethod
    def start(cls, files: list["SourceFile"]) -> "ProbesAhead | None":
        """The child, when there are enough files and this process may fork
        (not on Windows; not beside threads, which a fork would not copy)."""
        if len(files) < MIN_FILES or not hasattr(os, "fork") or _threads_running():
            return None
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:    # the child: never returns
            status = 1
            try:
                os.close(read_end)
                _send(write_end, files)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        return cls(pid, read_end, len(files))

    def result(self) -> list[Probe] | None:
        """Each file's Probe, in order; None when the child did not answer
        in full (the caller stats the files itself)."""
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            os.close(self._fd)
        try:
            _, status = os.waitpid(self._pid, 0)
        except ChildProcessError:
            status = -1
        data = b"".join(chunks)
        if status != 0 or len(data) != self._count * _RECORD.size:
            return None
        return list(_RECORD.iter_unpack(data))


def _send(fd: int, files: list["SourceFile"]) -> None:
    pack = _RECORD.pack
    records = bytearray()
    for sf in files:
        found = probe(sf.path, sf.follow)
        records += pack(*(found if found is not None else _MISSING))
    view = memoryview(records)
    while view:
        view = view[os.write(fd, view):]


def _threads_running() -> bool:
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


__all__ = ["MIN_FILES", "Probe", "ProbesAhead", "probe"]
