"""Shell words of a launcher line: where their variables come from
(``Scope``: the script's own assignments, the script that ran it, the
container ``env``), their expansion to literal values (``expand_word``), and
launcher options as written (``Options``, ``parse_options``, ``count_of``,
``norm_flag``). Used by :mod:`.launch_commands` and :mod:`.launch_steps`.
"""

from __future__ import annotations

import re
from dataclasses import field, replace
from typing import Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Maybe
from mlcost_lint.model.kubernetes import Container
from mlcost_lint.link.shell import Program, Word

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_INT = re.compile(r"^\d+$")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_K8S_REF = re.compile(r"\$\((" + _NAME + r")\)")
_SHELL_REF = re.compile(r"\$\{(" + _NAME + r")(?::-[^}]*)?\}|\$(" + _NAME + r")")

# Kinds whose operator injects PET_NPROC_PER_NODE (torchrun's default) into the pods.
_PET_INJECTING_KINDS = frozenset({"PyTorchJob", "TrainJob"})
# Env vars those operators append to every container (training-operator setPodEnv,
# Trainer v2 torch plugin): a value written in the manifest is overridden.
_OPERATOR_ENV = frozenset({"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"})


def norm_flag(text: str) -> str:
    if text.startswith("--"):
        return "--" + text[2:].lower().replace("_", "-")
    return text


# -- variables ------------------------------------------------------------

@dataclass(slots=True)
class Scope:
    """Where a command's variables come from: the script it is in (its
    assignments before command ``at``), the script that ran that one, and
    at the root the container's ``env``."""

    program: Program
    at: int
    container: Container
    parent: "Scope | None" = None
    prefix: dict[str, str] = field(default_factory=dict)   # ``VAR=x cmd`` (the command's own env)
    operator_env: bool = False       # a PyTorchJob/TrainJob pod: PET_*/WORLD_SIZE/... come from the operator

    def _assigned(self, name: str) -> tuple[bool, str | None]:
        hits = [a for a in self.program.assignments if a.name == name and a.at <= self.at]
        if not hits:
            return False, None
        if self.program.has_control_flow:
            return True, None
        return True, hits[-1].value

    def _sourced_before(self) -> bool:
        return any(c.name in ("source", ".", "eval") for c in self.program.commands[:self.at])

    def shell_var(self, name: str) -> tuple[str | None, str]:
        """A shell variable's literal value and where it comes from, or (None, "")."""
        assigned, value = self._assigned(name)
        if assigned:
            return (value, f"{name}={value} set in the script") if value is not None else (None, "")
        if self._sourced_before():
            return None, ""
        if self.parent is not None:
            return self.parent.shell_var(name)
        return self.env_var(name)

    def env_var(self, name: str) -> tuple[str | None, str]:
        if self.operator_env and (name.startswith("PET_") or name in _OPERATOR_ENV):
            return None, ""      # the operator appends its own value, which wins
        env = self.container.env.get(name)
        if env is None or not isinstance(env.value, str) or "$" in env.value:
            return None, ""
        return env.value, f"{name}={env.value} in the container env"

    def process_env(self, name: str) -> tuple[str | None, str, bool]:
        """What a launcher started by this command reads from its environment:
        (value, how, present). ``present`` is False when nothing sets it."""
        if name in self.prefix:
            value = self.prefix[name]
            if "$" in value or "`" in value:
                return None, "", True
            return value, f"{name}={value} before the command", True
        scope: Scope | None = self
        while scope is not None:
            assigned, _ = scope._assigned(name)
            if assigned or scope._sourced_before():
                return None, "", True
            scope = scope.parent
        env = self.container.env.get(name)
        if env is None:
            return None, "", False
        value, how = self.env_var(name)
        return value, how, True


def expand_word(word: Word, scope: Scope) -> Word:
    """``word`` with ``$(VAR)`` (Kubernetes) and, in scripts, ``$VAR``/``${VAR}``
    replaced by literal values; unchanged when any part is not known."""
    text = word.text
    if "$" not in text or "$$" in text:
        return word
    used: list[str] = []

    def k8s(match: re.Match[str]) -> str:
        value, how = scope.env_var(match.group(1))
        if value is None:
            return match.group(0)
        used.append(how)
        return value

    out = _K8S_REF.sub(k8s, text)
    if word.in_script:
        def shell(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2)
            value, how = scope.shell_var(name)
            if value is None or (value == "" and ":-" in match.group(0)):
                return match.group(0)
            used.append(how)
            return value
        out = _SHELL_REF.sub(shell, out)
    if "$" in out or "`" in out or re.search(r"\s", out) or not used:
        return word
    return replace(word, text=out, written=word.written or word.text, expanded_from="; ".join(dict.fromkeys(used)))


# -- options --------------------------------------------------------------

@dataclass(slots=True)
class Options:
    """Launcher options as (normalised name -> (value word | None, flag word))."""

    values: dict[str, tuple[Word | None, Word]]
    rest: list[Word]            # from the script / recipe on
    value_text: dict[str, str]

    def get(self, name: str) -> tuple[str | None, Word] | None:
        hit = self.values.get(name)
        if hit is None:
            return None
        return self.value_text[name], hit[1] if hit[0] is None else hit[0]

    def has(self, name: str) -> bool:
        return name in self.values

    def flag(self, name: str) -> Word:
        return self.values[name][1]


def parse_options(words: list[Word], takes_value: Callable[[str], bool]) -> Options:
    """Options up to the first positional word (the script)."""
    values: dict[str, tuple[Word | None, Word]] = {}
    texts: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.text == "--":
            i += 1
            break
        if not w.text.startswith("-") or w.text == "-":
            break
        if "=" in w.text and w.text.startswith("--"):
            name, _, value = w.text.partition("=")
            name = norm_flag(name)
            values[name] = (None, w)
            texts[name] = value
            i += 1
            continue
        name = norm_flag(w.text)
        if takes_value(name) and i + 1 < len(words):
            values[name] = (words[i + 1], w)
            texts[name] = words[i + 1].text
            i += 2
            continue
        values[name] = (None, w)
        texts[name] = ""
        i += 1
    return Options(values, words[i:], texts)


def count_of(text: str | None) -> Maybe[int] | None:
    """A rank/node count as written: an int, UNKNOWN for an expansion or a
    non-number, None when absent."""
    if text is None:
        return None
    text = text.strip().strip("'\"")
    if _INT.match(text):
        return int(text)
    return UNKNOWN


def _display(flag: Word, value: Word | None) -> str:
    if value is None or value is flag:
        shown = flag.shown
        return f"{shown} ({flag.expanded_from})" if flag.expanded_from else shown
    shown = f"{flag.shown} {value.shown}"
    return f"{shown} ({value.expanded_from})" if value.expanded_from else shown
