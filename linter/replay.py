"""Replay: the same command over an unchanged tree prints what it printed.

A lint run's output depends on the command line, the working folder, a few
environment variables, whether stdout and stderr are terminals, the date
(the price table's age notice), the installed code and the files it read:
the files found, the folders walked (their listings), the folders passed
over, the files sniffed for a shebang, the ``.gitignore`` files asked for,
the config, var, baseline and price files, and, in every folder above the
paths linted, whether a ``.git``, a config or a ``.gitignore`` is there.

A run that only reports (no ``-v``, ``--fix``, ``--diff``, ``-o``,
``--write-baseline`` or standard input) and used the cache leaves an entry:
its output bytes, in order, its exit code (0 or 1) and the stat stamp of
every path above (mode, device, inode, size, mtime and ctime in
nanoseconds; absent paths count as absent). The next run with the same
invocation key stats those paths (a few microseconds each) and, when no
stamp moved, writes the same bytes and exits with the same code, before
click or any stage is imported: a warm run over the real-world tree was
0.2 s, most of it imports; this is the interpreter's start plus the stats.

Why stamps are enough: any write to a file moves its ctime, which no
program can set back, and any entry made, removed or renamed in a folder
moves the folder's (git's index trusts the same stamps). A stamp taken in
the same clock tick as a later write could keep its value ("racy git"), so
a run records nothing when any stamp is younger than ``MARGIN_NS`` before
the run began; the next run records instead.

Safety (the cache's, see cache.py): entries live in the parse cache's
version folder (shards ``p0``..``pf``) and are signed with its key; they
are read only when they are regular files under ``MAX_ENTRY_BYTES``, never
through a final link, never blocking; and only after the signature
matched are they decoded, by ``marshal`` holding plain values (bytes,
strings, numbers, tuples, lists): nothing in an entry is ever called.
``--no-cache`` neither reads nor writes one.

This module imports only the standard library's smallest parts (os, sys,
stat, time, hashlib, hmac, marshal, io; not typing or dataclasses), so a
replay costs little more than the interpreter's start.
"""

from __future__ import annotations

import hashlib
import io
import marshal
import os
import stat
import sys
import time

Any = object    # annotations only (typing is not imported: see above)

FORMAT = 1
PREFIX = "p"
MAX_ENTRY_BYTES = 64 * 1024 * 1024
# Coarser than any clock tick a file system stamps with (FAT's 2 s included).
MARGIN_NS = 3_000_000_000
# Only for tests, which cannot wait: a smaller margin, in nanoseconds.
_MARGIN_ENV = "_MLCOST_LINT_REPLAY_MARGIN_NS"
CACHE_DIR_NAME = ".mlcost_lint_cache"      # cache.DEFAULT_DIR (a test pins it)
# The environment a run's output can depend on: colour, the job summary,
# the key's folder, the streams' encoding, the reference parser switch.
# A test checks that every variable the package reads is covered here.
ENV_NAMES = frozenset({"NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY", "HOME", "XDG_CACHE_HOME", "LANG", "TERM"})
ENV_PREFIXES = ("MLCOST", "_MLCOST", "PYTHON", "LC_")
# Looked for in every folder above a path linted: git and config discovery
# (config.find_config, the git root, .gitignore levels, info/exclude).
ANCESTOR_NAMES = (".git", ".mlcost-lint.toml", "pyproject.toml", ".gitignore", ".git/info/exclude")
# Never replayed: other commands, and runs that write, read stdin or list the model.
_NOT_REPLAYED = frozenset({"--no-cache", "-", "--fix", "--diff", "-v", "--verbose", "--write-baseline",
                           "-o", "--output", "--show-settings", "--version", "--help", "-h"})
_SUBCOMMANDS = frozenset({"rules", "explain", "prices"})

Stamp = tuple


class _Pending:
    """What the CLI allowed to be recorded (see :func:`allow`)."""

    __slots__ = ("paths", "lint_paths", "writer")

    def __init__(self, paths: list[str], lint_paths: list[str], writer: Any) -> None:
        self.paths, self.lint_paths = paths, lint_paths
        self.writer = writer        # cache.CacheWriter of the cache the run used


_pending: _Pending | None = None


def begin(argv: list[str]) -> tuple[int | None, Capture | None]:
    """(exit code, None) when an entry for this invocation still holds and
    its output was written; else (None, a capture of this run's output, or
    None when this run can never be recorded)."""
    from mlcost_lint.cache_io import SUPPORTED

    global _pending
    _pending = None     # what an earlier run in this process allowed is not this run's
    if not SUPPORTED or not _may_replay(argv):
        return None, None     # not SUPPORTED: there is no cache to keep entries in (cache_io)
    cwd = os.getcwd()
    key = invocation_key(argv, cwd)
    code = _replay(key, argv, cwd)
    if code is not None:
        return code, None
    capture = Capture(key)
    capture.start()
    return None, capture


def _may_replay(argv: list[str]) -> bool:
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        return False      # a run with a job summary appends to a file: not only output
    if argv and argv[0] in _SUBCOMMANDS:
        return False
    return not any(a in _NOT_REPLAYED or a.startswith(("--output=", "--write-baseline=")) for a in argv)


def invocation_key(argv: list[str], cwd: str) -> str:
    from mlcost_lint import __version__
    from mlcost_lint.fingerprint import package_fingerprint

    parts = [f"replay {FORMAT}", __version__, sys.version, sys.executable, package_fingerprint(), cwd,
             time.strftime("%Y-%m-%d", time.gmtime()), f"tty {_isatty(sys.stdout)} {_isatty(sys.stderr)}"]
    parts += [f"env {k}={v}" for k, v in sorted(os.environ.items()) if k in ENV_NAMES or k.startswith(ENV_PREFIXES)]
    # The interpreter's own folders and site-packages: installing or
    # upgrading a dependency (PyYAML, python-hcl2) renames a folder there.
    # sys.path[0] is the script's folder (or the working folder under -m).
    parts += [f"path {p} {path_stamp(p)}" for p in sys.path[1:]]
    parts.append(f"argv {len(argv)}")
    parts += argv
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return PREFIX + h.hexdigest()[1:]


def _isatty(stream: Any) -> int:
    try:
        return int(bool(stream.isatty()))
    except (AttributeError, ValueError, OSError):
        return 0


def path_stamp(path: str) -> Stamp:
    """The stat stamp of ``path`` without following a final link (and of
    what a link points at): (0,) when absent, (-1, errno) when unaskable."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return (0,)
    except (OSError, ValueError) as exc:
        return (-1, getattr(exc, "errno", 0) or 0)
    out: Stamp = (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if stat.S_ISLNK(st.st_mode):
        try:
            t = os.stat(path)
            out += (t.st_mode, t.st_dev, t.st_ino, t.st_size, t.st_mtime_ns, t.st_ctime_ns)
        except OSError as exc:
            out += (-1, exc.errno or 0)
    return out


def margin_ns() -> int:
    """How much older than the run a stamp must be to be trusted."""
    try:
        return int(os.environ.get(_MARGIN_ENV, MARGIN_NS))
    except ValueError:
        return MARGIN_NS


def too_recent(stamp: Stamp, before_ns: int, now_ns: int) -> bool:
    """Whether a time in the stamp is too recent to trust (or in the future)."""
    for i in range(4, len(stamp), 6):
        if i + 1 < len(stamp) and not (stamp[i] < before_ns and stamp[i + 1] < before_ns):
            return True
        if i + 1 < len(stamp) and (stamp[i] > now_ns or stamp[i + 1] > now_ns):
            return True
    return False


# -- finding and checking an entry --------------------------------------------

def _path_args(argv: list[str]) -> list[str]:
    """The arguments that name an existing path: the paths linted are among
    them (an option's value that happens to be a path only adds a folder
    to look in)."""
    return [a for a in argv if a and not a.startswith("-") and os.path.lexists(a)]


def _chain(path: str) -> list[str]:
    """``path``'s folder (itself when a folder) and every folder above it,
    up to and including the first holding ``.git``, else to the root. The
    test for ``.git`` is gitignore.git_root's with ``any_entry`` (lexists),
    as the parse cache's scan roots and config.find_config use it; repeated
    here because this module imports none of ours (see above)."""
    folder = os.path.abspath(path)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    out = []
    while True:
        out.append(folder)
        if os.path.lexists(os.path.join(folder, ".git")):
            return out
        parent = os.path.dirname(folder)
        if parent == folder:
            return out
        folder = parent


def _cache_roots(argv: list[str], cwd: str) -> list[str]:
    """Where the run's cache can be: ``--cache-dir``, else beside a config
    file (any folder from a path linted up to its git root) or here."""
    explicit = None
    for i, a in enumerate(argv):
        if a == "--cache-dir" and i + 1 < len(argv):
            explicit = argv[i + 1]
        elif a.startswith("--cache-dir="):
            explicit = a.split("=", 1)[1]
    if explicit is not None:
        return [explicit]
    out: list[str] = []
    for base in [cwd, *_path_args(argv)]:
        for folder in _chain(base):
            root = os.path.join(folder, CACHE_DIR_NAME)
            if root not in out:
                out.append(root)
    return out


def _scan_roots(argv: list[str], cwd: str) -> list[str]:
    """The trees this run reads (and their git roots): a key found inside
    one could have come with it (cache_io.existing_key)."""
    paths = _path_args(argv) or [cwd]
    out = {os.path.realpath(p) for p in paths}
    for p in paths:
        top = _chain(p)[-1]
        if os.path.lexists(os.path.join(top, ".git")):
            out.add(os.path.realpath(top))
    return sorted(out)


def _read_entry(root: str, version: str, key: str) -> bytes | None:
    """The entry's bytes under the cache folder ``root``, as the parse cache
    reads its own: the cache, version and shard folders are opened without
    following a link (a link among them is no entry), the entry only when it
    is a regular file of bounded size, never blocking."""
    from mlcost_lint.cache_io import SIG_LEN, close_fd, open_dir, read_regular_at

    fds: list[int] = []
    try:
        fds.append(open_dir(root))
        fds.append(open_dir(f"v{version}", fds[-1]))
        fds.append(open_dir(key[:2], fds[-1]))
        return read_regular_at(f"{key}.pkl", fds[-1], MAX_ENTRY_BYTES + SIG_LEN)
    except OSError:
        return None
    finally:
        for fd in reversed(fds):
            close_fd(fd)


def _replay(key: str, argv: list[str], cwd: str) -> int | None:
    from mlcost_lint import __version__
    from mlcost_lint.cache_io import existing_key, verified

    secret = None
    for root in _cache_roots(argv, cwd):
        blob = _read_entry(root, __version__, key)
        if blob is None:
            continue
        if secret is None:
            secret = existing_key(_scan_roots(argv, cwd))
            if secret is None:
                return None
        payload = verified(blob, secret, key)
        if payload is None:
            continue
        entry = _decode(payload, key)
        if entry is None:
            continue
        manifest, chunks, code = entry
        if _unmoved(manifest):
            return _write(chunks, code)
    return None


def _unmoved(manifest: list) -> bool:
    """Whether every recorded stamp is as it is now (the first moved stamp
    ends the check, see _watched). The manifest's shape is checked first,
    in one pass over all its numbers (a generator per item was a twentieth
    of a replay on the real corpus's 4,800 stamps)."""
    if not all(type(item) is tuple and len(item) == 2 and type(item[0]) is str and type(item[1]) is tuple
               for item in manifest):
        return False
    if not {type(x) for _, stamp in manifest for x in stamp} <= {int}:
        return False
    for path, stamp in manifest:
        if path_stamp(path) != stamp:
            return False
    return True


def _decode(payload: bytes, key: str) -> tuple[list, list, int] | None:
    try:
        value = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(value, tuple) and len(value) == 5 and value[0] == FORMAT and value[1] == key):
        return None
    _, _, manifest, chunks, code = value
    if not (isinstance(manifest, list) and isinstance(chunks, list) and code in (0, 1)):
        return None
    for item in chunks:
        if not (isinstance(item, tuple) and len(item) == 2 and item[0] in (1, 2) and isinstance(item[1], bytes)):
            return None
    return manifest, chunks, code


def _write(chunks: list, code: int) -> int:
    try:
        for stream, data in chunks:
            target = sys.stdout if stream == 1 else sys.stderr
            target.buffer.write(data)
            if stream == 2:
                target.buffer.flush()
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        return 0      # as the command line does (cli.main)
    return code


# -- recording ------------------------------------------------------------------

def allow(paths: list[str], lint_paths: list[str], writer: Any) -> None:
    """Called by the command line at the end of a run whose output depends
    only on the inputs above: record it (when the exit code is 0 or 1).
    ``paths``: every path the run read or whose listing or presence it
    depended on; ``writer``: the cache.CacheWriter of the cache it used."""
    global _pending
    _pending = _Pending(list(paths), list(lint_paths), writer)


class _Tee(io.BufferedIOBase):
    """A binary stream that passes every write to ``target`` and keeps a
    copy, in order across both streams."""

    def __init__(self, target: Any, number: int, capture: Capture) -> None:
        super().__init__()
        self._target, self._number, self._capture = target, number, capture

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        data = bytes(data)
        try:
            self._target.write(data)
        except BaseException:
            self._capture.broken = True
            raise
        self._capture.chunks.append((self._number, data))
        return len(data)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()


class Capture:
    """This run's output, kept while it is written, for the entry."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.chunks: list[tuple[int, bytes]] = []
        self.broken = False
        self.began_ns = time.time_ns()
        self._streams: list[tuple[str, Any, Any]] = []

    def start(self) -> None:
        for name, number in (("stdout", 1), ("stderr", 2)):
            original = getattr(sys, name)
            buffer = getattr(original, "buffer", None)
            if buffer is None or not isinstance(getattr(original, "encoding", None), str):
                self._restore()
                self.broken = True    # not a plain text stream: output not kept, nothing recorded
                return
            wrapper = io.TextIOWrapper(_Tee(buffer, number, self), encoding=original.encoding,
                                       errors=original.errors, line_buffering=original.line_buffering,
                                       write_through=True)
            self._streams.append((name, original, wrapper))
            setattr(sys, name, wrapper)

    def _restore(self) -> None:
        for name, original, wrapper in reversed(self._streams):
            try:
                wrapper.flush()
            except (OSError, ValueError):
                self.broken = True
            setattr(sys, name, original)
            try:
                wrapper.detach()
            except (OSError, ValueError):
                pass
        self._streams.clear()

    def abandon(self) -> None:
        """Put the streams back; nothing is recorded."""
        self.broken = True
        self._restore()

    def finish(self, code: Any) -> None:
        """Put the streams back and, when the CLI allowed it and nothing
        read is too recent to trust, write the entry."""
        self._restore()
        global _pending
        pending, _pending = _pending, None
        if pending is None or self.broken or code not in (0, 1) or isinstance(code, bool):
            return
        before, now = self.began_ns - margin_ns(), time.time_ns()
        manifest = []
        for path in _watched(pending):
            st = path_stamp(path)
            if too_recent(st, before, now):
                return
            manifest.append((path, st))
        payload = marshal.dumps((FORMAT, self.key, manifest, self.chunks, code))
        if len(payload) <= MAX_ENTRY_BYTES:
            pending.writer.put_payload(self.key, payload)


def _watched(pending: _Pending) -> list[str]:
    """The run's paths, and the names git and config discovery look for in
    every folder above the paths linted and the working folder."""
    bases = [os.getcwd(), *pending.lint_paths]
    bases += [os.path.realpath(b) for b in bases]
    paths = dict.fromkeys([*pending.paths, *names_above(bases, ANCESTOR_NAMES)])
    # The paths named on the command line first: a pre-commit hook is given
    # the files that changed, so a replay that cannot happen stops at the
    # first stamp, not after thousands (33 ms on bench/'s 8,000 files).
    named = [p for p in pending.lint_paths if p in paths]
    return list(dict.fromkeys([*named, *paths]))


def names_above(bases: list[str], names: tuple) -> list[str]:
    """``names`` in each of ``bases`` (made absolute) and every folder above
    it: what git and config discovery look for there. Not the folders'
    own stamps, which move with every file made beside them (/tmp)."""
    out: dict[str, None] = {}
    for base in bases:
        folder = os.path.abspath(base)
        while True:
            for name in names:
                out.setdefault(os.path.join(folder, name))
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return list(out)
