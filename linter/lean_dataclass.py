"""``dataclass``: the standard decorator, with ``__repr__``, ``__eq__`` and
``__hash__`` shared instead of compiled for each class.

``dataclasses.dataclass`` writes the source of every method it adds and
compiles it with ``exec``, class by class. A run imports about 165 data
classes, and every process pays for them again: a cold run's parent spent
0.12-0.26 s making them (measured in-process on the real corpus, 2.5 s
runs), a pre-commit or incremental run about a fifth of its time. A third
of that was ``__eq__``, ``__repr__`` and ``__hash__``, which need nothing
compiled: the functions here read the fields through ``operator.attrgetter``
and give the same answers (the same tuples compared and hashed, the same
text, the same guard against a repr that reaches itself). A frozen class's
``__setattr__``/``__delattr__`` are still the standard ones, and so is
``__init__``, except for a frozen class with slots whose fields are all
plain (annotated, with or without a plain default, none inherited, no
``field()``, no ``__post_init__``): the standard one sets each field through
``object.__setattr__`` (it must pass over the frozen ``__setattr__``), ours
through the slot's own descriptor, 0.9 against 2.0 us for a 6-field object
(5,985 training-config stand-ins in a pre-commit hook's project index on
bench/'s 8,000-file tree, 8,000 discovered files in its recorded walk). It is
compiled as the standard one is, once per class, with the same parameters.

Any option beyond ``frozen`` and ``slots`` goes to the standard decorator
unchanged, as does a class that defines one of those methods itself (the
standard decorator keeps it; so do we).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from _thread import RLock, get_ident
from operator import attrgetter
from typing import Any, Callable, TypeVar

T = TypeVar("T", bound=type)

_MISSING = object()
# (id(object), thread) of the reprs running: a repr that reaches its own
# object prints "..." there, as the standard one does.
_REPR_RUNNING: set[tuple[int, int]] = set()


def dataclass(cls: T | None = None, /, *, frozen: bool = False, slots: bool = False,
              **options: Any) -> Any:
    def wrap(cls: T) -> T:
        if options:
            return dataclasses.dataclass(cls, frozen=frozen, slots=slots, **options)
        return _lean(cls, frozen, slots)

    return wrap if cls is None else wrap(cls)


def _lean(cls: T, frozen: bool, slots: bool) -> T:
    own = dict(cls.__dict__)
    # What dataclasses calls an explicit __hash__ (its _hash_action table):
    # a class body with __eq__ and no __hash__ has __hash__ = None made for it.
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    fast_init = frozen and slots and _plain_fields(cls)
    doc = None
    if not own.get("__doc__"):
        # the standard decorator writes the class's signature there, when the class has no text of its own
        cls.__doc__ = doc = _SignatureDoc()
    if frozen and _FROZEN_METHODS_KNOWN:
        with _FROZEN_METHODS_LOCK:
            # the frozen __setattr__ / __delattr__ as closures, not compiled (_frozen_methods)
            dataclasses._frozen_get_del_attr = _frozen_methods
            try:
                made = dataclasses.dataclass(cls, repr=False, eq=False, frozen=True, slots=slots, init=not fast_init)
            finally:
                dataclasses._frozen_get_del_attr = _STANDARD_FROZEN_METHODS
    else:
        made = dataclasses.dataclass(cls, repr=False, eq=False, frozen=frozen, slots=slots, init=not fast_init)
    fields = dataclasses.fields(made)
    if fast_init:
        made.__init__ = _frozen_slots_init(made, fields)
    if doc is not None:
        doc.ready = True
    if "__repr__" not in own:
        made.__repr__ = _repr_of(tuple(f.name for f in fields if f.repr))
    if "__eq__" not in own:
        made.__eq__ = _eq_of(tuple(f.name for f in fields if f.compare))
    if not explicit_hash:
        # eq=True: not frozen, unhashable; frozen, hashed by its fields
        made.__hash__ = _hash_of(_tuple_getter(tuple(
            f.name for f in fields if (f.compare if f.hash is None else f.hash)))) if frozen else None
    return made


class _SignatureDoc:
    """The ``__doc__`` the standard decorator gives a class with no text of
    its own (its name and the signature of its ``__init__``), made when it
    is first read: ``inspect.signature`` for it was a fifth of making the 81
    data classes without a docstring a run imports, and nothing in a run
    reads it. ``type.__doc__`` and an instance's ``__doc__`` both call a
    descriptor kept there. Until the class is made it reads as a truthy
    placeholder, so that the standard decorator does not write its own."""

    __slots__ = ("ready", "text")

    def __init__(self) -> None:
        self.ready = False
        self.text: str | None = None

    def __get__(self, obj: Any, owner: type | None = None) -> str:
        if not self.ready:
            return "(being made)"
        if self.text is None:
            cls = owner if owner is not None else type(obj)
            self.text = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        return self.text


def _plain_fields(cls: type) -> bool:
    """Whether ``cls``'s fields, as the standard decorator will find them, are
    all its own, annotated with a plain default or none (_frozen_slots_init)."""
    if "__init__" in cls.__dict__ or hasattr(cls, "__post_init__"):
        return False
    if any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:]):
        return False    # inherited fields
    annotations = cls.__dict__.get("__annotations__", {})
    for name, annotation in annotations.items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if name == "self" or any(word in text for word in ("ClassVar", "InitVar", "KW_ONLY")):
            return False
        if isinstance(cls.__dict__.get(name), dataclasses.Field):
            return False
    return True


def _frozen_slots_init(cls: type, fields: tuple[dataclasses.Field, ...]) -> Callable[..., None]:
    """``__init__`` for a frozen class with slots and plain fields: each
    field set through its slot's descriptor (the frozen ``__setattr__`` is not
    asked), with the standard one's parameters and defaults."""
    namespace: dict[str, Any] = {}
    params, body = [], []
    for f in fields:
        if not f.init or f.kw_only is True or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__qualname__}.{f.name}: not a plain field")    # _plain_fields let it pass
        namespace[f"__set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            namespace[f"__default_{f.name}"] = f.default
            params.append(f"{f.name}=__default_{f.name}")
        body.append(f"    __set_{f.name}(self, {f.name})\n")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("".join(body) or "    pass\n")
    exec(source, namespace)     # noqa: S102 - our own text, as dataclasses compiles its __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return init


# The standard decorator's private helpers that _lean calls or replaces, as
# CPython 3.10-3.12 define them (3.13 builds its methods another way): where
# they differ, the class is made by the standard decorator alone.
_STANDARD_FROZEN_METHODS = getattr(dataclasses, "_frozen_get_del_attr", None)
_FROZEN_METHODS_KNOWN = getattr(getattr(_STANDARD_FROZEN_METHODS, "__code__", None), "co_varnames", ())[:3] == (
    "cls", "fields", "globals")
_FROZEN_METHODS_LOCK = RLock()


def _frozen_methods(cls: type, fields: list, globals: dict) -> tuple[Callable, Callable]:  # noqa: A002
    """The frozen class's ``__setattr__`` and ``__delattr__`` the standard
    decorator compiles (dataclasses._frozen_get_del_attr), as closures: the
    same test, the same error, the same call to the base class."""
    names = tuple(f.name for f in fields)
    error = dataclasses.FrozenInstanceError

    def __setattr__(self: Any, name: str, value: Any) -> None:  # noqa: N807 - the data model's name
        if type(self) is cls or name in names:
            raise error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:  # noqa: N807
        if type(self) is cls or name in names:
            raise error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    module = globals.get("__name__")
    if module is not None:
        __setattr__.__module__ = __delattr__.__module__ = module
    return __setattr__, __delattr__


def _tuple_getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """The fields ``names`` of an object as a tuple, as the standard methods
    build it (``(self.a, self.b)``, ``(self.a,)``, ``()``)."""
    if len(names) > 1:
        return attrgetter(*names)
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _repr_of(names: tuple[str, ...]) -> Callable[[Any], str]:
    getters = tuple((name, attrgetter(name)) for name in names)

    def __repr__(self: Any) -> str:  # noqa: N807 - the data model's name
        key = (id(self), get_ident())
        if key in _REPR_RUNNING:
            return "..."
        _REPR_RUNNING.add(key)
        try:
            return self.__class__.__qualname__ + "(" + ", ".join(
                f"{name}={get(self)!r}" for name, get in getters) + ")"
        finally:
            _REPR_RUNNING.discard(key)

    return __repr__


def _eq_of(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    """The standard ``__eq__`` of a class comparing the fields ``names``:
    up to Python 3.12 their tuples (``(self.a, self.b) == (other.a,
    other.b)``, which takes an object as equal to itself), from 3.13 field by
    field (``self is other or self.a == other.a and ...``: a NaN field
    makes two objects unequal even when it is the same NaN)."""
    if sys.version_info < (3, 13):
        values = _tuple_getter(names)

        def __eq__(self: Any, other: Any) -> Any:  # noqa: N807 - the data model's name
            if other.__class__ is self.__class__:
                return values(self) == values(other)
            return NotImplemented

        return __eq__
    getters = tuple(attrgetter(name) for name in names)

    def __eq__(self: Any, other: Any) -> Any:  # noqa: N807
        if self is other:
            return True
        if other.__class__ is self.__class__:
            result: Any = True
            for get in getters:     # `a == b and c == d`: the first false answer, else the last
                result = get(self) == get(other)
                if not result:
                    return result
            return result
        return NotImplemented

    return __eq__


def _hash_of(values: Callable[[Any], tuple]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:  # noqa: N807
        return hash(values(self))

    return __hash__


__all__ = ["dataclass"]
