"""What an expression refers to, read from its syntax without evaluating it.

:func:`references` gives the (root, first attribute) pairs an expression
names (``local.tags``, ``aws_s3_bucket.ckpt``, ``var.region``);
:func:`block_references` those of a whole block. The order a module
directory is evaluated in (declarations.prepare) and the variables a value
depends on (the feature-flag rule) are read from them. What a value refers
to once evaluated is another matter: its reference shadow (refs.py).
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.parse import hcl as H


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


__all__ = ["block_references", "references"]
