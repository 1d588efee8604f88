"""Terraform JSON syntax (.tf.json, .tfvars.json) to the same HclBody the
HCL parser produces, so one evaluator reads both.

Strings holding ``${...}`` are parsed as templates. JSON cannot tell a
nested block from a map-valued argument without the provider schema: an
object is a map argument when its key is a known map argument (tags,
labels, ...), otherwise a nested block.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.parse import hcl as H
from mlcost_lint.parse.document import Document

# Arguments whose value is a map, never a nested block.
MAP_ARGUMENTS = frozenset({
    "tags", "tags_all", "labels", "resource_labels", "default_labels", "metadata", "environment",
    "variables", "node_labels", "annotations", "parameters", "settings", "triggers", "values",
    "providers", "inputs", "default", "value", "locals", "user_labels", "node_pools_labels",
    "node_pools_resource_labels", "cluster_resource_labels", "eks_managed_node_groups",
    "self_managed_node_groups", "node_pools", "agents_labels", "sensitive_labels",
})


class _Conv:
    def __init__(self, doc: Document) -> None:
        self.doc = doc

    def pos(self, path: tuple) -> tuple[int, int]:
        p = self.doc.positions.get(path)
        if p is None:
            loc = self.doc.location(path)
            return loc.line, loc.column
        return p

    def expr(self, value: Any, path: tuple) -> Any:
        line, col = self.pos(path)
        if isinstance(value, str):
            if "${" in value or "%{" in value:
                try:
                    return H.parse_template(value, line, col + 1)
                except H.HclSyntaxError:
                    return H.Literal(value, line, col)
            return H.Literal(value, line, col)
        if isinstance(value, list):
            return H.TupleExpr([self.expr(v, path + (i,)) for i, v in enumerate(value)], line, col)
        if isinstance(value, dict):
            items = []
            for k, v in value.items():
                kl, kc = self.pos(path + (k,))
                items.append(H.ObjectItem(H.Literal(k, kl, kc), self.expr(v, path + (k,)), kl, kc))
            return H.ObjectExpr(items, line, col)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return H.Literal(value, line, col)

    def body(self, value: Any, path: tuple, into: Any, block_type: str = "") -> None:
        """Arguments and nested blocks of one block's JSON object."""
        if not isinstance(value, dict):
            return
        for key, v in value.items():
            if key == "//":
                continue   # JSON comments
            kpath = path + (key,)
            line, col = self.pos(kpath)
            if key in ("count", "for_each", "provider", "depends_on", "source", "version", "type",
                       "description", "sensitive", "nullable"):
                into.attributes[key] = H.Attribute(key, self._meta_expr(key, v, kpath), line, col, line)
            elif key == "dynamic" and isinstance(v, dict):
                for label, spec in v.items():
                    for i, one in enumerate(spec if isinstance(spec, list) else [spec]):
                        p = kpath + (label,) + ((i,) if isinstance(spec, list) else ())
                        dl, dc = self.pos(p)
                        blk = H.Block("dynamic", [label], {}, [], dl, dl, dc)
                        self.body(one, p, blk)
                        into.blocks.append(blk)
            elif key == "lifecycle" and isinstance(v, dict):
                continue
            elif isinstance(v, dict) and key not in MAP_ARGUMENTS and not block_type.startswith("locals"):
                blk = H.Block(key, [], {}, [], line, line, col)
                self.body(v, kpath, blk, key)
                into.blocks.append(blk)
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and key not in MAP_ARGUMENTS:
                for i, item in enumerate(v):
                    il, ic = self.pos(kpath + (i,))
                    blk = H.Block(key, [], {}, [], il, il, ic)
                    self.body(item, kpath + (i,), blk, key)
                    into.blocks.append(blk)
            else:
                into.attributes[key] = H.Attribute(key, self.expr(v, kpath), line, col, line)

    def _meta_expr(self, key: str, v: Any, path: tuple) -> Any:
        line, col = self.pos(path)
        if key in ("provider",) and isinstance(v, str) and "${" not in v:
            parts = v.split(".")
            return H.Traversal(parts[0], tuple(H.GetAttr(p) for p in parts[1:]), line, col)
        if key == "type" and isinstance(v, str):
            try:
                return H.parse_expression(v, line, col)
            except H.HclSyntaxError:
                return H.Literal(v, line, col)
        return self.expr(v, path)


def _items(value: Any, path: tuple) -> list[tuple[Any, tuple]]:
    """A JSON block body may be one object or a list of objects."""
    if isinstance(value, list):
        return [(v, path + (i,)) for i, v in enumerate(value)]
    return [(value, path)]


def json_to_hcl(doc: Document) -> H.HclBody:
    data = doc.data
    body = H.HclBody(doc.path, {}, [], doc.start_line)
    if not isinstance(data, dict):
        return body
    conv = _Conv(doc)
    for top, content in data.items():
        tpath = (top,)
        if top in ("resource", "data") and isinstance(content, dict):
            for rtype, named in content.items():
                if not isinstance(named, dict):
                    continue
                for name, spec in named.items():
                    for one, p in _items(spec, tpath + (rtype, name)):
                        line, col = conv.pos(p)
                        blk = H.Block(top, [rtype, name], {}, [], line, line, col)
                        conv.body(one, p, blk, rtype)
                        body.blocks.append(blk)
        elif top in ("variable", "module", "output", "provider") and isinstance(content, dict):
            for name, spec in content.items():
                for one, p in _items(spec, tpath + (name,)):
                    line, col = conv.pos(p)
                    blk = H.Block(top, [name], {}, [], line, line, col)
                    if top == "variable" and isinstance(one, dict):
                        for key, v in one.items():
                            kl, kc = conv.pos(p + (key,))
                            blk.attributes[key] = H.Attribute(key, conv._meta_expr(key, v, p + (key,))
                                                              if key == "type" else conv.expr(v, p + (key,)),
                                                              kl, kc, kl)
                    elif top == "module" and isinstance(one, dict):
                        for key, v in one.items():
                            kl, kc = conv.pos(p + (key,))
                            if key == "providers" and isinstance(v, dict):
                                items = [H.ObjectItem(H.Literal(k, kl, kc), _provider_ref(pv, kl, kc), kl, kc)
                                         for k, pv in v.items() if isinstance(pv, str)]
                                blk.attributes[key] = H.Attribute(key, H.ObjectExpr(items, kl, kc), kl, kc, kl)
                            else:
                                blk.attributes[key] = H.Attribute(key, conv.expr(v, p + (key,)), kl, kc, kl)
                    else:
                        conv.body(one, p, blk, top)
                    body.blocks.append(blk)
        elif top == "locals":
            for one, p in _items(content, tpath):
                line, col = conv.pos(p)
                blk = H.Block("locals", [], {}, [], line, line, col)
                if isinstance(one, dict):
                    for key, v in one.items():
                        kl, kc = conv.pos(p + (key,))
                        blk.attributes[key] = H.Attribute(key, conv.expr(v, p + (key,)), kl, kc, kl)
                body.blocks.append(blk)
    return body


def _provider_ref(text: str, line: int, col: int) -> Any:
    parts = text.replace("${", "").replace("}", "").split(".")
    return H.Traversal(parts[0], tuple(H.GetAttr(p) for p in parts[1:]), line, col)


def json_vars_to_hcl(doc: Document) -> H.HclBody:
    """.tfvars.json: top-level keys are variable values (no templates)."""
    body = H.HclBody(doc.path, {}, [], doc.start_line)
    if isinstance(doc.data, dict):
        conv = _Conv(doc)
        for key, v in doc.data.items():
            line, col = conv.pos((key,))
            expr = conv.expr(v, (key,))
            body.attributes[key] = H.Attribute(key, expr, line, col, line)
    return body
