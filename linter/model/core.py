"""Values and locations shared by every part of the model."""

from __future__ import annotations

from typing import Any, TypeVar, Union

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.pickling import pickled_by_fields


class Unknown:
    """A value that cannot be known statically: an unresolved variable, an
    interpolation, a computed attribute, a ``"auto"`` setting.

    It is a distinct sentinel so that "unknown" is never confused with "absent"
    (``None``) or "false". Rules must test for it explicitly with
    :func:`is_known`; using it as a boolean raises, so that a rule which forgot
    the check fails loudly in the tests instead of firing on a guess.
    """

    _instance: "Unknown | None" = None
    __slots__ = ("reason",)

    def __new__(cls) -> "Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("UNKNOWN has no truth value; test it with is_known()")

    def __reduce__(self) -> str:  # pickles (cache, worker processes) as the singleton
        return "UNKNOWN"

    def __copy__(self) -> "Unknown":
        return self

    def __deepcopy__(self, memo: Any) -> "Unknown":
        return self


UNKNOWN = Unknown()

T = TypeVar("T")
Maybe = Union[T, Unknown]


def is_known(value: Any) -> bool:
    """True when ``value`` is not UNKNOWN (``None`` is known: it means absent)."""
    return value is not UNKNOWN


def contains_unknown(value: Any) -> bool:
    """True when ``value`` is UNKNOWN or a collection holding UNKNOWN anywhere."""
    if value is UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(contains_unknown(k) or contains_unknown(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(contains_unknown(v) for v in value)
    return False


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Location:
    """A place in a scanned file. ``path`` is the display path (relative to the
    working directory, ``/``-separated); ``line`` and ``column`` are 1-based.

    Made by the tens of thousands per run (every argument of every resource
    and every value of every document, and again when cache entries are
    read): its ``__init__`` sets the slots directly (lean_dataclass), not
    through ``object.__setattr__`` as the standard frozen one does."""

    path: str
    line: int = 1
    column: int = 1
    end_line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Related:
    """The other end of a link, shown with a finding (SARIF ``relatedLocations``)."""

    location: Location
    message: str
