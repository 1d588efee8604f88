"""Reading values out of a parsed config without ever trusting their shape.

Every reader goes through :class:`ConfigView`: it looks keys up under the
config's root, turns what it finds into a :class:`Setting` with the key as
written and its location, and converts values with the ``as_*`` functions
below. A value of the wrong type, a Hydra/OmegaConf ``${...}``
interpolation or a DeepSpeed/Accelerate ``"auto"`` becomes UNKNOWN, never a
guess and never an exception.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterator

from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.training import Setting
from mlcost_lint.parse.document import Document, KeyPath

# Values resolved at run time: Hydra/OmegaConf interpolations, DeepSpeed and
# Accelerate "auto" (filled in from the Trainer's arguments), env lookups.
_INTERPOLATION = re.compile(r"\$\{[^}]*\}?|\{\{.*?\}\}")
_RUNTIME_WORDS = frozenset({"auto"})

# Large enough for any real step count, small enough that arithmetic on it
# stays cheap (a YAML int can have thousands of digits).
_MAX_INT = 10**15


def is_runtime(value: Any) -> bool:
    """True for a value that is decided at run time (so UNKNOWN statically)."""
    if isinstance(value, str):
        text = value.strip()
        return text.lower() in _RUNTIME_WORDS or bool(_INTERPOLATION.search(text))
    return False


def as_bool(value: Any) -> Any:
    """A YAML/JSON boolean, or its common string spellings; else UNKNOWN."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return bool(value)
    return UNKNOWN


def as_int(value: Any) -> Any:
    """An integer (an integral float or a decimal string counts); else UNKNOWN."""
    if isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value if -_MAX_INT <= value <= _MAX_INT else UNKNOWN
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) <= _MAX_INT:
            return int(value)
        return UNKNOWN
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[+-]?\d{1,16}", text):
            return int(text)
        if re.fullmatch(r"[+-]?\d{1,16}\.0*", text):
            return int(float(text))
    return UNKNOWN


def as_str(value: Any) -> Any:
    """A non-empty string that is not resolved at run time; else UNKNOWN."""
    if isinstance(value, str) and value.strip() and not is_runtime(value):
        return value.strip()
    return UNKNOWN


def as_lower(value: Any) -> Any:
    text = as_str(value)
    return text.lower() if isinstance(text, str) else UNKNOWN


def written(value: Any) -> str:
    """A scalar as it reads in the config (for debug flags)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, dict):
        cls = value.get("class_path") or value.get("_target_")
        if isinstance(cls, str):
            return cls
    return type(value).__name__


def key_text(path: KeyPath) -> str:
    """("trainer", "callbacks", 0, "init_args") -> "trainer.callbacks[0].init_args"."""
    out = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


_MISSING = object()


class ConfigView:
    """Key lookups relative to a config's root inside a document."""

    def __init__(self, document: Document, root: KeyPath = ()) -> None:
        self.document = document
        self.root: KeyPath = tuple(root)
        self.data = document.get(self.root)

    def get(self, *keys: Any, default: Any = None) -> Any:
        node = self.data
        for key in keys:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and isinstance(key, int) and not isinstance(key, bool) \
                    and 0 <= key < len(node):
                node = node[key]
            else:
                return default
        return node

    def has(self, *keys: Any) -> bool:
        return self.get(*keys, default=_MISSING) is not _MISSING

    def dict_at(self, *keys: Any) -> dict:
        node = self.get(*keys)
        return node if isinstance(node, dict) else {}

    def loc(self, *keys: Any) -> Location:
        return self.document.location(self.root + tuple(keys))

    def setting(self, keys: KeyPath, convert: Callable[[Any], Any] = lambda v: v,
                value: Any = _MISSING) -> Setting[Any] | None:
        """The written value at ``keys`` converted, or None when not written.
        A run-time value (``${...}``, ``auto``) is UNKNOWN whatever ``convert``
        says. ``value`` overrides the converted value (the key is still the
        location)."""
        raw = self.get(*keys, default=_MISSING)
        if raw is _MISSING:
            return None
        if value is _MISSING:
            value = UNKNOWN if is_runtime(raw) else _safe(convert, raw)
        return Setting(value, explicit=True, location=self.loc(*keys), key=key_text(keys))

    def first(self, candidates: tuple[KeyPath, ...], convert: Callable[[Any], Any] = lambda v: v
              ) -> Setting[Any] | None:
        """The first of several alternative keys that is written."""
        for keys in candidates:
            found = self.setting(keys, convert)
            if found is not None:
                return found
        return None

    def walk_strings(self) -> Iterator[tuple[KeyPath, str]]:
        """Every string value under the root with its path (relative to it),
        in document order. A path is built only for a string or a container
        (a config is mostly numbers, booleans and short strings: a path for
        every value was most of reading the real corpus's 863 configs' data
        paths)."""
        root = self.data
        if isinstance(root, str):
            yield (), root
            return
        if not isinstance(root, (dict, list)):
            return
        seen: set[int] = {id(root)}     # YAML anchors share nodes; visit once
        stack: list[tuple[KeyPath, Iterator[tuple[Any, Any]]]] = [((), _items(root))]
        while stack:
            path, items = stack[-1]
            for key, value in items:
                if isinstance(value, str):
                    yield path + (key,), value
                elif isinstance(value, (dict, list)) and id(value) not in seen:
                    seen.add(id(value))
                    stack.append((path + (key,), _items(value)))
                    break
            else:
                stack.pop()


def _items(node: dict | list) -> Iterator[tuple[Any, Any]]:
    return iter(node.items()) if isinstance(node, dict) else enumerate(node)


def _safe(convert: Callable[[Any], Any], raw: Any) -> Any:
    try:
        return convert(raw)
    except Exception:  # a converter must never let bad input escape
        return UNKNOWN


def default_setting(value: Any, key: str = "") -> Setting[Any]:
    """A framework default: not written, so no location."""
    return Setting(value, explicit=False, location=None, key=key)
