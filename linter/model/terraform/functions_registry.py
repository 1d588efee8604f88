"""The registry of the Terraform functions we evaluate: :data:`FUNCTIONS`,
the :func:`fn` decorator that registers each, and the argument checks the
families share.

A registered function is called through a wrapper that refuses the wrong
number of arguments with an EvalError (as Terraform does: ``try``/``can``
see it) and, unless registered with ``known=False``, answers UNKNOWN when
any argument is UNKNOWN. The families (functions_collections,
functions_numbers, functions_strings, functions_encoding) register as they
are imported; functions.py imports them all.
"""

from __future__ import annotations

from typing import Any, Callable

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform.values import EvalError, to_string

FUNCTIONS: dict[str, Callable[..., Any]] = {}
_VARARGS = 0x04     # inspect.CO_VARARGS


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
        # ~60 functions was most of the function table's import, on a cold run's serial start)
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


__all__ = ["FUNCTIONS", "fn"]
