"""Values and locations shared by every part of the model."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
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
@dataclass(slots=True, eq=True, unsafe_hash=True, init=False)
class Location:
    """A place in a scanned file. ``path`` is the display path (relative to the
    working directory, ``/``-separated); ``line`` and ``column`` are 1-based.
    Immutable and hashable, as a frozen dataclass (assignment raises
    FrozenInstanceError); see _location_init for why it is not declared frozen."""

    path: str
    line: int = 1
    column: int = 1
    end_line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def _location_init(self: Location, path: str, line: int = 1, column: int = 1, end_line: int | None = None, *,
                   _path=Location.path.__set__, _line=Location.line.__set__, _column=Location.column.__set__,
                   _end=Location.end_line.__set__) -> None:
    # Locations are made by the tens of thousands per run (every argument of
    # every resource and every value of every document, and again when cache
    # entries are read: 30,000 in a pre-commit run on bench/'s 245-file
    # shape). A frozen dataclass's __init__ sets each field through
    # object.__setattr__: 0.49 us a Location, 0.72 us read from a cache
    # entry; setting the slots directly is 0.33 us and 0.52 us.
    _path(self, path)
    _line(self, line)
    _column(self, column)
    _end(self, end_line)


Location.__init__ = _location_init


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Related:
    """The other end of a link, shown with a finding (SARIF ``relatedLocations``)."""

    location: Location
    message: str
