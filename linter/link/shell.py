"""What a container runs, as words and simple commands, without running it.

A container's ``command`` + ``args`` is an argv. When it is a shell with
``-c`` (``bash -c "cd /x && torchrun ..."``), the script is split into words
and simple commands here with a small POSIX-style splitter: quotes, escapes,
``$(...)``/``${...}``/backquotes kept inside their word, operators ``&&``,
``||``, ``;``, ``|``, ``&`` and newlines ending a command, ``#`` comments.
Nothing is expanded or executed; a word holding ``$`` stays as written so
that callers can treat it as unknown.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import field

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location
from mlcost_lint.model.kubernetes import Container

MAX_SHELL_DEPTH = 3
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Characters split_script treats like any letter wherever they are (everything
# it tests for one by one is left out; "#" and "$" are ordinary only in places).
_PLAIN_RUN = re.compile(r"[^\\'\"$`# \t\r\n;|&()]+")
# Inside double quotes, what is taken as it is (no closing quote, no backslash).
_QUOTED_RUN = re.compile(r'[^"\\]+')
_BLANKS = re.compile(r"[ \t\r]+")
# Words in front of the real command that only change how it runs.
_WRAPPERS = frozenset({"exec", "time", "nohup", "sudo", "stdbuf", "nice", "ionice", "command", "builtin"})
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run")}
_INIT_WRAPPERS = frozenset({"tini", "dumb-init", "catatonit"})
_CONTROL = frozenset({"for", "while", "until", "do", "done", "if", "then", "fi", "case", "esac", "function"})


def basename(path: str) -> str:
    """posixpath.basename for a str, without its fspath and separator lookups:
    the link stage asks it for every word of every command (59,000 times on
    the real corpus)."""
    return path[path.rfind("/") + 1:]


@dataclass(frozen=True, slots=True)
class Word:
    """One argv word; ``source`` is ("command" | "args", index) of the
    container list item it came from (a script's words share their item)."""

    text: str
    source: tuple[str, int]
    in_script: bool = False
    # Where the word is written when that is not the container's command/args
    # (a script in a ConfigMap, a RayJob ``spec.entrypoint``).
    origin: Location | None = None
    # The word as written, when ``text`` is its expansion (``$(NPROC)`` -> "2"),
    # and what the expansion used ("NPROC=2 in the container env").
    written: str = ""
    expanded_from: str = ""

    @property
    def shown(self) -> str:
        return self.written or self.text

    @property
    def has_expansion(self) -> bool:
        return "$" in self.text or "`" in self.text


@dataclass(slots=True)
class SimpleCommand:
    """One simple command: words after leading ``NAME=value`` assignments
    and wrappers (``exec``, ``env``, ``nohup``, ``uv run``, ...)."""

    words: list[Word]
    assignments: dict[str, str] = field(default_factory=dict)
    background: bool = False          # ended by ``&``
    in_loop: bool = False             # inside a for/while/until body

    @property
    def name(self) -> str:
        return basename(self.words[0].text) if self.words else ""


@dataclass(frozen=True, slots=True)
class Assignment:
    """A shell variable set by a script statement (``NPROC=4``, ``export
    NPROC=4``, ``read NPROC``, ``for NPROC in ...``) before command number
    ``at``; ``value`` is None when it is not a literal."""

    at: int
    name: str
    value: str | None


@dataclass(slots=True)
class Program:
    """Everything a container runs: its simple commands in order."""

    commands: list[SimpleCommand] = field(default_factory=list)
    has_control_flow: bool = False
    assignments: list[Assignment] = field(default_factory=list)


# Texts split earlier in this run -> (tokens, ok, starts, columns). A Slurm
# script is split twice (its exported variables when the model is built,
# its commands when launches are linked): half of the 1.2 M characters split
# in a cold run of the real corpus. Bounded by characters held, as a script
# may be large.
_SPLIT_MEMO: dict[str, tuple[tuple, bool, tuple, tuple]] = {}
_SPLIT_MEMO_CHARS = [0]
_SPLIT_MEMO_MAX_CHARS = 4_000_000


def split_script(text: str, starts: list[int] | None = None,
                 columns: list[int] | None = None) -> tuple[list[str | None], bool]:
    """Split a shell script into words; ``None`` marks a command boundary and
    the string "&" a background boundary. Returns (tokens, ok); ok is False
    when quotes are unbalanced (the words found so far are still returned).
    When ``starts`` is given, the 0-based line each token starts on is
    appended to it (one entry per token); ``columns`` likewise gets the
    0-based column each token starts at on its line."""
    hit = _SPLIT_MEMO.get(text)
    if hit is None:
        token_starts: list[int] = []
        token_columns: list[int] = []
        tokens, ok = _split(text, token_starts, token_columns)
        hit = (tuple(tokens), ok, tuple(token_starts), tuple(token_columns))
        remember_split(text, hit)
    if starts is not None:
        starts.extend(hit[2])
        if columns is not None:
            columns.extend(hit[3])
    return list(hit[0]), hit[1]


def split_of(text: str) -> tuple | None:
    """What split_script remembers of ``text``; None when it was not split
    in this process."""
    return _SPLIT_MEMO.get(text)


def remember_split(text: str, hit: tuple) -> None:
    """Remember ``hit`` (what split_of gave) as ``text``'s split: also a split
    made in a parse worker and cached with the file's model
    (model.build.FileModel.splits), so the parent does not split it again."""
    if text in _SPLIT_MEMO or len(text) > _SPLIT_MEMO_MAX_CHARS:
        return
    if _SPLIT_MEMO_CHARS[0] + len(text) > _SPLIT_MEMO_MAX_CHARS:
        _SPLIT_MEMO.clear()
        _SPLIT_MEMO_CHARS[0] = 0
    _SPLIT_MEMO[text] = hit
    _SPLIT_MEMO_CHARS[0] += len(text)


def _split(text: str, starts: list[int] | None = None,
           columns: list[int] | None = None) -> tuple[list[str | None], bool]:
    tokens: list[str | None] = []
    word: list[str] = []
    in_word = False
    word_start = 0
    i, n = 0, len(text)
    newlines: list[int] = []
    if starts is not None:
        k = text.find("\n")
        while k >= 0:
            newlines.append(k)
            k = text.find("\n", k + 1)

    def flush() -> None:
        nonlocal word, in_word
        if in_word:
            tokens.append("".join(word))
            if starts is not None:
                starts.append(bisect.bisect_left(newlines, word_start))
                if columns is not None:
                    columns.append(_column(word_start))
        word, in_word = [], False

    def _column(at: int) -> int:
        k = bisect.bisect_left(newlines, at)
        return at - (newlines[k - 1] + 1 if k else 0)

    def boundary(token: str | None) -> None:
        tokens.append(token)
        if starts is not None:
            starts.append(bisect.bisect_left(newlines, i))
            if columns is not None:
                columns.append(_column(i))

    while i < n:
        ch = text[i]
        if not in_word:
            word_start = i
        if ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":   # line continuation
                i += 2
                continue
            if i + 1 < n:
                word.append(text[i + 1])
                in_word = True
                i += 2
                continue
            i += 1
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                word.append(text[i + 1:])
                in_word = True
                flush()
                return tokens, False
            word.append(text[i + 1:end])
            in_word = True
            i = end + 1
            continue
        if ch == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`\n':
                    if text[j + 1] != "\n":
                        buf.append(text[j + 1])
                    j += 2
                    continue
                quoted = _QUOTED_RUN.match(text, j)
                if quoted is not None:
                    buf.append(quoted.group())
                    j = quoted.end()
                else:    # a backslash that escapes nothing stays
                    buf.append(text[j])
                    j += 1
            word.append("".join(buf))
            in_word = True
            if j >= n:
                flush()
                return tokens, False
            i = j + 1
            continue
        if ch == "$" and i + 1 < n and text[i + 1] in "({":
            # Keep $(...) / ${...} (nested) inside the current word.
            close = ")" if text[i + 1] == "(" else "}"
            opener = text[i + 1]
            depth, j = 0, i + 1
            while j < n:
                if text[j] == opener:
                    depth += 1
                elif text[j] == close:
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            word.append(text[i:j + 1])
            in_word = True
            i = j + 1
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            end = n - 1 if end < 0 else end
            word.append(text[i:end + 1])
            in_word = True
            i = end + 1
            continue
        if ch == "#" and not in_word:
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in " \t\r":
            flush()
            i = _BLANKS.match(text, i).end()
            continue
        if ch == "&" and ((i > 0 and text[i - 1] in "<>") or text[i + 1:i + 2] == ">"):
            word.append(ch)        # a redirection: 2>&1, &>log
            in_word = True
            i += 1
            continue
        if ch in "\n;|&()":
            flush()
            boundary("&" if ch == "&" and text[i:i + 2] != "&&" else None)
            i += 2 if text[i:i + 2] in ("&&", "||", ";;") else 1
            continue
        # A run of ordinary characters joins the word at once: scripts are
        # mostly plain words, and one character per turn of this loop made
        # splitting the Slurm scripts and container commands of the real
        # corpus a visible part of a cold run.
        plain = _PLAIN_RUN.match(text, i)
        if plain is not None:
            word.append(plain.group())
            i = plain.end()
        else:       # '#' inside a word, '$' not opening $( or ${
            word.append(ch)
            i += 1
        in_word = True
    flush()
    return tokens, True


def _shell_script_index(words: list[Word]) -> int | None:
    """Index of the script word when ``words`` run ``sh -c SCRIPT``."""
    i = 0
    while i < len(words) and (basename(words[i].text) in _INIT_WRAPPERS or words[i].text == "--"):
        i += 1
    if i < len(words) and basename(words[i].text) == "env":
        i += 1
        while i < len(words) and _ASSIGNMENT.match(words[i].text):
            i += 1
    if i >= len(words) or basename(words[i].text) not in _SHELLS:
        return None
    i += 1
    while i < len(words) and words[i].text.startswith("-") and not words[i].text.startswith("--"):
        flag = words[i].text
        i += 1
        if "c" in flag[1:]:
            return i if i < len(words) else None
        if flag in ("-o", "+o"):
            i += 1
    return None


def _strip(words: list[Word]) -> tuple[list[Word], dict[str, str]]:
    """Drop leading assignments and wrappers from one simple command."""
    assignments: dict[str, str] = {}
    i = 0
    while i < len(words):
        text = words[i].text
        base = basename(text)
        if _ASSIGNMENT.match(text):
            name, _, value = text.partition("=")
            assignments[name] = value
            i += 1
        elif base in _WRAPPERS or base in _INIT_WRAPPERS or text == "--":
            i += 1
        elif base == "env":
            i += 1
            while i < len(words) and words[i].text.startswith("-"):
                i += 1
        elif i + 1 < len(words) and (base, words[i + 1].text) in _RUNNERS:
            i += 2
        elif base == "conda" and i + 1 < len(words) and words[i + 1].text == "run":
            i += 2
            while i < len(words) and words[i].text.startswith("-"):
                i += 2 if words[i].text in ("-n", "--name", "-p", "--prefix") else 1
        else:
            break
    return words[i:], assignments


def _commands_from_words(words: list[Word], depth: int, program: Program) -> None:
    script_at = _shell_script_index(words)
    if script_at is not None and depth < MAX_SHELL_DEPTH:
        script = words[script_at]
        _commands_from_script(script.text, script.source, script.origin, depth, program)
        return
    _add(words, False, False, depth, program)


def _commands_from_script(text: str, source: tuple[str, int], origin: Location | None, depth: int,
                          program: Program, column: int | None = None) -> None:
    starts: list[int] = []
    columns: list[int] = []
    tokens, _ok = split_script(text, starts, columns)
    current: list[Word] = []
    loop_depth = 0
    may_redirect = "<" in text or ">" in text
    # A multi-line script in a YAML literal block starts on the line after its key.
    multi_line = origin is not None and "\n" in text.strip("\n")

    def end(background: bool) -> None:
        nonlocal current, loop_depth
        if current:
            first = current[0].text
            if first in _CONTROL:
                program.has_control_flow = True
                if first in ("for", "while", "until"):
                    loop_depth += 1
                if first == "for" and len(current) > 1:
                    program.assignments.append(Assignment(len(program.commands), current[1].text, None))
                if first == "done":
                    loop_depth = max(loop_depth - 1, 0)
                # "do python x.py" / "then torchrun ...": the command follows the keyword
                while current and current[0].text in ("do", "then", "else", "done", "fi"):
                    current = current[1:]
                if not current or current[0].text in ("for", "while", "until", "if", "case"):
                    current = []
                    return
            _add(current, background, loop_depth > 0, depth, program, may_redirect)
        current = []

    path, first = (origin.path, origin.line) if origin is not None else ("", 0)
    at_line: dict[int, Location] = {}    # frozen: the words of one line share it
    for token, line, col in zip(tokens, starts, columns):
        if token is None:
            end(False)
        elif token == "&":
            end(True)
        else:
            if origin is None:
                where = None
            elif column:
                where = Location(path, first + 1 + line if multi_line else first, column + col)
            elif multi_line:
                where = at_line.get(line)
                if where is None:
                    where = at_line[line] = Location(path, first + 1 + line, 1)
            else:
                where = origin
            current.append(Word(token, source, True, where))
    end(False)


_REDIRECT = re.compile(r"^(?:\d*|&)[<>]{1,2}&?(?:\d+|-)?$")
_REDIRECT_WITH_TARGET = re.compile(r"^(?:\d*|&)[<>]{1,2}(?!&)\S+$")


def _without_redirections(words: list[Word]) -> list[Word]:
    if not any("<" in w.text or ">" in w.text for w in words if w.in_script):
        return words    # most commands: no word a redirection pattern can match
    out: list[Word] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w.in_script and _REDIRECT.match(w.text):
            skip = not w.text.endswith(("&1", "&2", "-")) and not re.search(r"&\d$", w.text)
            continue
        if w.in_script and _REDIRECT_WITH_TARGET.match(w.text):
            continue
        out.append(w)
    return out


# Builtins whose NAME=value / NAME operands set shell variables.
_DECLARES = frozenset({"export", "declare", "typeset", "local", "readonly"})
# Builtins whose NAME operands set shell variables to what is not written there.
_READS = frozenset({"read", "unset", "mapfile", "readarray", "getopts"})


def _literal(value: str) -> str | None:
    return None if ("$" in value or "`" in value) else value


def _record_assignments(words: list[Word], name: str, program: Program) -> None:
    """``name``: the command's (basename of its first word)."""
    at = len(program.commands)
    if name in _DECLARES:
        for w in words[1:]:
            if _ASSIGNMENT.match(w.text):
                var, _, value = w.text.partition("=")
                program.assignments.append(Assignment(at, var, _literal(value)))
    elif name in _READS:
        for w in words[1:]:
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", w.text):
                program.assignments.append(Assignment(at, w.text, None))


def _add(words: list[Word], background: bool, in_loop: bool, depth: int, program: Program,
         may_redirect: bool = True) -> None:
    """``may_redirect`` False: no word holds ``<`` or ``>`` (a script without them)."""
    stripped, assignments = _strip(_without_redirections(words) if may_redirect else words)
    if not stripped:
        # A statement of assignments only (``NPROC=4``) sets shell variables.
        for var, value in assignments.items():
            program.assignments.append(Assignment(len(program.commands), var, _literal(value)))
        return
    name = basename(stripped[0].text)
    _record_assignments(stripped, name, program)
    # _strip took wrappers, "env" and "--" off the front: a shell script runs when the command is a shell
    if name in _SHELLS and depth < MAX_SHELL_DEPTH and _shell_script_index(stripped) is not None:
        _commands_from_words(stripped, depth + 1, program)
        return
    program.commands.append(SimpleCommand(stripped, assignments, background, in_loop))


def container_words(container: Container) -> list[Word]:
    out = [Word(t, ("command", i)) for i, t in enumerate(container.command)]
    out += [Word(t, ("args", i)) for i, t in enumerate(container.args)]
    return out


def program_of(container: Container) -> Program:
    """The simple commands a container runs (empty when it uses the image's
    entrypoint). Built once per container after the model stage (the
    links and rules share it: nobody changes a Program once built)."""
    if container.frozen and container.frozen_program is not None:
        return container.frozen_program
    if container.script is not None:
        program = program_of_script(*container.script)
    else:
        program = Program()
        words = container_words(container)
        if words:
            _commands_from_words(words, 0, program)
    if container.frozen:
        container.frozen_program = program
    return program


def program_of_script(text: str, origin: Location, source: tuple[str, int] = ("script", 0),
                      column: int | None = None) -> Program:
    """The simple commands of a shell script read from the scan (a ConfigMap
    key, a RayJob entrypoint); its words are located at ``origin``: on the
    lines after it for a multi-line script. ``column`` is the file column
    the script's lines start at (a literal block's content indentation + 1,
    1 for a whole file); with it every word gets its own column, without it
    the words of a multi-line script are at column 1."""
    program = Program()
    _commands_from_script(text, source, origin, 0, program, column)
    return program


def word_location(container: Container, word: Word) -> Location:
    if word.origin is not None:
        return word.origin
    return container.loc(*word.source)
