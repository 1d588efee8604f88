"""Every file's stat, taken by a helper process while this process loads the
caches it needs next.

A run with a cache trusts a file's parse key when its stat is as the file
index recorded (mlcost_lint.file_index), so it stats every file of the tree
before it knows what to read. On this project's 2-CPU bench machine a stat
costs 4-6 us (a virtual machine's system calls), 0.04-0.05 s for bench/'s
8,000 files, in a pre-commit hook whose other work on that tree is loading
the file index and the project index (0.05-0.07 s, all of it Python holding
the GIL: a thread's stats would wait for it after every call). A helper
process stats the files on the other CPU meanwhile.

The helper is a fresh interpreter (``sys.executable -I -S``) started by
``posix_spawn``, running only the few lines in :data:`_HELPER`: it reads the
paths from a pipe and writes fixed-size records back, unpacked here in C. A
forked child did as well with no start-up (this process then pays a
copy-on-write fault for every page it touches while the child lives, and a
fork beside threads is unsafe). Measured on bench/'s 8,000 files, 21
alternated hooks a run against no helper: the helper 20, 31 and 13 ms
faster, a forked child 24, -2 and 35; on 2,000 files a forked child was 7 ms
slower (MIN_FILES). The helper reads no file's content, imports nothing of
ours, and its errors go nowhere (its standard error is the null device). Anything unexpected (no
``posix_spawn``, a path list larger than a pipe holds, the helper failing
or answering short) leaves the caller to stat the files itself, as before.
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

# Below this many files the stats cost about what starting the helper does
# (the helper needs 15-20 ms to start, the stats take 5.5 us a file here).
MIN_FILES = 5000
# The path list is written to the helper's pipe whole, before it starts
# reading: the pipe is grown to hold it (Linux allows 1 MiB unprivileged).
_MAX_PATHS_BYTES = 1 << 20

# The helper: paths (b"1" to follow a final link, else b"0", then the
# path), each ended by NUL, on standard input; a record per path out.
_HELPER = """\
import os, stat, struct, sys
record = struct.Struct("<?QQqqq")
out = bytearray()
for item in sys.stdin.buffer.read().split(b"\\0")[:-1]:
    try:
        st = os.stat(item[1:], follow_symlinks=item[:1] == b"1")
    except (OSError, ValueError):
        out += record.pack(False, 0, 0, -1, 0, 0)
        continue
    out += record.pack(stat.S_ISREG(st.st_mode), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
sys.stdout.buffer.write(out)
"""


def probe(path: str, follow: bool) -> Probe | None:
    """One file's stat as a Probe, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path, follow_symlinks=follow)
    except OSError:
        return None
    return (S_ISREG(st.st_mode), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# The share of the files the helper stats; this process stats the rest when
# it asks for the result, while the helper still works (it starts 15-20 ms
# late: a fresh interpreter). On bench/'s 8,000 files all of them in the
# helper kept this process waiting 30 ms for it.
HELPER_SHARE = 0.75


class ProbesAhead:
    """A helper process stat'ing the first files; :meth:`result` stats the
    others here and collects the helper's."""

    def __init__(self, pid: int, fd: int, count: int, rest: list["SourceFile"]) -> None:
        self._pid = pid
        self._fd = fd
        self._count = count
        self._rest = rest

    @classmethod
    def start(cls, files: list["SourceFile"]) -> "ProbesAhead | None":
        """The helper, when there are enough files and it can be started here."""
        if len(files) < MIN_FILES or not _can_spawn():
            return None
        cut = int(len(files) * HELPER_SHARE)
        paths = b"".join((b"1" if sf.follow else b"0") + os.fsencode(sf.path) + b"\0" for sf in files[:cut])
        if len(paths) > _MAX_PATHS_BYTES:
            return None     # (a NUL in a path would give more records than files: result() says None)
        to_helper, from_parent = _pipe(len(paths))
        if to_helper is None:
            return None
        from_helper, to_parent = os.pipe()
        try:
            pid = os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-c", _HELPER], os.environ,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, from_parent, 0),
                                               (os.POSIX_SPAWN_DUP2, to_parent, 1),
                                               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        except OSError:
            for fd in (to_helper, from_parent, from_helper, to_parent):
                os.close(fd)
            return None
        os.close(from_parent)
        os.close(to_parent)
        try:
            view = memoryview(paths)
            while view:     # fits in the pipe: never waits for the helper
                view = view[os.write(to_helper, view):]
        except OSError:
            pass            # the helper is gone: result() says so
        finally:
            os.close(to_helper)
        return cls(pid, from_helper, cut, files[cut:])

    def result(self) -> list[Probe | None] | None:
        """Each file's Probe, in order; None when the helper did not answer
        in full (the caller stats the files itself)."""
        rest = [probe(sf.path, sf.follow) for sf in self._rest]      # while the helper works
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
        found: list[Probe | None] = list(_RECORD.iter_unpack(data))
        return found + rest


def _can_spawn() -> bool:
    return (hasattr(os, "posix_spawn") and not getattr(sys, "frozen", False)
            and bool(sys.executable) and os.path.isfile(sys.executable))


def _pipe(size: int) -> tuple[int | None, int | None]:
    """A pipe that holds ``size`` bytes unread (write end, read end), or (None, None)."""
    try:
        import fcntl
    except ImportError:
        return None, None
    read_end, write_end = os.pipe()
    try:
        if fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, max(size, 4096)) >= size:
            return write_end, read_end
    except (OSError, AttributeError):
        pass
    os.close(read_end)
    os.close(write_end)
    return None, None


__all__ = ["MIN_FILES", "Probe", "ProbesAhead", "probe"]
