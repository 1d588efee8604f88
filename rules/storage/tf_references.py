"""Which resources an argument of a Terraform resource refers to.

The evaluator reads ``aws_s3_bucket.ckpt.id`` as UNKNOWN (a computed
attribute), so the value alone cannot join an
``aws_s3_bucket_lifecycle_configuration`` to its bucket. The reference is
still written in the source: this module reads the argument's expression from
the parsed HCL (``ParsedFile.hcl``) and returns the resources in the same
module instance whose address the expression names. Used by the storage,
logging, attribution and governance rules (MLC101, MLC303-305, MLC401).

Plans and ``.tf.json`` files have no HCL body here: callers fall back to
matching a known literal name (the bucket name, the cluster name).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.parse import hcl as H

_INDEX_SUFFIX = re.compile(r"\[[^\[\]]*\]$")

# One index per project; the engine runs every rule on the same Project object.
_cache: dict[int, tuple[Any, dict[tuple[str, int], Any], dict[tuple[str, str], list[CloudResource]]]] = {}


def base_address(address: str) -> str:
    """``module.a[0].aws_s3_bucket.x["k"]`` -> ``module.a[0].aws_s3_bucket.x``."""
    return _INDEX_SUFFIX.sub("", address)


def module_prefix(resource: CloudResource) -> str:
    """The module path of a resource instance (``module.a[0].``) or ``""``."""
    base = base_address(resource.address)
    own = f"{resource.type}.{resource.name}"
    if base.endswith(own):
        return base[: -len(own)]
    return ""


def _index(project: Any) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, str], list[CloudResource]]]:
    key = id(project)
    hit = _cache.get(key)
    if hit is not None and hit[0] is project:
        return hit[1], hit[2]
    blocks: dict[tuple[str, int], Any] = {}
    for pf in getattr(project, "files", ()) or ():
        body = getattr(pf, "hcl", None)
        if not isinstance(body, H.HclBody):
            continue
        for block in body.blocks:
            if block.type in ("resource", "data") and len(block.labels) == 2:
                blocks[(pf.path, block.line)] = block
    by_base: dict[tuple[str, str], list[CloudResource]] = {}
    for r in project.terraform.resources:
        by_base.setdefault((root_of(r), base_address(r.address)), []).append(r)
    _cache.clear()
    _cache[key] = (project, blocks, by_base)
    return blocks, by_base


def source_block(project: Any, resource: CloudResource) -> Any | None:
    """The HCL ``resource`` block a resource instance was evaluated from."""
    blocks, _ = _index(project)
    block = blocks.get((resource.location.path, resource.location.line))
    if block is None or block.labels != [resource.type, resource.name]:
        return None
    return block


def _traversals(expr: Any) -> Iterable[H.Traversal]:
    stack = [expr]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, (str, H.Literal)):
            continue
        t = type(node)
        if t is H.Traversal:
            if node.source is not None:
                stack.append(node.source)
            else:
                yield node
            for step in node.steps:
                if isinstance(step, H.Index):
                    stack.append(step.key)
        elif t is H.Template:
            stack.extend(node.parts)
        elif t is H.TemplateIf:
            stack.extend((node.cond, *node.then, *node.otherwise))
        elif t is H.TemplateFor:
            stack.extend((node.collection, *node.body))
        elif t is H.FunctionCall:
            stack.extend(node.args)
        elif t is H.TupleExpr:
            stack.extend(node.items)
        elif t is H.ObjectExpr:
            for item in node.items:
                stack.extend((item.key, item.value))
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


def _attribute(block: Any, path: str) -> Any | None:
    parts = path.split(".")
    for part in parts[:-1]:
        inner = [b for b in block.blocks if b.type == part]
        if len(inner) != 1:
            return None
        block = inner[0]
    return block.attributes.get(parts[-1])


def _own_suffix(resource: CloudResource) -> str:
    return resource.address[len(base_address(resource.address)):]


def _instance_suffix(trav: H.Traversal, resource: CloudResource) -> str | None:
    """The instance a reference names (``[0]``, ``["raw"]``), when the index is
    a literal or the referring resource's own ``each.key`` / ``count.index``;
    None for the whole resource (no index, or one we do not follow)."""
    if len(trav.steps) < 2 or not isinstance(trav.steps[1], H.Index):
        return None
    key = trav.steps[1].key
    if isinstance(key, H.Template) and len(key.parts) == 1 and isinstance(key.parts[0], str):
        return f'["{key.parts[0]}"]'
    if isinstance(key, H.Literal) and isinstance(key.value, (int, str)) and not isinstance(key.value, bool):
        return f"[{key.value}]" if isinstance(key.value, int) else f'["{key.value}"]'
    if isinstance(key, H.Traversal) and key.source is None and len(key.steps) == 1 \
            and isinstance(key.steps[0], H.GetAttr) and (key.root, key.steps[0].name) in (
                ("each", "key"), ("count", "index")):
        return _own_suffix(resource) or None
    return None


def referenced(project: Any, resource: CloudResource, attr_path: str,
               target_types: Iterable[str]) -> list[CloudResource] | None:
    """Resources of ``target_types`` that argument ``attr_path`` of
    ``resource`` names (``aws_s3_bucket.ckpt.id``, ``aws_s3_bucket.this[0].bucket``),
    every instance of the named resource in the same module instance.

    None when the source expression cannot be read (a plan, ``.tf.json``, the
    argument not written); an empty list when it is read and names none.
    """
    block = source_block(project, resource)
    if block is None:
        return None
    attribute = _attribute(block, attr_path)
    if attribute is None:
        return None
    wanted = set(target_types)
    _, by_base = _index(project)
    prefix = module_prefix(resource)
    out: list[CloudResource] = []
    seen: set[str] = set()
    for trav in _traversals(attribute.expr):
        if trav.root not in wanted or not trav.steps or not isinstance(trav.steps[0], H.GetAttr):
            continue
        base = f"{prefix}{trav.root}.{trav.steps[0].name}"
        instance = _instance_suffix(trav, resource)
        for target in by_base.get((root_of(resource), base), ()):
            if instance is not None and target.address != base + instance:
                continue
            if target.address not in seen:
                seen.add(target.address)
                out.append(target)
    return out



def root_of(resource: CloudResource) -> str:
    """The folder of the root module a resource instance was evaluated from
    (the outermost module call's file, or its own file): resources of
    different roots are different deployments and never refer to each other."""
    path = resource.module_calls[0].path if resource.module_calls else resource.location.path
    return path.rsplit("/", 1)[0] if "/" in path else ""
