"""GPU capacity and placement: the one place that knows which Terraform
resources (and Kubernetes node labels) are GPU capacity, with what instance
type / accelerator, minimum size, spot / on-demand / reserved setting,
labels and taints. The link stage and every rule read these facts here.

Terraform (one :class:`PoolSpec` row per resource type, in :data:`POOL_SPECS`
and :data:`NESTED_POOL_SPECS`; :data:`GPU_COMPUTE` for every resource type
that names accelerators):

    node_pools(resource) -> list[NodePool]
        Each node group / pool block of a resource as scheduling and the cost
        rules see it: name, node labels, taints, instance types, accelerator,
        capacity kind and the attribute that says so.
    gpu_pools(project) -> list[NodePool]
        The pools that are known GPU capacity (``pool.is_gpu``).
    kept_capacity(pool) -> KeptCapacity | UNKNOWN | None
        What a pool keeps running with no job.
    gpu_uses(resource) / all_gpu_uses(project) -> list[GpuUse]
        Every known accelerator a resource declares (pools, VMs, notebooks, TPUs).

Kubernetes (label tables :data:`INSTANCE_TYPE_LABELS`, :data:`REGION_LABELS`,
:data:`ZONE_LABELS`, :data:`POOL_NAME_LABELS`, :data:`NODE_LABEL_CAPACITY`,
:data:`SPOT_TAINTS`):

    selector_of(template) -> Selector
        The node labels a pod template requires.
    pinned_gpu(labels) -> GpuModel | None
        The GPU model node labels pin down.
    template_capacity(template, linked) -> TemplateCapacity
        Spot / on-demand / reserved for a pod template from its selectors,
        tolerations and the pools the link stage joined it to.

Every answer may be UNKNOWN (or None where documented); callers never fire
on an unknown.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Location, Maybe, Related

if TYPE_CHECKING:
    from mlcost_lint.catalogue import Accelerator, GpuModel
    from mlcost_lint.model.kubernetes import PodTemplate

SPOT = "spot"
ON_DEMAND = "on-demand"
RESERVED = "reserved"


# ============================================================ Kubernetes ===

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
# The label each cloud puts on a node naming its node group / pool.
POOL_NAME_LABELS: dict[str, tuple[str, ...]] = {
    "aws": ("eks.amazonaws.com/nodegroup",),
    "google": ("cloud.google.com/gke-nodepool",),
    "azurerm": ("kubernetes.azure.com/agentpool", "agentpool"),
    "karpenter": ("karpenter.sh/nodepool",),
}
# Labels the cloud or the node provisioner sets (not chosen by the user):
# matching one does not identify a pool by itself.
CLOUD_SET_LABEL_PREFIXES = ("eks.amazonaws.com/", "cloud.google.com/", "kubernetes.azure.com/",
                            "node.kubernetes.io/", "topology.kubernetes.io/", "karpenter.sh/", "karpenter.k8s.aws/")

# Node label -> value (lower case) -> capacity kind; "*" matches any value.
NODE_LABEL_CAPACITY: dict[str, dict[str, str]] = {
    "eks.amazonaws.com/capacitytype": {"spot": SPOT, "on_demand": ON_DEMAND, "capacity_block": RESERVED},
    "karpenter.sh/capacity-type": {"spot": SPOT, "on-demand": ON_DEMAND, "reserved": RESERVED},
    "cloud.google.com/gke-spot": {"true": SPOT},
    "cloud.google.com/gke-preemptible": {"true": SPOT},
    "cloud.google.com/gke-provisioning": {"spot": SPOT, "standard": ON_DEMAND},
    "kubernetes.azure.com/scalesetpriority": {"spot": SPOT},
    "cloud.google.com/reservation-name": {"*": RESERVED},
}
# Taints that only spot nodes carry (key -> values): tolerating one lets the pod run on spot.
SPOT_TAINTS: dict[str, frozenset[str]] = {
    "cloud.google.com/gke-spot": frozenset({"true"}),
    "cloud.google.com/gke-preemptible": frozenset({"true"}),
    "kubernetes.azure.com/scalesetpriority": frozenset({"spot"}),
    "karpenter.sh/capacity-type": frozenset({"spot"}),
    "eks.amazonaws.com/capacitytype": frozenset({"spot"}),
}
_TERMS_PATH = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")


@dataclass(slots=True)
class Requirement:
    """One node label a template requires, with every value it allows."""

    key: str
    values: list[str]
    location: Location
    source: str                  # "nodeSelector k=v", "required node affinity k In [...]"


@dataclass(slots=True)
class Selector:
    """Node labels a template requires.

    ``pairs``: label -> (value, location, source) for single-valued string
    requirements (nodeSelector, and required node affinity ``In`` with one
    value when there is a single ``nodeSelectorTerm``: several terms are
    alternatives). ``requirements``: every nodeSelector entry (booleans
    included) and every ``In`` expression, all values, for capacity labels.
    """

    pairs: dict[str, tuple[str, Location, str]] = field(default_factory=dict)
    requirements: list[Requirement] = field(default_factory=list)

    def labels(self) -> dict[str, str]:
        return {k: v for k, (v, _, _) in self.pairs.items()}


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def selector_of(template: "PodTemplate") -> Selector:
    sel = Selector()
    for key, value in template.node_selector.items():
        where = template.spec_loc("nodeSelector", key)
        if _scalar(value):
            sel.pairs[str(key)] = (str(value), where, f"nodeSelector {key}={value}")
        if isinstance(value, (str, bool, int)):
            text = str(value).lower() if not isinstance(value, bool) else ("true" if value else "false")
            sel.requirements.append(Requirement(str(key), [text], where, f"nodeSelector {key}={value}"))
    node: Any = template.affinity
    for k in _TERMS_PATH[1:]:
        node = node.get(k) if isinstance(node, dict) else None
    if isinstance(node, list) and len(node) == 1 and isinstance(node[0], dict):
        exprs = node[0].get("matchExpressions")
        if isinstance(exprs, list):
            for i, expr in enumerate(exprs):
                if not isinstance(expr, dict) or expr.get("operator") != "In":
                    continue
                values, key = expr.get("values"), expr.get("key")
                if not isinstance(key, str) or not isinstance(values, list):
                    continue
                where = template.spec_loc(*_TERMS_PATH, 0, "matchExpressions", i)
                sel.requirements.append(Requirement(key, [str(v) for v in values], where,
                                                    f"required node affinity {key} In {values}"))
                if len(values) == 1 and _scalar(values[0]):
                    sel.pairs.setdefault(key, (str(values[0]), where, f"required node affinity {key} In [{values[0]}]"))
    return sel


def is_cloud_set_label(label: str) -> bool:
    return label.startswith(CLOUD_SET_LABEL_PREFIXES)


def pinned_gpu(labels: Mapping[str, Any]) -> "GpuModel | None":
    """The GPU model node labels pin down (instance type, accelerator or GPU
    name labels), None when they pin nothing known."""
    try:
        from mlcost_lint.catalogue import Accelerator, from_node_labels
        found = from_node_labels(labels or {})
    except Exception:  # the catalogue must never break a rule
        return None
    if found is None:
        return None
    return found.gpu if isinstance(found, Accelerator) else found


# ============================================================= Terraform ===


@dataclass(frozen=True, slots=True)
class Marker:
    """``attr`` (dotted path) holding one of ``values`` (compared
    case-insensitively; True/False for booleans) marks a capacity kind.
    ``present``: any known, non-null, non-empty value counts."""

    attr: str
    values: tuple[Any, ...] = ()
    present: bool = False

    def matches(self, view: Any) -> Maybe[bool]:
        value = view.get(self.attr)
        if value is UNKNOWN:
            return UNKNOWN
        if value is None or value == "" or value == [] or value == {}:
            return False
        if self.present:
            return True
        return any(_same(value, v) for v in self.values)


def _same(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, bool) or isinstance(value, bool):
        return value is wanted or (isinstance(value, str) and value.lower() == str(wanted).lower())
    return isinstance(value, str) and value.strip().lower() == str(wanted).lower()


@dataclass(frozen=True, slots=True)
class Scheduling:
    """What Kubernetes scheduling sees of a node pool (only for pools whose
    nodes join a cluster). ``name``: attribute holding the pool name (None:
    unknown); ``labels`` / ``taints``: attributes with the node labels and
    taints (``taint_format`` "blocks" for ``{key, value, effect}`` blocks,
    "aks" for ``key=value:Effect`` strings; None: not modelled); ``default_type``:
    the API's node type when none is written; ``capacity_label``: the label
    the cloud sets on nodes for each capacity kind; ``absent_labels``:
    cloud labels the nodes lack unless the pool sets them (a selector
    asking for one contradicts the pool)."""

    cloud: str
    name: str | None
    labels: str | None
    taints: str | None
    taint_format: str = "blocks"
    default_type: str | None = None
    default_type_unless: str | None = None    # no default when this attribute is written
    capacity_label: tuple[str, dict[str, str]] | None = None
    absent_labels: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """How one resource type (or registry-module node group shape) states
    its GPU capacity.

    ``instance_types``: attribute paths holding an instance/machine type or a
    list of them (first present wins). ``accelerators``: a GCP
    ``guest_accelerator``-style list of ``{type, count}``. ``minimum`` /
    ``fixed``: how many nodes (or vCPUs when ``unit`` is "vcpus") are kept
    when autoscaling is on / off; ``autoscaling``: an attribute (bool flag or
    block) saying which one applies, None when only ``minimum`` exists.
    ``minimum_default`` / ``fixed_default``: the documented value when the
    attribute is absent (None: absent means unknown). ``maybe_reserved``: a
    setting that may or may not consume a reservation (capacity unknown).
    ``scheduling``: set for pools Kubernetes pods run on, so a PoolLink can
    point at them.
    """

    kind: str
    instance_types: tuple[str, ...] = ()
    accelerators: str | None = None
    minimum: tuple[str, ...] = ()
    minimum_default: int | None = None
    fixed: tuple[str, ...] = ()
    fixed_default: int | None = None
    autoscaling: tuple[str, ...] = ()       # a bool flag or a block; first present wins
    autoscaling_default: bool | None = None  # when no autoscaling attribute is written
    unit: str = "nodes"
    per_zone: bool = False
    spot: tuple[Marker, ...] = ()
    reserved: tuple[Marker, ...] = ()
    maybe_reserved: tuple[Marker, ...] = ()
    # A spot setting that is absent means on-demand (Terraform's default).
    on_demand_by_default: bool = True
    scheduling: Scheduling | None = None
    # Instance-type lookups through launch templates etc. are not modelled:
    # the resource names its type itself or it is unknown.


_EKS_NODE_GROUP = PoolSpec(
    kind="EKS node group",
    instance_types=("instance_types",),
    minimum=("scaling_config.min_size",),
    spot=(Marker("capacity_type", ("SPOT",)),),
    reserved=(Marker("capacity_type", ("CAPACITY_BLOCK",)),),
    scheduling=Scheduling(
        "aws", "node_group_name", "labels", "taint",
        default_type="t3.medium", default_type_unless="launch_template",      # the EKS API default
        capacity_label=("eks.amazonaws.com/capacityType",
                        {SPOT: "SPOT", ON_DEMAND: "ON_DEMAND", RESERVED: "CAPACITY_BLOCK"})),
)
# Also the EKS module's self_managed_node_groups (synthesized with instance_type
# and instance_market_options from the module inputs).
_ASG = PoolSpec(
    kind="autoscaling group",
    instance_types=("mixed_instances_policy.launch_template.override", "instance_type"),
    minimum=("min_size",),
    spot=(Marker("mixed_instances_policy.instances_distribution.on_demand_percentage_above_base_capacity", (0,)),
          Marker("instance_market_options.market_type", ("spot",))),
    on_demand_by_default=False,   # the launch template (not read) may ask for spot
    # Self-managed nodes join the cluster without a node-group name or
    # capacity-type label; their labels and taints come from the launch
    # template's user data (not read), so only the instance type links them.
    scheduling=Scheduling("aws", None, None, None,
                          absent_labels=("eks.amazonaws.com/nodegroup", "eks.amazonaws.com/capacityType")),
)
_BATCH = PoolSpec(
    kind="Batch compute environment",
    instance_types=("compute_resources.instance_type",),
    minimum=("compute_resources.min_vcpus",),
    minimum_default=0,
    unit="vcpus",
    spot=(Marker("compute_resources.type", ("SPOT",)),),
)
_GKE_NODE_POOL = PoolSpec(
    kind="GKE node pool",
    instance_types=("node_config.machine_type",),
    accelerators="node_config.guest_accelerator",
    minimum=("autoscaling.min_node_count", "autoscaling.total_min_node_count"),
    minimum_default=0,
    fixed=("node_count", "initial_node_count"),
    autoscaling=("autoscaling",),
    autoscaling_default=False,
    per_zone=True,
    spot=(Marker("node_config.spot", (True,)), Marker("node_config.preemptible", (True,))),
    reserved=(Marker("node_config.reservation_affinity.consume_reservation_type", ("SPECIFIC_RESERVATION",)),),
    # ANY_RESERVATION uses a matching reservation when one has room, else on-demand.
    maybe_reserved=(Marker("node_config.reservation_affinity.consume_reservation_type", ("ANY_RESERVATION",)),),
    scheduling=Scheduling("google", "name", "node_config.labels", "node_config.taint",
                          default_type="e2-medium",                           # the GKE default machine type
                          absent_labels=("cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible")),
)
_AKS_NODE_POOL = PoolSpec(
    kind="AKS node pool",
    instance_types=("vm_size",),
    minimum=("min_count",),
    fixed=("node_count",),
    # azurerm 4.x: auto_scaling_enabled; 3.x: enable_auto_scaling.
    autoscaling=("auto_scaling_enabled", "enable_auto_scaling"),
    autoscaling_default=False,
    spot=(Marker("priority", ("Spot",)),),
    reserved=(Marker("capacity_reservation_group_id", present=True),),
    scheduling=Scheduling("azurerm", "name", "node_labels", "node_taints", taint_format="aks",
                          capacity_label=("kubernetes.azure.com/scalesetpriority",
                                          {SPOT: "spot", ON_DEMAND: "regular", RESERVED: "regular"})),
)
_AZURE_ML_CLUSTER = PoolSpec(
    kind="Azure ML compute cluster",
    instance_types=("vm_size",),
    minimum=("scale_settings.min_node_count",),
    spot=(Marker("vm_priority", ("LowPriority",)),),
)
# An Azure ML CLI v2 compute YAML (type: amlcompute), read by mlcost_lint.model.azureml.
_AZURE_ML_COMPUTE_YAML = PoolSpec(
    kind="Azure ML compute",
    instance_types=("size",),
    minimum=("min_instances",),
    minimum_default=0,
    spot=(Marker("tier", ("low_priority", "LowPriority")),),
)
_GCE_TEMPLATE = PoolSpec(
    kind="GCE instance",
    instance_types=("machine_type",),
    accelerators="guest_accelerator",
    spot=(Marker("scheduling.provisioning_model", ("SPOT",)), Marker("scheduling.preemptible", (True,))),
    reserved=(Marker("reservation_affinity.type", ("SPECIFIC_RESERVATION", "ANY_RESERVATION")),),
)

# A Karpenter NodePool (karpenter.sh/v1), read by :func:`karpenter_pools` into
# these flat attributes from spec.template: instance_types (an In requirement on
# node.kubernetes.io/instance-type), capacity_type (karpenter.sh/capacity-type;
# absent: on-demand, the AWS provider's default), labels, taints.
_KARPENTER_NODE_POOL = PoolSpec(
    kind="Karpenter NodePool",
    instance_types=("instance_types",),
    spot=(Marker("capacity_type", ("spot",)),),
    reserved=(Marker("capacity_type", ("reserved",)),),
    scheduling=Scheduling("karpenter", "name", "labels", "taints",
                          capacity_label=("karpenter.sh/capacity-type",
                                          {SPOT: "spot", ON_DEMAND: "on-demand", RESERVED: "reserved"})),
)

# AWS ParallelCluster v3 compute resources (mlcost_lint.model.parallelcluster):
# MinCount defaults to 0; a queue's CapacityType defaults to ONDEMAND.
_PARALLELCLUSTER = PoolSpec(
    kind="ParallelCluster compute resource",
    instance_types=("InstanceType",),
    minimum=("MinCount",),
    minimum_default=0,
    spot=(Marker("CapacityType", ("SPOT",)),),
    reserved=(Marker("CapacityType", ("CAPACITY_BLOCK",)), Marker("CapacityReservationTarget", present=True)),
)

POOL_SPECS: dict[str, PoolSpec] = {
    "parallelcluster_compute_resource": _PARALLELCLUSTER,
    "aws_eks_node_group": _EKS_NODE_GROUP,
    "aws_autoscaling_group": _ASG,
    "aws_batch_compute_environment": _BATCH,
    "google_container_node_pool": _GKE_NODE_POOL,
    "azurerm_kubernetes_cluster_node_pool": _AKS_NODE_POOL,
    "azurerm_machine_learning_compute_cluster": _AZURE_ML_CLUSTER,
    "azureml/amlcompute": _AZURE_ML_COMPUTE_YAML,
    "google_compute_instance": _GCE_TEMPLATE,
    "google_compute_instance_template": _GCE_TEMPLATE,
    "google_compute_region_instance_template": _GCE_TEMPLATE,
}



@dataclass(frozen=True, slots=True)
class NestedPools:
    """Pool blocks inside a cluster resource: the block, the spec (attribute
    paths relative to the block), and whether every element of the block
    list is a pool (else only the first). ``seen_by_rules``: False where the
    capacity rules do not read these pools yet (only the link stage does)."""

    block: str
    spec: PoolSpec
    every: bool = False
    seen_by_rules: bool = True


NESTED_POOL_SPECS: dict[str, NestedPools] = {
    "azurerm_kubernetes_cluster": NestedPools("default_node_pool", _AKS_NODE_POOL),
    "google_container_cluster": NestedPools("node_pool", _GKE_NODE_POOL, every=True, seen_by_rules=False),
}


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


def gpu_pools(project: Any) -> list[NodePool]:
    """Every pool in the project that is known GPU capacity."""
    out = []
    for resource in project.terraform.resources:
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


# ------------------------------------------------------ kept capacity ---


@dataclass(slots=True)
class KeptCapacity:
    """What a pool keeps running with no job: ``nodes`` (at least), the
    attribute that sets it, and whether that value is a default."""

    nodes: int | None          # None: a fixed size whose count is not written
    attr: str | None
    value: Any
    defaulted: bool = False
    autoscaling: bool = True

    def gpus(self, pool: NodePool) -> float | None:
        return None if self.nodes is None else self.nodes * pool.gpus_per_node


def count_value(value: Any) -> Maybe[int] | None:
    """A written count: int, None when absent, UNKNOWN otherwise."""
    if value is None:
        return None
    if value is UNKNOWN or isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 18:
        return int(value.strip())
    return UNKNOWN


def _autoscaling_on(pool: NodePool) -> Maybe[bool]:
    spec = pool.spec
    if not spec.autoscaling:
        return True
    for path in spec.autoscaling:
        value = pool.get(path)
        if value is None:
            continue
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(value, bool):
            return value
        if isinstance(value, (list, dict)):
            return bool(value)      # an autoscaling block is written
        return UNKNOWN
    return UNKNOWN if spec.autoscaling_default is None else spec.autoscaling_default


def kept_capacity(pool: NodePool) -> Maybe[KeptCapacity] | None:
    """How much of the pool runs while idle: None when nothing (minimum 0),
    UNKNOWN when it cannot be known."""
    spec = pool.spec
    scaling = _autoscaling_on(pool)
    if scaling is UNKNOWN:
        return UNKNOWN
    if scaling:
        for path in spec.minimum:
            value = count_value(pool.get(path))
            if value is UNKNOWN:
                return UNKNOWN
            if value is not None:
                if value > 0:
                    return KeptCapacity(_nodes(pool, value), path, value)
                # a written 0 for one minimum still lets the other (total_*) decide
                continue
        written = any(pool.get(p) is not None for p in spec.minimum)
        if not written and spec.minimum_default:
            return KeptCapacity(_nodes(pool, spec.minimum_default), None, spec.minimum_default, defaulted=True)
        return None
    for path in spec.fixed:
        value = count_value(pool.get(path))
        if value is UNKNOWN:
            return UNKNOWN
        if value is not None:
            return KeptCapacity(value, path, value, autoscaling=False) if value > 0 else None
    if spec.fixed_default is not None:
        if spec.fixed_default <= 0:
            return None
        return KeptCapacity(spec.fixed_default, None, spec.fixed_default, defaulted=True, autoscaling=False)
    return KeptCapacity(None, None, None, autoscaling=False)


def _nodes(pool: NodePool, minimum: int) -> int:
    if pool.spec.unit != "vcpus":
        return minimum
    vcpus = pool.accelerator.vcpus
    return math.ceil(minimum / vcpus) if vcpus else 1


# ================================================ template capacity ===


@dataclass(slots=True)
class Evidence:
    """One statement about where a template runs. ``tier``: "requirement"
    (node selector / required affinity), "pool" (a linked Terraform pool) or
    "toleration" (a spot taint tolerated). ``how``: for rule messages;
    ``reason``: the short form the link stage reports."""

    kind: Maybe[str]
    location: Location | None
    how: str
    reason: str
    tier: str
    pool: NodePool | None = None
    reason_location: Location | None = None    # where ``reason`` is written (default: ``location``)


@dataclass(slots=True)
class TemplateCapacity:
    """Where a pod template runs: SPOT / ON_DEMAND / RESERVED / UNKNOWN with
    the evidence that decided (``evidence``, ``how``), the linked GPU pools
    and their locations for ``related``."""

    kind: Maybe[str]
    evidence: Location | None = None
    how: str = ""
    pools: list[NodePool] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)
    reason: str = ""                       # the link stage's short reason
    reason_location: Location | None = None

    @property
    def spot(self) -> bool | None:
        if self.kind is UNKNOWN:
            return None
        return self.kind == SPOT

    @property
    def reserved(self) -> bool:
        return self.kind == RESERVED

    @property
    def location(self) -> Location | None:
        return self.reason_location


def _label_capacity(key: str, values: Iterable[str]) -> Maybe[str] | None:
    table = NODE_LABEL_CAPACITY.get(key.lower())
    if table is None:
        return None
    kinds = set()
    for value in values:
        kind = table.get(value.lower()) or table.get("*")
        if kind is None:
            return UNKNOWN       # a value we do not know for a capacity label
        kinds.add(kind)
    if len(kinds) != 1:
        return UNKNOWN
    return kinds.pop()


def _template_evidence(template: "PodTemplate", selector: Selector) -> tuple[list[Evidence], list[Evidence]]:
    """(requirement evidence, toleration evidence) of a template."""
    required: list[Evidence] = []
    for req in selector.requirements:
        kind = _label_capacity(req.key, req.values)
        if kind is not None:
            required.append(Evidence(kind, req.location, req.source, req.source, "requirement"))
    tolerated: list[Evidence] = []
    for i, toleration in enumerate(template.tolerations):
        key = toleration.get("key")
        if not isinstance(key, str) or key.lower() not in SPOT_TAINTS:
            continue
        operator = toleration.get("operator", "Equal")
        value = str(toleration.get("value", "")).lower()
        if operator == "Exists" or value in SPOT_TAINTS[key.lower()]:
            tolerated.append(Evidence(SPOT, template.spec_loc("tolerations", i),
                                      f"toleration of the spot taint {key}", f"tolerates the spot taint {key}",
                                      "toleration"))
    return required, tolerated


def template_capacity(template: "PodTemplate", linked: Iterable[tuple[NodePool, Location, str]] = ()
                      ) -> TemplateCapacity:
    """Spot / on-demand / reserved for one pod template, from its node
    selector and required affinity, its spot tolerations, and the pools it
    is linked to (``(pool, link evidence, link how)``).

    The costliest certain reading decides: reserved (already paid for), then
    spot (a pod that may be preempted must survive it); on-demand needs
    evidence and no unknown. GPU pools count, other linked pools only as
    the most specific statement. The most specific statement (a requirement,
    else the linked pool, else a toleration) must agree: where it says
    otherwise the answer is unknown."""
    required, tolerated = _template_evidence(template, selector_of(template))
    pooled: list[Evidence] = []
    pools: list[NodePool] = []
    counted_pools: list[NodePool] = []
    related: list[Related] = []
    for pool, where, how in linked:
        text = f"{how} -> {pool.spec.kind} {pool.address}, {pool.capacity_state()}"
        pooled.append(Evidence(pool.capacity, where, text, f"{pool.capacity_reason()} on {pool.address}", "pool",
                               pool, pool.loc(pool.capacity_attr)))
        if not (pool.is_gpu or pool.pins_gpu) or not pool.counts_for_rules:
            continue
        counted_pools.append(pool)
        if not pool.is_gpu:
            continue
        pools.append(pool)
        related.append(Related(pool.loc(pool.capacity_attr), f"{pool.spec.kind} {pool.address}"
                               f" ({pool.capacity if pool.capacity is not UNKNOWN else 'capacity unknown'})"))
    counted = required + tolerated + [e for e in pooled if e.pool in counted_pools]
    kind: Maybe[str] = UNKNOWN
    decisive: Evidence | None = None
    for wanted in (RESERVED, SPOT):
        decisive = next((e for e in counted if e.kind == wanted), None)
        if decisive is not None:
            kind = wanted
            break
    else:
        if counted and all(e.kind is not UNKNOWN for e in counted):
            kind, decisive = ON_DEMAND, counted[0]
    specific = next((e for e in required + pooled + tolerated if e.kind is not UNKNOWN), None)
    if decisive is None or specific is None or specific.kind != kind:
        return TemplateCapacity(UNKNOWN, None, "", pools, related)
    return TemplateCapacity(kind, decisive.location, decisive.how, pools, related, specific.reason,
                            specific.reason_location or specific.location)


# ====================================================== GPU declarations ===

# type -> (dotted path, what it holds). "instance": an instance/machine type
# or VM size (or a list of them); "accelerator": GCP guest_accelerator-style
# blocks with a type and a count; "tpu": a Cloud TPU accelerator type.
GPU_COMPUTE: dict[str, tuple[tuple[str, str], ...]] = {
    "aws_instance": (("instance_type", "instance"),),
    "aws_spot_instance_request": (("instance_type", "instance"),),
    "aws_launch_template": (("instance_type", "instance"),),
    "aws_launch_configuration": (("instance_type", "instance"),),
    "aws_eks_node_group": (("instance_types", "instance"),),
    # instance_type: self-managed node groups read from the EKS module's inputs.
    "aws_autoscaling_group": (("mixed_instances_policy.launch_template.override.instance_type", "instance"),
                              ("instance_type", "instance")),
    "aws_batch_compute_environment": (("compute_resources.instance_type", "instance"),),
    "aws_sagemaker_notebook_instance": (("instance_type", "instance"),),
    "aws_sagemaker_endpoint_configuration": (("production_variants.instance_type", "instance"),),
    "aws_sagemaker_training_job": (("resource_config.instance_type", "instance"),),
    "azureml/amlcompute": (("size", "instance"),),     # Azure ML compute YAML (mlcost_lint.model.azureml)
    "google_compute_instance": (("machine_type", "instance"), ("guest_accelerator", "accelerator")),
    "google_compute_instance_template": (("machine_type", "instance"), ("guest_accelerator", "accelerator")),
    "google_compute_region_instance_template": (("machine_type", "instance"),
                                                ("guest_accelerator", "accelerator")),
    "google_container_node_pool": (("node_config.machine_type", "instance"),
                                   ("node_config.guest_accelerator", "accelerator")),
    "google_container_cluster": (("node_config.machine_type", "instance"),
                                 ("node_config.guest_accelerator", "accelerator"),
                                 ("node_pool.node_config.machine_type", "instance"),
                                 ("node_pool.node_config.guest_accelerator", "accelerator")),
    "google_workbench_instance": (("gce_setup.machine_type", "instance"),
                                  ("gce_setup.accelerator_configs", "accelerator")),
    "google_notebooks_instance": (("machine_type", "instance"), ("accelerator_config", "accelerator")),
    "google_tpu_v2_vm": (("accelerator_type", "tpu"),),
    "google_tpu_node": (("accelerator_type", "tpu"),),
    "azurerm_kubernetes_cluster": (("default_node_pool.vm_size", "instance"),),
    "azurerm_kubernetes_cluster_node_pool": (("vm_size", "instance"),),
    "azurerm_linux_virtual_machine": (("size", "instance"),),
    "azurerm_windows_virtual_machine": (("size", "instance"),),
    "azurerm_virtual_machine": (("vm_size", "instance"),),
    "azurerm_linux_virtual_machine_scale_set": (("sku", "instance"),),
    "azurerm_windows_virtual_machine_scale_set": (("sku", "instance"),),
    "azurerm_orchestrated_virtual_machine_scale_set": (("sku_name", "instance"),),
    "azurerm_machine_learning_compute_cluster": (("vm_size", "instance"),),
    "azurerm_machine_learning_compute_instance": (("virtual_machine_size", "instance"),),
}


@dataclass(frozen=True, slots=True)
class GpuUse:
    resource: "CloudResource"
    model: Any                 # catalogue GpuModel
    per_instance: float        # accelerators per VM / node
    written: str               # the type as written ("p4d.24xlarge", "nvidia-l4")
    attr: str                  # where it is written (dotted)

    @property
    def location(self) -> Location:
        r = self.resource
        for path in (self.attr, self.attr.rsplit(".", 1)[0]):
            if path in r.attr_locations:
                return r.attr_locations[path]
        return r.location

    def describe(self) -> str:
        count = f"{self.per_instance:g} x " if self.per_instance != 1 else ""
        return f"{self.written} ({count}{self.model.name})"


def values_at(node: Any, path: str) -> Iterator[Any]:
    """Every value at a dotted path, through every element of nested block lists."""
    parts = path.split(".")

    def walk(value: Any, i: int) -> Iterator[Any]:
        if value is UNKNOWN:
            yield UNKNOWN
            return
        if isinstance(value, list) and i < len(parts):
            for item in value:
                yield from walk(item, i)
            return
        if i == len(parts):
            if isinstance(value, list):
                yield from value
            elif value is not None:
                yield value
            return
        if isinstance(value, dict) and parts[i] in value:
            yield from walk(value[parts[i]], i + 1)

    yield from walk(node, 0)


def _accelerator_name(raw: str) -> str:
    # Workbench/Notebooks write NVIDIA_TESLA_T4; Compute writes nvidia-tesla-t4.
    return raw.strip().lower().replace("_", "-")


def _use(resource: "CloudResource", value: Any, kind: str, path: str) -> GpuUse | None:
    from mlcost_lint import catalogue

    if kind in ("instance", "tpu"):
        if not isinstance(value, str):
            return None
        entry = catalogue.instance_type(value) if kind == "instance" else catalogue.gcp_accelerator(value)
        return GpuUse(resource, entry.gpu, entry.count, value, path) if entry is not None else None
    if not isinstance(value, dict):
        return None
    name = value.get("type")
    count = value.get("count", value.get("core_count"))
    if not isinstance(name, str) or isinstance(count, bool) or not isinstance(count, (int, float)) or count <= 0:
        return None   # an unknown or zero count: not known GPU capacity
    entry = catalogue.gcp_accelerator(_accelerator_name(name), int(count))
    return GpuUse(resource, entry.gpu, entry.count, name, path) if entry is not None else None


def gpu_uses(resource: "CloudResource") -> list[GpuUse]:
    """The known accelerators a resource declares (empty when none or unknown)."""
    spec = GPU_COMPUTE.get(resource.type)
    if spec is None or resource.mode != "managed":
        return []
    if resource.type == "google_container_cluster" and resource.attrs.get("remove_default_node_pool") is True:
        spec = tuple(s for s in spec if not s[0].startswith("node_config."))
    out: list[GpuUse] = []
    seen: set[tuple[str, str]] = set()
    for path, kind in spec:
        for value in values_at(resource.attrs, path):
            use = _use(resource, value, kind, path)
            if use is not None and (use.written, use.attr) not in seen:
                seen.add((use.written, use.attr))
                out.append(use)
    return out


def all_gpu_uses(project: Any) -> list[GpuUse]:
    out: list[GpuUse] = []
    for r in project.terraform.resources:
        out.extend(gpu_uses(r))
    return out
