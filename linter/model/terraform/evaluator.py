"""Evaluate located HCL expressions the way Terraform would, without providers.

Every value the evaluator cannot know is UNKNOWN. An expression Terraform
would reject raises :class:`EvalError` inside (so ``try``/``can`` work) and
becomes UNKNOWN at the top (:meth:`Evaluator.evaluate`). A shared step
budget stops exponential constructs.
"""

from __future__ import annotations

from typing import Any, Callable

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform.values import (
    EvalError, ResourceValue, normalize_number, set_of, tf_equal, to_bool, to_number, to_string,
    value_size,
)
from mlcost_lint.parse import hcl as H


class BudgetExceeded(Exception):
    """The evaluation step budget is spent: the value becomes UNKNOWN.
    ``whole`` is False when only the current value's share was spent."""

    def __init__(self, whole: bool) -> None:
        super().__init__("evaluation budget exceeded")
        self.whole = whole


class Budget:
    """Steps for the whole build (``limit``) and for any one value
    (``node_limit``, a twentieth of it): one exponential local becomes
    UNKNOWN without starving every other value of the build."""

    __slots__ = ("limit", "steps", "exhausted", "node_limit", "node_start")

    def __init__(self, limit: int) -> None:
        self.limit = max(int(limit), 1)
        self.node_limit = max(self.limit // 20, 1000)
        self.steps = 0
        self.node_start = 0
        self.exhausted = False

    def start_value(self) -> None:
        self.node_start = self.steps

    def charge(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > self.limit:
            self.exhausted = True
            raise BudgetExceeded(True)
        if self.steps - self.node_start > self.node_limit:
            raise BudgetExceeded(False)

    def walk(self, value: Any) -> None:
        """Charge one step per node of a nested value (shared sub-values
        count every time, so a value built by doubling costs what it is)."""
        stack = [value]
        n = 0
        while stack:
            v = stack.pop()
            n += 1
            if n >= 256:
                self.charge(n)
                n = 0
            if isinstance(v, dict):
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)
        self.charge(n)


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


# Functions that walk whole nested values: charged by size before they run.
DEEP_FUNCTIONS = frozenset({
    "jsonencode", "format", "formatlist", "distinct", "toset", "setunion", "contains", "index",
    "flatten", "tomap", "tolist", "sort", "compact", "merge", "concat", "yamldecode", "jsondecode",
})


class Scope:
    """Names visible to an expression: ``names`` (for variables, count, each,
    dynamic iterators) over the module's ``roots`` (var, local, module, data,
    resource types, path, terraform)."""

    __slots__ = ("names", "roots")

    def __init__(self, roots: dict[str, Any], names: dict[str, Any] | None = None) -> None:
        self.roots = roots
        self.names = names or {}

    def child(self, extra: dict[str, Any]) -> "Scope":
        merged = dict(self.names)
        merged.update(extra)
        return Scope(self.roots, merged)

    def lookup(self, name: str) -> Any:
        if name in self.names:
            return self.names[name]
        if name in self.roots:
            return self.roots[name]
        return UNKNOWN   # data sources, undeclared resources, anything we do not model


class Evaluator:
    def __init__(self, budget: Budget) -> None:
        from mlcost_lint.model.terraform.functions import FUNCTIONS

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
        if self.budget.exhausted:
            return UNKNOWN
        try:
            return self.eval(expr, scope)
        except EvalError:
            return UNKNOWN
        except RecursionError:
            return UNKNOWN
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError, OverflowError):
            return UNKNOWN

    def eval(self, expr: Any, scope: Scope) -> Any:
        self.budget.charge()
        return self._dispatch[type(expr)](expr, scope)

    # -- nodes --------------------------------------------------------------
    def _literal(self, e: H.Literal, scope: Scope) -> Any:
        return e.value

    def _paren(self, e: H.Parenthesis, scope: Scope) -> Any:
        return self.eval(e.expr, scope)

    def _template(self, e: H.Template, scope: Scope) -> Any:
        parts = e.parts
        if len(parts) == 1 and not isinstance(parts[0], (str, H.TemplateIf, H.TemplateFor)):
            return self.eval(parts[0], scope)   # "${x}" keeps x's type
        out = self._template_parts(parts, scope)
        if out is UNKNOWN:
            return UNKNOWN
        self.budget.charge(len(out) // 64)
        return out

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
        return UNKNOWN if unknown else "".join(chunks)

    def _template_for(self, p: H.TemplateFor, scope: Scope) -> Any:
        coll = self.eval(p.collection, scope)
        pairs = self._iterate(coll)
        if pairs is UNKNOWN:
            return UNKNOWN
        chunks = []
        for k, v in pairs:
            self.budget.charge()
            names = {p.value_var: v}
            if p.key_var:
                names[p.key_var] = k
            sub = self._template_parts(p.body, scope.child(names))
            if sub is UNKNOWN:
                return UNKNOWN
            chunks.append(sub)
        return "".join(chunks)

    def _traversal(self, e: H.Traversal, scope: Scope) -> Any:
        if e.source is not None:
            value = self.eval(e.source, scope)
        else:
            value = scope.lookup(e.root)
        return self.apply_steps(value, e.steps, scope)

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
        return [self.eval(i, scope) for i in e.items]

    def _object(self, e: H.ObjectExpr, scope: Scope) -> Any:
        out: dict[str, Any] = {}
        for item in e.items:
            key = self.eval(item.key, scope)
            if key is UNKNOWN:
                return UNKNOWN   # an unknown key makes the whole object's shape unknown
            out[to_string(key)] = self.eval(item.value, scope)
        return out

    def _conditional(self, e: H.Conditional, scope: Scope) -> Any:
        cond = to_bool(self.eval(e.cond, scope))
        if cond is UNKNOWN:
            return UNKNOWN
        return self.eval(e.true if cond else e.false, scope)

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
        if pairs is UNKNOWN:
            return UNKNOWN
        self.budget.charge(len(pairs))
        is_object = e.key is not None
        out_list: list = []
        out_map: dict[str, Any] = {}
        for k, v in pairs:
            names = {e.value_var: v}
            if e.key_var:
                names[e.key_var] = k
            inner = scope.child(names)
            if e.cond is not None:
                keep = to_bool(self.eval(e.cond, inner))
                if keep is UNKNOWN:
                    return UNKNOWN
                if not keep:
                    continue
            if is_object:
                key = self.eval(e.key, inner)
                if key is UNKNOWN:
                    return UNKNOWN
                key = to_string(key)
                value = self.eval(e.value, inner)
                if e.grouping:
                    out_map.setdefault(key, []).append(value)
                elif key in out_map:
                    raise EvalError(f"duplicate key {key!r} in for expression")
                else:
                    out_map[key] = value
            else:
                out_list.append(self.eval(e.value, inner))
        return out_map if is_object else out_list

    def _call(self, e: H.FunctionCall, scope: Scope) -> Any:
        name = e.name
        if name == "try":
            return self._try(e, scope)
        if name == "can":
            if not e.args:
                raise EvalError("can() needs an argument")
            try:
                value = self.eval(e.args[0], scope)
            except EvalError:
                return False
            return UNKNOWN if value is UNKNOWN else True
        fn = self.functions.get(name)
        args = [self.eval(a, scope) for a in e.args]
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
        result = fn(*args)
        self.budget.charge(value_size(result))
        return result

    def _try(self, e: H.FunctionCall, scope: Scope) -> Any:
        for arg in e.args:
            try:
                value = self.eval(arg, scope)
            except EvalError:
                continue
            return value   # an UNKNOWN first success stays UNKNOWN, as in Terraform
        raise EvalError("no try() argument succeeded")


def references(expr: Any, out: set | None = None) -> set:
    """(root, first attribute name) pairs an expression refers to, e.g.
    ("local", "tags"), ("aws_s3_bucket", "ckpt"), ("var", "region")."""
    if out is None:
        out = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, (str, H.Literal)):
            continue
        t = type(node)
        if t is H.Traversal:
            if node.source is not None:
                stack.append(node.source)
            elif node.steps and isinstance(node.steps[0], H.GetAttr):
                out.add((node.root, node.steps[0].name))
                if node.root == "data" and len(node.steps) > 1 and isinstance(node.steps[1], H.GetAttr):
                    pass
            else:
                out.add((node.root, None))
            for step in node.steps:
                _push_step(step, stack)
        elif t is H.Template:
            stack.extend(node.parts)
        elif t is H.TemplateIf:
            stack.append(node.cond)
            stack.extend(node.then)
            stack.extend(node.otherwise)
        elif t is H.TemplateFor:
            stack.append(node.collection)
            stack.extend(node.body)
        elif t is H.FunctionCall:
            stack.extend(node.args)
        elif t is H.TupleExpr:
            stack.extend(node.items)
        elif t is H.ObjectExpr:
            for item in node.items:
                stack.append(item.key)
                stack.append(item.value)
        elif t is H.Conditional:
            stack.extend((node.cond, node.true, node.false))
        elif t is H.BinaryOp:
            stack.extend((node.left, node.right))
        elif t is H.UnaryOp:
            stack.append(node.operand)
        elif t is H.ForExpr:
            stack.extend(x for x in (node.collection, node.key, node.value, node.cond) if x is not None)
        elif t is H.Parenthesis:
            stack.append(node.expr)
    return out


def _push_step(step: Any, stack: list) -> None:
    if isinstance(step, H.Index):
        stack.append(step.key)
    elif isinstance(step, H.Splat):
        for s in step.steps:
            _push_step(s, stack)


def block_references(block: Any, out: set | None = None) -> set:
    """References of every expression in a block and its nested blocks."""
    if out is None:
        out = set()
    stack = [block]
    while stack:
        b = stack.pop()
        for attr in b.attributes.values():
            references(attr.expr, out)
        stack.extend(b.blocks)
    return out


__all__ = ["Budget", "BudgetExceeded", "Evaluator", "Scope", "references", "block_references",
           "EvalError", "ResourceValue", "set_of"]
