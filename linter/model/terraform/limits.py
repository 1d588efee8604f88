"""Bounds on the work and the values of one Terraform evaluation.

Terraform functions run on strings from the scanned files. Without a bound,
130 bytes (``format("%1500000000s", "x")``) ask for 1.5 GB, a 3 kB template
doubles itself to gigabytes, and a regex backtracks for hours (issue 16,
item 14). Every function result is bounded in size, checked *before* it is
built where its size can be known in advance and after it is built
otherwise; work inside functions is charged to the same step budget as the
evaluation steps (:class:`Budget` in budget.py); regexes run with a
time bound. A value over a bound is UNKNOWN and the builder reports one
MLC001 for it.
"""

from __future__ import annotations

import time
from typing import Any

# A string longer than this is no configuration value (AWS user_data is at
# most 16 kB, an IAM policy 10 kB).
MAX_STRING_CHARS = 1_000_000
# Elements of one list or map (range() had this bound already).
MAX_ITEMS = 1_000_000
# Whole numbers: about 4,200 decimal digits, so that every number we keep
# can still be printed (Python refuses int-to-str over 4,300 digits).
MAX_INT_BITS = 14_000
# Regular expressions (replace "/re/"): the text they run on, and the time
# all of one build's regexes may take together, one call at most PER_CALL.
MAX_REGEX_INPUT = 100_000
REGEX_SECONDS_PER_BUILD = 1.0
REGEX_SECONDS_PER_CALL = 0.25


class BudgetExceeded(Exception):
    """The evaluation step budget is spent: the value becomes UNKNOWN.
    ``whole`` is False when only the current value's share was spent."""

    def __init__(self, whole: bool) -> None:
        super().__init__("evaluation budget exceeded")
        self.whole = whole


class ValueTooLarge(BudgetExceeded):
    """A function result (or template, or arithmetic result) over a bound:
    the value being evaluated becomes UNKNOWN, with an MLC001 naming
    ``what`` (the function and the bound)."""

    def __init__(self, what: str) -> None:
        super().__init__(False)
        self.what = what


class Meter:
    """The budget of the evaluation that is running, for work done inside
    functions (which are called with plain values and no evaluator)."""

    __slots__ = ("budget", "regex_left", "_owner")

    def __init__(self) -> None:
        self.budget: Any = None
        self.regex_left = REGEX_SECONDS_PER_BUILD
        self._owner: Any = None

    def use(self, budget: Any) -> None:
        if budget is not self._owner:   # a new build: a fresh regex allowance
            self._owner = budget
            self.regex_left = REGEX_SECONDS_PER_BUILD
        self.budget = budget

    def reserve(self, name: str, chars: int = 0, items: int = 0) -> None:
        """Before building a result of ``chars`` characters / ``items``
        elements: refuse it when over a bound or over the step budget left."""
        if chars > MAX_STRING_CHARS:
            raise ValueTooLarge(f"{name} would build a string of {chars} characters, "
                                f"over the {MAX_STRING_CHARS}-character bound")
        if items > MAX_ITEMS:
            raise ValueTooLarge(f"{name} would build {items} elements, over the {MAX_ITEMS}-element bound")
        budget = self.budget
        if budget is not None:
            cost = chars // 64 + items
            if budget.steps + cost > budget.limit or budget.steps + cost - budget.node_start > budget.node_limit:
                budget.charge(cost)     # raises the budget's own BudgetExceeded

    def regex_timeout(self, name: str) -> float:
        if self.regex_left <= 0:
            raise ValueTooLarge(f"{name}: regular expressions used up their {REGEX_SECONDS_PER_BUILD:g} s "
                                "for this run")
        return min(self.regex_left, REGEX_SECONDS_PER_CALL)

    def regex_spent(self, started: float) -> None:
        self.regex_left -= time.monotonic() - started


METER = Meter()


def check_result(name: str, value: Any) -> None:
    """After a function returns (or a template or arithmetic is done): its
    top level within the bounds."""
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            raise ValueTooLarge(f"{name} built a string of {len(value)} characters, "
                                f"over the {MAX_STRING_CHARS}-character bound")
    elif isinstance(value, (list, dict)):
        if len(value) > MAX_ITEMS:
            raise ValueTooLarge(f"{name} built {len(value)} elements, over the {MAX_ITEMS}-element bound")
    elif isinstance(value, int) and not isinstance(value, bool):
        check_int(name, value.bit_length())


def check_int(name: str, bits: int) -> None:
    if bits > MAX_INT_BITS:
        raise ValueTooLarge(f"{name} gives a number of about {int(bits * 0.30103)} digits, "
                            f"over the {MAX_INT_BITS}-bit bound")


def approx_chars(value: Any, cap: int) -> int:
    """Characters of ``value`` as JSON, roughly (strings and 4 per other
    node; shared sub-values count every time); stops counting past ``cap``."""
    stack = [value]
    n = 0
    while stack and n <= cap:
        v = stack.pop()
        if isinstance(v, str):
            n += len(v) + 2
        elif isinstance(v, dict):
            n += 2
            for k, x in v.items():
                n += len(k) + 4
                stack.append(x)
        elif isinstance(v, list):
            n += 2
            stack.extend(v)
        else:
            n += 4 if not isinstance(v, int) or isinstance(v, bool) else 4 + v.bit_length() // 3
    return n


def bounded(value: Any, cap: int = 200_000) -> bool:
    """True when a nested value has at most ``cap`` nodes."""
    stack = [value]
    n = 0
    while stack:
        v = stack.pop()
        n += 1
        if n > cap:
            return False
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return True
