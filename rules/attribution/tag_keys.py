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


# Both rules are opt-in on `required-tags` (rules.md, "The default set (v2)"):
# tag keys are an organisation's convention, not waste in any organisation.
OFF_NOTICE = ("Cost-tag rules MLC101/MLC102 are off: set required-tags in .mlcost-lint.toml "
              "to check cost tags and labels.")
SELECTED_NOTICE = ("MLC101/MLC102 check the suggested keys team, project, cost-center: set required-tags "
                   "in .mlcost-lint.toml to use your own.")


def keys_source(settings: object) -> str:
    """How the message names the keys' origin."""
    return " (required-tags)" if getattr(settings, "required_tags", None) is not None else " (suggested keys)"
