"""Reading a file that a stranger may have replaced: never block, never
read without bound, never read anything but a regular file.

A file listed during discovery can be a FIFO, a device or a link by the
time it is opened (issue 16, item 7). ``open()`` of a FIFO blocks until a
writer appears, and ``/dev/zero`` never ends; so the file is opened
non-blocking (and without following a final link when the caller says so),
checked with ``fstat`` to be a regular file, and read up to a bound.
"""

from __future__ import annotations

import os
import stat

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or folder: never read."""


class TooLarge(OSError):
    """The regular file is larger than the bound; ``size`` is its size."""

    def __init__(self, size: int) -> None:
        super().__init__(f"file is {size} bytes")
        self.size = size


def read_regular(path: os.PathLike[str] | str, max_bytes: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes``.

    Raises :class:`NotRegularFile` (FIFO, device, socket, folder),
    :class:`TooLarge` (over ``max_bytes``, checked before reading and again
    while reading, for a file that grows), or the ``OSError`` of the open
    (``ELOOP`` for a final link when ``follow_links`` is false)."""
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY | (0 if follow_links else _NOFOLLOW)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile("not a regular file")
        if info.st_size > max_bytes:
            raise TooLarge(info.st_size)
        # The size fstat gave, and one byte more, in one read: a 1 MiB request
        # allocated 1 MiB for each file first, and the read after the data was
        # one more system call (the real corpus's 2,366 files: 31-47 ->
        # 25-31 ms). A read that returns exactly that size ends it; a file
        # that grew since, or a short read, reads on to the end.
        chunks: list[bytes] = []
        total = 0
        want = info.st_size + 1
        while True:
            chunk = os.read(fd, min(want, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise TooLarge(max(total, os.fstat(fd).st_size))
            if total == info.st_size and len(chunk) < want:
                break
            want = 1 << 20
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)
