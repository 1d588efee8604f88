"""Terraform's numeric functions (``min``, ``max``, ``sum``, ``abs``,
``ceil``, ``floor``) and its conversions (``tonumber``, ``tostring``,
``tobool``, ``sensitive``, ``nonsensitive``), registered in FUNCTIONS
(functions_registry.py) as this module is imported.
"""

from __future__ import annotations

import math
from typing import Any

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform.functions_registry import _list, fn
from mlcost_lint.model.terraform.values import EvalError, normalize_number, to_bool, to_number, to_string


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
