"""Evaluate located HCL expressions the way Terraform would, without providers.

Every value the evaluator cannot know is UNKNOWN. An expression Terraform
would reject raises :class:`EvalError` inside (so ``try``/``can`` work) and
becomes UNKNOWN at the top (:meth:`Evaluator.evaluate`). A shared step
budget (budget.py) stops exponential constructs.

Beside each value the evaluator leaves, in ``Evaluator.ref``, the resources
the value is taken from unchanged (a reference shadow, see :mod:`refs`):
computed in the same pass, it becomes ``CloudResource.references``.
"""

from __future__ import annotations

from typing import Any, Callable

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform import refs as R
from mlcost_lint.model.terraform.budget import Budget
from mlcost_lint.model.terraform.values import (
    EvalError, ResourceValue, normalize_number, set_of, tf_equal, to_bool, to_number, to_string,
    value_size,
)
from mlcost_lint.model.terraform.limits import (  # noqa: F401  (bounded, ValueTooLarge: re-exported)
    METER, BudgetExceeded, ValueTooLarge, bounded, check_int, check_result,
)
from mlcost_lint.parse import hcl as H

__all__ = ["BudgetExceeded", "EvalError", "Evaluator", "ResourceValue", "Scope", "ValueTooLarge", "bounded",
           "set_of"]


# Functions that walk whole nested values: charged by size before they run.
DEEP_FUNCTIONS = frozenset({
    "jsonencode", "format", "formatlist", "distinct", "toset", "setunion", "contains", "index",
    "flatten", "tomap", "tolist", "sort", "compact", "merge", "concat", "yamldecode", "jsondecode",
})


class Scope:
    """Names visible to an expression: ``names`` (for variables, count, each,
    dynamic iterators) over the module's ``roots`` (var, local, module, data,
    resource types, path, terraform). ``ref_names`` / ``ref_roots`` hold the
    same names' reference shadows (see :mod:`refs`); a name without one
    refers to no resource."""

    __slots__ = ("names", "roots", "ref_names", "ref_roots")

    def __init__(self, roots: dict[str, Any], names: dict[str, Any] | None = None,
                 ref_roots: dict[str, Any] | None = None, ref_names: dict[str, Any] | None = None) -> None:
        self.roots = roots
        self.names = names or {}
        self.ref_roots = ref_roots if ref_roots is not None else {}
        self.ref_names = ref_names or {}

    def child(self, extra: dict[str, Any], extra_refs: dict[str, Any] | None = None) -> "Scope":
        merged = dict(self.names)
        merged.update(extra)
        ref_names = self.ref_names
        if extra_refs or (ref_names and not ref_names.keys().isdisjoint(extra)):
            ref_names = dict(ref_names)
            for k in extra:
                ref_names.pop(k, None)   # a new binding hides the outer one's shadow
            if extra_refs:
                ref_names.update(extra_refs)
        return Scope(self.roots, merged, self.ref_roots, ref_names)

    def lookup_ref(self, name: str) -> Any:
        if name in self.names:
            return self.ref_names.get(name)
        return self.ref_roots.get(name)

    def lookup(self, name: str) -> Any:
        if name in self.names:
            return self.names[name]
        if name in self.roots:
            return self.roots[name]
        return UNKNOWN   # data sources, undeclared resources, anything we do not model


# Nodes whose method sets ``Evaluator.ref`` itself; after any other node the
# value refers to nothing (arithmetic, comparisons, literals).
_CARRIES_REF = frozenset({
    H.Traversal, H.Template, H.Parenthesis, H.Conditional, H.TupleExpr, H.ObjectExpr, H.ForExpr,
    H.FunctionCall,
})

# Functions whose result is (part of) an argument unchanged: argument
# positions that flow into the result (None: every argument). Anything else
# (format, join, lower, ...) builds a new value that refers to nothing.
_PASS_THROUGH: dict[str, tuple[int, ...] | None] = {
    "coalesce": None, "coalescelist": None, "concat": None, "merge": None, "setunion": None,
    "one": (0,), "element": (0,), "lookup": (0, 2), "values": (0,), "flatten": (0,),
    "compact": (0,), "distinct": (0,), "sort": (0,), "reverse": (0,), "slice": (0,),
    "tostring": (0,), "tolist": (0,), "toset": (0,), "tomap": (0,),
    "nonsensitive": (0,), "sensitive": (0,),
}


class Evaluator:
    """``eval`` returns a value and leaves its reference shadow in ``ref``
    (computed in the same pass: no second walk)."""

    def __init__(self, budget: Budget) -> None:
        from mlcost_lint.model.terraform.functions import FUNCTIONS

        self.ref: Any = None
        self.budget = budget
        self.functions: dict[str, Callable[..., Any]] = FUNCTIONS
        self._dispatch: dict[type, Callable[[Any, Scope], Any]] = {
            H.Literal: self._literal,
            H.Template: self._template,
            H.Traversal: self._traversal,
            H.FunctionCall: self._call,
            H.TupleExpr: self._tuple,
            H.ObjectExpr: self._object,
            H.Conditional: self._conditional,
            H.BinaryOp: self._binary,
            H.UnaryOp: self._unary,
            H.ForExpr: self._for,
            H.Parenthesis: self._paren,
        }

    # -- entry points -------------------------------------------------------
    def evaluate(self, expr: Any, scope: Scope) -> Any:
        """The value of ``expr``; UNKNOWN on any error. BudgetExceeded escapes."""
        self.ref = None
        if self.budget.exhausted:
            return UNKNOWN
        try:
            return self.eval(expr, scope)
        except BudgetExceeded:
            self.ref = None
            raise
        except EvalError:
            pass
        except RecursionError:
            pass
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError, OverflowError):
            pass
        self.ref = None
        return UNKNOWN

    def eval(self, expr: Any, scope: Scope) -> Any:
        self.budget.charge()
        t = type(expr)
        value = self._dispatch[t](expr, scope)
        if t not in _CARRIES_REF:
            self.ref = None
        return value

    # -- nodes --------------------------------------------------------------
    def _literal(self, e: H.Literal, scope: Scope) -> Any:
        return e.value

    def _paren(self, e: H.Parenthesis, scope: Scope) -> Any:
        return self.eval(e.expr, scope)

    def _template(self, e: H.Template, scope: Scope) -> Any:
        parts = e.parts
        if len(parts) == 1 and not isinstance(parts[0], (str, H.TemplateIf, H.TemplateFor)):
            return self.eval(parts[0], scope)   # "${x}" keeps x's type (and its references)
        out = self._template_parts(parts, scope)
        self.ref = None   # a string built from pieces is not any of them
        if out is UNKNOWN:
            return UNKNOWN
        self.budget.charge(len(out) // 64)
        return out

    def _join(self, chunks: list[str]) -> str:
        """A template's pieces joined, refused before joining when too long."""
        METER.use(self.budget)
        METER.reserve("template", chars=sum(map(len, chunks)))
        return "".join(chunks)

    def _template_parts(self, parts: list, scope: Scope) -> Any:
        chunks: list[str] = []
        unknown = False
        for p in parts:
            if isinstance(p, str):
                chunks.append(p)
                continue
            if isinstance(p, H.TemplateIf):
                cond = to_bool(self.eval(p.cond, scope))
                if cond is UNKNOWN:
                    unknown = True
                    continue
                sub = self._template_parts(p.then if cond else p.otherwise, scope)
            elif isinstance(p, H.TemplateFor):
                sub = self._template_for(p, scope)
            else:
                sub = to_string(self.eval(p, scope))
            if sub is UNKNOWN:
                unknown = True
            else:
                chunks.append(sub)
        return UNKNOWN if unknown else self._join(chunks)

    def _template_for(self, p: H.TemplateFor, scope: Scope) -> Any:
        coll = self.eval(p.collection, scope)
        pairs = self._iterate(coll)
        if pairs is UNKNOWN:
            return UNKNOWN
        chunks = []
        total = 0
        for k, v in pairs:
            self.budget.charge()
            names = {p.value_var: v}
            if p.key_var:
                names[p.key_var] = k
            sub = self._template_parts(p.body, scope.child(names))
            if sub is UNKNOWN:
                return UNKNOWN
            total += len(sub)
            METER.use(self.budget)
            METER.reserve("template for", chars=total)   # growing pieces are bounded as they come
            chunks.append(sub)
        return "".join(chunks)

    def _traversal(self, e: H.Traversal, scope: Scope) -> Any:
        if e.source is not None:
            value = self.eval(e.source, scope)
            ref = self.ref
        else:
            root = e.root
            value = scope.lookup(root)
            ref = scope.ref_names.get(root) if root in scope.names else scope.ref_roots.get(root)
            # var.x / local.x without a resource behind them: the plain path
            if ref is not None and type(ref) is R.RMap and e.steps and type(e.steps[0]) is H.GetAttr \
                    and e.steps[0].name not in ref:
                ref = None
        if ref is None:
            value = self.apply_steps(value, e.steps, scope)
            self.ref = None
            return value
        return self._steps_with_ref(value, e.steps, scope, ref)

    def _steps_with_ref(self, value: Any, steps: tuple, scope: Scope, ref: Any) -> Any:
        """:meth:`apply_steps` carrying the reference shadow along. Once the
        value is unknown no index key is evaluated (as in apply_steps): the
        shadow then follows any key."""
        for pos, step in enumerate(steps):
            if isinstance(step, H.GetAttr):
                ref = R.get(ref, step.name)
                if value is not UNKNOWN:
                    value = self._get_attr(value, step.name)
            elif isinstance(step, H.Index):
                if value is UNKNOWN:
                    ref = R.any_key(ref)
                    continue
                key = self.eval(step.key, scope)
                ref = R.any_key(ref) if key is UNKNOWN else R.get(ref, key)
                value = self._index(value, key)
            else:  # Splat
                if value is UNKNOWN:
                    ref = R.any_key(ref)
                    continue
                if value is None:
                    value, ref = [], None
                elif isinstance(value, list):
                    self.budget.charge(len(value))
                    out, shadows = [], R.RList()
                    for i, v in enumerate(value):
                        out.append(self._steps_with_ref(v, step.steps, scope, R.get(ref, i)))
                        shadows.append(self.ref)
                    value, ref = out, (shadows if any(s is not None for s in shadows) else None)
                else:
                    value = [self._steps_with_ref(value, step.steps, scope, ref)]
                    ref = R.RList([self.ref]) if self.ref is not None else None
            if ref is None:
                value = self.apply_steps(value, steps[pos + 1:], scope)
                break
        self.ref = ref
        return UNKNOWN if value is UNKNOWN else value

    def apply_steps(self, value: Any, steps: tuple, scope: Scope) -> Any:
        for step in steps:
            if value is UNKNOWN:
                return UNKNOWN
            if isinstance(step, H.GetAttr):
                value = self._get_attr(value, step.name)
            elif isinstance(step, H.Index):
                value = self._index(value, self.eval(step.key, scope))
            else:  # Splat
                if value is None:
                    value = []
                elif isinstance(value, list):
                    self.budget.charge(len(value))
                    value = [self.apply_steps(v, step.steps, scope) for v in value]
                else:
                    value = [self.apply_steps(value, step.steps, scope)]
        return value

    def _get_attr(self, value: Any, name: str) -> Any:
        if isinstance(value, dict):
            if name in value or isinstance(value, ResourceValue):
                return value[name]
            raise EvalError(f"no attribute {name!r}")
        if value is None:
            raise EvalError("attribute of null")
        raise EvalError(f"attribute {name!r} of a non-object")

    def _index(self, value: Any, key: Any) -> Any:
        if key is UNKNOWN or value is UNKNOWN:
            return UNKNOWN
        if isinstance(value, list):
            idx = to_number(key)
            if not isinstance(idx, int) or isinstance(idx, bool):
                raise EvalError("index must be a whole number")
            if 0 <= idx < len(value):
                return value[idx]
            raise EvalError("index out of range")
        if isinstance(value, dict):
            k = to_string(key)
            if k in value or isinstance(value, ResourceValue):
                return value[k]
            raise EvalError(f"no key {k!r}")
        raise EvalError("cannot index this value")

    def _tuple(self, e: H.TupleExpr, scope: Scope) -> Any:
        out = []
        shadows = None
        for i, item in enumerate(e.items):
            out.append(self.eval(item, scope))
            if self.ref is not None:
                if shadows is None:
                    shadows = R.RList([None] * len(e.items))
                shadows[i] = self.ref
        self.ref = shadows
        return out

    def _object(self, e: H.ObjectExpr, scope: Scope) -> Any:
        out: dict[str, Any] = {}
        shadows = None
        for item in e.items:
            key = self.eval(item.key, scope)
            if key is UNKNOWN:
                self.ref = None
                return UNKNOWN   # an unknown key makes the whole object's shape unknown
            key = to_string(key)
            out[key] = self.eval(item.value, scope)
            if self.ref is not None:
                if shadows is None:
                    shadows = R.RMap()
                shadows[key] = self.ref
            elif shadows is not None:
                shadows.pop(key, None)
        self.ref = shadows
        return out

    def _conditional(self, e: H.Conditional, scope: Scope) -> Any:
        cond = to_bool(self.eval(e.cond, scope))
        if cond is UNKNOWN:
            # Either branch may be the value: it refers to what both refer to.
            self.ref = R.union([self._branch_ref(e.true, scope), self._branch_ref(e.false, scope)])
            return UNKNOWN
        return self.eval(e.true if cond else e.false, scope)

    def _branch_ref(self, expr: Any, scope: Scope) -> Any:
        """The shadow of a branch whose value is not needed; a branch that
        fails (``aws_s3_bucket.x[0]`` with count 0) refers to nothing. Only
        reference-shaped branches are evaluated (a traversal, ``try``/``coalesce``,
        a nested conditional), so an unknown condition never pays for building
        a large value nobody reads."""
        while type(expr) is H.Parenthesis:
            expr = expr.expr
        t = type(expr)
        if t is H.Template and len(expr.parts) == 1 and type(expr.parts[0]) is not str:
            t = type(expr.parts[0])
        if t is H.FunctionCall:
            if expr.name != "try" and expr.name not in _PASS_THROUGH:
                return None
        elif t not in (H.Traversal, H.Conditional):
            return None
        try:
            self.eval(expr, scope)
        except (EvalError, ArithmeticError, ValueError, TypeError, KeyError, IndexError):
            return None
        return self.ref

    def _unary(self, e: H.UnaryOp, scope: Scope) -> Any:
        v = self.eval(e.operand, scope)
        if e.op == "!":
            b = to_bool(v)
            return UNKNOWN if b is UNKNOWN else not b
        n = to_number(v)
        return UNKNOWN if n is UNKNOWN else -n

    def _binary(self, e: H.BinaryOp, scope: Scope) -> Any:
        op = e.op
        left = self.eval(e.left, scope)
        right = self.eval(e.right, scope)
        if op in ("&&", "||"):
            lb, rb = to_bool(left), to_bool(right)
            decisive = op == "||"
            if lb is decisive or rb is decisive:
                return decisive
            if lb is UNKNOWN or rb is UNKNOWN:
                return UNKNOWN
            return lb and rb if op == "&&" else lb or rb
        if op in ("==", "!="):
            self.budget.walk(left)
            self.budget.walk(right)
        if op == "==":
            return tf_equal(left, right)
        if op == "!=":
            eq = tf_equal(left, right)
            return UNKNOWN if eq is UNKNOWN else not eq
        a, b = to_number(left), to_number(right)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        if type(a) is int and type(b) is int and op in ("+", "-", "*"):
            # Squaring in a loop of locals doubles the digits each time: bounded before computing.
            check_int(f"'{op}'", a.bit_length() + b.bit_length() if op == "*" else
                      max(a.bit_length(), b.bit_length()) + 1)
        if op == "+":
            return normalize_number(a + b)
        if op == "-":
            return normalize_number(a - b)
        if op == "*":
            return normalize_number(a * b)
        if op == "/":
            if b == 0:
                raise EvalError("division by zero")
            return normalize_number(a / b)
        if op == "%":
            if b == 0:
                raise EvalError("modulo by zero")
            return normalize_number(a % b)
        if op == "<":
            return a < b
        if op == ">":
            return a > b
        if op == "<=":
            return a <= b
        if op == ">=":
            return a >= b
        raise EvalError(f"unknown operator {op}")

    def _iterate(self, coll: Any) -> Any:
        """(key, value) pairs of a collection, Terraform's order; UNKNOWN if unknown."""
        if coll is UNKNOWN:
            return UNKNOWN
        if isinstance(coll, list):
            return list(enumerate(coll))
        if isinstance(coll, dict):
            return [(k, coll[k]) for k in sorted(coll)]
        if coll is None:
            raise EvalError("cannot iterate over null")
        raise EvalError("cannot iterate over a non-collection")

    def _for(self, e: H.ForExpr, scope: Scope) -> Any:
        pairs = self._iterate(self.eval(e.collection, scope))
        coll_ref = self.ref
        if pairs is UNKNOWN:
            self.ref = None
            return UNKNOWN
        self.budget.charge(len(pairs))
        is_object = e.key is not None
        out_list: list = []
        out_map: dict[str, Any] = {}
        ref_list = R.RList()
        ref_map = R.RMap()
        any_ref = False
        for k, v in pairs:
            names = {e.value_var: v}
            if e.key_var:
                names[e.key_var] = k
            element_ref = R.get(coll_ref, k) if coll_ref is not None else None
            inner = scope.child(names, {e.value_var: element_ref} if element_ref is not None else None)
            if e.cond is not None:
                keep = to_bool(self.eval(e.cond, inner))
                if keep is UNKNOWN:
                    self.ref = None
                    return UNKNOWN
                if not keep:
                    continue
            if is_object:
                key = self.eval(e.key, inner)
                if key is UNKNOWN:
                    self.ref = None
                    return UNKNOWN
                key = to_string(key)
                value = self.eval(e.value, inner)
                any_ref = any_ref or self.ref is not None
                if e.grouping:
                    out_map.setdefault(key, []).append(value)
                    ref_map.setdefault(key, R.RList()).append(self.ref)
                elif key in out_map:
                    raise EvalError(f"duplicate key {key!r} in for expression")
                else:
                    out_map[key] = value
                    if self.ref is not None:
                        ref_map[key] = self.ref
            else:
                out_list.append(self.eval(e.value, inner))
                ref_list.append(self.ref)
                any_ref = any_ref or self.ref is not None
        self.ref = (ref_map if is_object else ref_list) if any_ref else None
        return out_map if is_object else out_list

    def _call(self, e: H.FunctionCall, scope: Scope) -> Any:
        name = e.name
        if name == "try":
            return self._try(e, scope)   # the first argument that succeeds, with its references
        if name == "can":
            self.ref = None
            if not e.args:
                raise EvalError("can() needs an argument")
            try:
                value = self.eval(e.args[0], scope)
            except EvalError:
                self.ref = None
                return False
            self.ref = None
            return UNKNOWN if value is UNKNOWN else True
        fn = self.functions.get(name)
        passing = _PASS_THROUGH.get(name, ())
        if passing == ():
            args = [self.eval(a, scope) for a in e.args]
            self.ref = None
        else:
            args, arg_refs = [], []
            for a in e.args:
                args.append(self.eval(a, scope))
                arg_refs.append(self.ref)
            self.ref = self._call_ref(name, passing, args, arg_refs)
        if name in DEEP_FUNCTIONS:
            for a in args:
                self.budget.walk(a)
        if e.expand_final and args:
            last = args.pop()
            if last is UNKNOWN:
                return UNKNOWN
            if not isinstance(last, list):
                raise EvalError("only a list can be expanded with ...")
            args.extend(last)
        if fn is None:
            return UNKNOWN   # a function we do not model (file, timestamp, cidrsubnet, ...)
        METER.use(self.budget)   # functions charge their own work (limits.py)
        result = fn(*args)
        check_result(f"{name}()", result)
        self.budget.charge(value_size(result))
        return result

    @staticmethod
    def _call_ref(name: str, passing: tuple[int, ...] | None, args: list, arg_refs: list) -> Any:
        """The shadow of a pass-through function's result."""
        if not any(r is not None for r in arg_refs):
            return None
        if name == "element" and len(args) == 2 and type(arg_refs[0]) is R.RList \
                and type(args[1]) is int and args[0]:
            return arg_refs[0][args[1] % len(args[0])] if len(arg_refs[0]) == len(args[0]) else None
        if name == "lookup" and len(args) >= 2 and type(args[0]) is dict and type(args[1]) is str \
                and args[1] in args[0]:
            return R.get(arg_refs[0], args[1])
        if name == "merge" and all(type(a) is dict or a is None for a in args):
            merged = R.RMap()   # keys of later maps win, with their references
            for a, r in zip(args, arg_refs):
                for k in a or ():
                    hit = R.get(r, k)
                    if hit is not None:
                        merged[k] = hit
                    else:
                        merged.pop(k, None)
            return merged or None
        picked = arg_refs if passing is None else [arg_refs[i] for i in passing if i < len(arg_refs)]
        return R.union(picked)

    def _try(self, e: H.FunctionCall, scope: Scope) -> Any:
        for arg in e.args:
            try:
                value = self.eval(arg, scope)
            except EvalError:
                continue
            return value   # an UNKNOWN first success stays UNKNOWN, as in Terraform
        raise EvalError("no try() argument succeeded")
