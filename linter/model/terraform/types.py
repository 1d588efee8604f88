"""Variable type constraints: conversion of input values, ``optional()`` defaults.

Terraform converts a variable's value to its declared type: ``"2"`` to 2 for
a number, object attributes not declared are dropped and missing
``optional(T, default)`` attributes are filled. Modules that take maps of
node groups rely on the defaults, so they are modelled here.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform.values import EvalError, set_of, to_bool, to_number, to_string
from mlcost_lint.parse import hcl as H


@dataclass(slots=True)
class TypeSpec:
    kind: str                        # any string number bool list set map object tuple
    elem: "TypeSpec | None" = None
    attrs: dict = field(default_factory=dict)       # object: name -> TypeSpec
    optional: dict = field(default_factory=dict)    # object: name -> (has_default, default expr)
    items: list = field(default_factory=list)       # tuple


ANY = TypeSpec("any")
_PRIMITIVES = {"string", "number", "bool", "any"}


def parse_type(expr: Any) -> TypeSpec:
    """A type constraint expression to a TypeSpec; ANY when not understood."""
    if isinstance(expr, H.Traversal) and expr.source is None and not expr.steps:
        return TypeSpec(expr.root) if expr.root in _PRIMITIVES else ANY
    if isinstance(expr, H.Literal) and isinstance(expr.value, str):   # legacy "string"
        return TypeSpec(expr.value) if expr.value in _PRIMITIVES else ANY
    if isinstance(expr, H.FunctionCall):
        name = expr.name
        args = expr.args
        if name in ("list", "set", "map") and len(args) == 1:
            return TypeSpec(name, elem=parse_type(args[0]))
        if name == "object" and len(args) == 1 and isinstance(args[0], H.ObjectExpr):
            spec = TypeSpec("object")
            for item in args[0].items:
                if not isinstance(item.key, H.Literal):
                    continue
                key = str(item.key.value)
                value = item.value
                if isinstance(value, H.FunctionCall) and value.name == "optional" and value.args:
                    spec.attrs[key] = parse_type(value.args[0])
                    spec.optional[key] = (len(value.args) > 1, value.args[1] if len(value.args) > 1 else None)
                else:
                    spec.attrs[key] = parse_type(value)
            return spec
        if name == "tuple" and len(args) == 1 and isinstance(args[0], H.TupleExpr):
            return TypeSpec("tuple", items=[parse_type(i) for i in args[0].items])
    return ANY


def convert(value: Any, spec: TypeSpec, eval_default: Any = None) -> Any:
    """Convert ``value`` to ``spec``. Raises EvalError when Terraform would.
    ``eval_default(expr)`` evaluates an optional() default expression."""
    if value is UNKNOWN or value is None or spec.kind == "any":
        return value
    kind = spec.kind
    if kind == "string":
        return to_string(value)
    if kind == "number":
        return to_number(value)
    if kind == "bool":
        return to_bool(value)
    if kind in ("list", "set"):
        if not isinstance(value, list):
            raise EvalError(f"expected a {kind}")
        items = [convert(v, spec.elem or ANY, eval_default) for v in value]
        if kind == "set" and not any(v is UNKNOWN for v in items):
            return set_of(items)
        return items
    if kind == "map":
        if not isinstance(value, dict):
            raise EvalError("expected a map")
        return {k: convert(v, spec.elem or ANY, eval_default) for k, v in value.items()}
    if kind == "object":
        if not isinstance(value, dict):
            raise EvalError("expected an object")
        out: dict[str, Any] = {}
        for name, sub in spec.attrs.items():
            if name in value and value[name] is not None:
                out[name] = convert(value[name], sub, eval_default)
            elif name in spec.optional:
                has_default, default_expr = spec.optional[name]
                if has_default and eval_default is not None:
                    out[name] = convert(eval_default(default_expr), sub, eval_default)
                else:
                    out[name] = None
            elif name in value:
                out[name] = None
            else:
                raise EvalError(f"attribute {name!r} is required")
        return out
    if kind == "tuple":
        if not isinstance(value, list) or len(value) != len(spec.items):
            raise EvalError("expected a tuple")
        return [convert(v, s, eval_default) for v, s in zip(value, spec.items)]
    return value


def is_complex(spec: TypeSpec) -> bool:
    return spec.kind not in ("string", "number", "bool")
