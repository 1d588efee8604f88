"""Slurm batch scripts: the ``#SBATCH`` header, with positions.

sbatch reads ``#SBATCH`` directives from the top of the script and stops at
the first line that is neither blank nor a comment (sbatch(1): "before any
executable commands"); later ``#SBATCH`` lines are plain comments. Each
directive line may hold several options, long (``--gres=gpu:8``,
``--time 1:00:00``) or short (``-N 2``, ``-N2``); a word starting with ``#``
ends the line (a trailing comment). Nothing is executed and no variable is
expanded: sbatch does not expand them in directives either.

The body is kept as text; what it runs is read later with the shell
splitter the container commands use (:mod:`mlcost_lint.link.shell`).
"""

from __future__ import annotations

import re
from dataclasses import field

from mlcost_lint.lean_dataclass import dataclass

# Long options that take a value (sbatch(1)); the ones rules.md reads first.
_VALUE_OPTIONS = frozenset({
    "--nodes", "--ntasks", "--ntasks-per-node", "--gres", "--gpus", "--gpus-per-node", "--gpus-per-task",
    "--time", "--partition", "--signal", "--job-name", "--output", "--error", "--cpus-per-task", "--account",
    "--qos", "--constraint", "--array", "--nodelist", "--exclude", "--chdir", "--dependency", "--mem",
    "--mem-per-cpu", "--mem-per-gpu", "--reservation", "--mail-type", "--mail-user", "--hint", "--cluster",
    "--clusters", "--comment", "--time-min", "--begin", "--deadline", "--distribution", "--licenses",
    "--cpus-per-gpu", "--gpu-bind", "--gpu-freq", "--ntasks-per-gpu", "--ntasks-per-socket",
    "--ntasks-per-core", "--sockets-per-node", "--cores-per-socket", "--threads-per-core", "--tmp",
    "--export", "--open-mode", "--wckey", "--network", "--nice", "--priority", "--switches", "--tres-per-task",
    "--wait-all-nodes", "--input", "--gid", "--uid", "--profile", "--acctg-freq", "--kill-on-invalid-dep",
    "--propagate", "--mcs-label", "--delay-boot", "--extra", "--cpu-freq", "--core-spec", "--thread-spec",
    "--burst-buffer", "--bb", "--bbf", "--container", "--container-id", "--batch", "--clusters",
    "--segment", "--resv-ports", "--prefer", "--mincpus", "--spread-job",
})
# Options whose value is optional: only ``--opt=value`` gives them one.
_OPTIONAL_VALUE = frozenset({"--exclusive", "--get-user-env", "--requeue", "--no-requeue", "--overcommit",
                             "--oversubscribe", "--contiguous", "--hold", "--parsable", "--test-only",
                             "--use-min-nodes", "--ignore-pbs", "--no-kill", "--quiet", "--verbose",
                             "--wait", "--reboot", "--help", "--usage", "--version"})
# Short forms (sbatch(1)) -> long option; True: takes a value.
SHORT_OPTIONS: dict[str, tuple[str, bool]] = {
    "-N": ("--nodes", True), "-n": ("--ntasks", True), "-t": ("--time", True), "-p": ("--partition", True),
    "-G": ("--gpus", True), "-J": ("--job-name", True), "-o": ("--output", True), "-e": ("--error", True),
    "-c": ("--cpus-per-task", True), "-A": ("--account", True), "-q": ("--qos", True),
    "-C": ("--constraint", True), "-a": ("--array", True), "-w": ("--nodelist", True),
    "-x": ("--exclude", True), "-D": ("--chdir", True), "-d": ("--dependency", True),
    "-i": ("--input", True), "-L": ("--licenses", True), "-M": ("--clusters", True), "-m": ("--distribution", True),
    "-b": ("--begin", True), "-k": ("--no-kill", False), "-H": ("--hold", False), "-O": ("--overcommit", False),
    "-s": ("--oversubscribe", False), "-Q": ("--quiet", False), "-v": ("--verbose", False),
    "-W": ("--wait", False), "-h": ("--help", False), "-V": ("--version", False), "-S": ("--core-spec", True),
}

_DIRECTIVE = re.compile(r"^#SBATCH(?=\s|$)")
_WORD = re.compile(r"""(?:[^\s"']+|"[^"]*"|'[^']*')+""")
_SHEBANG = re.compile(rb"^#![ \t]*(?:\S*/)?(?:env[ \t]+(?:-\S+[ \t]+)*)?(?:ba|da|z|k|a)?sh(?![\w.-])")
# How far into a file discovery looks for the header (bytes).
HEAD_BYTES = 65536


@dataclass(frozen=True, slots=True)
class SbatchOption:
    """One option of an ``#SBATCH`` line. ``name`` is the long form
    (``-N`` -> ``--nodes``); ``value`` is None for a flag."""

    name: str
    value: str | None
    line: int
    column: int              # where the option word starts (1-based)
    written: str             # the option as written: "--gres=gpu:8", "-N 2"


@dataclass(slots=True)
class SlurmScript:
    """A batch script as read: its directives in order, the header's last
    line, the directives written after the first command (ignored by
    sbatch), and the script text (``\\r\\n`` read as ``\\n``)."""

    options: list[SbatchOption] = field(default_factory=list)
    header_end: int = 0                   # last line of the directive block
    ignored: list[int] = field(default_factory=list)   # lines of #SBATCH after the first command
    text: str = ""

    def last(self, name: str) -> SbatchOption | None:
        """The option as sbatch uses it: the last one written wins."""
        hit = None
        for opt in self.options:
            if opt.name == name:
                hit = opt
        return hit

    @property
    def first_line(self) -> int:
        return self.options[0].line if self.options else 1


def has_shell_shebang(head: bytes) -> bool:
    """``#!/bin/bash``, ``#!/usr/bin/env bash``, ``#!/bin/sh``, ..."""
    return bool(_SHEBANG.match(head))


def header_lines(text: str):
    """(line number, line) of the leading block of blank and comment lines."""
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return
        yield number, line


def has_directives(text: str) -> bool:
    """Whether the leading comment block holds an ``#SBATCH`` line."""
    return any(_DIRECTIVE.match(line) for _, line in header_lines(text))


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return re.sub(r"""["']""", "", text) if ('"' in text or "'" in text) else text


def _options_of_line(line: str, number: int) -> list[SbatchOption]:
    start = len("#SBATCH")
    words = [(m.group(0), m.start() + 1) for m in _WORD.finditer(line, start)]
    out: list[SbatchOption] = []
    i = 0
    while i < len(words):
        word, col = words[i]
        if word.startswith("#"):
            break
        nxt = words[i + 1] if i + 1 < len(words) and not words[i + 1][0].startswith(("#", "-")) else None
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if eq:
                out.append(SbatchOption(name, _unquote(value), number, col, word))
            elif name in _VALUE_OPTIONS and nxt is not None:
                out.append(SbatchOption(name, _unquote(nxt[0]), number, col, f"{word} {nxt[0]}"))
                i += 1
            elif name not in _VALUE_OPTIONS and name not in _OPTIONAL_VALUE and nxt is not None:
                # An option we do not list: a following non-option word is its value.
                out.append(SbatchOption(name, _unquote(nxt[0]), number, col, f"{word} {nxt[0]}"))
                i += 1
            else:
                out.append(SbatchOption(name, None, number, col, word))
        elif word.startswith("-") and len(word) >= 2:
            short = word[:2]
            long_name, takes = SHORT_OPTIONS.get(short, (short, nxt is not None))
            if takes and len(word) > 2:
                value = word[2:].removeprefix("=")
                out.append(SbatchOption(long_name, _unquote(value), number, col, word))
            elif takes and nxt is not None:
                out.append(SbatchOption(long_name, _unquote(nxt[0]), number, col, f"{word} {nxt[0]}"))
                i += 1
            else:
                out.append(SbatchOption(long_name, None, number, col, word))
        i += 1
    return out


def read_slurm(text: str) -> SlurmScript:
    """The directives of a batch script (never raises)."""
    text = text.replace("\r\n", "\n")
    script = SlurmScript(text=text)
    last = 0
    for number, line in header_lines(text):
        last = number
        if _DIRECTIVE.match(line):
            script.options.extend(_options_of_line(line, number))
            script.header_end = number
    if "#SBATCH" in text:
        for number, line in enumerate(text.split("\n"), start=1):
            if number > last and _DIRECTIVE.match(line.lstrip()):
                script.ignored.append(number)
    return script
