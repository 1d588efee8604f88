"""Registry modules that are not downloaded, read from the call's inputs.

terraform-aws-modules/eks/aws: ``eks_managed_node_groups`` ->
aws_eks_node_group, ``self_managed_node_groups`` -> aws_autoscaling_group, the
cluster -> aws_eks_cluster and its control-plane log group.
terraform-google-modules/kubernetes-engine/google (and its submodules):
``node_pools`` -> google_container_node_pool, the cluster ->
google_container_cluster. Azure/aks/azurerm: the default pool
(``agents_*``) and ``node_pools`` -> azurerm_kubernetes_cluster(_node_pool).
terraform-aws-modules/s3-bucket/aws: the bucket (registry_s3.py).

Synthetic resources carry the real resource's plan shape (``scaling_config``,
``node_config``, ``autoscaling`` blocks) and, for convenience, the module's
own input names (``min_size``, ``instance_types``, ``accelerator_type``, ...).
Module defaults are filled in where the module documents them (EKS
``min_size`` 1, ``max_size`` 3, ``desired_size`` 1, 90-day log retention;
GKE ``min_count`` 1, ``max_count`` 100, ``autoscaling`` true,
``machine_type`` e2-medium).
"""

from __future__ import annotations

import re
from typing import Any

from mlcost_lint.model.cloud import CloudResource, ProviderConfig
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.terraform.registry_s3 import s3_bucket
from mlcost_lint.parse import hcl as H

# The registry modules modelled from their inputs, by exact source and
# submodule (rules.md, "Module sources are matched exactly"): a submodule
# that is not listed here (``//modules/karpenter``) is not its root module.
_GKE_CLUSTER_VARIANTS = ("", "modules/private-cluster", "modules/beta-private-cluster",
                         "modules/public-cluster", "modules/beta-public-cluster",
                         "modules/private-cluster-update-variant", "modules/beta-private-cluster-update-variant",
                         "modules/beta-public-cluster-update-variant")
REGISTRY_MODULES: dict[tuple[str, str], str] = {
    ("terraform-aws-modules/eks/aws", ""): "eks",
    ("terraform-aws-modules/eks/aws", "modules/eks-managed-node-group"): "eks-managed-node-group",
    ("terraform-aws-modules/eks/aws", "modules/self-managed-node-group"): "self-managed-node-group",
    **{("terraform-google-modules/kubernetes-engine/google", sub): "gke" for sub in _GKE_CLUSTER_VARIANTS},
    ("azure/aks/azurerm", ""): "aks",
    ("terraform-aws-modules/s3-bucket/aws", ""): "s3-bucket",
}
# GitHub repositories of those modules (git:: / github.com sources).
_REPOSITORIES = {
    "terraform-aws-modules/terraform-aws-eks": "terraform-aws-modules/eks/aws",
    "terraform-google-modules/terraform-google-kubernetes-engine": "terraform-google-modules/kubernetes-engine/google",
    "azure/terraform-azurerm-aks": "azure/aks/azurerm",
    "terraform-aws-modules/terraform-aws-s3-bucket": "terraform-aws-modules/s3-bucket/aws",
}
_HOST_PREFIX = re.compile(r"^(git::)?(https?://|ssh://git@|git@)?(registry\.terraform\.io/|github\.com[/:])?", re.I)


def module_key(source: str) -> tuple[str, str] | None:
    """(registry address, submodule) of a module source, e.g.
    ("terraform-aws-modules/eks/aws", "modules/karpenter"); None for local
    paths and sources that name no registry module."""
    text = source.strip()
    if text.startswith((".", "/")):
        return None
    text = text.split("?", 1)[0]
    text = _HOST_PREFIX.sub("", text)
    base, _, sub = text.partition("//")
    base = base.rstrip("/")
    if base.endswith(".git"):
        base = base[:-4]
    base = base.lower()
    base = _REPOSITORIES.get(base, base)
    if base.count("/") != 2:
        return None
    return base, sub.strip("/")


def synthesize(source: Any, inputs: dict, arg_exprs: dict, instance: Any, decl: Any, prefix: str,
               calls: tuple, providers: dict[str, ProviderConfig]) -> list[CloudResource] | None:
    if not isinstance(source, str):
        return None
    key = module_key(source)
    which = REGISTRY_MODULES.get(key) if key is not None else None
    if which is None:
        return None
    values = {k: v.value for k, v in inputs.items()}
    ctx = _Ctx(values, arg_exprs, instance, decl, prefix, calls, providers)
    if which in ("eks-managed-node-group", "self-managed-node-group"):
        return ctx.eks_single(which)
    if which == "s3-bucket":
        return s3_bucket(ctx)
    return {"eks": ctx.eks, "gke": ctx.gke, "aks": ctx.aks}[which]()


class _Ctx:
    def __init__(self, values: dict, arg_exprs: dict, instance: Any, decl: Any, prefix: str,
                 calls: tuple, providers: dict) -> None:
        self.values = values
        self.arg_exprs = arg_exprs
        self.instance = instance
        self.decl = decl
        self.prefix = prefix
        self.calls = calls
        self.providers = providers
        self.path = decl.path

    # -- helpers ------------------------------------------------------------
    def get(self, name: str, default: Any = None) -> Any:
        value = self.values.get(name, default)
        return default if value is None else value

    def first(self, names: tuple, default: Any = None) -> Any:
        for n in names:
            if n in self.values and self.values[n] is not None:
                return self.values[n]
        return default

    def arg_location(self, name: str) -> Location:
        attr = self.arg_exprs.get(name)
        if attr is None:
            return self.decl.location
        return Location(self.path, attr.line, attr.column, attr.end_line)

    def item_locations(self, arg: str, key: Any, spec: Any = None,
                       defaults_arg: str | None = None, defaults: Any = None) -> dict[str, Location]:
        """Where each field of one map/list entry of a module input is written,
        when the input is written literally (or through one local).

        A field the entry's value has (``spec``) but that is not written
        literally here came through a variable, a local built by a function
        or a for expression, or the module's ``*_defaults`` input
        (``defaults``): it is still set, so it gets the entry's (or that
        argument's) location rather than none, which would read as "not set,
        the module's default applies"."""
        out = self._literal_item_locations(arg, key)
        if not isinstance(spec, dict):
            return out
        entry_loc = out.get("", self.arg_location(arg))
        for name, value in spec.items():
            if value is not None:
                out.setdefault(str(name), entry_loc)
        if defaults_arg is not None and isinstance(defaults, dict):
            defaults_loc = self.arg_location(defaults_arg)
            for name, value in defaults.items():
                if value is not None:
                    out.setdefault(str(name), defaults_loc)
        return out

    def _literal_item_locations(self, arg: str, key: Any) -> dict[str, Location]:
        attr = self.arg_exprs.get(arg)
        base = self.arg_location(arg)
        out: dict[str, Location] = {}
        if attr is None:
            return out
        expr, path = _resolve(attr.expr, self.instance, self.path)
        entry = None
        if isinstance(expr, H.ObjectExpr) and isinstance(key, str):
            for item in expr.items:
                if isinstance(item.key, H.Literal) and item.key.value == key:
                    entry = item
                    break
        elif isinstance(expr, H.TupleExpr) and isinstance(key, int) and key < len(expr.items):
            entry = expr.items[key]
        if entry is None:
            return out
        out[""] = Location(path, entry.line, entry.column)
        if isinstance(entry, H.ObjectItem):
            value, path = _resolve(entry.value, self.instance, path)
        else:
            value = entry
        if isinstance(value, H.ObjectExpr):
            for item in value.items:
                if isinstance(item.key, H.Literal):
                    out[str(item.key.value)] = Location(path, item.line, item.column)
        out.setdefault("", base)
        return out

    def resource(self, rtype: str, name: str, address: str, attrs: dict, locs: dict,
                 provider: str, config: ProviderConfig | None, loc: Location) -> CloudResource:
        from mlcost_lint.model.terraform.regions import apply_region

        res = CloudResource(type=rtype, name=name, address=address, provider=provider, location=loc,
                            attrs=attrs, attr_locations=locs, module_calls=self.calls, origin="module-input")
        res.provider_key = provider
        apply_region(res, config)
        return res

    # -- terraform-aws-modules/eks/aws ---------------------------------------
    def eks(self) -> list[CloudResource]:
        config = self.providers.get("aws")
        defaults_tags = config.default_tags if config is not None else None
        module_tags = self.get("tags", {})
        out: list[CloudResource] = []
        if self.get("create", True) is False:
            return out
        cluster_name = self.first(("cluster_name", "name"), UNKNOWN)
        log_types = self.first(("cluster_enabled_log_types", "enabled_log_types"), ["audit", "api", "authenticator"])
        retention = self.get("cloudwatch_log_group_retention_in_days", 90)
        create_log_group = self.get("create_cloudwatch_log_group", True)
        cluster_loc = self.decl.location
        attrs = {
            "name": cluster_name,
            "version": self.first(("cluster_version", "kubernetes_version"), UNKNOWN),
            "enabled_cluster_log_types": log_types,
            "cluster_enabled_log_types": log_types,
            "cloudwatch_log_group_retention_in_days": retention,
            "create_cloudwatch_log_group": create_log_group,
            "tags": _merge(module_tags, self.first(("cluster_tags",), {})),
        }
        locs = {k: self.arg_location(a) for k, a in (
            ("name", "cluster_name"), ("enabled_cluster_log_types", "cluster_enabled_log_types"),
            ("cluster_enabled_log_types", "cluster_enabled_log_types"),
            ("cloudwatch_log_group_retention_in_days", "cloudwatch_log_group_retention_in_days"),
            ("tags", "tags"))}
        if "enabled_log_types" in self.arg_exprs:
            locs["enabled_cluster_log_types"] = locs["cluster_enabled_log_types"] = self.arg_location("enabled_log_types")
        cluster = self.resource("aws_eks_cluster", "this", self.prefix + ".aws_eks_cluster.this[0]",
                                attrs, locs, "aws", config, cluster_loc)
        cluster.tags = _tags(defaults_tags, attrs["tags"])
        out.append(cluster)
        if create_log_group is not False:
            lg_attrs = {
                "name": UNKNOWN if not isinstance(cluster_name, str) else f"/aws/eks/{cluster_name}/cluster",
                "retention_in_days": retention,
                "tags": _merge(module_tags, self.get("cloudwatch_log_group_tags", {})),
            }
            lg = self.resource("aws_cloudwatch_log_group", "this",
                               self.prefix + ".aws_cloudwatch_log_group.this[0]", lg_attrs,
                               {"retention_in_days": self.arg_location("cloudwatch_log_group_retention_in_days"),
                                "tags": self.arg_location("tags")}, "aws", config, cluster_loc)
            lg.tags = _tags(defaults_tags, lg_attrs["tags"])
            out.append(lg)
        out.extend(self._eks_groups("eks_managed_node_groups", "eks_managed_node_group_defaults",
                                    "aws_eks_node_group", config, module_tags))
        out.extend(self._eks_groups("self_managed_node_groups", "self_managed_node_group_defaults",
                                    "aws_autoscaling_group", config, module_tags))
        return out

    def _eks_groups(self, arg: str, defaults_arg: str, rtype: str, config: Any, module_tags: Any) -> list:
        groups = self.values.get(arg)
        if groups is None:
            return []
        if groups is UNKNOWN or not isinstance(groups, dict):
            return []   # unknown groups: nothing to model (never a guess)
        defaults = self.values.get(defaults_arg) or {}
        if defaults is UNKNOWN:
            defaults = UNKNOWN
        out = []
        for key in sorted(groups):
            spec = groups[key]
            if spec is UNKNOWN or not isinstance(spec, dict):
                spec = UNKNOWN
            if spec is not UNKNOWN and spec.get("create") is False:
                continue
            address = f'{self.prefix}.{arg}["{key}"]'
            locs_src = self.item_locations(arg, key, spec, defaults_arg, defaults)
            loc = locs_src.get("", self.arg_location(arg))
            out.append(self._eks_group(rtype, key, spec, defaults, address, loc, locs_src, config, module_tags))
        return out

    def _eks_group(self, rtype: str, key: str, spec: Any, defaults: Any, address: str, loc: Location,
                   field_locs: dict, config: Any, module_tags: Any, *, standalone: bool = False) -> CloudResource:
        def field(name: str, default: Any = None) -> Any:
            if spec is UNKNOWN:
                return UNKNOWN
            if name in spec and spec[name] is not None:
                return spec[name]
            if defaults is UNKNOWN:
                return UNKNOWN
            if isinstance(defaults, dict) and defaults.get(name) is not None:
                return defaults[name]
            return default

        managed = rtype == "aws_eks_node_group"
        # The root module defaults a managed group's min_size to 1; the
        # node-group submodule called on its own defaults it to 0
        # (modules/eks-managed-node-group/variables.tf).
        min_size, max_size, desired = field("min_size", 1 if managed and not standalone else 0), field("max_size", 3), \
            field("desired_size", 1)
        tags = _merge(module_tags, field("tags", {}))
        taints = field("taints", {})
        taint_blocks: Any = UNKNOWN
        if isinstance(taints, dict):
            taint_blocks = [v for _, v in sorted(taints.items()) if isinstance(v, dict)]
        elif isinstance(taints, list):
            taint_blocks = taints
        attrs: dict[str, Any] = {
            "name": field("name", key),
            "min_size": min_size, "max_size": max_size, "desired_size": desired,
            "capacity_type": field("capacity_type", "ON_DEMAND" if managed else None),
            "ami_type": field("ami_type"),
            "labels": field("labels", {}),
            "taints": taints,
            "taint": taint_blocks,
            "tags": tags,
            "enable_efa_support": field("enable_efa_support", False),
        }
        if managed:
            attrs["instance_types"] = field("instance_types")
            attrs["scaling_config"] = [{"min_size": min_size, "max_size": max_size, "desired_size": desired}]
        else:
            attrs["instance_type"] = field("instance_type")
            attrs["desired_capacity"] = desired
            mixed = field("use_mixed_instances_policy", False)
            attrs["use_mixed_instances_policy"] = mixed
            attrs["instance_market_options"] = field("instance_market_options", {})
        locs = {}
        for name, where in field_locs.items():
            if name:
                locs[name] = where
        if "min_size" in locs:
            locs["scaling_config.min_size"] = locs["min_size"]
        if "max_size" in locs:
            locs["scaling_config.max_size"] = locs["max_size"]
        if "desired_size" in locs:
            locs["scaling_config.desired_size"] = locs["desired_size"]
        if "taints" in locs:
            locs["taint"] = locs["taints"]
        res = self.resource(rtype, key, address, attrs, locs, "aws", config, loc)
        defaults_tags = config.default_tags if config is not None else None
        if managed:
            res.tags = _tags(defaults_tags, tags)
        else:
            res.tags_attribute = "tags"
            res.tags = _tags(None, tags)   # ASG tags: default_tags do not apply
        return res

    def eks_single(self, which: str) -> list[CloudResource]:
        """The node-group submodule called on its own."""
        config = self.providers.get("aws")
        rtype = "aws_eks_node_group" if which == "eks-managed-node-group" else "aws_autoscaling_group"
        spec = {k: v for k, v in self.values.items()}
        field_locs = {name: self.arg_location(name) for name in self.arg_exprs}
        field_locs[""] = self.decl.location
        name = self.get("name", self.decl.name)
        key = name if isinstance(name, str) else self.decl.name
        address = f"{self.prefix}.{'aws_eks_node_group' if rtype == 'aws_eks_node_group' else 'aws_autoscaling_group'}.this[0]"
        if self.get("create", True) is False:
            return []
        return [self._eks_group(rtype, key, spec, {}, address, self.decl.location, field_locs, config, {},
                                standalone=True)]

    # -- terraform-google-modules/kubernetes-engine/google --------------------
    def gke(self) -> list[CloudResource]:
        config = self.providers.get("google") or self.providers.get("google-beta")
        out: list[CloudResource] = []
        region_in = self.get("region", None)
        zones = self.get("zones", None)
        regional = self.get("regional", True)
        location: Any = region_in
        if regional is False and isinstance(zones, list) and zones:
            location = zones[0]
        elif regional is UNKNOWN:
            location = UNKNOWN
        cluster_labels = self.get("cluster_resource_labels", {})
        cluster_attrs = {
            "name": self.get("name", UNKNOWN),
            "location": location if location is not None else UNKNOWN,
            "resource_labels": cluster_labels,
        }
        cluster = self.resource("google_container_cluster", "primary", self.prefix + ".google_container_cluster.primary",
                                cluster_attrs, {"name": self.arg_location("name"),
                                                "resource_labels": self.arg_location("cluster_resource_labels"),
                                                "location": self.arg_location("region")},
                                "google", config, self.decl.location)
        cluster.tags_attribute = "resource_labels"
        cluster.tag_inputs = ("cluster_resource_labels",)
        cluster.tags = _tags(None, cluster_labels)
        out.append(cluster)
        pools = self.values.get("node_pools")
        if pools is None:
            pools = [{"name": "default-node-pool"}]
        if pools is UNKNOWN or not isinstance(pools, list):
            return out
        labels_all = self._per_pool("node_pools_labels")
        res_labels_all = self._per_pool("node_pools_resource_labels")
        taints_all = self._per_pool("node_pools_taints")
        for i, pool in enumerate(pools):
            if pool is UNKNOWN or not isinstance(pool, dict):
                continue
            name = pool.get("name", UNKNOWN)
            field_locs = self.item_locations("node_pools", i, pool)
            loc = field_locs.get("", self.arg_location("node_pools"))
            out.append(self._gke_pool(pool, name, i, loc, field_locs, labels_all, res_labels_all, taints_all,
                                      cluster_labels, config, location))
        return out

    def _per_pool(self, arg: str) -> Any:
        value = self.values.get(arg)
        if value is None:
            return {}
        return value

    def _gke_pool(self, pool: dict, name: Any, i: int, loc: Location, field_locs: dict, labels_all: Any,
                  res_labels_all: Any, taints_all: Any, cluster_labels: Any, config: Any,
                  cluster_location: Any) -> CloudResource:
        def pick(table: Any, merge_maps: bool = True) -> Any:
            if table is UNKNOWN or not isinstance(table, dict):
                return UNKNOWN
            if not isinstance(name, str):
                return UNKNOWN
            if merge_maps:
                return _merge(table.get("all", {}) or {}, table.get(name, {}) or {})
            return list(table.get("all", []) or []) + list(table.get(name, []) or [])

        autoscaling = pool.get("autoscaling", True)
        min_count = pool.get("min_count", 1)
        max_count = pool.get("max_count", 100)
        accel_type = pool.get("accelerator_type", "")
        accel_count = pool.get("accelerator_count", 0)
        node_labels = pick(labels_all)
        resource_labels = pick(res_labels_all)
        guest = []
        if accel_type is UNKNOWN or accel_count is UNKNOWN:
            guest = UNKNOWN
        elif accel_type and accel_count:
            guest = [{"type": accel_type, "count": accel_count}]
        node_config = {
            "machine_type": pool.get("machine_type", "e2-medium"),
            "labels": node_labels,
            "resource_labels": resource_labels,
            "guest_accelerator": guest,
            "spot": pool.get("spot", False),
            "preemptible": pool.get("preemptible", False),
            "taint": pick(taints_all, merge_maps=False),
            "disk_size_gb": pool.get("disk_size_gb", 100),
        }
        attrs: dict[str, Any] = {
            "name": name,
            "location": cluster_location if cluster_location is not None else UNKNOWN,
            "node_config": [node_config],
            "machine_type": node_config["machine_type"],
            "accelerator_type": accel_type,
            "accelerator_count": accel_count,
            "min_count": min_count,
            "max_count": max_count,
            "autoscaling": autoscaling,
            "spot": node_config["spot"],
            "preemptible": node_config["preemptible"],
            "node_pools_labels": node_labels,
        }
        if autoscaling is True:
            attrs["autoscaling"] = [{"min_node_count": min_count, "max_node_count": max_count,
                                     "total_min_node_count": pool.get("total_min_count"),
                                     "total_max_node_count": pool.get("total_max_count")}]
            attrs["node_count"] = None
        elif autoscaling is False:
            attrs["autoscaling"] = []
            attrs["node_count"] = pool.get("node_count", 1)
        else:
            attrs["autoscaling"] = UNKNOWN
            attrs["node_count"] = UNKNOWN
        attrs["autoscaling_enabled"] = autoscaling
        locs = {k: v for k, v in field_locs.items() if k}
        for src, dst in (("machine_type", "node_config.machine_type"),
                         ("accelerator_type", "node_config.guest_accelerator"),
                         ("min_count", "autoscaling.min_node_count"),
                         ("max_count", "autoscaling.max_node_count"),
                         ("spot", "node_config.spot"), ("preemptible", "node_config.preemptible")):
            if src in locs:
                locs[dst] = locs[src]
        if "node_pools_resource_labels" in self.arg_exprs:
            locs["node_config.resource_labels"] = self.arg_location("node_pools_resource_labels")
        if "node_pools_labels" in self.arg_exprs:
            locs["node_config.labels"] = self.arg_location("node_pools_labels")
        address = f'{self.prefix}.google_container_node_pool.pools["{name}"]' if isinstance(name, str) \
            else f"{self.prefix}.google_container_node_pool.pools[{i}]"
        res = self.resource("google_container_node_pool", name if isinstance(name, str) else str(i),
                            address, attrs, locs, "google", config, loc)
        res.tags_attribute = "node_config.resource_labels"
        res.tag_inputs = ("node_pools_resource_labels", "cluster_resource_labels")
        res.tags = _tags(cluster_labels, resource_labels)
        return res

    # -- Azure/aks/azurerm ---------------------------------------------------
    def aks(self) -> list[CloudResource]:
        config = self.providers.get("azurerm")
        out: list[CloudResource] = []
        tags = self.get("tags", {})
        auto = self.first(("auto_scaling_enabled", "enable_auto_scaling"), False)
        pool = {
            "name": self.get("agents_pool_name", "nodepool"),
            "vm_size": self.get("agents_size", "Standard_D2s_v3"),
            "node_count": self.get("agents_count", 2),
            "min_count": self.get("agents_min_count"),
            "max_count": self.get("agents_max_count"),
            "auto_scaling_enabled": auto,
            "enable_auto_scaling": auto,
            "node_labels": self.get("agents_labels", {}),
            "node_taints": self.get("agents_taints"),
        }
        attrs = {
            "name": self.first(("cluster_name", "prefix"), UNKNOWN),
            "location": self.get("location", UNKNOWN),
            "default_node_pool": [pool],
            "tags": tags,
        }
        locs = {"default_node_pool": self.decl.location, "tags": self.arg_location("tags")}
        for src, dst in (("agents_size", "vm_size"), ("agents_count", "node_count"),
                         ("agents_min_count", "min_count"), ("agents_max_count", "max_count"),
                         ("enable_auto_scaling", "enable_auto_scaling"),
                         ("auto_scaling_enabled", "auto_scaling_enabled")):
            if src in self.arg_exprs:
                locs[f"default_node_pool.{dst}"] = self.arg_location(src)
        cluster = self.resource("azurerm_kubernetes_cluster", "main", self.prefix + ".azurerm_kubernetes_cluster.main",
                                attrs, locs, "azurerm", config, self.decl.location)
        cluster.tags = _tags(None, tags)
        out.append(cluster)
        pools = self.values.get("node_pools")
        if not isinstance(pools, dict):
            return out
        for key in sorted(pools):
            spec = pools[key]
            if not isinstance(spec, dict):
                continue
            field_locs = self.item_locations("node_pools", key, spec)
            loc = field_locs.get("", self.arg_location("node_pools"))
            auto = spec.get("auto_scaling_enabled", spec.get("enable_auto_scaling", False))
            pattrs = {
                "name": spec.get("name", key),
                "vm_size": spec.get("vm_size", UNKNOWN),
                "node_count": spec.get("node_count"),
                "min_count": spec.get("min_count"),
                "max_count": spec.get("max_count"),
                "auto_scaling_enabled": auto,
                "enable_auto_scaling": auto,
                "priority": spec.get("priority", "Regular"),
                "node_labels": spec.get("node_labels", {}),
                "node_taints": spec.get("node_taints"),
                "tags": _merge(tags, spec.get("tags", {})),
                "location": attrs["location"],
            }
            plocs = {k: v for k, v in field_locs.items() if k}
            res = self.resource("azurerm_kubernetes_cluster_node_pool", key,
                                f'{self.prefix}.azurerm_kubernetes_cluster_node_pool.node_pool["{key}"]',
                                pattrs, plocs, "azurerm", config, loc)
            res.tags = _tags(None, pattrs["tags"])
            out.append(res)
        return out


def _merge(a: Any, b: Any) -> Any:
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if (a is not None and not isinstance(a, dict)) or (b is not None and not isinstance(b, dict)):
        return UNKNOWN
    out = dict(a or {})
    out.update(b or {})
    return out


def _tags(defaults: Any, own: Any) -> Any:
    from mlcost_lint.model.terraform.tags import _merge_over

    return _merge_over(defaults, own)


def _resolve(expr: Any, instance: Any, path: str) -> tuple[Any, str]:
    """Follow ``local.x`` to the expression that defines it (a few hops)."""
    depth = 0
    while depth < 5 and isinstance(expr, H.Traversal) and expr.source is None and expr.root == "local" \
            and len(expr.steps) == 1 and isinstance(expr.steps[0], H.GetAttr):
        found = instance.source.locals.get(expr.steps[0].name)
        if found is None:
            break
        expr, path = found[0].expr, found[1]
        depth += 1
    return expr, path
