"""Terraform's collection functions (``merge``, ``concat``, ``lookup``,
``flatten``, ``distinct``, ``range``, ...), registered in FUNCTIONS
(functions_registry.py) as this module is imported.

Lists and maps are plain Python lists and dicts (values.py); a set is a
list without duplicates. Where an UNKNOWN element could change the shape of
the result (``flatten``, ``toset``, ``distinct``), the result is UNKNOWN.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform.functions_registry import _list, _map, _str, fn
from mlcost_lint.model.terraform.limits import MAX_ITEMS, METER
from mlcost_lint.model.terraform.values import (
    EvalError, hashable, normalize_number, set_of, tf_equal, to_bool, to_number,
)

MAX_RANGE = MAX_ITEMS


@fn()
def merge(*maps: Any) -> Any:
    out: dict = {}
    for m in maps:
        if m is None:
            continue
        out.update(_map(m))
    return out


@fn()
def concat(*lists: Any) -> Any:
    out: list = []
    for seq in lists:
        out.extend(_list(seq))
    return out


@fn()
def lookup(m: Any, key: Any, *default: Any) -> Any:
    k = _str(key)
    m = _map(m)
    if k in m:
        return m[k]
    if default:
        return default[0]
    raise EvalError(f"lookup: no key {k!r}")


@fn(known=False)
def coalesce(*args: Any) -> Any:
    for a in args:
        if a is UNKNOWN:
            return UNKNOWN
        if a is None or a == "":
            continue
        return a
    raise EvalError("coalesce: no non-null argument")


@fn(known=False)
def coalescelist(*args: Any) -> Any:
    for a in args:
        if a is UNKNOWN:
            return UNKNOWN
        if _list(a):
            return a
    raise EvalError("coalescelist: no non-empty list")


@fn()
def tomap(v: Any) -> Any:
    return dict(_map(v))


@fn()
def tolist(v: Any) -> Any:
    return list(_list(v))


@fn()
def toset(v: Any) -> Any:
    items = _list(v)
    if any(x is UNKNOWN for x in items):
        return UNKNOWN   # duplicates could merge: the set's size is unknown
    return set_of(items)


@fn()
def keys(v: Any) -> Any:
    return sorted(_map(v))


@fn()
def values(v: Any) -> Any:
    m = _map(v)
    return [m[k] for k in sorted(m)]


@fn()
def length(v: Any) -> Any:
    if isinstance(v, (list, dict)):
        return len(v)
    if isinstance(v, str):
        return len(v)
    raise EvalError("length of a non-collection")


@fn()
def contains(seq: Any, value: Any) -> Any:
    return _decided((tf_equal(item, value) for item in _list(seq)), True)


@fn()
def element(seq: Any, index: Any) -> Any:
    seq = _list(seq)
    i = to_number(index)
    if not seq or not isinstance(i, int):
        raise EvalError("element: empty list or bad index")
    return seq[i % len(seq)]


@fn()
def flatten(seq: Any) -> Any:
    out: list = []
    stack = [iter(_list(seq))]
    while stack:
        for item in stack[-1]:
            if item is UNKNOWN:
                return UNKNOWN   # could be a list: the shape is unknown
            if isinstance(item, list):
                stack.append(iter(item))
                break
            out.append(item)
        else:
            stack.pop()
    return out


@fn()
def distinct(seq: Any) -> Any:
    items = _list(seq)
    if any(x is UNKNOWN for x in items):
        return UNKNOWN
    # Hashed, not compared pairwise: distinct(range(20000)) was 2 x 10^8 comparisons.
    out: list = []
    seen: set = set()
    for x in items:
        key = hashable(x)
        if key not in seen:
            seen.add(key)
            out.append(x)
    return out


@fn()
def compact(seq: Any) -> Any:
    items = _list(seq)
    if any(x is UNKNOWN for x in items):
        return UNKNOWN
    return [x for x in items if x is not None and x != ""]


@fn()
def reverse(seq: Any) -> Any:
    return list(reversed(_list(seq)))


@fn()
def sort(seq: Any) -> Any:
    items = _list(seq)
    if any(x is UNKNOWN for x in items):
        return UNKNOWN
    return sorted(_str(x) for x in items)


@fn()
def slice_(seq: Any, start: Any, end: Any) -> Any:
    items = _list(seq)
    s, e = to_number(start), to_number(end)
    if not (isinstance(s, int) and isinstance(e, int) and 0 <= s <= e <= len(items)):
        raise EvalError("slice: bad bounds")
    return items[s:e]


@fn()
def index(seq: Any, value: Any) -> Any:
    for i, item in enumerate(_list(seq)):
        eq = tf_equal(item, value)
        if eq is UNKNOWN:
            return UNKNOWN
        if eq:
            return i
    raise EvalError("index: not found")


@fn()
def one(seq: Any) -> Any:
    items = _list(seq)
    if len(items) == 0:
        return None
    if len(items) == 1:
        return items[0]
    raise EvalError("one: more than one element")


@fn()
def zipmap(ks: Any, vs: Any) -> Any:
    ks, vs = _list(ks), _list(vs)
    if any(k is UNKNOWN for k in ks):
        return UNKNOWN
    if len(ks) != len(vs):
        raise EvalError("zipmap: lengths differ")
    return {_str(k): v for k, v in zip(ks, vs)}


@fn()
def chunklist(seq: Any, size: Any) -> Any:
    items = _list(seq)
    n = to_number(size)
    if not isinstance(n, int) or n < 0:
        raise EvalError("chunklist: bad size")
    if n == 0:
        return [items]
    return [items[i:i + n] for i in range(0, len(items), n)]


@fn()
def setunion(*sets: Any) -> Any:
    out: list = []
    for s in sets:
        out.extend(_list(s))
    if any(x is UNKNOWN for x in out):
        return UNKNOWN
    return set_of(out)


@fn()
def alltrue(seq: Any) -> Any:
    return _decided((to_bool(x) for x in _list(seq)), False)


@fn()
def anytrue(seq: Any) -> Any:
    return _decided((to_bool(x) for x in _list(seq)), True)


def _decided(answers: Iterator[Any], decisive: bool) -> Any:
    """Three-valued any (``decisive`` True) or all (False): ``decisive`` at
    the first answer that is it (the rest not asked), else UNKNOWN when an
    answer was unknown, else the other value."""
    result: Any = not decisive
    for answer in answers:
        if answer is decisive:
            return decisive
        if answer is UNKNOWN:
            result = UNKNOWN
    return result


@fn()
def range_(*args: Any) -> Any:
    nums = [to_number(a) for a in args]
    if len(nums) == 1:
        start, stop, step = 0, nums[0], 1
    elif len(nums) == 2:
        start, stop, step = nums[0], nums[1], 1
    elif len(nums) == 3:
        start, stop, step = nums
    else:
        raise EvalError("range: 1 to 3 arguments")
    if step == 0:
        raise EvalError("range: step 0")
    try:
        span = (stop - start) / step
    except OverflowError:   # integers past a float (a 400-digit bound): Terraform refuses as well
        raise EvalError("range: too many elements") from None
    if not math.isfinite(span) or span > MAX_RANGE:   # 1e308 steps overflow to inf
        raise EvalError("range: too many elements")
    count = math.ceil(span)
    if count > MAX_RANGE:
        raise EvalError("range: too many elements")
    METER.reserve("range()", items=max(count, 0))
    return [normalize_number(start + i * step) for i in range(max(count, 0))]
