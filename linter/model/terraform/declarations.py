"""Declarations of one module directory, and the order they are evaluated in.

Each .tf file of a directory adds what it declares to the directory's
:class:`ModuleSource` (resources, data sources, module calls, variables,
locals, providers, outputs). :func:`prepare` then reads, once per directory,
which named objects each declaration refers to, orders them dependencies
first (Tarjan's algorithm: the objects of a reference cycle come together,
and the builder evaluates them as one) and records the variables each local
depends on (the feature-flag rule). Every module instance of the directory
(builder.py) evaluates in that order. A provider configuration is keyed as
a reference to it is written (``aws``, ``aws.west``).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location
from mlcost_lint.model.terraform.dependencies import block_references, references
from mlcost_lint.model.terraform.types import parse_type
from mlcost_lint.parse import hcl as H

if TYPE_CHECKING:
    from mlcost_lint.model.terraform.evaluator import Evaluator


@dataclass(slots=True)
class Decl:
    kind: str              # "resource" | "data" | "module"
    type: str              # resource type; "" for module calls
    name: str
    block: H.Block
    path: str

    @property
    def location(self) -> Location:
        return Location(self.path, self.block.line, self.block.column, self.block.end_line)


@dataclass(slots=True)
class ModuleSource:
    dir: str
    variables: dict = field(default_factory=dict)     # name -> (Block, path)
    locals: dict = field(default_factory=dict)        # name -> (Attribute, path)
    resources: list = field(default_factory=list)     # Decl
    data: list = field(default_factory=list)          # Decl
    modules: list = field(default_factory=list)       # Decl
    providers: list = field(default_factory=list)     # (Block, path)
    outputs: dict = field(default_factory=dict)       # name -> (Attribute, path)
    tfvars: list = field(default_factory=list)        # HclBody (terraform.tfvars, *.auto.tfvars)
    # trees (HclBody) or cached files (ParsedFile with an outline only) to add
    # before the first preparation, in path order (model/terraform _Roots)
    pending: list = field(default_factory=list)
    # prepared once
    order: list = field(default_factory=list)         # node keys, topological
    cyclic: dict = field(default_factory=dict)        # node key -> SCC id (only for cycles)
    local_vars: dict = field(default_factory=dict)    # local name -> var names it depends on
    resource_types: set = field(default_factory=set)
    var_types: dict = field(default_factory=dict)     # name -> TypeSpec
    decls: dict = field(default_factory=dict)         # node key -> Decl / (Block, path)

    def add_pending(self, load: Callable[[Any], H.HclBody | None]) -> None:
        """Add the pending trees in order; ``load`` gives the tree of a cached
        file (ParsedFile with its outline only), a tree is added as it is."""
        from mlcost_lint.parse.document import ParsedFile

        for item in self.pending:
            body = load(item) if isinstance(item, ParsedFile) else item
            if body is not None:
                self.add(body)
        self.pending = []

    def add(self, body: H.HclBody) -> None:
        path = body.path
        for blk in body.blocks:
            t = blk.type
            labels = blk.labels
            if t == "resource" and len(labels) >= 2:
                self.resources.append(Decl("resource", labels[0], labels[1], blk, path))
            elif t == "data" and len(labels) >= 2:
                self.data.append(Decl("data", labels[0], labels[1], blk, path))
            elif t == "module" and labels:
                self.modules.append(Decl("module", "", labels[0], blk, path))
            elif t == "variable" and labels:
                self.variables[labels[0]] = (blk, path)
            elif t == "locals":
                for name, attr in blk.attributes.items():
                    self.locals[name] = (attr, path)
            elif t == "provider" and labels:
                self.providers.append((blk, path))
            elif t == "output" and labels and "value" in blk.attributes:
                self.outputs[labels[0]] = (blk.attributes["value"], path)


def provider_key(blk: H.Block, evaluator: Evaluator | None = None) -> str:
    alias = blk.attributes.get("alias")
    name = blk.labels[0]
    if alias is not None and isinstance(alias.expr, H.Literal) and isinstance(alias.expr.value, str):
        return f"{name}.{alias.expr.value}"
    return name


def ref_key(expr: Any) -> str | None:
    """``aws.west`` written as a traversal (or a string in JSON) -> "aws.west"."""
    if isinstance(expr, H.Traversal) and expr.source is None:
        names = [expr.root] + [s.name for s in expr.steps if isinstance(s, H.GetAttr)]
        return ".".join(names)
    if isinstance(expr, H.Literal) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, H.Template) and len(expr.parts) == 1:
        return ref_key(expr.parts[0])
    return None


def prepare(source: ModuleSource) -> None:
    """Dependency graph of the module's named objects and its topological order."""
    source.resource_types = {d.type for d in source.resources}
    # node key -> declaration, so evaluation never searches lists (linear overall)
    for d in source.resources:
        source.decls.setdefault(("resource", d.type, d.name), d)
    for d in source.modules:
        source.decls.setdefault(("module", d.name), d)
    for b, path in source.providers:
        source.decls.setdefault(("provider", provider_key(b)), (b, path))
    nodes: dict[tuple, set] = {}
    provider_nodes = [("provider", provider_key(b)) for b, _ in source.providers]
    for name, (attr, _) in source.locals.items():
        nodes[("local", name)] = references(attr.expr)
    for d in source.resources:
        nodes[("resource", d.type, d.name)] = block_references(d.block)
    for d in source.modules:
        nodes[("module", d.name)] = block_references(d.block)
    for b, _ in source.providers:
        nodes[("provider", provider_key(b))] = block_references(b)
    for name, (blk, _) in source.variables.items():
        if "type" in blk.attributes:
            source.var_types[name] = parse_type(blk.attributes["type"].expr)

    edges: dict[tuple, list] = {}
    for key, refs in nodes.items():
        out = []
        for root, attr in refs:
            if root == "local" and attr is not None and ("local", attr) in nodes:
                out.append(("local", attr))
            elif root == "module" and attr is not None and ("module", attr) in nodes:
                out.append(("module", attr))
            elif attr is not None and ("resource", root, attr) in nodes:
                out.append(("resource", root, attr))
        if key[0] in ("resource", "module"):
            out.extend(provider_nodes)
        edges[key] = out
    order, sccs = _tarjan(list(nodes), edges)
    source.order = order
    for i, comp in enumerate(sccs):
        if len(comp) > 1 or comp[0] in edges.get(comp[0], ()):
            for k in comp:
                source.cyclic[k] = i

    # var names each local depends on, transitively (feature-flag rule)
    for key in order:
        if key[0] != "local":
            continue
        deps: set = set()
        for root, attr in nodes[key]:
            if root == "var" and attr:
                deps.add(attr)
            elif root == "local" and attr in source.local_vars:
                deps |= source.local_vars[attr]
        source.local_vars[key[1]] = deps


def _tarjan(nodes: list, edges: dict) -> tuple[list, list]:
    """Iterative Tarjan: (dependencies-first order, SCCs in that order)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    order: list = []
    sccs: list = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                comp.reverse()
                sccs.append(comp)
                order.extend(comp)
    return order, sccs


__all__ = ["Decl", "ModuleSource", "prepare", "provider_key", "ref_key"]
