"""Terraform's string functions (``join``, ``split``, ``replace``,
``format``, ``formatlist``, ``substr``, ``trim``, ...), registered in
FUNCTIONS (functions_registry.py) as this module is imported.

A result's size is reserved (limits.METER) before it is built where it can
be known in advance: a width in ``format("%1500000000s", ...)`` or a
``replace`` that multiplies a string. ``replace`` with a regular expression
runs on the ``regex`` engine with a time bound.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mlcost_lint.model.core import UNKNOWN, contains_unknown
from mlcost_lint.model.terraform.functions_registry import _list, _str, fn
from mlcost_lint.model.terraform.limits import MAX_REGEX_INPUT, MAX_STRING_CHARS, METER, ValueTooLarge, approx_chars
from mlcost_lint.model.terraform.values import EvalError, to_bool, to_number


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
