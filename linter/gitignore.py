"""``.gitignore`` matching with the standard library (gitignore(5)).

Discovery reads every ``.gitignore`` from the git root (or the scanned
folder when there is no repository) down to the folder it walks, plus
``.git/info/exclude``. Supported: comments, ``\\#``/``\\!`` escapes,
trailing-space trimming, ``!`` negation (last match wins), a trailing ``/``
for folders only, anchoring by a leading or inner ``/``, ``*``, ``?``,
``[...]`` classes and ``**`` in leading, trailing and inner position. As in
git, a file inside an ignored folder cannot be re-included (the folder is
never entered). Not read: ``core.excludesFile`` (a user's global file is not
the project's).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import field
from pathlib import Path

from mlcost_lint.lean_dataclass import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    text: str            # the line as written, for --verbose
    source: str          # the file it came from


def _translate(pattern: str) -> str:
    """The regex body for a gitignore glob (no anchors)."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before_ok = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if before_ok and after < n and pattern[after] == "/":
                    out.append("(?:.*/)?")      # "**/": zero or more folders
                    i = after + 1
                    continue
                if before_ok and after == n:
                    out.append(".*")            # trailing "/**": everything inside
                    i = after
                    continue
                out.append("[^/]*")             # "**" elsewhere is "*"
                i = after
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^", "]") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_lines(text: str, source: str) -> list[Rule]:
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        # Trailing spaces are dropped unless escaped with a backslash.
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        body = line.rstrip("/")
        if not body:
            continue
        anchored = "/" in body
        body = body.lstrip("/")
        regex = _translate(body)
        if not anchored:
            regex = "(?:.*/)?" + regex
        try:
            compiled = re.compile(f"^{regex}$", re.DOTALL)
        except re.error:
            continue  # git ignores a pattern it cannot read; so do we
        rules.append(Rule(compiled, negate, dir_only, raw.strip(), source))
    return rules


@dataclass(slots=True)
class _Level:
    base: Path          # the folder the rules are relative to (absolute)
    rules: list[Rule]
    prefix: str = ""    # str(base) and a separator: what paths under it start with

    def __post_init__(self) -> None:
        text = str(self.base)
        self.prefix = text if text.endswith(os.sep) else text + os.sep


@dataclass(slots=True)
class GitIgnore:
    """The rules in force for one walk; :meth:`enter` adds a folder's own
    ``.gitignore`` as the walk reaches it."""

    levels: list[_Level] = field(default_factory=list)
    _loaded: set[str] = field(default_factory=set)
    # Every ignore file asked for, there or not (discover.Discovery.watched):
    # the walk asks only folders whose listing holds one (enter).
    consulted: list[str] = field(default_factory=list)
    # The working folder when the walk began: os.path.abspath asked the
    # system for it again for every walked file and folder.
    _cwd: str = field(default_factory=os.getcwd)
    # The walk's top folder as its paths begin ("./", "infra/") and as an
    # absolute path, each with a separator: a path the walk made below it
    # (names joined by "/") is made absolute by swapping one for the other,
    # without normpath (see _abs). Empty: no walk, or not a "/" system.
    _top: str = ""
    _top_abs: str = ""

    @classmethod
    def for_walk(cls, start: Path) -> "GitIgnore":
        gi = cls()
        if os.sep == "/":
            top = str(start)
            gi._top = top if top.endswith("/") else top + "/"
            top_abs = gi._abs(top)
            gi._top_abs = top_abs if top_abs.endswith("/") else top_abs + "/"
        start = Path(os.path.abspath(start))
        root = git_root(start)
        if root is not None:
            exclude = root / ".git" / "info" / "exclude"
            gi._add_file(root, exclude, ".git/info/exclude")
            chain = [start, *start.parents]
            for folder in reversed(chain[: chain.index(root) + 1]):
                gi.enter(folder)
        else:
            gi.enter(start)
        return gi

    def _abs(self, path: Path | str) -> str:
        """os.path.abspath(path), from the working folder the walk began in.
        A path below the walk's top whose rest holds no "." or ".." part and
        no empty one (every path the walk makes: names from a listing) is
        already normal there: normpath and join were most of the time
        discovery spent on ignore files (3,600 calls on the real corpus)."""
        top = self._top
        if top and type(path) is str and path.startswith(top):
            rest = path[len(top):]
            if rest and rest[0] != "." and "/." not in rest and "//" not in rest and rest[-1] != "/":
                return self._top_abs + rest
        return os.path.normpath(os.path.join(self._cwd, path))

    def _add_file(self, base: Path | str, path: Path | str, name: str) -> None:
        self.consulted.append(os.fspath(path))
        try:
            # One lstat: a regular file, not a link (is_file + is_symlink were two).
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            return
        rules = parse_lines(text, name)
        if rules:
            self.levels.append(_Level(Path(base), rules))

    def enter(self, folder: Path | str) -> None:
        """Add ``folder``'s own ``.gitignore`` (asked for, and watched). The
        walk enters only folders whose listing, just read, holds one: a
        folder without is watched by its own stamp, which an ignore file
        made, renamed or linked there moves, changing its listing too
        (discover_cache._same_listing); the absent file's stamp told nothing
        more, and was 1,210 of the 4,800 stamps a run over the real corpus
        checks before it replays or reuses its walk."""
        full = self._abs(folder)
        if full in self._loaded:
            return
        self._loaded.add(full)
        # Strings: asked for every walked folder that has one.
        path = os.path.join(full, ".gitignore")
        self._add_file(full, path, path)

    def match(self, path: Path | str, is_dir: bool) -> Rule | None:
        """The rule that ignores ``path``, or None (not ignored, or re-included)."""
        if not self.levels:     # no ignore file in force (yet): nothing to match
            return None
        # String prefixes, not Path.relative_to: asked once per walked file
        # and folder, pathlib was most of a warm run's discovery.
        full = self._abs(path)
        decided: Rule | None = None
        for level in self.levels:
            base = level.prefix
            if not full.startswith(base):
                continue
            rel = full[len(base):]
            if not rel:
                continue
            if os.sep != "/":
                rel = rel.replace(os.sep, "/")
            for rule in level.rules:
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.match(rel):
                    decided = rule
        return None if decided is None or decided.negate else decided


def git_root(start: Path, *, any_entry: bool = False) -> Path | None:
    """The first folder at or above ``start`` (made absolute) holding
    ``.git``: a folder, or the file of a worktree or submodule.

    Two tests, which differ only for a ``.git`` link that leads nowhere
    (dangling, or a loop) and for a ``.git`` that cannot be looked at
    (``Path.exists`` raises PermissionError there, ``lexists`` says no):
    - by default ``.git`` must lead somewhere (``Path.exists``): git itself
      passes over a dangling ``.git`` link and finds the repository above,
      so discovery's ignore files (GitIgnore.for_walk) and the project
      read around explicit files (cli._scope) are the ones git would use;
    - ``any_entry``: any entry named ``.git`` counts (``os.path.lexists``),
      for the parse cache's scan roots (parse_stage._open_cache: a key
      inside one is refused), where one root too many is the safe side.
      config.find_config stops its search on the same test, and
      replay._chain repeats it (replay imports no module of ours) so that a
      replay refuses the same keys and looks in the same folders."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git") if any_entry else (folder / ".git").exists():
            return folder
    return None
