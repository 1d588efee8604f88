"""`terraform show -json` output (plan or state) to CloudResources.

Resources come from ``planned_values`` (or ``values`` for a state), root
module and child modules recursively; values Terraform marks unknown in
``resource_changes[].change.after_unknown`` are UNKNOWN. Providers come from
``configuration.provider_config`` (constant expressions only). Locations
point at each resource's object in the plan file.

``CloudResource.references`` come from ``configuration``: each argument's
``expressions.*.references``, followed through ``var.*`` to the module call's
argument in the parent and through ``module.*.<output>`` to the child's
output, and mapped from configuration addresses to ``planned_values``
instance addresses. Terraform lists every reference an expression mentions
(not only the ones its value is taken from), so for plans a reference
inside a larger string counts too.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.cloud import CloudResource, ProviderConfig, TerraformModel
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.parse.document import Document


def _const(expressions: Any, name: str) -> Any:
    if not isinstance(expressions, dict) or name not in expressions:
        return None
    e = expressions[name]
    if isinstance(e, dict):
        if "constant_value" in e:
            return e["constant_value"]
        return UNKNOWN   # references: not evaluated in the plan's configuration
    return UNKNOWN


def _providers(doc: Document, model: TerraformModel) -> dict[str, ProviderConfig]:
    configs: dict[str, ProviderConfig] = {}
    pc = doc.get(("configuration", "provider_config"), {})
    if not isinstance(pc, dict):
        return configs
    for key, spec in pc.items():
        if not isinstance(spec, dict):
            continue
        name = spec.get("name", key.split(".")[0])
        exprs = spec.get("expressions", {})
        region = _const(exprs, "region")
        zone = _const(exprs, "zone")
        default_tags: Any = None
        if name == "aws":
            dt = exprs.get("default_tags") if isinstance(exprs, dict) else None
            if isinstance(dt, list) and dt:
                default_tags = _const(dt[0], "tags")
                if default_tags is None:
                    default_tags = {}
        elif name in ("google", "google-beta"):
            default_tags = _const(exprs, "default_labels")
        if default_tags is not None and default_tags is not UNKNOWN and not isinstance(default_tags, dict):
            default_tags = UNKNOWN
        if region is None:
            region = UNKNOWN
        if region is UNKNOWN and name in ("google", "google-beta") and isinstance(zone, str):
            from mlcost_lint.model.terraform.regions import zone_region

            region = zone_region(zone)
        cfg = ProviderConfig(name=name, alias=spec.get("alias"), location=doc.location(
            ("configuration", "provider_config", key)), region=region, default_tags=default_tags)
        cfg.zone = zone if isinstance(zone, str) else None
        configs[key] = cfg
        model.providers.append(cfg)
    return configs


def _config_keys(doc: Document) -> dict[str, str]:
    """resource address (without instance key) -> provider_config_key."""
    out: dict[str, str] = {}
    stack = [(doc.get(("configuration", "root_module"), {}), "")]
    while stack:
        mod, prefix = stack.pop()
        if not isinstance(mod, dict):
            continue
        for r in mod.get("resources", []) or []:
            if isinstance(r, dict) and isinstance(r.get("address"), str):
                out[prefix + r["address"]] = str(r.get("provider_config_key", ""))
        for name, call in (mod.get("module_calls") or {}).items():
            if isinstance(call, dict):
                stack.append((call.get("module", {}), f"{prefix}module.{name}."))
    return out


def _after_unknown(doc: Document) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rc in doc.data.get("resource_changes", []) or []:
        if isinstance(rc, dict) and isinstance(rc.get("change"), dict):
            au = rc["change"].get("after_unknown")
            if au:
                out[str(rc.get("address"))] = au
    return out


def _mark_unknown(values: Any, unknown: Any) -> Any:
    if unknown is True:
        return UNKNOWN
    if isinstance(unknown, dict) and isinstance(values, dict):
        out = dict(values)
        for k, u in unknown.items():
            out[k] = _mark_unknown(values.get(k), u)
        return out
    if isinstance(unknown, list) and isinstance(values, list):
        return [_mark_unknown(v, unknown[i]) if i < len(unknown) else v for i, v in enumerate(values)]
    if isinstance(unknown, list) and values is None and any(u is True or u for u in unknown):
        return [_mark_unknown(None, u) for u in unknown]
    if isinstance(unknown, dict) and values is None and unknown:
        return {k: _mark_unknown(None, u) for k, u in unknown.items()}
    return values


def _strip_index(address: str) -> str:
    # module.a["x"].aws_s3_bucket.b[0] -> module.a.aws_s3_bucket.b
    out = []
    depth = 0
    for ch in address:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def load_plan(doc: Document, model: TerraformModel) -> None:
    from mlcost_lint.model.terraform.regions import apply_region
    data = doc.data
    configs = _providers(doc, model)
    keys = _config_keys(doc)
    unknowns = _after_unknown(doc)
    top = "planned_values" if isinstance(data.get("planned_values"), dict) else "values"
    stack: list[tuple] = [((top, "root_module"), data.get(top, {}).get("root_module", {}))]
    by_address: dict[str, CloudResource] = {}
    made: list[CloudResource] = []
    while stack:
        path, mod = stack.pop()
        if not isinstance(mod, dict):
            continue
        for i, r in enumerate(mod.get("resources", []) or []):
            if not isinstance(r, dict) or r.get("mode", "managed") != "managed":
                continue
            rtype = str(r.get("type", ""))
            address = str(r.get("address", ""))
            values = r.get("values") if isinstance(r.get("values"), dict) else {}
            if address in unknowns:
                values = _mark_unknown(values, unknowns[address])
            loc = doc.location(path + ("resources", i))
            res = CloudResource(type=rtype, name=str(r.get("name", "")), address=address,
                                provider=rtype.split("_", 1)[0], location=loc, attrs=values,
                                attr_locations=_locations(doc, path + ("resources", i, "values"), values),
                                origin="plan")
            key = keys.get(_strip_index(address), "")
            provider_key = key.split(":")[-1] if key else rtype.split("_", 1)[0]
            config = configs.get(key) or configs.get(provider_key) or configs.get(rtype.split("_", 1)[0])
            res.provider_key = provider_key
            apply_region(res, config)
            _plan_tags(res, config)
            by_address[address] = res
            made.append(res)
        for j, child in enumerate(mod.get("child_modules", []) or []):
            stack.append((path + ("child_modules", j), child))
    _plan_references(doc, made)
    # GKE node pools: their cluster's labels when the cluster is in the plan
    clusters = {r.attrs.get("name"): r for r in made if r.type == "google_container_cluster"}
    for res in made:
        if res.type == "google_container_node_pool":
            cluster = clusters.get(res.attrs.get("cluster"))
            own = res.get("node_config.resource_labels")
            from mlcost_lint.model.terraform.tags import _merge_over

            res.tags_attribute = "node_config.resource_labels"
            res.tags = _merge_over(cluster.tags if cluster is not None else UNKNOWN, own)
    made.sort(key=lambda r: (r.location.line, r.address))
    model.resources.extend(made)


def _plan_tags(res: CloudResource, config: ProviderConfig | None) -> None:
    from mlcost_lint.model.terraform.tags import apply_tags

    attrs = res.attrs
    # The plan already holds the effective sets: tags_all (AWS), terraform_labels (Google).
    if res.provider == "aws" and "tags_all" in attrs and res.type != "aws_autoscaling_group":
        res.tags_attribute = "tags"
        tags_all = attrs.get("tags_all")
        res.tags = tags_all if isinstance(tags_all, dict) or tags_all is UNKNOWN else {}
        return
    if res.provider == "google" and "terraform_labels" in attrs and res.type not in (
            "google_container_cluster", "google_container_node_pool"):
        res.tags_attribute = "labels"
        labels = attrs.get("terraform_labels")
        res.tags = labels if isinstance(labels, dict) or labels is UNKNOWN else {}
        return
    apply_tags(res, config, None)


def _locations(doc: Document, base: tuple, values: Any) -> dict[str, Location]:
    out: dict[str, Location] = {}
    if not isinstance(values, dict):
        return out
    for k, v in values.items():
        pos = doc.position(base + (k,))
        if pos is not None:
            out[k] = Location(doc.path, pos[0], pos[1])
        if isinstance(v, list) and v and isinstance(v[0], dict):
            for kk in v[0]:
                p2 = doc.position(base + (k, 0, kk))
                if p2 is not None:
                    out[f"{k}.{kk}"] = Location(doc.path, p2[0], p2[1])
    return out


# ---------------------------------------------------------------------------
# References from the plan's configuration section
# ---------------------------------------------------------------------------

_MAX_HOPS = 32   # var/output hops followed for one reference (cycles are invalid Terraform)
_NOT_RESOURCES = frozenset({"var", "local", "each", "count", "path", "terraform", "self", "module",
                            "data"})


def _tokens(address: str) -> list[tuple[str, str | None]]:
    """``module.m["a.b"].aws_s3_bucket.x[0].id`` ->
    [("module", None), ("m", '"a.b"'), ("aws_s3_bucket", None), ("x", "0"), ("id", None)]."""
    out: list[tuple[str, str | None]] = []
    i, n = 0, len(address)
    name: list[str] = []
    while i < n:
        ch = address[i]
        if ch == ".":
            if name:
                out.append(("".join(name), None))
                name = []
            i += 1
        elif ch == "[":
            j = i + 1
            quoted = False
            while j < n and (quoted or address[j] != "]"):
                if address[j] == '"' and address[j - 1] != "\\":
                    quoted = not quoted
                j += 1
            key = address[i + 1:j]
            if name:
                out.append(("".join(name), key))
                name = []
            elif out and out[-1][1] is None:
                out[-1] = (out[-1][0], key)
            i = j + 1
        else:
            name.append(ch)
            i += 1
    if name:
        out.append(("".join(name), None))
    return out


def _keyed(name: str, key: str | None) -> str:
    return name if key is None else f"{name}[{key}]"


def _expression_leaves(exprs: Any, prefix: str, out: dict[str, list]) -> None:
    """Dotted argument path -> the expression's ``references``; nested blocks
    indexed ("rule.0.filter.prefix") and, for the first block, unindexed."""
    if not isinstance(exprs, dict):
        return
    for name, e in exprs.items():
        if isinstance(e, dict) and e and set(e) <= {"constant_value", "references"}:
            refs = e.get("references")
            if isinstance(refs, list) and refs:
                out.setdefault(prefix + name, [r for r in refs if isinstance(r, str)])
        elif isinstance(e, dict):   # a single nested block
            _block_leaves(name, [e], prefix, out)
        elif isinstance(e, list):
            _block_leaves(name, e, prefix, out)


def _block_leaves(name: str, blocks: list, prefix: str, out: dict[str, list]) -> None:
    for i, blk in enumerate(blocks):
        inner: dict[str, list] = {}
        _expression_leaves(blk, "", inner)
        for path, refs in inner.items():
            out.setdefault(f"{prefix}{name}.{i}.{path}", refs)
            out.setdefault(f"{prefix}{name}.{path}", refs)


class _PlanRefs:
    """Resolves configuration references to planned instance addresses."""

    def __init__(self, doc: Document, planned: set[str]) -> None:
        root = doc.get(("configuration", "root_module"), {})
        self.root = root if isinstance(root, dict) else {}
        self.planned = planned
        self._resources: dict[int, dict[str, dict]] = {}

    def config_resource(self, module: dict, address: str) -> dict | None:
        """The managed resource ``address`` (module-relative) of a configuration module."""
        index = self._resources.get(id(module))
        if index is None:
            index = {}
            for c in module.get("resources", []) or []:
                if isinstance(c, dict) and c.get("mode", "managed") == "managed" \
                        and isinstance(c.get("address"), str):
                    index.setdefault(c["address"], c)
            self._resources[id(module)] = index
        return index.get(address)

    def module(self, names: list[str]) -> dict | None:
        mod = self.root
        for name in names:
            calls = mod.get("module_calls")
            call = calls.get(name) if isinstance(calls, dict) else None
            if not isinstance(call, dict) or not isinstance(call.get("module"), dict):
                return None
            mod = call["module"]
        return mod

    def resolve(self, refs: list[str], mods: list[tuple[str, str | None]], own_key: str | None,
                for_each: Any, hops: int = 0) -> set[str]:
        """Addresses ``refs`` (written in module instance ``mods``) name.
        ``own_key`` is the referrer's each.key/count.index, ``for_each`` its
        for_each expression (for ``each.value``)."""
        if hops > _MAX_HOPS:
            return set()
        prefix = "".join(f"module.{_keyed(n, k)}." for n, k in mods)
        parsed = [_tokens(r) for r in refs]
        roots = {t[0][0] for t in parsed if t}
        # Terraform lists a reference with each shorter form ("aws_s3_bucket.x[\"a\"].id",
        # 'aws_s3_bucket.x["a"]', "aws_s3_bucket.x"): keep the most specific instance.
        resources: dict[tuple[str, str], str | None] = {}
        out: set[str] = set()
        for toks in parsed:
            if not toks:
                continue
            head = toks[0][0]
            if head == "var" and len(toks) >= 2 and mods:
                out |= self._through_var(toks[1][0], mods, hops)
            elif head == "module" and len(toks) >= 3:
                out |= self._through_output(toks[1][0], toks[1][1], toks[2][0], mods, hops)
            elif head == "data" and len(toks) >= 3:
                out.add(f"{prefix}data.{toks[1][0]}.{toks[2][0]}")
            elif head not in _NOT_RESOURCES and len(toks) >= 2:
                key = (head, toks[1][0])
                if toks[1][1] is not None or key not in resources:
                    resources[key] = toks[1][1] if toks[1][1] is not None else resources.get(key)
        # An unindexed reference from an instance whose only other reference is
        # its own each.key / count.index names the instance with the same key.
        same_key = own_key is not None and roots - {"each", "count"} == {t for t, _ in resources} \
            and any(t and (t[0][0], t[1][0] if len(t) > 1 else "") in (("each", "key"), ("count", "index"))
                    for t in parsed)
        for (rtype, rname), key in resources.items():
            base = f"{prefix}{rtype}.{rname}"
            if key is None and same_key and f"{base}[{own_key}]" in self.planned:
                out.add(f"{base}[{own_key}]")
            else:
                out.add(_keyed(base, key))
        if "each" in roots and any(len(t) > 1 and t[0][0] == "each" and t[1][0] == "value" for t in parsed):
            fe_refs = for_each.get("references") if isinstance(for_each, dict) else None
            if isinstance(fe_refs, list) and own_key is not None:
                for whole in self.resolve([r for r in fe_refs if isinstance(r, str)], mods, None, None,
                                          hops + 1):
                    out.add(f"{whole}[{own_key}]" if f"{whole}[{own_key}]" in self.planned else whole)
        return out

    def _through_var(self, var: str, mods: list, hops: int) -> set[str]:
        parent = self.module([n for n, _ in mods[:-1]])
        if parent is None:
            return set()
        call = (parent.get("module_calls") or {}).get(mods[-1][0])
        if not isinstance(call, dict):
            return set()
        expr = (call.get("expressions") or {}).get(var)
        refs = expr.get("references") if isinstance(expr, dict) else None
        if not isinstance(refs, list):
            return set()
        return self.resolve([r for r in refs if isinstance(r, str)], mods[:-1], mods[-1][1],
                            call.get("for_each_expression"), hops + 1)

    def _through_output(self, name: str, key: str | None, output: str, mods: list, hops: int) -> set[str]:
        parent = self.module([n for n, _ in mods])
        call = (parent.get("module_calls") or {}).get(name) if parent is not None else None
        if not isinstance(call, dict) or not isinstance(call.get("module"), dict):
            return set()
        if key is None and ("count_expression" in call or "for_each_expression" in call):
            return set()   # which instance is not written: not followed
        out_expr = (call["module"].get("outputs") or {}).get(output)
        expr = out_expr.get("expression") if isinstance(out_expr, dict) else None
        refs = expr.get("references") if isinstance(expr, dict) else None
        if not isinstance(refs, list):
            return set()
        return self.resolve([r for r in refs if isinstance(r, str)], mods + [(name, key)], None, None,
                            hops + 1)


def _plan_references(doc: Document, made: list[CloudResource]) -> None:
    resolver = _PlanRefs(doc, {r.address for r in made})
    if not resolver.root:
        return   # a state, or a plan without configuration: nothing to follow
    for res in made:
        toks = _tokens(res.address)
        mods: list[tuple[str, str | None]] = []
        i = 0
        while i + 1 < len(toks) and toks[i][0] == "module":
            mods.append(toks[i + 1])
            i += 2
        if len(toks) - i != 2:
            continue
        module = resolver.module([n for n, _ in mods])
        if module is None:
            continue
        config = resolver.config_resource(module, f"{toks[i][0]}.{toks[i + 1][0]}")
        if config is None:
            continue
        leaves: dict[str, list] = {}
        _expression_leaves(config.get("expressions"), "", leaves)
        own_key = toks[i + 1][1]
        for path, refs in leaves.items():
            addresses = resolver.resolve(refs, mods, own_key, config.get("for_each_expression"))
            if addresses:
                res.references[path] = tuple(sorted(addresses))
