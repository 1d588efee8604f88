"""The discover stage: which files to read, and what kind each one is.

Classification here is by name only (cheap); content decides later what a
YAML/JSON document is (Kubernetes object, training config, plan, or nothing).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from dataclasses import field
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from mlcost_lint.gitignore import GitIgnore, Rule
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.parse.document import FileKind, ParseError
from mlcost_lint.pickling import pickled_by_fields
from mlcost_lint.redact import escape_controls

if TYPE_CHECKING:
    from mlcost_lint.discover_cache import WalkCache

# Folders never worth reading: VCS data, downloaded modules, dependencies, caches.
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".terraform", "node_modules", ".venv", "venv", ".tox", ".nox",
    "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".mlcost_lint_cache",
    "site-packages", ".eggs", ".idea", ".vscode", ".terragrunt-cache", ".hypothesis",
})

# Longest suffix first: ".tf.json" before ".json".
SUFFIX_KINDS: tuple[tuple[str, FileKind], ...] = (
    (".tfvars.json", FileKind.TERRAFORM_VARS),
    (".tf.json", FileKind.TERRAFORM_JSON),
    (".tfvars", FileKind.TERRAFORM_VARS),
    (".tf", FileKind.TERRAFORM),
    (".yaml", FileKind.YAML),
    (".yml", FileKind.YAML),
    (".json", FileKind.JSON),
    (".sbatch", FileKind.SLURM),
    (".slurm", FileKind.SLURM),
    (".sh", FileKind.SHELL),
)

STDIN = "-"
STDIN_DISPLAY = "stdin"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str           # where to read it, as the system takes it (STDIN for standard input)
    display: str        # relative to the working directory, "/"-separated
    kind: FileKind
    # False for files found by walking a folder: a final link that appears
    # after discovery is not followed (os.O_NOFOLLOW). Files named on the
    # command line are read through a link, as the user asked.
    follow: bool = True


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Skip:
    """A path discovery did not read, and why: ``reason`` is "gitignore"
    (``detail`` the pattern and its file) or "exclude" (``detail`` the
    pattern); ``explicit`` when the user named the path itself."""

    display: str
    reason: str
    detail: str
    is_dir: bool = False
    explicit: bool = False


@dataclass(slots=True)
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    # Paths whose listing, type or content the answer depends on besides
    # the files found: each path named, every walked folder, the folders
    # passed over (a venv by its pyvenv.cfg, a link), files read to sniff
    # their kind, and the .gitignore files asked. Their stat stamps decide
    # whether an earlier run still holds (replay.py).
    watched: list[str] = field(default_factory=list)


def kind_of(name: str) -> FileKind | None:
    lower = name.lower()
    for suffix, kind in SUFFIX_KINDS:
        if lower.endswith(suffix):
            return kind
    return None


def _sniffed_kind(path: str) -> FileKind | None:
    """A file with no extension that starts with a shell shebang may be a
    Slurm batch script (its content decides when it is parsed)."""
    if "." in os.path.basename(path):
        return None
    from mlcost_lint.parse.slurm import has_shell_shebang

    try:
        with open(path, "rb") as fh:
            head = fh.read(128)
    except OSError:
        return None
    return FileKind.SHELL if has_shell_shebang(head) else None


def display_path(path: Path | str, cwd: Path | str) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        rel = str(path)
    # relpath is already normalised; only the separator differs on Windows
    # (string work: pathlib here was a third of a warm run's discovery).
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def is_excluded(display: str, patterns: list[str], root: Path, cwd: Path) -> bool:
    return excluded_by(display, patterns, root, cwd) is not None


def excluded_by(display: str, patterns: list[str], root: Path, cwd: Path) -> str | None:
    """The first exclude pattern that matches ``display``, or None."""
    if not patterns:
        return None
    matcher = _matcher(tuple(patterns))
    candidates = {display, display.rsplit("/", 1)[-1]}
    try:
        candidates.add((cwd / display).resolve().relative_to(root.resolve()).as_posix())
    except (ValueError, OSError):
        pass
    if not any(matcher.matches(cand) for cand in candidates):
        return None
    # Which pattern, for the skipped line: only for a path that is excluded.
    for pattern in patterns:
        pat = pattern.rstrip("/")
        for cand in candidates:
            if fnmatch.fnmatchcase(cand, pat) or fnmatch.fnmatchcase(cand, pat + "/*") \
                    or cand.startswith(pat + "/"):
                return pattern
            # A bare folder name excludes it anywhere (like ruff's exclude).
            if "/" not in pat and pat in cand.split("/")[:-1]:
                return pattern
    return patterns[0]


class _Excludes:
    """Exclude patterns compiled once into one regex (fnmatch's own cache
    holds 32,768 patterns: 40,000 patterns were compiled again for every
    file, 414 s on 100 files). A pattern matches a path, anything under it
    (``pat/*``, ``pat/...``), and a bare folder name matches that folder
    anywhere (like ruff's exclude)."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        import re

        parts = []
        self.names: set[str] = set()
        self.literals: set[str] = set()     # no wildcard: the path or a folder above it
        for pattern in patterns:
            pat = pattern.rstrip("/")
            if "/" not in pat:
                self.names.add(pat)
            if not any(c in pat for c in "*?["):
                self.literals.add(pat)
                continue
            parts.append(fnmatch.translate(pat))
            parts.append(fnmatch.translate(pat + "/*"))
            parts.append(re.escape(pat + "/") + ".*")
        self.regex = re.compile("|".join(f"(?:{p})" for p in parts), re.S) if parts else None

    def matches(self, cand: str) -> bool:
        if self.literals:
            pieces = cand.split("/")
            if any("/".join(pieces[:i]) in self.literals for i in range(1, len(pieces) + 1)):
                return True
        if self.regex is not None and self.regex.match(cand):
            return True
        return bool(self.names) and any(part in self.names for part in cand.split("/")[:-1])


_COMPILED: dict[tuple[str, ...], _Excludes] = {}


def _matcher(patterns: tuple[str, ...]) -> _Excludes:
    found = _COMPILED.get(patterns)
    if found is None:
        if len(_COMPILED) > 16:
            _COMPILED.clear()
        found = _COMPILED[patterns] = _Excludes(patterns)
    return found


def _exists(path: Path) -> bool:
    try:
        path.lstat()
    except OSError:
        return False
    return True


def _is_dir(path: Path) -> bool:
    # Path.is_dir/is_file raise PermissionError where a parent cannot be searched.
    try:
        return path.is_dir()
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


if os.sep == "/" and os.altsep is None:
    def _join(folder: str, name: str) -> str:
        """os.path.join for a walked folder and a name listed in it (no
        separator in the name): the walk joins a path for every file and
        folder, and posixpath.join's checks were a tenth of discovery."""
        return folder + name if folder.endswith("/") else folder + "/" + name
else:   # pragma: no cover - Windows: drives and two separators
    _join = os.path.join


def _walk(top: str, top_display: str, on_error, listings: dict[str, bytes] | None = None):
    """os.walk(top, followlinks=False), top-down, that also yields each
    folder's display path (its parent's plus its name: one relpath per walk,
    not per folder) and the files' directory entries (their type comes with
    the listing: no lstat per file). Yields (dirpath, display, dirnames,
    {file name: DirEntry}, [folder links]); as with os.walk, the caller may prune dirnames,
    folders that are links are listed in dirnames but not entered, and a
    folder that cannot be listed goes to ``on_error``. ``listings``: filled
    with each folder's listing_digest."""
    stack = [(top, top_display)]
    while stack:
        dirpath, display = stack.pop()
        dirs: list[str] = []
        links: set[str] = set()
        files: dict[str, os.DirEntry] = {}
        try:
            with os.scandir(dirpath) as listing:
                for entry in listing:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        files[entry.name] = entry
                        continue
                    dirs.append(entry.name)
                    try:
                        if entry.is_symlink():
                            links.add(entry.name)
                    except OSError:
                        pass
        except OSError as exc:
            on_error(exc)
            continue
        if listings is not None:
            listings[dirpath] = _digest(dirs, links, files)
        yield dirpath, display, dirs, files, [os.path.join(dirpath, d) for d in dirs if d in links]
        stack.extend((_join(dirpath, d), d if display == "." else f"{display}/{d}")
                     for d in reversed(dirs) if d not in links)


def _digest(dirs: list[str], links: set[str], files: dict[str, os.DirEntry]) -> bytes:
    """What a walk reads of one folder: the names in it and their types
    (folder, folder link, file link, regular file, other)."""
    h = hashlib.blake2b(digest_size=16)
    for name in sorted(dirs):
        h.update(b"d" + (b"l" if name in links else b"-") + name.encode("utf-8", "surrogateescape") + b"\0")
    for name in sorted(files):
        is_link, is_regular = _entry_type(files[name])
        h.update(b"f" + (b"l" if is_link else b"-") + (b"?" if is_regular is None else b"r" if is_regular else b"o")
                 + name.encode("utf-8", "surrogateescape") + b"\0")
    return h.digest()


def listing_digest(folder: str) -> bytes | None:
    """The digest of ``folder``'s listing as a walk records it
    (FolderWalk.listings); None when it cannot be listed."""
    listings: dict[str, bytes] = {}
    for _ in _walk(folder, ".", lambda exc: None, listings):
        break
    return listings.get(folder)


def _entry_type(entry: os.DirEntry) -> tuple[bool, bool | None]:
    """(a symbolic link, a regular file) without following links; the second
    is None when the file vanished or cannot be asked (it is then read, and
    reading says why)."""
    try:
        return entry.is_symlink(), entry.is_file(follow_symlinks=False)
    except OSError:
        return False, None


def _why(rule: Rule, cwd: Path) -> str:
    where = rule.source if rule.source.startswith(".git/") else display_path(Path(rule.source), cwd)
    return f"'{rule.text}' in {where}"


def _checked(path: str, kind: FileKind, display: str, follow: bool, explicit: bool, exclude: list[str],
             root: Path, cwd: Path) -> "SourceFile | Skip | ParseError":
    """A found file as discovery keeps it: to read, excluded, or a name not read."""
    pattern = excluded_by(display, exclude, root, cwd)
    if pattern is not None:
        return Skip(display, "exclude", pattern, explicit=explicit)
    if escape_controls(display) != display:
        # A line break in a path would start a new line of text output (in
        # a CI log, a "::error" line is a workflow command): not read.
        # Names that are not UTF-8 arrive as lone surrogates (surrogateescape).
        why = "is not valid UTF-8" if any("\ud800" <= c <= "\udfff" for c in display) \
            else "contains control characters"
        return ParseError(escape_controls(display), 1, 1, f"file name {why}; not read")
    return SourceFile(path, display, kind, follow)


@dataclass(slots=True)
class FolderWalk:
    """What walking one folder given on the command line found, in order:
    ``events`` are (display, item) with item a SourceFile, Skip or
    ParseError; display is None for what is kept whatever came before (a
    folder or file passed over, an unreadable folder), else the item is
    kept only the first time its display path is seen in the run.
    ``watched``: as Discovery.watched. ``links``: the links met, whose
    targets decide what they are (discover_cache stamps them).
    ``listings``: what each folder walked lists (listing_digest), when the
    walk is kept."""

    events: list[tuple[str | None, object]] = field(default_factory=list)
    watched: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    # Each folder walked -> listing_digest (when the walk is kept: discover_cache).
    listings: dict[str, bytes] = field(default_factory=dict)
    # Each folder visited (listed or not), in visiting order -> how many
    # events, watched paths and links came before its visit. The walk is
    # depth-first, so a folder and everything under it are one run of each:
    # rewalk_folders replaces that run when the folder's listing changed.
    spans: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    # How many of ``watched`` the folders gave; the ignore files consulted follow.
    body: int = 0


def walk_folder(start: Path, exclude: list[str], root: Path, cwd: Path, respect_gitignore: bool,
                listings: bool = False) -> FolderWalk:
    """Every file under ``start`` discovery reads or passes over, in walk
    order; ``listings``: with each folder's listing_digest."""
    out = FolderWalk()
    ignore = GitIgnore.for_walk(start) if respect_gitignore else None
    _walk_below(out, str(start), display_path(start, cwd), ignore, exclude, root, cwd, listings)
    out.body = len(out.watched)
    if ignore is not None:
        out.watched += ignore.consulted
    return out


def _walk_below(out: FolderWalk, top: str, top_display: str, ignore: GitIgnore | None, exclude: list[str],
                root: Path, cwd: Path, listings: bool) -> None:
    """Walk ``top`` (shown as ``top_display``) and everything under it into
    ``out``, with ``ignore`` holding the rules in force above it."""
    events, watched, spans = out.events, out.watched, out.spans

    def on_error(exc: OSError) -> None:
        path = os.fspath(exc.filename or top)
        spans.setdefault(path, (len(events), len(watched), len(out.links)))
        watched.append(path)
        where = escape_controls(display_path(Path(path), cwd))
        events.append((None, ParseError(where, 1, 1, f"cannot read directory: {exc.strerror or exc}")))

    def keep_dir(dirpath: str, folder: str, d: str) -> bool:
        # Strings, not Paths: a real tree has a folder per two files, and
        # pathlib and relpath per folder were a third of a warm run there.
        if d in SKIPPED_DIRS:
            return False
        # A folder not entered is watched by its own stamp (a pyvenv.cfg
        # made or removed in it moves it); an entered one is, when walked.
        path = _join(dirpath, d)
        if os.path.lexists(_join(path, "pyvenv.cfg")):
            watched.append(path)
            return False
        display = d if folder == "." else f"{folder}/{d}"
        pattern = excluded_by(display, exclude, root, cwd)
        if pattern is not None:
            watched.append(path)
            events.append((None, Skip(display, "exclude", pattern, is_dir=True)))
            return False
        rule = ignore.match(path, is_dir=True) if ignore is not None else None
        if rule is not None:
            watched.append(path)
            events.append((None, Skip(display, "gitignore", _why(rule, cwd), is_dir=True)))
            return False
        return True

    # Symlinked folders (and loops) are never entered.
    for dirpath, folder, dirnames, files, links in _walk(top, top_display, on_error,
                                                         out.listings if listings else None):
        spans[dirpath] = (len(events), len(watched), len(out.links))
        watched.append(dirpath)
        out.links += links
        # Asked for, and watched, only when the listing holds it (a folder of
        # that name is no ignore file), in any case: a case-insensitive file
        # system opens ".GITIGNORE" as ".gitignore", as git does there. One
        # made later moves the folder's stamp, watched above.
        if ignore is not None and _holds_gitignore(files):
            ignore.enter(dirpath)
        dirnames[:] = sorted(d for d in dirnames if keep_dir(dirpath, folder, d))
        for name in sorted(files):
            kind = kind_of(name)
            if kind is None and "." in name:
                continue
            is_link, is_regular = _entry_type(files[name])   # from the listing: no lstat per file
            full = _join(dirpath, name)
            if is_link:
                out.links.append(full)
            if kind is None and (is_regular or is_regular is None):
                watched.append(full)    # its first bytes decide
                kind = _sniffed_kind(full)
            if kind is None:
                continue
            display = name if folder == "." else f"{folder}/{name}"
            rule = ignore.match(full, is_dir=False) if ignore is not None else None
            if rule is not None:
                events.append((None, Skip(display, "gitignore", _why(rule, cwd))))
                continue
            if is_link:
                continue  # links may point outside the tree; not followed by default
            if is_regular is False:
                continue  # FIFOs, sockets, devices: reading them blocks or never ends
            events.append((display, _checked(full, kind, display, False, False, exclude, root, cwd)))


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (paths as the walk joins them)."""
    return path == folder or path.startswith(folder if folder.endswith("/") else folder + "/")


def rewalk_folders(recorded: FolderWalk, folders: list[str], start: Path, exclude: list[str], root: Path,
                   cwd: Path, respect_gitignore: bool) -> FolderWalk | None:
    """``recorded`` (walk_folder's walk of ``start``, with listings) with
    the folders ``folders``, which it visited and whose listing changed since,
    walked again with everything under them: the same events, watched
    paths, links, listings and spans as a new walk of ``start``. A file made, removed
    or renamed changes only its folder's listing; walking that folder again
    instead of the tree was 13 against 90 ms of a pre-commit hook's
    discovery on bench/'s 8,000 files. None when a folder is not one the
    walk visited."""
    if os.sep != "/" or any(f not in recorded.spans for f in folders):
        return None
    top, top_display = str(start), display_path(start, cwd)
    order = list(recorded.spans)
    position = {f: i for i, f in enumerate(order)}
    # A folder's parent decides whether it is entered, by its name (unchanged)
    # and by a pyvenv.cfg in it: a folder that has one now is its parent's to walk again.
    folders = [f.rsplit("/", 1)[0] if os.path.lexists(_join(f, "pyvenv.cfg")) else f for f in folders]
    if any(f not in position for f in folders):
        return None
    tops: list[str] = []
    for f in sorted(set(folders), key=position.__getitem__):
        if not (tops and under(f, tops[-1])):   # visiting order: a folder's subtree follows it
            tops.append(f)
    prefix = top if top.endswith("/") else top + "/"
    if any(f == top or not f.startswith(prefix) for f in tops):
        return None     # the folder given itself: walked again whole, by the caller
    out = FolderWalk()
    old_events, old_watched, old_links = recorded.events, recorded.watched[:recorded.body], recorded.links
    tail = list(recorded.watched[recorded.body:])
    consulted: list[str] = []
    listings: dict[str, bytes] = {}
    at = (0, 0, 0)              # how far the recorded walk has been copied

    def copy_span(folder: str) -> None:
        """``folder``'s recorded span, shifted to where the run copied from ``at`` lands now."""
        e, w, n = recorded.spans[folder]
        out.spans[folder] = (e - at[0] + len(out.events), w - at[1] + len(out.watched), n - at[2] + len(out.links))

    i = 0
    for f in tops:
        # the recorded walk up to f's visit
        begin = recorded.spans[f]
        while order[i] != f:
            copy_span(order[i])
            i += 1
        out.events += old_events[at[0]:begin[0]]
        out.watched += old_watched[at[1]:begin[1]]
        out.links += old_links[at[2]:begin[2]]
        while i < len(order) and under(order[i], f):
            i += 1
        at = recorded.spans[order[i]] if i < len(order) else (len(old_events), len(old_watched), len(old_links))
        # f walked again, with the ignore files of the folders above it in force
        rel = f[len(prefix):]
        ignore = None
        if respect_gitignore:
            ignore = GitIgnore.for_walk(start)
            parts = rel.split("/")
            for k in range(1, len(parts)):
                above = prefix + "/".join(parts[:k])
                if _lists_gitignore(above):
                    ignore.enter(above)
            primed = len(ignore.consulted)
        sub = FolderWalk()
        _walk_below(sub, f, rel if top_display == "." else f"{top_display}/{rel}", ignore, exclude, root, cwd,
                    True)
        for folder, (e, w, n) in sub.spans.items():
            out.spans[folder] = (e + len(out.events), w + len(out.watched), n + len(out.links))
        out.events += sub.events
        out.watched += sub.watched
        out.links += sub.links
        listings.update(sub.listings)
        if ignore is not None:
            consulted += ignore.consulted[primed:]
        gone = os.path.abspath(f)
        tail = [p for p in tail if not under(p, gone)]
    for folder in order[i:]:
        copy_span(folder)
    out.events += old_events[at[0]:]
    out.watched += old_watched[at[1]:]
    out.links += old_links[at[2]:]
    out.listings = {k: v for k, v in recorded.listings.items() if not any(under(k, f) for f in tops)}
    out.listings.update(listings)
    out.body = len(out.watched)
    # The ignore files in the order a new walk consults them: those of the
    # folders above the walk first (for_walk), then each folder's as it is visited.
    visit = {os.path.abspath(folder): n for n, folder in enumerate(out.spans)}
    out.watched += sorted(tail + consulted, key=lambda p: visit.get(os.path.dirname(p), -1))
    return out


def _holds_gitignore(names) -> bool:
    """Whether a folder listing ``names`` holds an ignore file: any case of
    the name (a case-insensitive file system opens ".GITIGNORE" as
    ".gitignore", as git does there)."""
    return any(len(name) == 10 and name.lower() == ".gitignore" for name in names)


def _lists_gitignore(folder: str) -> bool:
    """Whether ``folder``'s listing holds an ignore file, as the walk asks (walk_folder)."""
    try:
        return _holds_gitignore(os.listdir(folder))
    except OSError:
        return False


def discover(paths: list[str], exclude: list[str], root: Path, cwd: Path | None = None,
             respect_gitignore: bool = False, walks: "WalkCache | None" = None) -> Discovery:
    """The files to read under ``paths``. A file named explicitly is read
    whatever .gitignore says (as ruff and git do), but not when an exclude
    pattern matches it (pre-commit passes every changed file): that is
    recorded as an explicit :class:`Skip` so the CLI can say so. ``walks``
    keeps each folder's walk between runs (discover_cache)."""
    cwd = cwd or Path.cwd()
    out = Discovery()
    seen: set[str] = set()
    lists = {SourceFile: out.files, Skip: out.skipped, ParseError: out.errors}

    def keep(display: str | None, item: object) -> None:
        if display is not None:
            if display in seen:
                return
            seen.add(display)
        lists[type(item)].append(item)

    for raw in paths:
        if raw == STDIN:
            keep(STDIN_DISPLAY, SourceFile(STDIN, STDIN_DISPLAY, FileKind.YAML))
            continue
        start = Path(raw)
        out.watched.append(raw)
        if _is_file(start):
            # A file named explicitly is read whatever its name, if we know its kind.
            kind = kind_of(start.name) or _sniffed_kind(raw)
            if kind is not None:
                display = display_path(start, cwd)
                keep(display, _checked(raw, kind, display, True, True, exclude, root, cwd))
            continue
        if not _is_dir(start):
            # A FIFO or device would block the read (or never end): never opened.
            problem = "not a regular file or folder; not read" if _exists(start) else "path does not exist"
            out.errors.append(ParseError(display_path(start, cwd), 1, 1, problem))
            continue
        how = (exclude, root, cwd, respect_gitignore)
        walked = walks.get(raw, *how) if walks is not None else None
        if walked is None:
            walked = walk_folder(start, *how, listings=walks is not None)
            if walks is not None:
                walks.put(walked, raw, *how)
        for display, item in walked.events:     # keep(), written out: 8,000 events in a hook on bench/'s tree
            if display is not None:
                if display in seen:
                    continue
                seen.add(display)
            lists[type(item)].append(item)
        out.watched += walked.watched
    out.files.sort(key=attrgetter("display"))
    return out
