"""Terraform configuration to CloudResources: modules, variables, locals,
count/for_each, dynamic blocks, providers, regions and cost tags.

Each module directory is prepared once (declarations, dependency order:
declarations.py); each module call evaluates it again with the call's
inputs, as one :class:`ModuleInstance`. Evaluation follows a topological
order of locals, resources, module calls and provider blocks, so references
read values already computed and nothing recurses through the
configuration. A block's arguments become plan-JSON shaped values in
blocks.py, instance addresses and what references point at in addresses.py,
regions in regions.py.
"""

from __future__ import annotations

import math

import posixpath
from typing import Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.cloud import CloudResource, ModuleCall, ProviderConfig, TerraformModel
from mlcost_lint.model.core import UNKNOWN, Location, contains_unknown
from mlcost_lint.model.terraform import refs as R
from mlcost_lint.model.terraform import tags as T
from mlcost_lint.model.terraform.addresses import UNKNOWN_KEY, data_refs, each_refs, instance_suffix, resource_shadow
from mlcost_lint.model.terraform.blocks import argument_paths, block_body
from mlcost_lint.model.terraform.budget import Budget
from mlcost_lint.model.terraform.declarations import Decl, ModuleSource, provider_key, ref_key
from mlcost_lint.model.terraform.dependencies import references
from mlcost_lint.model.terraform.evaluator import BudgetExceeded, Evaluator, ValueTooLarge, Scope, bounded
from mlcost_lint.model.terraform.regions import apply_region, zone_region
from mlcost_lint.model.terraform.types import ANY, convert, is_complex
from mlcost_lint.model.terraform.values import EvalError, ResourceValue, to_number, to_string
from mlcost_lint.parse import hcl as H

MODULE_META = frozenset({"source", "version", "count", "for_each", "providers", "depends_on"})
MAX_INSTANCES = 10_000


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
            "data": data_refs(source, prefix),
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
        attrs, _ = block_body(self, blk, self.scope, path, "")
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
        key = ref_key(attr.expr) if attr is not None else None
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
        for path, attr in argument_paths(blk):
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
        refs = each_refs(each_ref, key) if each_ref is not None else None
        if "var" in names:   # keep what variables refer to (see _flags_unknown)
            refs = {**(refs or {}), "var": self.var_refs}
        return self.scope.child(names, refs)

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
            attrs, locs = block_body(self, d.block, scope, d.path, "", refs=refs)
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
        self.ref_roots[d.type][d.name] = resource_shadow(
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
                child_key = ref_key(item.key) if not isinstance(item.key, H.Parenthesis) else None
                parent_key = ref_key(item.value)
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


__all__ = ["Build", "Input", "ModuleInstance", "contains_unknown", "is_complex", "to_string"]
