"""Terraform configuration to CloudResources: modules, variables, locals,
count/for_each, dynamic blocks, providers, regions and cost tags.

Each module directory is prepared once (declarations, dependency order);
each module call evaluates it again with the call's inputs. Evaluation
follows a topological order of locals, resources, module calls and provider
blocks, so references read values already computed and nothing recurses
through the configuration.
"""

from __future__ import annotations

import math

import posixpath
from dataclasses import field
from typing import Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.cloud import CloudResource, ModuleCall, ProviderConfig, TerraformModel
from mlcost_lint.model.core import UNKNOWN, Location, contains_unknown
from mlcost_lint.model.terraform import refs as R
from mlcost_lint.model.terraform import tags as T
from mlcost_lint.model.terraform.evaluator import (
    Budget, BudgetExceeded, Evaluator, ValueTooLarge, Scope, block_references, bounded, references,
)
from mlcost_lint.model.terraform.types import ANY, convert, is_complex, parse_type
from mlcost_lint.model.terraform.values import EvalError, ResourceValue, to_number, to_string
from mlcost_lint.parse import hcl as H

META_ARGUMENTS = frozenset({"count", "for_each", "provider", "depends_on"})
META_BLOCKS = frozenset({"lifecycle", "provisioner", "connection"})
MODULE_META = frozenset({"source", "version", "count", "for_each", "providers", "depends_on"})
UNKNOWN_KEY = "*"   # instance key when count/for_each is unknown
MAX_INSTANCES = 10_000


# ---------------------------------------------------------------------------
# Declarations of one module directory
# ---------------------------------------------------------------------------

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


def _ref_key(expr: Any) -> str | None:
    """``aws.west`` written as a traversal (or a string in JSON) -> "aws.west"."""
    if isinstance(expr, H.Traversal) and expr.source is None:
        names = [expr.root] + [s.name for s in expr.steps if isinstance(s, H.GetAttr)]
        return ".".join(names)
    if isinstance(expr, H.Literal) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, H.Template) and len(expr.parts) == 1:
        return _ref_key(expr.parts[0])
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


# ---------------------------------------------------------------------------
# Evaluating one module instance
# ---------------------------------------------------------------------------

@dataclass(slots=True)
class Input:
    value: Any
    from_default: bool      # the value comes (transitively) from a variable default
    ref: Any = None         # reference shadow (refs.py): the caller's resources it comes from
    location: Location | None = None   # the caller's argument that passes it


def prepare_nothing(source: ModuleSource) -> None:
    """Build.prepare when no one prepares sources lazily (and once the roots are done)."""
    return None


class Build:
    """State shared by the whole build: sources, budget, results."""

    def __init__(self, sources: dict[str, ModuleSource], budget: Budget, model: TerraformModel,
                 root_dir_of: dict[str, str]) -> None:
        self.sources = sources
        self.budget = budget
        self.evaluator = Evaluator(budget)
        self.model = model
        self.root_dir_of = root_dir_of
        self.provider_locations: set = set()
        self.budget_reported = False
        self.emitting = True
        self.touched: set[str] = set()   # module directories looked up (root_cache.py)
        # prepares a source before its first instance (model/terraform _Roots._prepare)
        self.prepare: Callable[[ModuleSource], None] = prepare_nothing

    def diagnostic(self, loc: Location, message: str) -> None:
        if self.emitting:
            self.model.diagnostics.append((loc, message))

    def budget_hit(self, loc: Location) -> None:
        if not self.budget_reported:
            self.budget_reported = True
            self.model.diagnostics.append((loc, (
                f"Terraform evaluation stopped after {self.budget.limit} steps "
                "(max-evaluation-steps); remaining values are unknown")))


# Numbers past this are no real setting; rules convert numbers to float.
_MAX_MODEL_INT = 2 ** 63


def _wild(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return abs(v) >= _MAX_MODEL_INT
    return isinstance(v, float) and not math.isfinite(v)


def _has_wild_number(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif _wild(v):
            return True
    return False


def _tame_numbers(value: Any) -> Any:
    """``value`` with every infinite, NaN or over-2^63 number UNKNOWN."""
    if isinstance(value, dict):
        return type(value)({k: _tame_numbers(v) for k, v in value.items()}) if type(value) is dict \
            else _tame_map(value)
    if isinstance(value, list):
        return [_tame_numbers(v) for v in value]
    return UNKNOWN if _wild(value) else value


def _tame_map(value: dict) -> dict:
    out = type(value)()
    for k, v in value.items():
        out[k] = _tame_numbers(v)
    return out


class ModuleInstance:
    def __init__(self, build: Build, source: ModuleSource, inputs: dict[str, Input],
                 providers: dict[str, ProviderConfig], prefix: str, calls: tuple,
                 stack: tuple, root_dir: str) -> None:
        self.build = build
        self.source = source
        self.inputs = inputs
        self.providers = dict(providers)
        self.prefix = prefix
        self.calls = calls
        self.stack = stack
        self.ev = build.evaluator
        self.defaulted: set[str] = set()
        self.vars: dict[str, Any] = {}
        self.locals: dict[str, Any] = {}
        self.modules: dict[str, Any] = {}
        self.resource_values: dict[str, dict] = {}
        self.emitted: dict[tuple, list[CloudResource]] = {}
        self.roots: dict[str, Any] = {
            "var": self.vars, "local": self.locals, "module": self.modules, "data": UNKNOWN,
            "path": {"module": source.dir, "root": root_dir, "cwd": "."},
            "terraform": {"workspace": "default"},
        }
        # Reference shadows of the same names, filled as each value is evaluated.
        self.var_refs = R.RMap()
        self.local_refs = R.RMap()
        self.module_refs = R.RMap()
        self.output_refs = R.RMap()
        self.ref_roots: dict[str, Any] = {
            "var": self.var_refs, "local": self.local_refs, "module": self.module_refs,
            "data": _data_refs(source, prefix),
        }
        self.scope = Scope(self.roots, ref_roots=self.ref_roots)

    # -- helpers ------------------------------------------------------------
    def value(self, expr: Any, scope: Scope | None = None, loc: Location | None = None) -> Any:
        """One top-level value (argument, local, output): UNKNOWN on any problem."""
        return self.value_and_ref(expr, scope, loc)[0]

    def value_and_ref(self, expr: Any, scope: Scope | None = None,
                      loc: Location | None = None) -> tuple[Any, Any]:
        """:meth:`value` and its reference shadow (refs.py), from the same evaluation."""
        budget = self.build.budget
        budget.start_value()
        try:
            result = self.ev.evaluate(expr, scope or self.scope)
        except BudgetExceeded as exc:
            where = loc or Location(self.source.dir)
            if isinstance(exc, ValueTooLarge):
                self.build.diagnostic(where, f"value is too large to model: {exc.what}; treated as unknown")
            elif exc.whole:
                self.build.budget_hit(where)
            else:
                self.build.diagnostic(where, (
                    f"value needs more than {budget.node_limit} evaluation steps "
                    "(a twentieth of max-evaluation-steps): treated as unknown"))
            return UNKNOWN, None
        if type(result) is str:    # most values: nothing to bound or tame
            return result, self.ev.ref
        if not bounded(result):
            self.build.diagnostic(loc or Location(self.source.dir),
                                  "value is too large to model (over 200000 elements): treated as unknown")
            return UNKNOWN, None
        if _has_wild_number(result):
            # count = 1e999, a 400-digit retention: unknown for this value only,
            # never an overflow inside a rule (issue 16, item 12).
            result = _tame_numbers(result)
        return result, self.ev.ref

    def var_deps(self, expr: Any) -> set[str]:
        deps: set[str] = set()
        for root, attr in references(expr):
            if root == "var" and attr:
                deps.add(attr)
            elif root == "local" and attr in self.source.local_vars:
                deps |= self.source.local_vars[attr]
        return deps

    # -- run ----------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        self._variables()
        src = self.source
        for key in src.resource_types:
            self.roots[key] = {}
            self.ref_roots[key] = R.RMap()
        order = src.order
        i = 0
        while i < len(order):
            key = order[i]
            scc = src.cyclic.get(key)
            if scc is None:
                self._node(key)
                i += 1
                continue
            j = i
            while j < len(order) and src.cyclic.get(order[j]) == scc:
                j += 1
            self._cycle(order[i:j])
            i = j
        return self._outputs()

    def _variables(self) -> None:
        for name, (blk, path) in self.source.variables.items():
            spec = self.source.var_types.get(name, ANY)
            given = self.inputs.get(name)
            if given is not None:
                raw = given.value
                if given.from_default:
                    self.defaulted.add(name)
                if given.ref is not None:
                    self.var_refs[name] = given.ref
            elif "default" in blk.attributes:
                raw = self.value(blk.attributes["default"].expr, Scope({}))
                # Feature flags are a root module's variable defaults only: in a
                # child called from the scan, an input the caller does not pass is
                # judged by its default (rules.md, "Resources behind a feature flag").
                if not self.prefix:
                    self.defaulted.add(name)
            else:
                raw = UNKNOWN
            try:
                self.vars[name] = convert(raw, spec, lambda e: self.value(e, Scope({})))
            except (EvalError, RecursionError):
                self.vars[name] = UNKNOWN

    def _cycle(self, keys: list) -> None:
        if all(k[0] == "local" for k in keys):
            names = ", ".join(f"local.{k[1]}" for k in keys)
            for k in keys:
                self.locals[k[1]] = UNKNOWN
            attr, path = self.source.locals[keys[0][1]]
            self.build.diagnostic(Location(path, attr.line, attr.column),
                                  f"circular reference between {names}: value is unknown")
            return
        # A cycle through module calls or resources is often only a cycle at our
        # granularity (Terraform orders single outputs): evaluate twice, emit once.
        for k in keys:
            self._placeholder(k)
        emitting = self.build.emitting
        self.build.emitting = False
        mark = len(self.build.model.resources)
        for k in keys:
            self._node(k)
        del self.build.model.resources[mark:]
        self.build.emitting = emitting
        for k in keys:
            self._node(k)

    def _placeholder(self, key: tuple) -> None:
        kind = key[0]
        if kind == "local":
            self.locals[key[1]] = UNKNOWN
            self.local_refs.pop(key[1], None)
        elif kind == "module":
            self.modules[key[1]] = UNKNOWN
            self.module_refs.pop(key[1], None)
        elif kind == "resource":
            self.roots[key[1]][key[2]] = UNKNOWN
            self.ref_roots[key[1]].pop(key[2], None)

    def _node(self, key: tuple) -> None:
        kind = key[0]
        if kind == "local":
            attr, path = self.source.locals[key[1]]
            value, ref = self.value_and_ref(attr.expr, loc=Location(path, attr.line, attr.column))
            self.locals[key[1]] = value
            if ref is not None:
                self.local_refs[key[1]] = ref
            else:
                self.local_refs.pop(key[1], None)
        elif kind == "resource":
            self._resource(self.source.decls[key])
        elif kind == "module":
            self._module_call(self.source.decls[key])
        elif kind == "provider":
            blk, path = self.source.decls[key]
            self._provider(blk, path)

    # -- providers ----------------------------------------------------------
    def _provider(self, blk: H.Block, path: str) -> None:
        name = blk.labels[0]
        key = provider_key(blk)
        alias = key.split(".", 1)[1] if "." in key else None
        loc = Location(path, blk.line, blk.column, blk.end_line)
        attrs, _ = self.body(blk, self.scope, path, "")
        region = attrs.get("region", UNKNOWN)
        region = region if (region is UNKNOWN or isinstance(region, str)) else UNKNOWN
        zone = attrs.get("zone")
        if name in ("google", "google-beta") and region is UNKNOWN and isinstance(zone, str):
            region = zone_region(zone)
        default_tags: Any = None
        if name == "aws":
            dt = attrs.get("default_tags")
            if isinstance(dt, list) and dt:
                first = dt[0]
                default_tags = first.get("tags", {}) if isinstance(first, dict) else UNKNOWN
                if default_tags is None:
                    default_tags = {}
            elif dt is UNKNOWN:
                default_tags = UNKNOWN
        elif name in ("google", "google-beta"):
            default_tags = attrs.get("default_labels")
        if default_tags is not None and default_tags is not UNKNOWN and not isinstance(default_tags, dict):
            default_tags = UNKNOWN
        config = ProviderConfig(name=name, alias=alias, location=loc, region=region,
                                default_tags=default_tags)
        config.zone = zone if isinstance(zone, str) else (UNKNOWN if zone is UNKNOWN else None)
        config.module_calls = self.calls
        self.providers[key] = config
        if self.build.emitting and (loc, self.calls) not in self.build.provider_locations:
            self.build.provider_locations.add((loc, self.calls))
            self.build.model.providers.append(config)

    def provider_for(self, blk: H.Block, rtype: str) -> tuple[str, ProviderConfig | None]:
        attr = blk.attributes.get("provider")
        key = _ref_key(attr.expr) if attr is not None else None
        if key is None:
            key = rtype.split("_", 1)[0]
        return key, self.providers.get(key)

    # -- count / for_each ---------------------------------------------------
    def instances(self, blk: H.Block, loc: Location) -> tuple[str, list[tuple[Any, dict]], Any]:
        """("single"|"count"|"for_each"|"unknown", [(key, names), ...], for_each's
        reference shadow: what ``each.value`` of each key refers to)."""
        count_attr = blk.attributes.get("count")
        each_attr = blk.attributes.get("for_each")
        if count_attr is not None:
            raw = self.value(count_attr.expr, loc=loc)
            try:
                n = to_number(raw)
            except EvalError:
                n = UNKNOWN
            if n is UNKNOWN or not isinstance(n, int) or n < 0:
                return "unknown", [(UNKNOWN_KEY, {"count": {"index": UNKNOWN}})], None
            if n == 0:
                flags = self.var_deps(count_attr.expr) & self.defaulted
                if flags:
                    return "count", [(0, {"count": {"index": 0}, **self._flags_unknown(flags)})], None
                return "count", [], None
            n = min(n, MAX_INSTANCES)
            return "count", [(i, {"count": {"index": i}}) for i in range(n)], None
        if each_attr is not None:
            raw, each_ref = self.value_and_ref(each_attr.expr, loc=loc)
            pairs: list[tuple[str, Any]] | None = None
            if isinstance(raw, dict):
                pairs = [(k, raw[k]) for k in sorted(raw)]
            elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
                pairs = [(k, k) for k in sorted(set(raw))]
            if pairs is None:
                return "unknown", [(UNKNOWN_KEY, {"each": {"key": UNKNOWN, "value": UNKNOWN}})], R.any_key(each_ref)
            if not pairs:
                flags = self.var_deps(each_attr.expr) & self.defaulted
                if flags:
                    return "for_each", [(UNKNOWN_KEY, {"each": {"key": UNKNOWN, "value": UNKNOWN},
                                                       **self._flags_unknown(flags)})], None
                return "for_each", [], None
            return "for_each", [(k, {"each": {"key": k, "value": v}}) for k, v in pairs[:MAX_INSTANCES]], each_ref
        return "single", [(None, {})], None

    def _input_locations(self, blk: H.Block) -> dict[str, Location]:
        """In a child module: argument path -> where its caller can change it.
        An argument that reads a module variable is set by the call: the
        caller's argument for that variable, or the module block when the
        caller does not pass it (rules.md, "Where a finding about a child
        module's resource lands"). Top-level arguments and those of directly
        nested blocks."""
        if not self.prefix or not self.calls:
            return {}
        out: dict[str, Location] = {}
        for path, attr in _argument_paths(blk):
            names = sorted(n for n in self.var_deps(attr.expr) if n in self.source.variables)
            if not names:
                continue
            passed = [self.inputs[n].location for n in names
                      if n in self.inputs and self.inputs[n].location is not None]
            out[path] = passed[0] if passed else self.calls[-1]
        return out

    def _flags_unknown(self, flags: set[str]) -> dict[str, Any]:
        """The ``var`` binding of an instance linted as if its feature flag were
        on: the variables that switched it off are unknown inside it. Their
        defaults are what made it absent, so reading them there would invent
        values (``try(var.versioning["enabled"] ...)`` over the default ``{}``
        falls through to "Enabled")."""
        return {"var": {**self.vars, **{name: UNKNOWN for name in flags}}}

    def _instance_scope(self, names: dict, each_ref: Any, key: Any) -> Scope:
        if not names:
            return self.scope
        refs = _each_refs(each_ref, key) if each_ref is not None else None
        if "var" in names:   # keep what variables refer to (see _flags_unknown)
            refs = {**(refs or {}), "var": self.var_refs}
        return self.scope.child(names, refs)

    # -- blocks -------------------------------------------------------------
    def body(self, blk: H.Block, scope: Scope, path: str, prefix: str,
             top: bool = True, refs: dict | None = None) -> tuple[dict, dict]:
        """Arguments and nested blocks in plan-JSON shape, with locations.
        ``refs`` (when given) receives each argument's referenced resource
        addresses by dotted path, from the same evaluation."""
        attrs: dict[str, Any] = {}
        locs: dict[str, Location] = {}
        for name, attr in blk.attributes.items():
            if top and name in META_ARGUMENTS:
                continue
            attrs[name], ref = self.value_and_ref(attr.expr, scope, Location(path, attr.line, attr.column))
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
                self._dynamic(sub, scope, path, prefix, attrs, locs, refs)
                continue
            self._add_block(sub.type, sub, scope, path, prefix, attrs, locs, refs)
        return attrs, locs

    def _add_block(self, btype: str, sub: H.Block, scope: Scope, path: str, prefix: str,
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
        inner, inner_locs = self.body(sub, scope, path, inner_prefix, top=False, refs=inner_refs)
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

    def _dynamic(self, sub: H.Block, scope: Scope, path: str, prefix: str,
                 attrs: dict, locs: dict, refs: dict | None = None) -> None:
        label = sub.labels[0]
        loc = Location(path, sub.line, sub.column, sub.end_line)
        each = sub.attributes.get("for_each")
        iterator = label
        if "iterator" in sub.attributes:
            iterator = _ref_key(sub.attributes["iterator"].expr) or label
        content = next((b for b in sub.blocks if b.type == "content"), None)
        if each is None or content is None:
            return
        coll, coll_ref = self.value_and_ref(each.expr, scope, loc)
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
            self._add_block(label, content, inner_scope, path, prefix, attrs, locs, refs)
        if not pairs:
            attrs.setdefault(label, [])

    # -- resources ----------------------------------------------------------
    def _resource(self, d: Decl) -> None:
        loc = d.location
        mode, insts, each_ref = self.instances(d.block, loc)
        provider_ref, config = self.provider_for(d.block, d.type)
        values: dict[Any, Any] = {}
        made: list[CloudResource] = []
        for key, names in insts:
            scope = self._instance_scope(names, each_ref, key)
            refs: dict[str, tuple[str, ...]] = {}
            attrs, locs = self.body(d.block, scope, d.path, "", refs=refs)
            address = self.prefix + f"{d.type}.{d.name}" + instance_suffix(key)
            res = CloudResource(
                type=d.type, name=d.name, address=address, provider=d.type.split("_", 1)[0],
                location=loc, attrs=attrs, attr_locations=locs, module_calls=self.calls,
                references=refs,
            )
            res.provider_key = provider_ref
            res.input_locations = self._input_locations(d.block)
            apply_region(res, config)
            made.append(res)
            values[key] = ResourceValue(attrs)
        # GKE node pools take their cluster's labels: resolved once all resources exist
        for res in made:
            T.apply_tags(res, config, self)
            if d.type == "google_container_node_pool" and res.attrs.get("location") is None:
                attr = d.block.attributes.get("cluster")
                cluster = self.cluster_resource(attr.expr if attr else None, res.attrs.get("cluster"))
                if cluster is not None:
                    res.region, res.zone = cluster.region, cluster.zone
        if mode == "single":
            self.roots[d.type][d.name] = values.get(None, UNKNOWN)
        elif mode == "count":
            self.roots[d.type][d.name] = [values[k] for k, _ in insts]
        elif mode == "for_each" and not (insts and insts[0][0] == UNKNOWN_KEY):
            self.roots[d.type][d.name] = {k: values[k] for k, _ in insts}
        else:
            self.roots[d.type][d.name] = UNKNOWN
        self.ref_roots[d.type][d.name] = _resource_shadow(
            self.prefix + f"{d.type}.{d.name}", mode, [k for k, _ in insts])
        self.emitted[(d.type, d.name)] = made
        if self.build.emitting:
            self.build.model.resources.extend(made)

    # -- module calls -------------------------------------------------------
    def _module_call(self, d: Decl) -> None:
        from mlcost_lint.model.terraform import registry

        blk = d.block
        loc = d.location
        src_attr = blk.attributes.get("source")
        source = src_attr.expr.value if src_attr is not None and isinstance(src_attr.expr, H.Literal) else None
        mode, insts, each_ref = self.instances(blk, loc)
        child_providers = self._child_providers(blk)
        if self.build.emitting:
            self.build.model.module_calls.append(ModuleCall(
                self.prefix + f"module.{d.name}", source if isinstance(source, str) else None, loc))
        outputs: dict[Any, Any] = {}
        output_refs: dict[Any, Any] = {}
        child_dir = None
        if isinstance(source, str) and (source.startswith("./") or source.startswith("../")):
            child_dir = posixpath.normpath(posixpath.join(self.source.dir, source))
        for key, names in insts:
            scope = self._instance_scope(names, each_ref, key)
            inputs: dict[str, Input] = {}
            arg_exprs: dict[str, H.Attribute] = {}
            for name, attr in blk.attributes.items():
                if name in MODULE_META:
                    continue
                value, ref = self.value_and_ref(attr.expr, scope, Location(d.path, attr.line, attr.column))
                inputs[name] = Input(value, bool(self.var_deps(attr.expr) & self.defaulted), ref,
                                     Location(d.path, attr.line, attr.column, attr.end_line))
                arg_exprs[name] = attr
            prefix = self.prefix + f"module.{d.name}" + instance_suffix(key)
            calls = self.calls + (loc,)
            if child_dir is not None:
                outputs[key], output_refs[key] = self._local_child(
                    d, child_dir, inputs, child_providers, prefix, calls)
            else:
                made = registry.synthesize(source, inputs, arg_exprs, self, d, prefix, calls, child_providers)
                if made is not None and self.build.emitting:
                    self.build.model.resources.extend(made)
                outputs[key] = UNKNOWN
        if mode == "single":
            self.modules[d.name] = outputs.get(None, UNKNOWN)
            shadow = output_refs.get(None)
        elif mode == "count":
            self.modules[d.name] = [outputs[k] for k, _ in insts]
            shadow = R.RInstances([output_refs.get(k) for k, _ in insts])
        elif mode == "for_each" and not (insts and insts[0][0] == UNKNOWN_KEY):
            self.modules[d.name] = {k: outputs[k] for k, _ in insts}
            shadow = R.RInstances({k: output_refs[k] for k, _ in insts if output_refs.get(k) is not None})
        else:
            self.modules[d.name] = UNKNOWN
            # one evaluation stands for every instance: any key refers to its outputs
            shadow = R.RInstances({}, output_refs.get(UNKNOWN_KEY)) if output_refs.get(UNKNOWN_KEY) else None
        if shadow is not None:
            self.module_refs[d.name] = shadow
        else:
            self.module_refs.pop(d.name, None)

    def _local_child(self, d: Decl, child_dir: str, inputs: dict, providers: dict,
                     prefix: str, calls: tuple) -> tuple[Any, Any]:
        """The child instance's outputs and their reference shadow."""
        self.build.touched.add(child_dir)
        source = self.build.sources.get(child_dir)
        if source is None:
            return UNKNOWN, None   # not in the scan: its outputs are unknown
        self.build.prepare(source)
        if child_dir in self.stack:
            self.build.diagnostic(d.location, (
                f"module {d.name!r} is recursive (source {child_dir} is already being evaluated): "
                "not evaluated again"))
            return UNKNOWN, None
        child = ModuleInstance(self.build, source, inputs, providers, prefix + ".", calls,
                               self.stack + (child_dir,), self.roots["path"]["root"])
        outputs = child.run()
        return outputs, (child.output_refs or None)

    def _child_providers(self, blk: H.Block) -> dict[str, ProviderConfig]:
        # default (unaliased) configurations are inherited; `providers` maps the rest
        inherited = {k: v for k, v in self.providers.items() if "." not in k}
        attr = blk.attributes.get("providers")
        if attr is not None and isinstance(attr.expr, H.ObjectExpr):
            for item in attr.expr.items:
                child_key = _ref_key(item.key) if not isinstance(item.key, H.Parenthesis) else None
                parent_key = _ref_key(item.value)
                if child_key and parent_key and parent_key in self.providers:
                    inherited[child_key] = self.providers[parent_key]
        return inherited

    def _outputs(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, (attr, path) in self.source.outputs.items():
            out[name], ref = self.value_and_ref(attr.expr, loc=Location(path, attr.line, attr.column))
            if ref is not None:
                self.output_refs[name] = ref
        return out

    def cluster_resource(self, expr: Any, value: Any = None) -> CloudResource | None:
        """The google_container_cluster a node pool's ``cluster`` argument
        refers to (a reference, or the cluster's literal name), if in this module."""
        if isinstance(expr, H.Traversal) and expr.source is None and expr.root == "google_container_cluster" \
                and expr.steps and isinstance(expr.steps[0], H.GetAttr):
            made = self.emitted.get(("google_container_cluster", expr.steps[0].name))
            return made[0] if made else None
        if isinstance(value, str):
            for (rtype, _), made in self.emitted.items():
                if rtype == "google_container_cluster":
                    for r in made:
                        if r.attrs.get("name") == value:
                            return r
        return None

    def cluster_tags(self, expr: Any, value: Any = None) -> Any:
        cluster = self.cluster_resource(expr, value)
        return cluster.tags if cluster is not None else UNKNOWN


def _argument_paths(blk: H.Block) -> list[tuple[str, H.Attribute]]:
    paths = [(name, attr) for name, attr in blk.attributes.items() if name not in META_ARGUMENTS]
    for inner in blk.blocks:
        if inner.type in ("dynamic", "lifecycle", "provisioner", "connection"):
            continue
        paths.extend((f"{inner.type}.{name}", attr) for name, attr in inner.attributes.items())
    return paths


def _each_refs(each_ref: Any, key: Any) -> dict | None:
    """``each.value``'s shadow for one instance of a for_each over references."""
    if each_ref is None:
        return None
    element = R.get(each_ref, key) if key != UNKNOWN_KEY else R.any_key(each_ref)
    return {"each": R.RMap(value=element)} if element is not None else None


def _resource_shadow(base: str, mode: str, keys: list) -> Any:
    """What a reference to a resource refers to: each instance's address, or
    the whole resource (``base``) where the instance cannot be known."""
    whole = frozenset((base,))
    if mode == "single":
        return whole
    if mode == "count":
        return R.RInstances([frozenset((base + instance_suffix(k),)) for k in keys], whole)
    if mode == "for_each" and not (keys and keys[0] == UNKNOWN_KEY):
        return R.RInstances({k: frozenset((base + instance_suffix(k),)) for k in keys}, whole)
    return whole


def _data_refs(source: ModuleSource, prefix: str) -> R.RMap:
    """``data.TYPE.NAME`` of the module's data sources, by address (data
    sources are not evaluated: a reference to one names something outside
    the scan's managed resources)."""
    out = R.RMap()
    for d in source.data:
        out.setdefault(d.type, R.RMap())[d.name] = frozenset((f"{prefix}data.{d.type}.{d.name}",))
    return out


def instance_suffix(key: Any) -> str:
    if key is None:
        return ""
    if isinstance(key, int):
        return f"[{key}]"
    if key == UNKNOWN_KEY:
        return "[*]"
    return '["' + str(key).replace("\\", "\\\\").replace('"', '\\"') + '"]'


def _object_locations(expr: H.ObjectExpr, path: str, prefix: str, locs: dict, depth: int = 0) -> None:
    if depth > 8:
        return
    for item in expr.items:
        if isinstance(item.key, H.Literal) and isinstance(item.key.value, str):
            key = prefix + item.key.value
            locs.setdefault(key, Location(path, item.line, item.column))
            if isinstance(item.value, H.ObjectExpr):
                _object_locations(item.value, path, key + ".", locs, depth + 1)


# ---------------------------------------------------------------------------
# Regions
# ---------------------------------------------------------------------------

GCS_MULTI_REGIONS = frozenset({"US", "EU", "ASIA", "NAM4", "EUR4", "EUR5", "EUR7", "EUR8", "ASIA1"})


def zone_region(zone: str) -> str:
    """"us-central1-a" -> "us-central1"."""
    parts = zone.rsplit("-", 1)
    if len(parts) == 2 and len(parts[1]) == 1 and any(c.isdigit() for c in parts[0]):
        return parts[0]
    return zone


def _is_zone(value: str) -> bool:
    parts = value.rsplit("-", 1)
    return len(parts) == 2 and len(parts[1]) == 1 and parts[1].isalpha() and any(c.isdigit() for c in parts[0])


def apply_region(res: CloudResource, config: ProviderConfig | None) -> None:
    provider = res.provider
    attrs = res.attrs
    provider_region = config.region if config is not None else UNKNOWN
    if provider == "aws":
        region = attrs.get("region")   # AWS provider v6 resource-level region
        res.region = region if isinstance(region, str) or region is UNKNOWN else provider_region
        if region is None:
            res.region = provider_region
    elif provider == "google":
        res.region, res.zone = _google_region(res, config)
    elif provider == "azurerm":
        location = attrs.get("location")
        if isinstance(location, str):
            res.region = location.replace(" ", "").lower()
        else:
            res.region = UNKNOWN
    else:
        res.region = UNKNOWN
    if res.region is None:
        res.region = UNKNOWN


def _google_region(res: CloudResource, config: ProviderConfig | None) -> tuple[Any, Any]:
    attrs = res.attrs
    for name in ("location", "zone", "region"):
        if name not in attrs or attrs[name] is None:
            continue
        value = attrs[name]
        if value is UNKNOWN or not isinstance(value, str):
            return UNKNOWN, UNKNOWN if name != "region" else None
        if res.type == "google_storage_bucket" and name == "location":
            upper = value.upper()
            if upper in GCS_MULTI_REGIONS or "-" not in value:
                return upper, None
            return value.lower(), None
        if _is_zone(value):
            return zone_region(value), value
        return value.lower(), None
    if config is None:
        return UNKNOWN, None
    zone = getattr(config, "zone", None)
    region = config.region
    if region is UNKNOWN and isinstance(zone, str):
        region = zone_region(zone)
    return region, zone if isinstance(zone, str) else None


__all__ = ["Build", "Decl", "Input", "ModuleInstance", "ModuleSource", "prepare", "zone_region",
           "apply_region", "instance_suffix", "contains_unknown", "is_complex", "to_string"]
