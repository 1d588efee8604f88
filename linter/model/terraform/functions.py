"""The Terraform functions we evaluate. Anything not in FUNCTIONS is UNKNOWN.

Each function takes evaluated arguments; UNKNOWN arguments make the result
UNKNOWN unless the function can still know the answer (``length`` of a list
holding unknown elements). Terraform errors raise EvalError.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

from mlcost_lint.model.core import UNKNOWN, contains_unknown
from mlcost_lint.model.terraform.limits import (
    MAX_ITEMS, MAX_REGEX_INPUT, MAX_STRING_CHARS, METER, ValueTooLarge, approx_chars, bounded,
)
from mlcost_lint.model.terraform.values import (
    EvalError, hashable, normalize_number, set_of, tf_equal, to_bool, to_number, to_string,
)

FUNCTIONS: dict[str, Callable[..., Any]] = {}
_VARARGS = 0x04     # inspect.CO_VARARGS

MAX_RANGE = MAX_ITEMS


def fn(name: str | None = None, *, known: bool = True) -> Callable:
    """Register; with ``known`` an UNKNOWN top-level argument short-circuits."""
    def deco(f: Callable) -> Callable:
        fname = name or f.__name__.rstrip("_")
        lo, hi = _arity(f)

        def wrapper(*args: Any) -> Any:
            # Terraform rejects a call with the wrong number of arguments
            # (an error try() and can() see), never a Python TypeError.
            if not lo <= len(args) <= hi:
                raise EvalError(f"{fname}(): wrong number of arguments ({len(args)})")
            if known and any(a is UNKNOWN for a in args):
                return UNKNOWN
            return f(*args)
        FUNCTIONS[fname] = wrapper
        return f
    return deco


def _arity(f: Callable) -> tuple[int, int]:
    """(fewest, most) positional arguments ``f`` takes."""
    code = getattr(f, "__code__", None)
    if code is not None and not hasattr(f, "__wrapped__"):
        # a plain function: its code says it (inspect.signature for each of the
        # ~60 functions was most of this module's import, on a cold run's serial start)
        most = code.co_argcount
        fewest = most - len(f.__defaults__ or ())
        return fewest, (1 << 30 if code.co_flags & _VARARGS else most)
    return _arity_by_signature(f)


def _arity_by_signature(f: Callable) -> tuple[int, int]:
    import inspect

    lo, hi = 0, 0
    for p in inspect.signature(f).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            hi = 1 << 30
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            hi += 1
            lo += p.default is p.empty
    return lo, hi


def _list(v: Any, what: str = "list") -> list:
    if isinstance(v, list):
        return v
    raise EvalError(f"expected a {what}")


def _map(v: Any) -> dict:
    if isinstance(v, dict):
        return v
    raise EvalError("expected a map")


def _str(v: Any) -> str:
    s = to_string(v)
    return s


# -- collections ----------------------------------------------------------

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
    result: Any = False
    for item in _list(seq):
        eq = tf_equal(item, value)
        if eq is True:
            return True
        if eq is UNKNOWN:
            result = UNKNOWN
    return result


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
    result: Any = True
    for x in _list(seq):
        b = to_bool(x)
        if b is False:
            return False
        if b is UNKNOWN:
            result = UNKNOWN
    return result


@fn()
def anytrue(seq: Any) -> Any:
    result: Any = False
    for x in _list(seq):
        b = to_bool(x)
        if b is True:
            return True
        if b is UNKNOWN:
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


# -- numbers --------------------------------------------------------------

def _numbers(args: tuple) -> list:
    if len(args) == 1 and isinstance(args[0], list):
        args = tuple(args[0])
    if not args:
        raise EvalError("needs at least one number")
    return [to_number(a) for a in args]


@fn()
def min_(*args: Any) -> Any:
    nums = _numbers(args)
    return UNKNOWN if any(n is UNKNOWN for n in nums) else min(nums)


@fn()
def max_(*args: Any) -> Any:
    nums = _numbers(args)
    return UNKNOWN if any(n is UNKNOWN for n in nums) else max(nums)


@fn()
def sum_(seq: Any) -> Any:
    nums = [to_number(x) for x in _list(seq)]
    if not nums:
        raise EvalError("sum of an empty list")
    return UNKNOWN if any(n is UNKNOWN for n in nums) else normalize_number(sum(nums))


@fn()
def abs_(v: Any) -> Any:
    return abs(to_number(v))


@fn()
def ceil(v: Any) -> Any:
    return math.ceil(to_number(v))


@fn()
def floor(v: Any) -> Any:
    return math.floor(to_number(v))


@fn()
def tonumber(v: Any) -> Any:
    return None if v is None else to_number(v)


@fn()
def tostring(v: Any) -> Any:
    return None if v is None else to_string(v)


@fn()
def tobool(v: Any) -> Any:
    return None if v is None else to_bool(v)


@fn(known=False)
def sensitive(v: Any) -> Any:
    return v


@fn(known=False)
def nonsensitive(v: Any) -> Any:
    return v


# -- strings --------------------------------------------------------------

@fn()
def join(sep: Any, *lists: Any) -> Any:
    parts: list = []
    for seq in lists:
        parts.extend(_list(seq))
    if any(p is UNKNOWN for p in parts):
        return UNKNOWN
    texts = [_str(p) for p in parts]
    separator = _str(sep)
    METER.reserve("join()", chars=sum(map(len, texts)) + len(separator) * max(len(texts) - 1, 0))
    return separator.join(texts)


@fn()
def split(sep: Any, text: Any) -> Any:
    s, t = _str(sep), _str(text)
    if t == "":
        return [""]
    return t.split(s) if s else list(t)


@fn()
def lower(v: Any) -> Any:
    return _str(v).lower()


@fn()
def upper(v: Any) -> Any:
    return _str(v).upper()


@fn()
def title(v: Any) -> Any:
    return re.sub(r"\b([a-z])", lambda m: m.group(1).upper(), _str(v))


@fn()
def replace(text: Any, old: Any, new: Any) -> Any:
    t, o, n = _str(text), _str(old), _str(new)
    if len(o) >= 2 and o.startswith("/") and o.endswith("/"):
        return _regex_replace(t, o[1:-1], n)
    # The result's size is known before it is built.
    count = t.count(o) if o else len(t) + 1
    METER.reserve("replace()", chars=len(t) + count * (len(n) - len(o)))
    return t.replace(o, n)


def _regex_replace(t: str, pattern: str, n: str) -> str:
    """``replace`` with a regex: Python's ``re`` backtracks without bound
    (``/(a|a)*$/`` on 30 characters runs for minutes) where Terraform's RE2
    is linear, so the ``regex`` engine runs it with a time bound (a
    dependency of python-hcl2, already installed), on bounded input, and
    the result is bounded before it is built."""
    import time

    import regex

    if len(t) > MAX_REGEX_INPUT:
        raise ValueTooLarge(f"replace() with a regular expression on {len(t)} characters, "
                            f"over the {MAX_REGEX_INPUT}-character bound")
    METER.reserve("replace()", chars=len(t) * (len(n) + 1) + len(n))
    try:
        compiled = regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError):
        raise EvalError("replace: bad pattern") from None
    timeout = METER.regex_timeout("replace()")
    started = time.monotonic()
    try:
        return compiled.sub(regex.sub(r"\$(\d+)", r"\\\1", n), t, timeout=timeout)
    except TimeoutError:
        raise ValueTooLarge(f"replace(): the regular expression ran over {timeout:g} s") from None
    except (regex.error, IndexError):
        raise EvalError("replace: bad replacement") from None
    finally:
        METER.regex_spent(started)


@fn()
def trimspace(v: Any) -> Any:
    return _str(v).strip()


@fn()
def chomp(v: Any) -> Any:
    # rstrip, not re.sub(r"(\r\n|\n|\r)+$"): that regex is quadratic on a run of newlines.
    return _str(v).rstrip("\r\n")


@fn()
def trim(v: Any, chars: Any) -> Any:
    return _str(v).strip(_str(chars))


@fn()
def trimprefix(v: Any, prefix: Any) -> Any:
    s, p = _str(v), _str(prefix)
    return s[len(p):] if p and s.startswith(p) else s


@fn()
def trimsuffix(v: Any, suffix: Any) -> Any:
    s, p = _str(v), _str(suffix)
    return s[: -len(p)] if p and s.endswith(p) else s


@fn()
def substr(v: Any, offset: Any, length: Any) -> Any:
    s = _str(v)
    o, n = to_number(offset), to_number(length)
    if o < 0:
        o = len(s) + o
    if o > len(s) or o < 0:
        raise EvalError("substr: offset out of range")
    return s[o:] if n == -1 else s[o:o + n]


@fn()
def startswith(v: Any, prefix: Any) -> Any:
    return _str(v).startswith(_str(prefix))


@fn()
def endswith(v: Any, suffix: Any) -> Any:
    return _str(v).endswith(_str(suffix))


@fn()
def strcontains(v: Any, sub: Any) -> Any:
    return _str(sub) in _str(v)


@fn()
def strrev(v: Any) -> Any:
    return _str(v)[::-1]


_VERB = re.compile(r"%(?:(%)|([-+ 0#]*)(\d+)?(?:\.(\d+))?([a-zA-Z]))")


def _format(spec: str, args: list) -> str:
    out: list[str] = []
    pos = 0
    arg_i = 0
    size = 0      # characters in out so far
    for m in _VERB.finditer(spec):
        out.append(spec[pos:m.start()])
        size += m.start() - pos
        pos = m.end()
        if m.group(1):
            out.append("%")
            size += 1
            continue
        flags, width, prec, verb = m.group(2) or "", m.group(3), m.group(4), m.group(5)
        # A width or precision is a size: "%1500000000s" asks for 1.5 GB.
        METER.reserve("format()", chars=size + int(width or 0) + int(prec or 0))
        if arg_i >= len(args):
            raise EvalError("format: not enough arguments")
        a = args[arg_i]
        arg_i += 1
        if verb in ("s", "v"):
            if isinstance(a, (list, dict)):
                METER.reserve("format()", chars=approx_chars(a, MAX_STRING_CHARS))
                text = json.dumps(a, separators=(",", ":"))
            else:
                text = _str(a)
        elif verb == "q":
            text = json.dumps(_str(a))
        elif verb == "d":
            n = to_number(a)
            if not isinstance(n, int):
                raise EvalError("format: %d needs a whole number")
            text = str(n)
        elif verb in ("f", "e", "g"):
            n = to_number(a)
            text = format(n, f".{prec or 6}{verb}") if verb != "g" else format(n, "g")
        elif verb == "t":
            text = "true" if to_bool(a) else "false"
        elif verb in ("x", "X", "o", "b"):
            n = to_number(a)
            text = format(int(n), verb) if isinstance(n, (int, float)) else _str(a)
        else:
            raise EvalError(f"format: unsupported verb %{verb}")
        if width:
            w = int(width)
            if "-" in flags:
                text = text.ljust(w)
            elif "0" in flags and verb in ("d", "f", "e", "g"):
                text = text.rjust(w, "0")
            else:
                text = text.rjust(w)
        METER.reserve("format()", chars=size + len(text))
        out.append(text)
        size += len(text)
    out.append(spec[pos:])
    return "".join(out)


@fn()
def format_(spec: Any, *args: Any) -> Any:
    if any(contains_unknown(a) for a in args):
        return UNKNOWN
    return _format(_str(spec), list(args))


@fn()
def formatlist(spec: Any, *args: Any) -> Any:
    lengths = {len(a) for a in args if isinstance(a, list)}
    if len(lengths) > 1:
        raise EvalError("formatlist: lists of different lengths")
    n = lengths.pop() if lengths else 1
    rows = []
    for i in range(n):
        row = [a[i] if isinstance(a, list) else a for a in args]
        if any(contains_unknown(x) for x in row):
            return UNKNOWN
        rows.append(_format(_str(spec), row))
    return rows


@fn()
def jsonencode(v: Any) -> Any:
    if contains_unknown(v):
        return UNKNOWN
    METER.reserve("jsonencode()", chars=approx_chars(v, MAX_STRING_CHARS))
    return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@fn()
def jsondecode(v: Any) -> Any:
    try:
        data = json.loads(_str(v))
    except ValueError:
        raise EvalError("jsondecode: invalid JSON") from None
    return _normalize_json(data)


def _normalize_json(data: Any) -> Any:
    if isinstance(data, float):
        return normalize_number(data)
    if isinstance(data, list):
        return [_normalize_json(x) for x in data]
    if isinstance(data, dict):
        return {k: _normalize_json(v) for k, v in data.items()}
    return data


@fn()
def yamldecode(v: Any) -> Any:
    from mlcost_lint.yaml_lib import SAFE_LOADER, yaml

    try:
        data = yaml.load(_str(v), Loader=SAFE_LOADER)
    except yaml.YAMLError:
        raise EvalError("yamldecode: invalid YAML") from None
    except RecursionError:
        raise EvalError("yamldecode: too deep") from None
    if not isinstance(data, (dict, list, str, int, float, bool, type(None))):
        return UNKNOWN
    # Aliases are shared references in what the loader built; copying them
    # (_normalize_json) would expand a billion-laughs document to gigabytes.
    if not bounded(data, MAX_ITEMS):
        raise ValueTooLarge(f"yamldecode() expands to over {MAX_ITEMS} nodes (YAML aliases)")
    return _normalize_json(data)


__all__ = ["FUNCTIONS"]
