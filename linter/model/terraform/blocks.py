"""A block's arguments and nested blocks, evaluated into the shape a plan's
JSON gives them.

:func:`block_body` is what a resource (or provider) block becomes: each
argument's value (meta-arguments left out), each nested block as one more
object in a list under its type, ``dynamic`` blocks expanded over their
``for_each``. Beside the values it gives where each was written, by dotted
path (indexed, "lifecycle_rule.0.expiration.days", and for the first block
of a type unindexed, "lifecycle_rule.expiration.days"; keys of literal
objects too), and, when asked, the resource addresses each argument's value
refers to (refs.py). Each argument is evaluated by the module instance's
``value_and_ref`` (builder.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.terraform import refs as R
from mlcost_lint.model.terraform.declarations import ref_key
from mlcost_lint.model.terraform.evaluator import Scope
from mlcost_lint.parse import hcl as H

if TYPE_CHECKING:
    from mlcost_lint.model.terraform.builder import ModuleInstance

META_ARGUMENTS = frozenset({"count", "for_each", "provider", "depends_on"})
META_BLOCKS = frozenset({"lifecycle", "provisioner", "connection"})


def block_body(instance: ModuleInstance, blk: H.Block, scope: Scope, path: str, prefix: str,
               top: bool = True, refs: dict | None = None) -> tuple[dict, dict]:
    """Arguments and nested blocks in plan-JSON shape, with locations.
    ``refs`` (when given) receives each argument's referenced resource
    addresses by dotted path, from the same evaluation."""
    attrs: dict[str, Any] = {}
    locs: dict[str, Location] = {}
    for name, attr in blk.attributes.items():
        if top and name in META_ARGUMENTS:
            continue
        attrs[name], ref = instance.value_and_ref(attr.expr, scope, Location(path, attr.line, attr.column))
        if ref is not None and refs is not None:
            addresses = R.tidy(ref)
            if addresses:
                refs[prefix + name] = addresses
        locs[prefix + name] = Location(path, attr.line, attr.column, attr.end_line)
        if isinstance(attr.expr, H.ObjectExpr):
            _object_locations(attr.expr, path, prefix + name + ".", locs)
    for sub in blk.blocks:
        if top and sub.type in META_BLOCKS:
            continue
        if sub.type == "dynamic" and sub.labels:
            _dynamic(instance, sub, scope, path, prefix, attrs, locs, refs)
            continue
        _add_block(instance, sub.type, sub, scope, path, prefix, attrs, locs, refs)
    return attrs, locs


def _add_block(instance: ModuleInstance, btype: str, sub: H.Block, scope: Scope, path: str, prefix: str,
               attrs: dict, locs: dict, refs: dict | None = None) -> None:
    existing = attrs.get(btype)
    if existing is UNKNOWN:
        return
    if not isinstance(existing, list):
        # An argument of the same name (`actions = null`) is not a block
        # list: Terraform rejects the mix; the blocks win here.
        attrs[btype] = []
    lst = attrs[btype]
    idx = len(lst)
    loc = Location(path, sub.line, sub.column, sub.end_line)
    locs.setdefault(prefix + btype, loc)
    locs[f"{prefix}{btype}.{idx}"] = loc
    inner_prefix = f"{prefix}{btype}.{idx}."
    inner_refs: dict | None = {} if refs is not None else None
    inner, inner_locs = block_body(instance, sub, scope, path, inner_prefix, top=False, refs=inner_refs)
    for k, v in inner_locs.items():
        locs[k] = v
        # unindexed path to the first occurrence: "lifecycle_rule.expiration.days"
        plain = prefix + btype + "." + k[len(inner_prefix):]
        locs.setdefault(plain, v)
    if inner_refs:
        for k, v in inner_refs.items():
            refs[k] = v
            refs.setdefault(prefix + btype + "." + k[len(inner_prefix):], v)
    lst.append(inner)


def _dynamic(instance: ModuleInstance, sub: H.Block, scope: Scope, path: str, prefix: str,
             attrs: dict, locs: dict, refs: dict | None = None) -> None:
    label = sub.labels[0]
    loc = Location(path, sub.line, sub.column, sub.end_line)
    each = sub.attributes.get("for_each")
    iterator = label
    if "iterator" in sub.attributes:
        iterator = ref_key(sub.attributes["iterator"].expr) or label
    content = next((b for b in sub.blocks if b.type == "content"), None)
    if each is None or content is None:
        return
    coll, coll_ref = instance.value_and_ref(each.expr, scope, loc)
    if isinstance(coll, list):
        pairs = list(enumerate(coll))
    elif isinstance(coll, dict):
        pairs = [(k, coll[k]) for k in sorted(coll)]
    else:
        attrs[label] = UNKNOWN
        locs.setdefault(prefix + label, loc)
        return
    locs.setdefault(prefix + label, loc)
    for k, v in pairs:
        element_ref = R.get(coll_ref, k)
        inner_scope = scope.child({iterator: {"key": k, "value": v}},
                                  {iterator: R.RMap(value=element_ref)} if element_ref is not None else None)
        _add_block(instance, label, content, inner_scope, path, prefix, attrs, locs, refs)
    if not pairs:
        attrs.setdefault(label, [])


def _object_locations(expr: H.ObjectExpr, path: str, prefix: str, locs: dict, depth: int = 0) -> None:
    if depth > 8:
        return
    for item in expr.items:
        if isinstance(item.key, H.Literal) and isinstance(item.key.value, str):
            key = prefix + item.key.value
            locs.setdefault(key, Location(path, item.line, item.column))
            if isinstance(item.value, H.ObjectExpr):
                _object_locations(item.value, path, key + ".", locs, depth + 1)


def argument_paths(blk: H.Block) -> list[tuple[str, H.Attribute]]:
    """(dotted path, attribute) of a block's arguments and of those of its
    directly nested blocks (neither meta-arguments nor the arguments of dynamic,
    lifecycle, provisioner or connection blocks)."""
    paths = [(name, attr) for name, attr in blk.attributes.items() if name not in META_ARGUMENTS]
    for inner in blk.blocks:
        if inner.type in ("dynamic", "lifecycle", "provisioner", "connection"):
            continue
        paths.extend((f"{inner.type}.{name}", attr) for name, attr in inner.attributes.items())
    return paths


__all__ = ["argument_paths", "block_body"]
