"""mlcost_lint.lean_dataclass.dataclass makes the classes the standard
decorator makes: each case below is declared twice, once with each, and
every answer is compared (repr, ==, hash, copying as pickle does, frozen assignment,
replace, fields, match args)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import sys
from dataclasses import FrozenInstanceError, field
from typing import Any

import pytest

from mlcost_lint import lean_dataclass
from mlcost_lint.lean_dataclass import dataclass as lean


def _twins(options: dict, body: dict, bases: tuple = ()) -> tuple[type, type]:
    """The same class body made by the standard decorator and by ours."""
    made = []
    for decorate in (dataclasses.dataclass, lean):
        namespace = dict(body)
        namespace["__qualname__"] = "Case"
        cls = type("Case", bases[len(made)] if bases else (), namespace)
        made.append(decorate(**options)(cls))
    return made[0], made[1]


def _annotated(**fields: Any) -> dict:
    body: dict = {"__annotations__": {name: "Any" for name in fields}}
    body.update({name: value for name, value in fields.items() if value is not dataclasses.MISSING})
    return body


def _outcome(function, *args):
    try:
        return "returned", function(*args)
    except Exception as exc:  # noqa: BLE001 - the answer compared
        return "raised", type(exc)


NAN = float("nan")
OPTIONS = [{"slots": True}, {"frozen": True, "slots": True}, {"frozen": True}, {}]
BODIES = {
    "two fields": (_annotated(a=dataclasses.MISSING, b=2), [(1,), (1, 3), ("x", [1, 2])]),
    "one field": (_annotated(a=dataclasses.MISSING), [(1,), ((1, 2),), (NAN,)]),
    "no field": (_annotated(), [()]),
    "repr and compare off": (
        _annotated(a=dataclasses.MISSING, hidden=field(default=0, repr=False, compare=False)),
        [(1,), (1, 5)]),
    "hash off": (_annotated(a=dataclasses.MISSING, b=field(default=0, hash=False)), [(1,), (1, 5)]),
}


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
@pytest.mark.parametrize("name", list(BODIES))
def test_same_answers_as_the_standard_decorator(options: dict, name: str):
    body, argument_lists = BODIES[name]
    standard, ours = _twins(options, body)
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(standard)]
    assert ours.__match_args__ == standard.__match_args__
    assert (ours.__hash__ is None) == (standard.__hash__ is None)
    # the standard text for a class with no docstring, made when read (lean_dataclass._SignatureDoc)
    assert ours.__doc__ == standard.__doc__ and ours.__doc__.startswith(ours.__name__ + "(")
    assert inspect.getdoc(ours) == inspect.getdoc(standard)
    made = [(standard(*args), ours(*args)) for args in argument_lists]
    for s, o in made:
        assert repr(o) == repr(s)
        assert (o == o) == (s == s)                     # NaN: equal to itself as the same object
        assert (o != o) == (s != s)
        assert _outcome(hash, o) == _outcome(hash, s)     # a list field: TypeError from both
        # what pickling does (__reduce_ex__, a frozen class's __setstate__), for a class no module holds
        again = copy.deepcopy(o)
        assert repr(again) == repr(o) and type(again) is ours
        if dataclasses.fields(ours):
            first = dataclasses.fields(ours)[0].name
            assert repr(dataclasses.replace(o, **{first: 9})) == repr(dataclasses.replace(s, **{first: 9}))
            if options.get("frozen"):
                with pytest.raises(FrozenInstanceError):
                    setattr(o, first, 1)
                with pytest.raises(FrozenInstanceError):
                    delattr(o, first)
            else:
                setattr(o, first, 7)
                setattr(s, first, 7)
                assert repr(o) == repr(s)
    # equality across the cases, and against other types, as the standard one answers
    for (s1, o1) in made:
        for (s2, o2) in made:
            assert (o1 == o2) == (s1 == s2)
        assert (o1 == object()) is (s1 == object()) is False
        assert o1.__eq__(1) is NotImplemented


def _call(cls: type, args: tuple, kwargs: dict) -> tuple:
    try:
        return "made", repr(cls(*args, **kwargs))
    except TypeError as exc:
        return "raised", str(exc)


def _sets_through_object(cls: type) -> bool:
    """Whether ``cls.__init__`` is the standard frozen one (object.__setattr__ per field)."""
    code = cls.__init__.__code__
    return "__dataclass_builtins_object__" in code.co_freevars + code.co_names


@pytest.mark.parametrize("name", list(BODIES))
def test_a_frozen_class_with_slots_is_made_and_called_as_the_standard_one(name: str):
    # its __init__ is ours when every field is plain (lean_dataclass._frozen_slots_init)
    body, argument_lists = BODIES[name]
    standard, ours = _twins({"frozen": True, "slots": True}, body)
    plain = not any(isinstance(value, dataclasses.Field) for value in body.values())
    assert _sets_through_object(ours) is (not plain and bool(dataclasses.fields(ours)))
    assert _sets_through_object(standard) is bool(dataclasses.fields(standard))
    assert ours.__doc__ == standard.__doc__
    assert str(inspect.signature(ours)) == str(inspect.signature(standard))
    names = [f.name for f in dataclasses.fields(ours)]
    for args in argument_lists:
        assert _call(ours, args, {}) == _call(standard, args, {})
        assert _call(ours, (), dict(zip(names, args))) == _call(standard, (), dict(zip(names, args)))
    for args, kwargs in [((), {}), ((1, 2, 3, 4), {}), ((1,), {"nope": 2}), ((1,), {"a": 1})]:
        assert _call(ours, args, kwargs) == _call(standard, args, kwargs)


def test_classes_that_are_not_plain_keep_the_standard_init():
    post_init = {**_annotated(a=dataclasses.MISSING), "__post_init__": lambda self: None}
    class_var = {"__annotations__": {"a": "Any", "count": "ClassVar[int]"}, "count": 0}
    for body in (post_init, class_var):
        standard, ours = _twins({"frozen": True, "slots": True}, body)
        assert _sets_through_object(ours)
        assert repr(ours(1)) == repr(standard(1))
    base = lean(frozen=True, slots=True)(type("Base", (), _annotated(a=dataclasses.MISSING)))
    assert not _sets_through_object(base)
    child = lean(frozen=True, slots=True)(type("Child", (base,), _annotated(b=0)))
    assert _sets_through_object(child)      # inherited fields: the standard one
    assert repr(child(1, 2)) == "Child(a=1, b=2)"


def test_the_packages_busiest_frozen_classes_set_their_slots_directly():
    from mlcost_lint.discover import SourceFile
    from mlcost_lint.model.absent import AbsentConfig, AbsentConfigMap
    from mlcost_lint.model.core import Location

    for cls in (SourceFile, AbsentConfig, AbsentConfigMap, Location):
        assert not _sets_through_object(cls), cls


def test_a_repr_that_reaches_itself_prints_dots():
    standard, ours = _twins({"slots": True}, _annotated(items=dataclasses.MISSING))
    s, o = standard([]), ours([])
    s.items.append(s)
    o.items.append(o)
    assert repr(o) == repr(s) == "Case(items=[...])"


def test_methods_the_class_defines_are_kept():
    def __eq__(self, other):  # noqa: N807
        return True

    def __repr__(self):  # noqa: N807
        return "mine"

    def __hash__(self):  # noqa: N807
        return 7

    for options in OPTIONS:
        body = {**_annotated(a=dataclasses.MISSING), "__eq__": __eq__, "__repr__": __repr__, "__hash__": __hash__}
        standard, ours = _twins(options, body)
        assert repr(ours(1)) == repr(standard(1)) == "mine"
        assert (ours(1) == ours(2)) is (standard(1) == standard(2)) is True
        assert hash(ours(1)) == hash(standard(1)) == 7
        # __eq__ alone: Python makes __hash__ None; frozen then hashes by the fields, as the standard one
        standard, ours = _twins(options, {**_annotated(a=dataclasses.MISSING), "__eq__": __eq__})
        assert (ours.__hash__ is None) == (standard.__hash__ is None)
        if standard.__hash__ is not None:
            assert hash(ours(1)) == hash(standard(1))


def test_subclass_fields_come_after_the_base_fields():
    base_standard = dataclasses.dataclass(frozen=True, slots=True)(type("Base", (), _annotated(a=dataclasses.MISSING)))
    base_ours = lean(frozen=True, slots=True)(type("Base", (), _annotated(a=dataclasses.MISSING)))
    standard, ours = _twins({"frozen": True, "slots": True}, _annotated(b=0),
                            bases=((base_standard,), (base_ours,)))
    assert repr(ours(1, 2)) == repr(standard(1, 2)) == "Case(a=1, b=2)"
    assert hash(ours(1, 2)) == hash(standard(1, 2))
    assert ours(1, 2) == ours(1, 2) and ours(1, 2) != ours(1, 3)


def test_other_options_go_to_the_standard_decorator():
    cls = lean(slots=True, order=True)(type("Ordered", (), _annotated(a=dataclasses.MISSING)))
    assert cls(1) < cls(2)
    assert cls.__dataclass_params__.order


def test_a_nan_field_compares_as_the_running_python_compares_it():
    # Up to 3.12 the standard __eq__ compares tuples, and (x,) == (x,) is True for the
    # same NaN object; from 3.13 it compares field by field, and x == x is not
    standard, ours = _twins({"slots": True}, _annotated(a=dataclasses.MISSING))
    value = float("nan")
    assert (ours(value) == ours(value)) is (standard(value) == standard(value))
    assert (ours(value) == ours(value)) is (sys.version_info < (3, 13))
    assert (ours(math.nan) == ours(float("nan"))) is (standard(math.nan) == standard(float("nan"))) is False
    o, s = ours(value), standard(value)
    assert (o == o) is (s == s) is True     # one object: equal to itself in every version


class _Answer:
    """A field whose == answers something other than a bool."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def __eq__(self, other: Any) -> Any:
        return self.answer

    __hash__ = None


def test_what_eq_returns_is_what_the_standard_one_returns():
    standard, ours = _twins({"slots": True}, _annotated(a=dataclasses.MISSING, b=dataclasses.MISSING))
    for a, b in [(_Answer(0), _Answer("yes")), (_Answer("yes"), _Answer([])), (1, _Answer("last"))]:
        assert (ours(a, b) == ours(a, b)) == (standard(a, b) == standard(a, b))
        assert type(ours(a, b) == ours(a, b)) is type(standard(a, b) == standard(a, b))


def test_every_class_of_the_package_uses_it_or_says_why_not():
    """The package's data classes are made by lean_dataclass (their __eq__ is
    the shared one) unless they pass an option it leaves to the standard decorator."""
    import importlib
    import pkgutil

    import mlcost_lint

    shared_eq = lean_dataclass._eq_of(()).__code__
    standard_only = []
    for info in pkgutil.walk_packages(mlcost_lint.__path__, "mlcost_lint."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and dataclasses.is_dataclass(value):
                eq = value.__dict__.get("__eq__")
                if eq is not None and getattr(eq, "__code__", None) is not shared_eq:
                    standard_only.append(value.__qualname__)
    assert standard_only == []


def test_a_docstring_of_its_own_is_kept_and_an_instance_reads_the_class_text():
    @lean(frozen=True, slots=True)
    class Written:
        """Said here."""

        a: int

    @lean
    class Unwritten:
        a: int
        b: str = "x"

    assert Written.__doc__ == "Said here." and Written(1).__doc__ == "Said here."
    assert Unwritten.__doc__ == "Unwritten(a: 'int', b: 'str' = 'x')" == Unwritten(1).__doc__


def _set_outcome(obj: Any, name: str) -> tuple:
    try:
        setattr(obj, name, 1)
    except Exception as exc:  # noqa: BLE001 - the answer compared
        return "raised", type(exc), str(exc)
    return "set", getattr(obj, name)


def _del_outcome(obj: Any, name: str) -> tuple:
    try:
        delattr(obj, name)
    except Exception as exc:  # noqa: BLE001
        return "raised", type(exc), str(exc)
    return "deleted", hasattr(obj, name)


@pytest.mark.parametrize("slots", [True, False])
def test_a_frozen_class_refuses_assignment_as_the_standard_one_without_compiling(slots: bool):
    # lean_dataclass._frozen_methods: closures, where the standard decorator compiles text
    standard, ours = _twins({"frozen": True, "slots": slots}, _annotated(a=dataclasses.MISSING, b=2))
    assert dataclasses._frozen_get_del_attr is lean_dataclass._STANDARD_FROZEN_METHODS     # put back
    if lean_dataclass._FROZEN_METHODS_KNOWN:
        assert ours.__setattr__.__code__.co_filename == lean_dataclass.__file__
        assert standard.__setattr__.__code__.co_filename != lean_dataclass.__file__
    for method in ("__setattr__", "__delattr__"):
        assert getattr(ours, method).__qualname__ == getattr(standard, method).__qualname__ == f"Case.{method}"
        assert getattr(ours, method).__module__ == getattr(standard, method).__module__
    s, o = standard(1), ours(1)
    for name in ("a", "b", "other"):
        assert _set_outcome(o, name) == _set_outcome(s, name)
        assert _del_outcome(o, name) == _del_outcome(s, name)
    if not slots:
        # a subclass that is no data class may have attributes of its own; its fields stay frozen
        sub_s, sub_o = type("Sub", (standard,), {})(1), type("Sub", (ours,), {})(1)
        assert _set_outcome(sub_o, "other") == _set_outcome(sub_s, "other") == ("set", 1)
        assert _del_outcome(sub_o, "other") == _del_outcome(sub_s, "other") == ("deleted", False)
        assert _set_outcome(sub_o, "a") == _set_outcome(sub_s, "a")
        assert _set_outcome(sub_o, "a")[1] is FrozenInstanceError
