"""`terraform show -json` output (plan or state) to CloudResources.

Resources come from ``planned_values`` (or ``values`` for a state), root
module and child modules recursively; values Terraform marks unknown in
``resource_changes[].change.after_unknown`` are UNKNOWN. Providers come from
``configuration.provider_config`` (constant expressions only). Locations
point at each resource's object in the plan file.
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
            from mlcost_lint.model.terraform.builder import zone_region

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
    from mlcost_lint.model.terraform.builder import apply_region
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
