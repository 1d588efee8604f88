"""The discover stage: which files to read, and what kind each one is.

Classification here is by name only (cheap); content decides later what a
YAML/JSON document is (Kubernetes object, training config, plan, or nothing).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mlcost_lint.parse.document import FileKind, ParseError
from mlcost_lint.secrets import escape_controls

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


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path          # where to read it (STDIN for standard input)
    display: str        # relative to the working directory, "/"-separated
    kind: FileKind


@dataclass(slots=True)
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)


def kind_of(name: str) -> FileKind | None:
    lower = name.lower()
    for suffix, kind in SUFFIX_KINDS:
        if lower.endswith(suffix):
            return kind
    return None


def _sniffed_kind(path: Path) -> FileKind | None:
    """A file with no extension that starts with a shell shebang may be a
    Slurm batch script (its content decides when it is parsed)."""
    if "." in path.name:
        return None
    from mlcost_lint.parse.slurm import has_shell_shebang

    try:
        with open(path, "rb") as fh:
            head = fh.read(128)
    except OSError:
        return None
    return FileKind.SHELL if has_shell_shebang(head) else None


def display_path(path: Path, cwd: Path) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        rel = str(path)
    return PurePosixPath(Path(rel).as_posix()).as_posix()


def is_excluded(display: str, patterns: list[str], root: Path, cwd: Path) -> bool:
    if not patterns:
        return False
    candidates = {display, display.rsplit("/", 1)[-1]}
    try:
        candidates.add((cwd / display).resolve().relative_to(root.resolve()).as_posix())
    except (ValueError, OSError):
        pass
    for pattern in patterns:
        pat = pattern.rstrip("/")
        for cand in candidates:
            if fnmatch.fnmatchcase(cand, pat) or fnmatch.fnmatchcase(cand, pat + "/*") \
                    or cand.startswith(pat + "/"):
                return True
            # A bare folder name excludes it anywhere (like ruff's exclude).
            if "/" not in pat and pat in cand.split("/")[:-1]:
                return True
    return False


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


def _is_regular(path: Path) -> bool:
    """A regular file (not following links). A file that vanished since the
    folder was listed still counts: reading it reports that it vanished."""
    import stat

    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return True  # unreadable metadata: the read reports why


def discover(paths: list[str], exclude: list[str], root: Path, cwd: Path | None = None) -> Discovery:
    cwd = cwd or Path.cwd()
    out = Discovery()
    seen: set[str] = set()

    def add(path: Path, kind: FileKind) -> None:
        display = display_path(path, cwd)
        if display in seen or is_excluded(display, exclude, root, cwd):
            return
        if escape_controls(display) != display:
            # A line break in a path would start a new line of text output (in
            # a CI log, a "::error" line is a workflow command): not read.
            seen.add(display)
            # Names that are not UTF-8 arrive as lone surrogates (surrogateescape).
            why = "is not valid UTF-8" if any("\ud800" <= c <= "\udfff" for c in display) \
                else "contains control characters"
            out.errors.append(ParseError(escape_controls(display), 1, 1, f"file name {why}; not read"))
            return
        seen.add(display)
        out.files.append(SourceFile(path, display, kind))

    for raw in paths:
        if raw == STDIN:
            if STDIN_DISPLAY not in seen:
                seen.add(STDIN_DISPLAY)
                out.files.append(SourceFile(Path(STDIN), STDIN_DISPLAY, FileKind.YAML))
            continue
        start = Path(raw)
        if _is_file(start):
            # A file named explicitly is read whatever its name, if we know its kind.
            kind = kind_of(start.name) or _sniffed_kind(start)
            if kind is not None:
                add(start, kind)
            continue
        if not _is_dir(start):
            # A FIFO or device would block the read (or never end): never opened.
            problem = "not a regular file or folder; not read" if _exists(start) else "path does not exist"
            out.errors.append(ParseError(display_path(start, cwd), 1, 1, problem))
            continue

        def on_error(exc: OSError, _start: Path = start) -> None:
            where = escape_controls(display_path(Path(exc.filename or _start), cwd))
            out.errors.append(ParseError(where, 1, 1, f"cannot read directory: {exc.strerror or exc}"))

        # followlinks=False: symlinked folders (and loops) are never entered.
        for dirpath, dirnames, filenames in os.walk(start, onerror=on_error, followlinks=False):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d for d in dirnames
                if d not in SKIPPED_DIRS and not _exists(here / d / "pyvenv.cfg")
                and not is_excluded(display_path(here / d, cwd), exclude, root, cwd)
            )
            for name in sorted(filenames):
                kind = kind_of(name)
                full = here / name
                if kind is None and "." not in name and _is_regular(full) and not full.is_symlink():
                    kind = _sniffed_kind(full)
                if kind is None:
                    continue
                if full.is_symlink():
                    continue  # links may point outside the tree; not followed by default
                if not _is_regular(full):
                    continue  # FIFOs, sockets, devices: reading them blocks or never ends
                add(full, kind)
    out.files.sort(key=lambda f: f.display)
    return out
