"""Node pools read from cloud resources: each node group / pool block of a
resource (per its row in :mod:`mlcost_lint.model.pool_specs`) as scheduling
and the cost rules see it: name, node labels, taints, instance types,
accelerator, capacity kind and the attribute that says so.

    node_pools(resource) -> list[NodePool]
        Every node group / pool a managed resource declares (nested pool
        blocks included), GPU or not.
    gpu_pools(project) -> list[NodePool]
        The pools that are known GPU capacity (``pool.is_gpu``).
    karpenter_pools(documents) -> list[NodePool]
        Karpenter NodePools among Kubernetes documents, as node pools.

What a pool keeps running with no job: :mod:`mlcost_lint.model.kept_capacity`.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import TYPE_CHECKING, Any, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.capacity import ON_DEMAND, RESERVED, SPOT
from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.model.pool_specs import (
    _KARPENTER_NODE_POOL,
    NESTED_POOL_SPECS,
    POOL_SPECS,
    PoolSpec,
    Scheduling,
)
from mlcost_lint.model.scheduling import INSTANCE_TYPE_LABELS, POOL_NAME_LABELS, pinned_gpu

if TYPE_CHECKING:
    from mlcost_lint.catalogue import Accelerator


class _Block:
    """A nested pool block read like a resource (dotted paths through
    arguments and first nested blocks; UNKNOWN on the way yields UNKNOWN)."""

    __slots__ = ("attrs",)
    get = CloudResource.get      # the same path semantics, rooted at the block

    def __init__(self, attrs: dict) -> None:
        self.attrs = attrs


@dataclass(frozen=True, slots=True)
class Taint:
    key: Any
    value: Any
    effect: Any


@dataclass(slots=True)
class NodePool:
    """One node group / pool (or GPU VM shape) declared by a Terraform
    resource: what scheduling sees of it and what it costs.

    ``instance_types``: the types as written (UNKNOWN when not known, None
    when none is written); ``node_types``: what scheduling sees, with the
    API default when none is written. ``accelerator``: the GPU capacity per
    node (an attached GCP accelerator wins, else the listed type with the
    fewest accelerators), None when it is not GPU capacity, UNKNOWN when a
    mix or unknown. ``capacity``: SPOT / ON_DEMAND / RESERVED / UNKNOWN and
    ``capacity_attr`` the attribute that says so.
    """

    resource: "CloudResource"
    spec: PoolSpec
    prefix: str                           # "default_node_pool." / "node_pool.1." for a nested block
    view: Any
    instance_types: Maybe[list[str]] | None
    accelerator: Maybe["Accelerator"] | None
    capacity: Maybe[str]
    capacity_attr: str | None
    # Scheduling (empty / UNKNOWN for pools no Kubernetes pod runs on):
    cloud: str = ""
    name: Any = UNKNOWN                   # str | UNKNOWN
    labels: dict[str, Any] = field(default_factory=dict)   # explicit + cloud-set node labels
    taints: Any = field(default_factory=list)               # list[Taint] | UNKNOWN
    node_types: Any = UNKNOWN              # list[str] | UNKNOWN
    guest_accelerator: tuple[str, int] | None = None
    counts_for_rules: bool = True         # see NestedPools.seen_by_rules
    pins_gpu: bool = False                # labels pin a GPU model (Karpenter instance-family / gpu-name)

    # -- attribute access relative to the pool block ----------------------
    def attr(self, path: str) -> str:
        return self.prefix + path

    def get(self, path: str, default: Any = None) -> Any:
        return self.view.get(path, default)

    def loc(self, path: str | None = None) -> Location:
        return self.resource.loc(self.attr(path) if path else None)

    @property
    def block_path(self) -> str:
        return self.prefix.rstrip(".")

    @property
    def address(self) -> str:
        return self.resource.address + (f".{self.block_path}" if self.prefix else "")

    # -- GPU capacity --------------------------------------------------------
    @property
    def is_gpu(self) -> bool:
        return self.accelerator is not None and self.accelerator is not UNKNOWN

    @property
    def gpus_per_node(self) -> float:
        return self.accelerator.count

    @property
    def gpu_name(self) -> str:
        return self.accelerator.gpu.name

    @property
    def gpu_types(self) -> list[str]:
        """The types for messages: as written, else the attached accelerator."""
        return list(self.instance_types or [self.accelerator.name])

    def describe_types(self) -> str:
        return ", ".join(self.gpu_types)

    @property
    def schedulable(self) -> bool:
        return self.spec.scheduling is not None

    # -- capacity as the link stage reports it ---------------------------------
    @property
    def spot(self) -> bool | None:
        return None if self.capacity is UNKNOWN else self.capacity == SPOT

    @property
    def reserved(self) -> bool:
        return self.capacity == RESERVED

    def capacity_reason(self) -> str:
        if self.capacity is UNKNOWN:
            return ""
        if self.capacity_attr is None:
            return "no capacity setting (on-demand by default)"
        return f"{self.capacity_attr} = {_shown(self.get(self.capacity_attr))}"

    def capacity_state(self) -> str:
        """"spot: capacity_type = SPOT", "on-demand: no spot setting", "capacity unknown"."""
        if self.capacity == ON_DEMAND and self.capacity_attr is None:
            return "on-demand: no spot setting"
        if self.capacity is UNKNOWN:
            return "capacity unknown"
        return f"{self.capacity}: {self.capacity_attr} = {self.get(self.capacity_attr)}"

    # -- the accelerator of one node, for placement ----------------------------
    def node_accelerator(self) -> Any:
        """The catalogue Accelerator of every node, or None (unknown, several
        different types, or no accelerator)."""
        from mlcost_lint import catalogue

        if self.node_types is UNKNOWN or not self.node_types:
            return None
        entries = [catalogue.instance_type(t) for t in self.node_types]
        if self.guest_accelerator is not None and entries == [None]:
            return catalogue.gcp_accelerator(self.guest_accelerator[0], self.guest_accelerator[1])
        if any(e is None for e in entries):
            return None
        if len({(e.gpu.name, e.count) for e in entries}) != 1:
            return None
        return entries[0]

    def node_type(self) -> Any:
        """The instance/machine type entry when the pool has exactly one type with an accelerator."""
        from mlcost_lint import catalogue

        if self.node_types is UNKNOWN or len(self.node_types) != 1:
            return None
        return catalogue.instance_type(self.node_types[0])

    def has_gpu(self) -> bool | None:
        """Whether the nodes carry accelerators (None when the types are unknown)."""
        if self.guest_accelerator is not None:
            return True
        if self.node_types is UNKNOWN:
            return None
        from mlcost_lint import catalogue

        return any(catalogue.instance_type(t) is not None for t in self.node_types)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _as_type_list(value: Any) -> Maybe[list[str]] | None:
    if value is None:
        return None
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        out: list[str] = []
        for item in value:
            if isinstance(item, dict):  # ASG overrides: [{instance_type: ...}]
                item = item.get("instance_type")
            if not isinstance(item, str):
                return UNKNOWN
            out.append(item)
        return out
    return UNKNOWN


def _instance_types(view: Any, spec: PoolSpec) -> Maybe[list[str]] | None:
    for path in spec.instance_types:
        types = _as_type_list(view.get(path))
        if types is not None:
            return types
    return None


def _accelerator_of(view: Any, spec: PoolSpec, types: Any) -> Maybe["Accelerator"] | None:
    """The GPU capacity per node: from the instance/machine type, or a
    GCP attached accelerator (which wins: an N1 VM with a T4 attached)."""
    from mlcost_lint.catalogue import gcp_accelerator, instance_type

    if types is UNKNOWN:
        return UNKNOWN
    if spec.accelerators:
        blocks = view.get(spec.accelerators)
        if blocks is UNKNOWN:
            return UNKNOWN
        if isinstance(blocks, dict):
            blocks = [blocks]
        if isinstance(blocks, list) and blocks:
            first = blocks[0]
            if not isinstance(first, dict):
                return UNKNOWN
            kind, count = first.get("type"), first.get("count", 1)
            if not isinstance(kind, str) or not isinstance(count, int) or isinstance(count, bool):
                return UNKNOWN
            if count <= 0:
                return None
            return gcp_accelerator(kind, count) or UNKNOWN
    if not types:
        return None
    entries = [instance_type(t) for t in types]
    if all(e is None for e in entries):
        return None          # no accelerator on any listed type: not GPU capacity
    if any(e is None for e in entries):
        return UNKNOWN       # a mix of GPU and non-GPU types: what runs is unknown
    return min(entries, key=lambda e: e.count)


def _capacity(view: Any, spec: PoolSpec) -> tuple[Maybe[str], str | None]:
    """SPOT / ON_DEMAND / RESERVED of a pool and the attribute that says so."""
    for kind, markers in ((RESERVED, spec.reserved), (UNKNOWN, spec.maybe_reserved), (SPOT, spec.spot)):
        for marker in markers:
            hit = marker.matches(view)
            if hit is UNKNOWN:
                return UNKNOWN, marker.attr
            if hit:
                return kind, marker.attr
    if not spec.on_demand_by_default:
        return UNKNOWN, None
    # A spot attribute written with an unknown value was handled above; an
    # absent one is Terraform's default, on-demand.
    return ON_DEMAND, (spec.spot[0].attr if spec.spot and view.get(spec.spot[0].attr) is not None else None)


_EFFECTS = {"no_schedule": "NoSchedule", "no_execute": "NoExecute", "prefer_no_schedule": "PreferNoSchedule"}


def _effect(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return _EFFECTS.get(value.lower(), value)


def _taint_block(item: Any) -> Taint | None:
    """``{key, value, effect}`` (EKS / GKE taint blocks)."""
    if item is UNKNOWN or not isinstance(item, dict):
        return None
    return Taint(item.get("key", UNKNOWN), item.get("value"), _effect(item.get("effect", UNKNOWN)))


def _aks_taint(item: Any) -> Taint | None:
    """``key=value:Effect`` (AKS node_taints)."""
    m = re.match(r"^([^=:]+)(?:=([^:]*))?:(\w+)$", item.strip()) if isinstance(item, str) else None
    return Taint(m.group(1), m.group(2), m.group(3)) if m else None


def _taints(raw: Any, parse: Any) -> list[Taint] | Any:
    """Every taint of a pool, UNKNOWN when any one is not known."""
    if raw is None:
        return []
    if raw is UNKNOWN or not isinstance(raw, list):
        return UNKNOWN
    out = []
    for item in raw:
        taint = parse(item)
        if taint is None:
            return UNKNOWN
        out.append(taint)
    return out


_TAINT_PARSERS = {"blocks": _taint_block, "aks": _aks_taint}


def _str_map(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items()}


def _schedule(pool: NodePool, sched: Scheduling, block: dict) -> None:
    """Fill what Kubernetes scheduling sees: name, node labels, taints, types."""
    if sched.name is None or (pool.resource.origin == "module-input" and sched.cloud == "aws"):
        # terraform-aws-modules names the group "<name>-<random>" unless
        # use_name_prefix = false, which the synthetic resource does not carry.
        pool.name = UNKNOWN
    else:
        pool.name = block.get(sched.name, UNKNOWN)
    labels = _str_map(pool.get(sched.labels)) if sched.labels else {}
    # Node types: the pool's instance/machine types, else the API default.
    # The API default applies unless e.g. a launch template (which may set the
    # type) is given; an unknown launch template leaves the type unknown.
    unless = block.get(sched.default_type_unless) if sched.default_type_unless else None
    if pool.instance_types is None and sched.default_type and unless is UNKNOWN:
        pool.node_types = UNKNOWN
    elif pool.instance_types is None and sched.default_type and not unless:
        pool.node_types = [sched.default_type]
    elif isinstance(pool.instance_types, list) and pool.instance_types:
        pool.node_types = pool.instance_types
    else:
        pool.node_types = UNKNOWN
    # An attached GCP accelerator (first block), as the GKE node label shows it.
    guest = pool.get(pool.spec.accelerators) if pool.spec.accelerators else None
    if isinstance(guest, list) and guest and isinstance(guest[0], dict):
        gtype, gcount = guest[0].get("type"), guest[0].get("count", 1)
        if isinstance(gtype, str) and isinstance(gcount, int):
            pool.guest_accelerator = (gtype, gcount)
            labels.setdefault("cloud.google.com/gke-accelerator", gtype)
    # The labels the cloud puts on every node.
    if sched.capacity_label is not None and pool.capacity is not UNKNOWN:
        label, values = sched.capacity_label
        labels.setdefault(label, values[pool.capacity])
    if sched.cloud == "google" and pool.capacity == SPOT and pool.capacity_attr:
        # node_config.spot -> cloud.google.com/gke-spot, preemptible -> gke-preemptible
        labels.setdefault("cloud.google.com/gke-" + pool.capacity_attr.rsplit(".", 1)[-1], "true")
    if sched.name is not None:
        for label in POOL_NAME_LABELS[sched.cloud]:
            labels.setdefault(label, pool.name)
    if isinstance(pool.node_types, list) and len(pool.node_types) == 1:
        labels.setdefault("node.kubernetes.io/instance-type", pool.node_types[0])
    pool.labels = labels
    # Taints not modelled (set in user data) are unknown.
    pool.taints = _taints(pool.get(sched.taints), _TAINT_PARSERS[sched.taint_format]) if sched.taints else UNKNOWN


def _pool(resource: "CloudResource", spec: PoolSpec, prefix: str, block: dict) -> NodePool:
    view: Any = _Block(block) if prefix else resource
    types = _instance_types(view, spec)
    accelerator = _accelerator_of(view, spec, types)
    capacity, capacity_attr = _capacity(view, spec)
    if getattr(resource, "reserved_by", None) and capacity != SPOT:
        capacity, capacity_attr = RESERVED, "launch_template"
    pool = NodePool(resource, spec, prefix, view, types, accelerator, capacity, capacity_attr)
    if spec.scheduling is not None:
        pool.cloud = spec.scheduling.cloud
        _schedule(pool, spec.scheduling, block)
    return pool


def node_pools(resource: "CloudResource") -> list[NodePool]:
    """Every node group / pool a managed resource declares (nested pool
    blocks included), GPU or not."""
    if resource.mode != "managed":
        return []
    spec = POOL_SPECS.get(resource.type)
    if spec is not None:
        return [_pool(resource, spec, "", resource.attrs)]
    nested = NESTED_POOL_SPECS.get(resource.type)
    if nested is None:
        return []
    blocks = resource.attrs.get(nested.block)
    if not isinstance(blocks, list):
        return []
    out = []
    for i, block in enumerate(blocks if nested.every else blocks[:1]):
        if isinstance(block, dict):
            pool = _pool(resource, nested.spec, f"{nested.block}.{i}." if nested.every else f"{nested.block}.", block)
            pool.counts_for_rules = nested.seen_by_rules
            out.append(pool)
    return out


# Resource types with pools Kubernetes pods can be scheduled on (the link
# stage's pools): a pool spec with a Scheduling row, at top level or nested.
SCHEDULABLE_POOL_TYPES: frozenset[str] = frozenset(
    [t for t, spec in POOL_SPECS.items() if spec.scheduling is not None]
    + [t for t, nested in NESTED_POOL_SPECS.items() if nested.spec.scheduling is not None])


def schedulable_pools(resource: "CloudResource") -> list[NodePool]:
    """The pools of ``resource`` Kubernetes pods can be scheduled on."""
    if resource.type not in SCHEDULABLE_POOL_TYPES:
        return []
    return [p for p in node_pools(resource) if p.schedulable]


def gpu_pools(project: Any) -> list[NodePool]:
    """Every pool in the project that is known GPU capacity, for checks that
    report at the pools (a sliced run's summary has none: see
    TerraformModel.cloud_only_resources)."""
    out = []
    for resource in project.terraform.cloud_only_resources():
        out.extend(p for p in node_pools(resource) if p.is_gpu and p.counts_for_rules)
    return out


KARPENTER_CAPACITY_LABEL = "karpenter.sh/capacity-type"


def karpenter_pools(documents: Iterable[Any]) -> list[NodePool]:
    """Karpenter NodePool objects (karpenter.sh/*, kind NodePool) among
    Kubernetes documents, as node pools: nodes carry
    ``karpenter.sh/nodepool: <name>``, the template's labels, single-valued
    ``In`` requirements as labels, and the template's taints."""
    from mlcost_lint.model.kubernetes_build import iter_objects

    out = []
    for doc in documents:
        for base, obj in iter_objects(doc):
            if obj.get("kind") != "NodePool" or not str(obj.get("apiVersion")).startswith("karpenter.sh/"):
                continue
            out.append(_karpenter_pool(doc, base, obj))
    return out


def _karpenter_pool(doc: Any, base: tuple, obj: dict) -> NodePool:
    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
    template = obj.get("spec", {}).get("template") if isinstance(obj.get("spec"), dict) else None
    template = template if isinstance(template, dict) else {}
    meta, spec = template.get("metadata"), template.get("spec")
    meta = meta if isinstance(meta, dict) else {}
    spec = spec if isinstance(spec, dict) else {}
    attrs: dict[str, Any] = {"name": name if isinstance(name, str) else UNKNOWN,
                             "labels": dict(_str_map(meta.get("labels")))}
    locs: dict[str, Location] = {}
    requirements = spec.get("requirements")
    for i, req in enumerate(requirements if isinstance(requirements, list) else []):
        if not isinstance(req, dict) or not isinstance(req.get("key"), str):
            continue
        key, op, values = req["key"], req.get("operator"), req.get("values")
        known = op == "In" and isinstance(values, list) and values and all(isinstance(v, str) for v in values)
        where = doc.location(base + ("spec", "template", "spec", "requirements", i))
        if key in INSTANCE_TYPE_LABELS:
            attrs["instance_types"], locs["instance_types"] = (list(values) if known else UNKNOWN), where
        elif key == KARPENTER_CAPACITY_LABEL:
            attrs["capacity_type"] = values[0] if known and len(values) == 1 else UNKNOWN
            locs["capacity_type"] = where
        elif known and len(values) == 1:
            attrs["labels"].setdefault(key, values[0])
    taints = spec.get("taints")
    attrs["taints"] = taints if isinstance(taints, list) else (None if taints is None else UNKNOWN)
    resource = CloudResource(type="karpenter.sh/NodePool", name=str(attrs["name"]),
                             address=f"NodePool/{attrs['name']}", provider="kubernetes",
                             location=doc.location(base), attrs=attrs, attr_locations=locs, origin="kubernetes")
    pool = _pool(resource, _KARPENTER_NODE_POOL, "", attrs)
    pool.pins_gpu = pool.is_gpu or pinned_gpu(pool.labels) is not None
    return pool
