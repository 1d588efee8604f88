"""PyYAML, imported for the whole package through here.

Importing PyYAML compiles, in its pure-Python reader's class body, a pattern
of every non-printable Unicode character (``Reader.NON_PRINTABLE``): 8.5 ms
on the bench machine, a third of ``import yaml``, paid by every process that
reads YAML (a pre-commit hook, the parent of a cold run before it forks its
parse workers). This package reads YAML with PyYAML's C loader, which never
uses that pattern; here it is compiled the first time anything does use it
(PyYAML's pure-Python loader, where the C one is missing).
"""

from __future__ import annotations

import re
import sys
from typing import Any

# As PyYAML 6 writes it (yaml/reader.py); another text is compiled at import as before.
_NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"


class CompiledOnFirstUse:
    """Stands for ``re.compile(pattern, flags)``: compiles it when first asked for anything."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = _REAL_COMPILE(*self._args)
        return getattr(compiled, name)


_REAL_COMPILE = re.compile


def _import_yaml() -> Any:
    if "yaml" in sys.modules:
        return sys.modules["yaml"]

    def compile(pattern: Any, flags: int = 0) -> Any:  # noqa: A001 - re.compile's stand-in
        if flags == 0 and pattern == _NON_PRINTABLE:
            return CompiledOnFirstUse(pattern, flags)
        return _REAL_COMPILE(pattern, flags)

    re.compile = compile   # only while PyYAML's modules run (the import holds the import lock)
    try:
        import yaml
    finally:
        re.compile = _REAL_COMPILE
    return yaml


yaml = _import_yaml()
# The loader the package reads YAML with: PyYAML's C one (about 10 x faster),
# the pure-Python one where PyYAML was built without libyaml.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

__all__ = ["SAFE_LOADER", "yaml"]
