"""Pod template -> Terraform node group / pool (``PoolLink``) and where the
template runs (``Placement``: accelerator, node type, capacity type, region).

Node labels a template asks for: ``nodeSelector`` plus required node
affinity ``In`` expressions with one value (only when there is a single
``nodeSelectorTerm``: several terms are alternatives). A pool offers its
explicit labels (EKS ``labels``, GKE ``node_config.labels``, AKS
``node_labels``) and the labels the cloud puts on its nodes (pool name,
instance type, capacity type, GKE accelerator, region). A pool is linked when

1. a selector names it (pool-name label or one of its own labels), nothing
   in the selector contradicts it and the template tolerates its taints; or
2. an instance-type selector matches exactly one pool; or
3. the template requests GPUs, tolerates a taint of exactly one GPU pool
   (and all of that pool's taints), and nothing contradicts.

Ambiguity (several pools fit equally) links nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.kubernetes import PodTemplate, Workload
from mlcost_lint.model.project import Placement, PoolLink, Project
from mlcost_lint.link.regions import zone_to_region

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
POOL_NAME_LABELS = {
    "aws": ("eks.amazonaws.com/nodegroup",),
    "google": ("cloud.google.com/gke-nodepool",),
    "azurerm": ("kubernetes.azure.com/agentpool", "agentpool"),
}

# (label, value lower-cased) -> (spot, reserved). A value of "*" matches any value.
CAPACITY_LABELS: dict[tuple[str, str], tuple[bool, bool]] = {
    ("eks.amazonaws.com/capacitytype", "spot"): (True, False),
    ("eks.amazonaws.com/capacitytype", "on_demand"): (False, False),
    ("eks.amazonaws.com/capacitytype", "capacity_block"): (False, True),
    ("karpenter.sh/capacity-type", "spot"): (True, False),
    ("karpenter.sh/capacity-type", "on-demand"): (False, False),
    ("karpenter.sh/capacity-type", "reserved"): (False, True),
    ("cloud.google.com/gke-spot", "true"): (True, False),
    ("cloud.google.com/gke-preemptible", "true"): (True, False),
    ("cloud.google.com/reservation-name", "*"): (False, True),
    ("kubernetes.azure.com/scalesetpriority", "spot"): (True, False),
    ("kubernetes.azure.com/scalesetpriority", "regular"): (False, False),
    ("eks.amazonaws.com/compute-type", "fargate"): (False, False),
}
# Taints that only spot/preemptible nodes carry: tolerating one means the pod is meant for them.
SPOT_TAINTS = {
    "cloud.google.com/gke-spot": None,
    "cloud.google.com/gke-preemptible": None,
    "kubernetes.azure.com/scalesetpriority": "spot",
    "karpenter.sh/capacity-type": "spot",
    "eks.amazonaws.com/capacitytype": "spot",
}


@dataclass(slots=True)
class Selector:
    """Node labels a template requires: label -> (value, location, source)."""

    pairs: dict[str, tuple[str, Location, str]] = field(default_factory=dict)

    def labels(self) -> dict[str, str]:
        return {k: v for k, (v, _, _) in self.pairs.items()}


def selector_of(template: PodTemplate) -> Selector:
    sel = Selector()
    for key, value in template.node_selector.items():
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            sel.pairs[str(key)] = (str(value), template.spec_loc("nodeSelector", key), f"nodeSelector {key}={value}")
    terms_path = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    node: Any = template.affinity
    for k in terms_path[1:]:
        node = node.get(k) if isinstance(node, dict) else None
    if isinstance(node, list) and len(node) == 1 and isinstance(node[0], dict):
        exprs = node[0].get("matchExpressions")
        if isinstance(exprs, list):
            for i, expr in enumerate(exprs):
                if not isinstance(expr, dict) or expr.get("operator") != "In":
                    continue
                values = expr.get("values")
                key = expr.get("key")
                if isinstance(key, str) and isinstance(values, list) and len(values) == 1 \
                        and isinstance(values[0], (str, int, float)) and not isinstance(values[0], bool):
                    sel.pairs.setdefault(key, (str(values[0]), template.spec_loc(
                        *terms_path, 0, "matchExpressions", i), f"required node affinity {key} In [{values[0]}]"))
    return sel


@dataclass(slots=True)
class Taint:
    key: Any
    value: Any
    effect: Any


@dataclass(slots=True)
class Pool:
    """One node group / pool with what scheduling sees of it."""

    resource: CloudResource
    cloud: str                       # "aws" | "google" | "azurerm"
    name: Any                        # str | UNKNOWN
    labels: dict[str, Any]           # explicit + cloud-set node labels; values may be UNKNOWN
    taints: list[Taint] | Any        # UNKNOWN when not known
    instance_types: list[str] | Any  # UNKNOWN when not known
    spot: bool | None
    reserved: bool
    capacity_reason: str
    capacity_location: Location
    guest_accelerator: tuple[str, int] | None = None
    block_path: str = ""             # "node_pool.1" for a pool block inside a GKE cluster
    has_gpu: bool | None = None


def _effect(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return {"no_schedule": "NoSchedule", "no_execute": "NoExecute", "prefer_no_schedule": "PreferNoSchedule"}.get(
        value.lower(), value)


def _taint_blocks(raw: Any) -> list[Taint] | Any:
    if raw is None:
        return []
    if raw is UNKNOWN or not isinstance(raw, list):
        return UNKNOWN
    out = []
    for t in raw:
        if t is UNKNOWN or not isinstance(t, dict):
            return UNKNOWN
        out.append(Taint(t.get("key", UNKNOWN), t.get("value"), _effect(t.get("effect", UNKNOWN))))
    return out


def _aks_taints(raw: Any) -> list[Taint] | Any:
    if raw is None:
        return []
    if raw is UNKNOWN or not isinstance(raw, list):
        return UNKNOWN
    out = []
    for t in raw:
        if not isinstance(t, str):
            return UNKNOWN
        m = re.match(r"^([^=:]+)(?:=([^:]*))?:(\w+)$", t.strip())
        if not m:
            return UNKNOWN
        out.append(Taint(m.group(1), m.group(2), m.group(3)))
    return out


def _str_map(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items()}


def _types(value: Any) -> list[str] | Any:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return UNKNOWN


def pools_of(project: Project) -> list[Pool]:
    out: list[Pool] = []
    for res in project.terraform.resources:
        if res.mode != "managed":
            continue
        reader = _POOL_READERS.get(res.type)
        if reader is not None:
            out.extend(reader(res))
    return out


def _eks_pool(res: CloudResource) -> list[Pool]:
    a = res.attrs
    name = a.get("node_group_name", a.get("name") if res.origin == "module-input" else UNKNOWN)
    if res.origin == "module-input":
        # terraform-aws-modules names the group "<name>-<random>" unless
        # use_name_prefix = false, which the synthetic resource does not carry.
        name = UNKNOWN
    labels = _str_map(a.get("labels"))
    capacity = a.get("capacity_type")
    types = _types(a.get("instance_types"))
    if a.get("instance_types") is None and not a.get("launch_template"):
        types = ["t3.medium"]          # the EKS API default
    cap = capacity if isinstance(capacity, str) else ("ON_DEMAND" if capacity is None else UNKNOWN)
    spot, reserved, reason = None, False, ""
    if cap is not UNKNOWN:
        spot = cap.upper() == "SPOT"
        reserved = cap.upper() == "CAPACITY_BLOCK"
        reason = f"capacity_type = {cap}" if capacity is not None else "no capacity_type (on-demand by default)"
        labels.setdefault("eks.amazonaws.com/capacityType", cap.upper())
    labels.setdefault("eks.amazonaws.com/nodegroup", name)
    if isinstance(types, list) and len(types) == 1:
        labels.setdefault("node.kubernetes.io/instance-type", types[0])
    taints = _taint_blocks(a.get("taint"))
    return [Pool(res, "aws", name, labels, taints, types, spot, reserved, reason, res.loc("capacity_type"))]


def _gke_pool_from(res: CloudResource, block: dict, prefix: str, default_name: Any) -> Pool:
    cfg = block.get("node_config")
    cfg = cfg[0] if isinstance(cfg, list) and cfg and isinstance(cfg[0], dict) else (cfg if isinstance(cfg, dict) else {})
    name = block.get("name", default_name)
    labels = _str_map(cfg.get("labels"))
    machine = cfg.get("machine_type", "e2-medium" if "machine_type" not in cfg else UNKNOWN)
    types = _types(machine)
    guest = cfg.get("guest_accelerator")
    accel = None
    if isinstance(guest, list) and guest and isinstance(guest[0], dict):
        gtype, gcount = guest[0].get("type"), guest[0].get("count", 1)
        if isinstance(gtype, str) and isinstance(gcount, int):
            accel = (gtype, gcount)
            labels.setdefault("cloud.google.com/gke-accelerator", gtype)
    spot_v, pre_v = cfg.get("spot", False), cfg.get("preemptible", False)
    spot: bool | None
    reason = ""
    if spot_v is True or pre_v is True:
        spot, reason = True, ("spot = true" if spot_v is True else "preemptible = true")
        labels.setdefault("cloud.google.com/gke-spot" if spot_v is True else "cloud.google.com/gke-preemptible", "true")
    elif spot_v is UNKNOWN or pre_v is UNKNOWN:
        spot = None
    else:
        spot, reason = False, "no spot/preemptible setting (on-demand by default)"
    reserved = False
    aff = cfg.get("reservation_affinity")
    aff = aff[0] if isinstance(aff, list) and aff else aff
    if isinstance(aff, dict) and aff.get("consume_reservation_type") == "SPECIFIC_RESERVATION":
        reserved, reason = True, "reservation_affinity SPECIFIC_RESERVATION"
    labels.setdefault("cloud.google.com/gke-nodepool", name)
    if isinstance(machine, str):
        labels.setdefault("node.kubernetes.io/instance-type", machine)
    taints = _taint_blocks(cfg.get("taint")) if "taint" in cfg else []
    loc = res.loc(prefix + "node_config.spot") if prefix else res.loc("node_config.spot")
    return Pool(res, "google", name, labels, taints, types, spot, reserved, reason, loc, accel, prefix.rstrip("."))


def _gke_node_pool(res: CloudResource) -> list[Pool]:
    return [_gke_pool_from(res, res.attrs, "", UNKNOWN)]


def _gke_cluster(res: CloudResource) -> list[Pool]:
    blocks = res.attrs.get("node_pool")
    out = []
    if isinstance(blocks, list):
        for i, block in enumerate(blocks):
            if isinstance(block, dict):
                out.append(_gke_pool_from(res, block, f"node_pool.{i}.", UNKNOWN))
    return out


def _aks_pool_from(res: CloudResource, block: dict, prefix: str) -> Pool:
    name = block.get("name", UNKNOWN)
    labels = _str_map(block.get("node_labels"))
    size = block.get("vm_size", UNKNOWN)
    priority = block.get("priority", "Regular")
    spot = None
    reason = ""
    if isinstance(priority, str):
        spot = priority.lower() == "spot"
        reason = f'priority = "{priority}"' if "priority" in block else "no priority (Regular by default)"
        labels.setdefault("kubernetes.azure.com/scalesetpriority", "spot" if spot else "regular")
    reserved = isinstance(block.get("capacity_reservation_group_id"), str)
    if reserved:
        reason = "capacity_reservation_group_id"
    labels.setdefault("kubernetes.azure.com/agentpool", name)
    labels.setdefault("agentpool", name)
    if isinstance(size, str):
        labels.setdefault("node.kubernetes.io/instance-type", size)
    taints = _aks_taints(block.get("node_taints"))
    return Pool(res, "azurerm", name, labels, taints, _types(size), spot, reserved, reason,
                res.loc(prefix + "priority"), None, prefix.rstrip("."))


def _aks_node_pool(res: CloudResource) -> list[Pool]:
    return [_aks_pool_from(res, res.attrs, "")]


def _aks_cluster(res: CloudResource) -> list[Pool]:
    block = res.attrs.get("default_node_pool")
    if isinstance(block, list) and block and isinstance(block[0], dict):
        return [_aks_pool_from(res, block[0], "default_node_pool.")]
    return []


_POOL_READERS = {
    "aws_eks_node_group": _eks_pool,
    "google_container_node_pool": _gke_node_pool,
    "google_container_cluster": _gke_cluster,
    "azurerm_kubernetes_cluster_node_pool": _aks_node_pool,
    "azurerm_kubernetes_cluster": _aks_cluster,
}


def pool_accelerator(pool: Pool) -> Any:
    """The catalogue Accelerator of a pool's nodes, or None (unknown, several
    different types, or no accelerator)."""
    from mlcost_lint import catalogue

    if pool.instance_types is UNKNOWN or not pool.instance_types:
        return None
    entries = [catalogue.instance_type(t) for t in pool.instance_types]
    if pool.guest_accelerator is not None and entries == [None]:
        return catalogue.gcp_accelerator(pool.guest_accelerator[0], pool.guest_accelerator[1])
    if any(e is None for e in entries):
        return None
    if len({(e.gpu.name, e.count) for e in entries}) != 1:
        return None
    return entries[0]


def pool_node_type(pool: Pool) -> Any:
    """The instance/machine type entry when the pool has exactly one type with an accelerator."""
    from mlcost_lint import catalogue

    if pool.instance_types is UNKNOWN or len(pool.instance_types) != 1:
        return None
    return catalogue.instance_type(pool.instance_types[0])


def _has_gpu(pool: Pool) -> bool | None:
    if pool.guest_accelerator is not None:
        return True
    if pool.instance_types is UNKNOWN:
        return None
    from mlcost_lint import catalogue

    return any(catalogue.instance_type(t) is not None for t in pool.instance_types)


# ------------------------------------------------------------ matching ---


def _tolerates(template: PodTemplate, taint: Taint) -> bool | None:
    if taint.effect not in ("NoSchedule", "NoExecute") and taint.effect is not UNKNOWN:
        return True
    for tol in template.tolerations:
        key, op = tol.get("key"), tol.get("operator", "Equal")
        effect = tol.get("effect")
        if effect and taint.effect is not UNKNOWN and effect != taint.effect:
            continue
        if op == "Exists" and (key is None or key == ""):
            return True
        if taint.key is UNKNOWN:
            continue
        if key != taint.key:
            continue
        if op == "Exists":
            return True
        if taint.value is UNKNOWN:
            return None
        if str(tol.get("value", "") or "") == str(taint.value or ""):
            return True
    if taint.key is UNKNOWN or taint.effect is UNKNOWN:
        return None
    return False


def tolerates_all(template: PodTemplate, pool: Pool) -> bool | None:
    if pool.taints is UNKNOWN:
        return None
    result: bool | None = True
    for taint in pool.taints:
        t = _tolerates(template, taint)
        if t is False:
            return False
        if t is None:
            result = None
    return result


def _eq(label: str, a: Any, b: str) -> bool:
    if label in INSTANCE_TYPE_LABELS or label.endswith("capacityType") or label.endswith("scalesetpriority"):
        return str(a).lower() == b.lower()
    return str(a) == b


@dataclass(slots=True)
class Match:
    identifying: list[str]
    contradicted: bool


def match_pool(sel: Selector, pool: Pool) -> Match:
    identifying: list[str] = []
    for key, (value, _loc, source) in sel.pairs.items():
        if key in INSTANCE_TYPE_LABELS:
            if pool.instance_types is UNKNOWN:
                continue
            if not any(t.lower() == value.lower() for t in pool.instance_types):
                return Match([], True)
            continue
        if key in REGION_LABELS:
            region = pool.resource.region
            if isinstance(region, str) and region.lower() != value.lower():
                return Match([], True)
            continue
        if key not in pool.labels:
            # A pool-name label of another cloud, or a label the pool does not set.
            other_names = {k for names in POOL_NAME_LABELS.values() for k in names}
            if key in other_names and key not in POOL_NAME_LABELS.get(pool.cloud, ()):
                return Match([], True)
            if key in pool_owned_labels(pool):
                return Match([], True)
            continue
        have = pool.labels[key]
        if have is UNKNOWN:
            continue
        if not _eq(key, have, value):
            return Match([], True)
        if key in POOL_NAME_LABELS.get(pool.cloud, ()) or not _cloud_set(key):
            identifying.append(source)
    return Match(identifying, False)


def _cloud_set(label: str) -> bool:
    return label.startswith(("eks.amazonaws.com/", "cloud.google.com/", "kubernetes.azure.com/",
                             "node.kubernetes.io/", "topology.kubernetes.io/", "karpenter.sh/", "karpenter.k8s.aws/"))


def pool_owned_labels(pool: Pool) -> set[str]:
    """Cloud-set labels a pool would carry with a known value when set
    (absent from ``labels`` means the node does not have them)."""
    owned = {"cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible"} if pool.cloud == "google" else set()
    if pool.cloud == "google" and pool.guest_accelerator is None and pool_node_type(pool) is None \
            and pool.instance_types is not UNKNOWN:
        owned.add("cloud.google.com/gke-accelerator")
    return owned


@dataclass(slots=True)
class LinkResult:
    pool: Pool | None
    how: str
    evidence: Location | None


def link_template(workload: Workload, template: PodTemplate, pools: list[Pool]) -> LinkResult:
    sel = selector_of(template)
    named: list[tuple[Pool, list[str]]] = []
    by_type: list[Pool] = []
    for pool in pools:
        m = match_pool(sel, pool)
        if m.contradicted or tolerates_all(template, pool) is False:
            continue
        if m.identifying:
            named.append((pool, m.identifying))
        elif any(k in INSTANCE_TYPE_LABELS for k in sel.pairs) and pool.instance_types is not UNKNOWN:
            by_type.append(pool)
    if named:
        if len(named) == 1:
            pool, sources = named[0]
            key = sources[0].split()[-1].split("=")[0]
            loc = next((l for k, (_, l, s) in sel.pairs.items() if s == sources[0]), template.loc())
            return LinkResult(pool, sources[0], loc)
        return LinkResult(None, "", None)
    if by_type:
        if len(by_type) == 1:
            key = next(k for k in sel.pairs if k in INSTANCE_TYPE_LABELS)
            value, loc, source = sel.pairs[key]
            return LinkResult(by_type[0], f"{source} (the only node group/pool of that type)", loc)
        return LinkResult(None, "", None)
    gpus = template.gpu_count()
    if gpus is UNKNOWN or gpus == 0 or not template.tolerations:
        return LinkResult(None, "", None)
    candidates = []
    for pool in pools:
        if _has_gpu(pool) is not True or pool.taints is UNKNOWN or not pool.taints:
            continue
        if match_pool(sel, pool).contradicted or tolerates_all(template, pool) is not True:
            continue
        specific = [t for t in pool.taints if t.effect in ("NoSchedule", "NoExecute")
                    and any(tol.get("key") == t.key for tol in template.tolerations)]
        if specific:
            candidates.append((pool, specific[0]))
    if len(candidates) == 1:
        pool, taint = candidates[0]
        i = next(i for i, tol in enumerate(template.tolerations) if tol.get("key") == taint.key)
        return LinkResult(pool, f"toleration {taint.key} matches the taint of the only GPU pool that has it",
                          template.spec_loc("tolerations", i))
    return LinkResult(None, "", None)


# ---------------------------------------------------------- placement ---


def _capacity_from_selector(sel: Selector) -> tuple[bool | None, bool, str, Location | None]:
    for key, (value, loc, source) in sel.pairs.items():
        hit = CAPACITY_LABELS.get((key.lower(), value.lower())) or CAPACITY_LABELS.get((key.lower(), "*"))
        if hit is not None:
            return hit[0], hit[1], source, loc
    return None, False, "", None


def _capacity_from_tolerations(template: PodTemplate) -> tuple[bool | None, str, Location | None]:
    for i, tol in enumerate(template.tolerations):
        key = tol.get("key")
        if not isinstance(key, str) or key.lower() not in SPOT_TAINTS:
            continue
        wanted = SPOT_TAINTS[key.lower()]
        value = tol.get("value")
        if wanted is None or tol.get("operator") == "Exists" or (isinstance(value, str) and value.lower() == wanted):
            return True, f"tolerates the spot taint {key}", template.spec_loc("tolerations", i)
    return None, "", None


def place(workload: Workload, template: PodTemplate, linked: Pool | None, link_how: str) -> Placement:
    from mlcost_lint import catalogue

    sel = selector_of(template)
    labels = sel.labels()
    placement = Placement(workload, template)
    # Accelerator and node type: the linked pool first, then the labels.
    if linked is not None:
        acc = pool_accelerator(linked)
        if acc is not None:
            placement.gpu, placement.gpu_how = acc, f"node group/pool {linked.resource.address}"
        node = pool_node_type(linked)
        if node is not None:
            placement.node_type, placement.node_type_how = node, f"node group/pool {linked.resource.address}"
    if placement.gpu is None:
        gke = labels.get("cloud.google.com/gke-accelerator")
        found: Any = None
        if gke:
            count = template.gpu_count()
            per_pod = count if isinstance(count, int) and count > 0 else None
            found = catalogue.gcp_accelerator(gke, per_pod)
        if found is None:
            found = catalogue.from_node_labels(labels)
        if found is not None:
            placement.gpu = found
            placement.gpu_how = "node labels " + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())
                                                          if not _irrelevant_label(k))
    if placement.node_type is None:
        for key in INSTANCE_TYPE_LABELS:
            if key in labels:
                node = catalogue.instance_type(labels[key])
                if node is not None:
                    placement.node_type, placement.node_type_how = node, sel.pairs[key][2]
                    break
        if placement.node_type is None:
            fam = labels.get("karpenter.k8s.aws/instance-family")
            size = labels.get("karpenter.k8s.aws/instance-size")
            if fam and size:
                node = catalogue.instance_type(f"{fam}.{size}")
                if node is not None:
                    placement.node_type = node
                    placement.node_type_how = f"karpenter.k8s.aws/instance-family={fam}, instance-size={size}"
    # Capacity type: selectors, then the pool, then tolerations.
    spot, reserved, reason, loc = _capacity_from_selector(sel)
    if spot is None and not reserved and linked is not None and (linked.spot is not None or linked.reserved):
        spot, reserved = linked.spot, linked.reserved
        reason = f"{linked.capacity_reason} on {linked.resource.address}"
        loc = linked.capacity_location
    if spot is None and not reserved:
        spot, reason, loc = _capacity_from_tolerations(template)
    if reserved:
        spot = False
    placement.spot, placement.reserved, placement.spot_reason, placement.spot_location = spot, reserved, reason, loc
    # Region: the pool, then region/zone selectors.
    if linked is not None and isinstance(linked.resource.region, str):
        placement.region = linked.resource.region
        placement.region_how = f"{linked.resource.address}"
        placement.region_location = linked.resource.location
    else:
        for key in REGION_LABELS:
            if key in sel.pairs:
                value, loc2, source = sel.pairs[key]
                placement.region, placement.region_how, placement.region_location = value, source, loc2
                break
        else:
            for key in ZONE_LABELS:
                if key in sel.pairs:
                    value, loc2, source = sel.pairs[key]
                    region = zone_to_region(value)
                    if region:
                        placement.region, placement.region_how, placement.region_location = region, source, loc2
                    break
    return placement


def _irrelevant_label(key: str) -> bool:
    return key in REGION_LABELS or key in ZONE_LABELS or key.startswith("kubernetes.io/")


def link_pools(project: Project) -> None:
    pools = pools_of(project)
    for workload in project.kubernetes.workloads:
        for template in workload.templates:
            result = link_template(workload, template, pools) if pools else LinkResult(None, "", None)
            if result.pool is not None and result.evidence is not None:
                project.links.pools.append(PoolLink(workload, template, result.pool.resource, result.evidence,
                                                    result.how, block=result.pool.block_path, detail=result.pool))
            project.links.placements.append(place(workload, template, result.pool, result.how))


def linked_pool(project: Project, template: PodTemplate) -> Pool | None:
    """The parsed :class:`Pool` a template is linked to, or None."""
    links = project.links.pools_of(template)
    if len(links) != 1:
        return None
    return links[0].detail if isinstance(links[0].detail, Pool) else None
