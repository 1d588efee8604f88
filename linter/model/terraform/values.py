"""Terraform values as plain Python data, and the conversions Terraform applies.

str, int/float, bool, None, list (tuple/list/set), dict (object/map) and
UNKNOWN. Sets are lists without duplicates, strings sorted (Terraform
iterates sets of strings in lexical order).
"""

from __future__ import annotations

import math
from typing import Any

from mlcost_lint.model.core import UNKNOWN


class EvalError(Exception):
    """An expression Terraform would reject (wrong type, missing key, index
    out of range). ``try``/``can`` catch it; elsewhere it makes the value UNKNOWN."""


class ResourceValue(dict):
    """A resource instance seen from a reference: attributes that are not
    written are computed by the provider, so they read as UNKNOWN."""

    __slots__ = ()

    def __missing__(self, key: str) -> Any:
        return UNKNOWN


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return "unknown"


def normalize_number(value: float | int) -> float | int:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        return int(value)
    return value


def to_number(value: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, bool):
        raise EvalError("a bool is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        # inf / NaN (a 1e999 literal, arithmetic that overflowed) are no
        # Terraform number: ceil(), range() and friends raise on them.
        if math.isnan(value) or math.isinf(value):
            raise EvalError("not a finite number")
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            raise EvalError(f"cannot convert {value!r} to a number") from None
        if math.isnan(number) or math.isinf(number):
            raise EvalError("not a finite number")
        return normalize_number(number)
    raise EvalError(f"a {type_name(value)} is not a number")


def to_bool(value: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, bool):
        return value
    if value == "true":
        return True
    if value == "false":
        return False
    raise EvalError(f"a {type_name(value)} is not a bool")


def number_to_string(value: int | float) -> str:
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def to_string(value: Any) -> Any:
    """Terraform's automatic conversion to string (templates, tostring)."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_to_string(value)
    if value is None:
        raise EvalError("null value in a string")
    raise EvalError(f"a {type_name(value)} cannot be used as a string")


def tf_equal(a: Any, b: Any) -> Any:
    """``==``: types must match (1 != "1", true != 1); unknown anywhere is unknown."""
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        result: Any = True
        for x, y in zip(a, b):
            eq = tf_equal(x, y)
            if eq is UNKNOWN:
                result = UNKNOWN
            elif not eq:
                return False
        return result
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return False
        result = True
        for k in a:
            eq = tf_equal(a[k], b[k])
            if eq is UNKNOWN:
                result = UNKNOWN
            elif not eq:
                return False
        return result
    if type(a) is not type(b) and not (a is None or b is None):
        return False
    return a == b


def set_of(values: list) -> list:
    """A Terraform set: duplicates removed; sets of strings are sorted."""
    out: list = []
    seen_keys: set = set()
    for v in values:
        key = hashable(v)
        if key in seen_keys:
            continue
        seen_keys.add(key)
        out.append(v)
    if out and all(isinstance(v, str) for v in out):
        out.sort()
    return out


def hashable(value: Any) -> Any:
    """A hashable key equal for values Terraform's == finds equal (UNKNOWN aside)."""
    if isinstance(value, dict):
        return ("d", tuple(sorted((k, hashable(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("l", tuple(hashable(v) for v in value))
    if isinstance(value, bool):
        return ("b", value)
    return value


def value_size(value: Any) -> int:
    """Cheap size estimate for the step budget (top level only)."""
    if isinstance(value, (list, dict)):
        return len(value)
    if isinstance(value, str):
        return len(value) // 64
    return 0
