"""Required-key matching shared by MLC101 and MLC102 (rules.md, Settled
questions): case- and separator-insensitive, and a prefixed key counts by its
last segment (``acme.com/cost-center`` satisfies ``cost-center``)."""

from __future__ import annotations

import re
from typing import Iterable

_SEPARATORS = re.compile(r"[-_.\s:]")


def normalise(key: str) -> str:
    return _SEPARATORS.sub("", key.rsplit("/", 1)[-1]).lower()


def missing_keys(present: Iterable[object], required: Iterable[str]) -> list[str]:
    have = {normalise(str(k)) for k in present}
    return [r for r in required if normalise(r) not in have]
