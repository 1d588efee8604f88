"""Shared knowledge for the GPU capacity rules (MLC203, MLC205, MLC207, MLC208).

Two questions, each answered from tables rather than branches:

* What GPU capacity does a Terraform resource keep, at what minimum size, and
  is it spot, on-demand or reserved?  (:func:`gpu_pool`, one
  :class:`PoolSpec` row per resource type or registry-module node group shape.)
* Where does a Kubernetes pod template run: spot, on-demand or reserved
  capacity?  (:func:`capacity_of`, from its node selector, required node
  affinity, tolerations and the Terraform pools the link stage joined it to.)

Every answer may be UNKNOWN; callers never fire on an unknown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from mlcost_lint.model.core import UNKNOWN, Location, Maybe, Related

if TYPE_CHECKING:
    from mlcost_lint.catalogue import Accelerator
    from mlcost_lint.model.cloud import CloudResource
    from mlcost_lint.model.kubernetes import PodTemplate
    from mlcost_lint.model.project import Project

SPOT = "spot"
ON_DEMAND = "on-demand"
RESERVED = "reserved"


# ------------------------------------------------------------ Terraform ---


@dataclass(frozen=True, slots=True)
class Marker:
    """``attr`` (dotted path) holding one of ``values`` (compared
    case-insensitively; True/False for booleans) marks a capacity kind.
    ``present``: any known, non-null, non-empty value counts."""

    attr: str
    values: tuple[Any, ...] = ()
    present: bool = False

    def matches(self, resource: "CloudResource") -> Maybe[bool]:
        value = resource.get(self.attr)
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
class PoolSpec:
    """How one resource type (or registry-module node group shape) states
    its GPU capacity.

    ``instance_types``: attribute paths holding an instance/machine type or a
    list of them (first present wins). ``accelerators``: a GCP
    ``guest_accelerator``-style list of ``{type, count}``, or the attribute
    pair (type, count) of a module input. ``minimum`` / ``fixed``: how many
    nodes (or vCPUs when ``unit`` is "vcpus") are kept when autoscaling is on /
    off; ``autoscaling``: an attribute (bool flag or block) saying which one
    applies, None when only ``minimum`` exists. ``minimum_default`` /
    ``fixed_default``: the documented value when the attribute is absent
    (None: absent means unknown). ``schedulable``: whether Kubernetes pods
    run on it (a node pool), so a PoolLink can point at it.
    """

    kind: str
    instance_types: tuple[str, ...] = ()
    accelerators: str | None = None
    accelerator_pair: tuple[str, str] | None = None
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
    # A spot setting that is absent means on-demand (Terraform's default).
    on_demand_by_default: bool = True
    schedulable: bool = True
    # Instance-type lookups through launch templates etc. are not modelled:
    # the resource names its type itself or it is unknown.


_EKS_NODE_GROUP = PoolSpec(
    kind="EKS node group",
    instance_types=("instance_types",),
    minimum=("scaling_config.min_size",),
    spot=(Marker("capacity_type", ("SPOT",)),),
    reserved=(Marker("capacity_type", ("CAPACITY_BLOCK",)),),
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
)
_BATCH = PoolSpec(
    kind="Batch compute environment",
    instance_types=("compute_resources.instance_type",),
    minimum=("compute_resources.min_vcpus",),
    minimum_default=0,
    unit="vcpus",
    spot=(Marker("compute_resources.type", ("SPOT",)),),
    schedulable=False,
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
    reserved=(Marker("node_config.reservation_affinity.consume_reservation_type",
                     ("SPECIFIC_RESERVATION", "ANY_RESERVATION")),),
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
)
_AZURE_ML_CLUSTER = PoolSpec(
    kind="Azure ML compute cluster",
    instance_types=("vm_size",),
    minimum=("scale_settings.min_node_count",),
    spot=(Marker("vm_priority", ("LowPriority",)),),
    schedulable=False,
)
_GCE_TEMPLATE = PoolSpec(
    kind="GCE instance",
    instance_types=("machine_type",),
    accelerators="guest_accelerator",
    spot=(Marker("scheduling.provisioning_model", ("SPOT",)), Marker("scheduling.preemptible", (True,))),
    reserved=(Marker("reservation_affinity.type", ("SPECIFIC_RESERVATION", "ANY_RESERVATION")),),
    schedulable=False,
)

POOL_SPECS: dict[str, PoolSpec] = {
    "aws_eks_node_group": _EKS_NODE_GROUP,
    "aws_autoscaling_group": _ASG,
    "aws_batch_compute_environment": _BATCH,
    "google_container_node_pool": _GKE_NODE_POOL,
    "azurerm_kubernetes_cluster_node_pool": _AKS_NODE_POOL,
    "azurerm_machine_learning_compute_cluster": _AZURE_ML_CLUSTER,
    "google_compute_instance": _GCE_TEMPLATE,
    "google_compute_instance_template": _GCE_TEMPLATE,
    "google_compute_region_instance_template": _GCE_TEMPLATE,
}

# Nested pools inside a cluster resource: (resource type, block) -> spec with
# attribute paths relative to the block.
NESTED_POOL_SPECS: dict[tuple[str, str], PoolSpec] = {
    ("azurerm_kubernetes_cluster", "default_node_pool"): _AKS_NODE_POOL,
}


def spec_for(resource: "CloudResource") -> PoolSpec | None:
    """Registry-module node groups (origin "module-input") carry the real
    resource's type and plan shape, with the module's defaults filled in."""
    return POOL_SPECS.get(resource.type)


@dataclass(slots=True)
class GpuPool:
    """GPU capacity declared by one Terraform resource."""

    resource: "CloudResource"
    spec: PoolSpec
    instance_types: list[str]
    accelerator: "Accelerator"          # the first type's catalogue entry
    gpus_per_node: float                # the smallest over the listed types
    capacity: Maybe[str]                # SPOT / ON_DEMAND / RESERVED / UNKNOWN
    capacity_attr: str | None           # where the capacity setting is written
    prefix: str = ""                    # nested block path ("default_node_pool.")

    def attr(self, path: str) -> str:
        return self.prefix + path

    def get(self, path: str, default: Any = None) -> Any:
        return self.resource.get(self.attr(path), default)

    def loc(self, path: str | None = None) -> Location:
        return self.resource.loc(self.attr(path) if path else None)

    @property
    def address(self) -> str:
        return self.resource.address + (f".{self.prefix.rstrip('.')}" if self.prefix else "")

    @property
    def gpu_name(self) -> str:
        return self.accelerator.gpu.name

    def describe_types(self) -> str:
        return ", ".join(self.instance_types)


class _Nested:
    """A view of a nested block as if it were a resource (for Marker)."""

    def __init__(self, resource: "CloudResource", prefix: str) -> None:
        self.resource = resource
        self.prefix = prefix

    def get(self, path: str, default: Any = None) -> Any:
        return self.resource.get(self.prefix + path, default)


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


def _accelerator_of(view: Any, spec: PoolSpec, types: list[str]) -> Maybe["Accelerator"] | None:
    """The GPU capacity per node: from the instance/machine type, or a
    GCP attached accelerator (which wins: an N1 VM with a T4 attached)."""
    from mlcost_lint.catalogue import gcp_accelerator, instance_type

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
    if spec.accelerator_pair:
        kind = view.get(spec.accelerator_pair[0])
        if kind is UNKNOWN:
            return UNKNOWN
        if isinstance(kind, str) and kind:
            count = view.get(spec.accelerator_pair[1], 1)
            if not isinstance(count, int) or isinstance(count, bool):
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
    for kind, markers in ((RESERVED, spec.reserved), (SPOT, spec.spot)):
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


def gpu_pool(resource: "CloudResource") -> GpuPool | None:
    """The GPU capacity a resource declares, or None when it is not GPU
    capacity or what it runs is unknown."""
    spec = spec_for(resource)
    if spec is not None:
        return _pool(resource, spec, "")
    for (rtype, block), nested in NESTED_POOL_SPECS.items():
        if resource.type == rtype:
            return _pool(resource, nested, block + ".")
    return None


def _pool(resource: "CloudResource", spec: PoolSpec, prefix: str) -> GpuPool | None:
    view: Any = _Nested(resource, prefix) if prefix else resource
    if prefix and resource.get(prefix.rstrip(".")) in (None, UNKNOWN):
        return None
    types = _instance_types(view, spec)
    if types is UNKNOWN:
        return None
    accelerator = _accelerator_of(view, spec, types or [])
    if accelerator is None or accelerator is UNKNOWN:
        return None
    capacity, capacity_attr = _capacity(view, spec)
    return GpuPool(
        resource=resource, spec=spec, instance_types=list(types or [accelerator.name]),
        accelerator=accelerator, gpus_per_node=accelerator.count, capacity=capacity,
        capacity_attr=capacity_attr, prefix=prefix,
    )


@dataclass(slots=True)
class KeptCapacity:
    """What a pool keeps running with no job: ``nodes`` (at least), the
    attribute that sets it, and whether that value is a default."""

    nodes: int | None          # None: a fixed size whose count is not written
    attr: str | None
    value: Any
    defaulted: bool = False
    autoscaling: bool = True

    def gpus(self, pool: GpuPool) -> float | None:
        return None if self.nodes is None else self.nodes * pool.gpus_per_node


def _int(value: Any) -> Maybe[int] | None:
    if value is None:
        return None
    if value is UNKNOWN or isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return UNKNOWN


def _autoscaling_on(pool: GpuPool) -> Maybe[bool]:
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


def kept_capacity(pool: GpuPool) -> Maybe[KeptCapacity] | None:
    """How much of the pool runs while idle: None when nothing (minimum 0),
    UNKNOWN when it cannot be known."""
    spec = pool.spec
    scaling = _autoscaling_on(pool)
    if scaling is UNKNOWN:
        return UNKNOWN
    if scaling:
        for path in spec.minimum:
            value = _int(pool.get(path))
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
        value = _int(pool.get(path))
        if value is UNKNOWN:
            return UNKNOWN
        if value is not None:
            return KeptCapacity(value, path, value, autoscaling=False) if value > 0 else None
    if spec.fixed_default is not None:
        if spec.fixed_default <= 0:
            return None
        return KeptCapacity(spec.fixed_default, None, spec.fixed_default, defaulted=True, autoscaling=False)
    return KeptCapacity(None, None, None, autoscaling=False)


def _nodes(pool: GpuPool, minimum: int) -> int:
    if pool.spec.unit != "vcpus":
        return minimum
    vcpus = pool.accelerator.vcpus
    return math.ceil(minimum / vcpus) if vcpus else 1


def gpu_pools(project: "Project") -> list[GpuPool]:
    out = []
    for resource in project.terraform.resources:
        if resource.mode != "managed":
            continue
        pool = gpu_pool(resource)
        if pool is not None:
            out.append(pool)
    return out


def format_gpus(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


# ----------------------------------------------------------- Kubernetes ---

# Node label -> value (lower case) -> capacity kind.
NODE_LABEL_CAPACITY: dict[str, dict[str, str]] = {
    "eks.amazonaws.com/capacitytype": {"spot": SPOT, "on_demand": ON_DEMAND, "capacity_block": RESERVED},
    "karpenter.sh/capacity-type": {"spot": SPOT, "on-demand": ON_DEMAND, "reserved": RESERVED},
    "cloud.google.com/gke-spot": {"true": SPOT},
    "cloud.google.com/gke-preemptible": {"true": SPOT},
    "cloud.google.com/gke-provisioning": {"spot": SPOT, "standard": ON_DEMAND},
    "kubernetes.azure.com/scalesetpriority": {"spot": SPOT},
    "cloud.google.com/reservation-name": {"*": RESERVED},
}
# Taints that spot nodes carry: tolerating one lets the pod run on spot.
SPOT_TAINT_KEYS: dict[str, frozenset[str]] = {
    "cloud.google.com/gke-spot": frozenset({"true"}),
    "cloud.google.com/gke-preemptible": frozenset({"true"}),
    "kubernetes.azure.com/scalesetpriority": frozenset({"spot"}),
    "karpenter.sh/capacity-type": frozenset({"spot"}),
    "eks.amazonaws.com/capacitytype": frozenset({"spot"}),
}


@dataclass(slots=True)
class Capacity:
    """Where a pod template runs, with the evidence."""

    kind: Maybe[str]                       # SPOT / ON_DEMAND / RESERVED / UNKNOWN
    evidence: Location | None = None
    how: str = ""
    pools: list[GpuPool] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)


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


def _template_markers(template: "PodTemplate") -> list[tuple[str, Location, str]]:
    """(kind or UNKNOWN, where, how) for each capacity marker of a template."""
    found: list[tuple[Any, Location, str]] = []
    for key, value in template.node_selector.items():
        if not isinstance(value, (str, bool, int)):
            continue
        text = str(value).lower() if not isinstance(value, bool) else ("true" if value else "false")
        kind = _label_capacity(key, [text])
        if kind is not None:
            found.append((kind, template.spec_loc("nodeSelector", key), f"nodeSelector {key}={value}"))
    terms = _dig(template.affinity, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                 "nodeSelectorTerms")
    if isinstance(terms, list) and len(terms) == 1 and isinstance(terms[0], dict):
        exprs = terms[0].get("matchExpressions")
        if isinstance(exprs, list):
            for i, expr in enumerate(exprs):
                if not isinstance(expr, dict) or expr.get("operator") != "In":
                    continue
                key, values = expr.get("key"), expr.get("values")
                if not isinstance(key, str) or not isinstance(values, list):
                    continue
                kind = _label_capacity(key, [str(v) for v in values])
                if kind is not None:
                    where = template.spec_loc("affinity", "nodeAffinity",
                                              "requiredDuringSchedulingIgnoredDuringExecution",
                                              "nodeSelectorTerms", 0, "matchExpressions", i)
                    found.append((kind, where, f"required node affinity {key} In {values}"))
    for i, toleration in enumerate(template.tolerations):
        key = toleration.get("key")
        if not isinstance(key, str) or key.lower() not in SPOT_TAINT_KEYS:
            continue
        operator = toleration.get("operator", "Equal")
        value = str(toleration.get("value", "")).lower()
        if operator == "Exists" or value in SPOT_TAINT_KEYS[key.lower()]:
            found.append((SPOT, template.spec_loc("tolerations", i), f"toleration of the spot taint {key}"))
    return found


def _dig(node: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def capacity_of(project: "Project", template: "PodTemplate") -> Capacity:
    """Spot / on-demand / reserved for one pod template, from its own
    markers and the Terraform pools it is linked to. Reserved wins (already
    paid for); then spot; on-demand needs positive evidence."""
    markers = _template_markers(template)
    pools: list[GpuPool] = []
    related: list[Related] = []
    for link in project.links.pools_of(template):
        pool = gpu_pool(link.pool)
        if pool is None:
            continue
        pools.append(pool)
        if pool.capacity == ON_DEMAND and pool.capacity_attr is None:
            state = "on-demand: no spot setting"
        elif pool.capacity is UNKNOWN:
            state = "capacity unknown"
        else:
            state = f"{pool.capacity}: {pool.capacity_attr} = {pool.get(pool.capacity_attr)}"
        markers.append((pool.capacity, link.evidence, f"{link.how} -> {pool.spec.kind} {pool.address}, {state}"))
        related.append(Related(pool.loc(pool.capacity_attr), f"{pool.spec.kind} {pool.address}"
                               f" ({pool.capacity if pool.capacity is not UNKNOWN else 'capacity unknown'})"))
    result = _decide(markers, pools, related)
    # The link stage decides the same question for other rules: where it
    # contradicts this answer, neither is trusted.
    linked = _linked_capacity(project, template)
    if linked is not None and result.kind is not UNKNOWN and linked != result.kind:
        return Capacity(UNKNOWN, None, "", pools, related)
    return result


def _decide(markers: list, pools: list[GpuPool], related: list[Related]) -> Capacity:
    kinds = [m[0] for m in markers]
    for wanted in (RESERVED, SPOT):
        for kind, where, how in markers:
            if kind == wanted:
                return Capacity(wanted, where, how, pools, related)
    if any(k is UNKNOWN for k in kinds) or not markers:
        return Capacity(UNKNOWN, None, "", pools, related)
    kind, where, how = markers[0]
    return Capacity(ON_DEMAND, where, how, pools, related)


def _linked_capacity(project: "Project", template: "PodTemplate") -> str | None:
    """The link stage's placement verdict (RESERVED / SPOT / ON_DEMAND), None when it has none."""
    try:
        from mlcost_lint.link import capacity_of as linked_capacity_of
        verdict = linked_capacity_of(project, template)
    except Exception:     # the link stage is optional for these rules
        return None
    if getattr(verdict, "reserved", False):
        return RESERVED
    spot = getattr(verdict, "spot", None)
    if spot is True:
        return SPOT
    if spot is False:
        return ON_DEMAND
    return None


# ------------------------------------------------- Kubernetes batch jobs ---

KUBEFLOW_V1_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"})


def is_volcano_job(workload: Any) -> bool:
    return workload.kind == "Job" and workload.api_version.startswith("batch.volcano.sh/")


def job_kind(workload: Any) -> str | None:
    """The batch family of a workload: "job", "cronjob", "kubeflow",
    "trainjob", "rayjob", "volcano", "jobset"; None for long-running kinds."""
    if is_volcano_job(workload):
        return "volcano"
    return {
        "Job": "job", "CronJob": "cronjob", "TrainJob": "trainjob", "RayJob": "rayjob", "JobSet": "jobset",
        **{k: "kubeflow" for k in KUBEFLOW_V1_KINDS},
    }.get(workload.kind)


# Where each batch family bounds its run time, relative to the object. Kubeflow
# v1 operators read runPolicy; the older top-level fields are still accepted.
DEADLINE_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "job": (("spec", "activeDeadlineSeconds"),),
    "cronjob": (("spec", "jobTemplate", "spec", "activeDeadlineSeconds"),),
    "kubeflow": (("spec", "runPolicy", "activeDeadlineSeconds"), ("spec", "activeDeadlineSeconds")),
    "trainjob": (("spec", "activeDeadlineSeconds"),),
    "rayjob": (("spec", "activeDeadlineSeconds"),),
    "volcano": (),      # Volcano Job has no run-time bound of its own (only per pod)
    "jobset": (),       # per child Job: see child_job_path
}


def workload_value(workload: Any, path: tuple) -> tuple[Any, tuple]:
    """(value, absolute key path) of ``path`` under a workload; (None, path) when absent."""
    full = tuple(workload.key_path) + tuple(path)
    return workload.document.get(full), full


def first_written(workload: Any, paths: Iterable[tuple]) -> tuple[Any, tuple | None]:
    for path in paths:
        value, full = workload_value(workload, path)
        if value is not None:
            return value, full
    return None, None


def child_job_path(workload: Any, template: Any) -> tuple | None:
    """For a JobSet template: the absolute key path of its child Job spec."""
    if workload.kind != "JobSet":
        return None
    return tuple(template.key_path[:-1])


def count_value(value: Any) -> Maybe[int] | None:
    """A written count: int, None when absent, UNKNOWN otherwise."""
    return _int(value)


# ------------------------------------------------ checkpoint durability ---

DISABLED = "disabled"     # the config saves no checkpoints
EPHEMERAL = "ephemeral"   # saved where a preempted node takes them along
DURABLE = "durable"       # object store or a persistent volume

OBJECT_STORE_SCHEMES = ("s3://", "s3a://", "gs://", "gcs://", "az://", "abfs://", "abfss://", "wasb://",
                        "wasbs://", "hf://", "dbfs:/", "oci://", "r2://")
# Volume sources whose data outlives the pod and its node.
PERSISTENT_VOLUME_SOURCES = frozenset({
    "persistentVolumeClaim", "nfs", "csi", "azureFile", "azureDisk", "cephfs", "glusterfs", "awsElasticBlockStore",
    "gcePersistentDisk", "iscsi", "fc", "rbd", "portworxVolume", "quobyte", "storageos", "vsphereVolume",
    "cinder", "flocker", "photonPersistentDisk", "scaleIO",
})
# Flags that override the config's output directory on the command line.
OUTPUT_DIR_FLAGS = ("--output_dir", "--output-dir", "--default_root_dir", "--trainer.default_root_dir")
# Hub strategies that push resumable checkpoints (not just the final model).
HUB_CHECKPOINT_STRATEGIES = frozenset({"checkpoint", "all_checkpoints"})


@dataclass(slots=True)
class CheckpointStorage:
    kind: Maybe[str]              # DISABLED / EPHEMERAL / DURABLE / UNKNOWN
    where: Location | None = None
    detail: str = ""


def _mounts(workload: Any, template: Any, container: Any) -> list[tuple[str, bool]]:
    """(mount path, persistent?) for the container, plus Volcano job-level PVC mounts."""
    volumes = {v.get("name"): v for v in template.volumes if isinstance(v, dict)}
    out = []
    for mount in container.volume_mounts:
        volume = volumes.get(mount.name)
        persistent = isinstance(volume, dict) and any(k in PERSISTENT_VOLUME_SOURCES for k in volume)
        out.append((mount.mount_path.rstrip("/") or "/", persistent))
    if workload is not None and is_volcano_job(workload):
        for v in workload.spec.get("volumes") or []:
            if isinstance(v, dict) and isinstance(v.get("mountPath"), str):
                out.append((v["mountPath"].rstrip("/") or "/", True))
    return out


def _argv_output_dir(container: Any) -> tuple[str | None, bool]:
    """(value, found) of an output-dir flag in the container's argv (also inside sh -c)."""
    words: list[str] = []
    for arg in container.argv:
        words.extend(arg.split())
    for i, word in enumerate(words):
        for flag in OUTPUT_DIR_FLAGS:
            if word == flag:
                return (words[i + 1].strip("'\"") if i + 1 < len(words) else None), True
            if word.startswith(flag + "="):
                return word[len(flag) + 1:].strip("'\""), True
    return None, False


def checkpoint_storage(link: Any) -> CheckpointStorage:
    """Whether the linked config's checkpoints survive the loss of the node."""
    settings = link.config.settings
    config = link.config
    strategy = settings.save_strategy
    if strategy.value == "no":
        return CheckpointStorage(DISABLED, config.loc(strategy), f"{strategy.key or 'save_strategy'}: \"no\"")
    enabled = settings.checkpointing_enabled
    if enabled.value is False:
        return CheckpointStorage(DISABLED, config.loc(enabled), f"{enabled.key or 'enable_checkpointing'}: false")
    if strategy.value is UNKNOWN and strategy.explicit:
        return CheckpointStorage(UNKNOWN)
    hub = settings.hub_strategy
    if hub.explicit and (hub.value is UNKNOWN or hub.value in HUB_CHECKPOINT_STRATEGIES):
        return CheckpointStorage(UNKNOWN)
    value, found = _argv_output_dir(link.container)
    if found:
        if value is None or "$" in value:
            return CheckpointStorage(UNKNOWN)
        where, shown = link.container.loc("command" if link.container.command else "args"), f"--output_dir {value}"
    else:
        out = settings.output_dir
        if not isinstance(out.value, str) or "$" in out.value or "{" in out.value:
            return CheckpointStorage(UNKNOWN)
        value, where = out.value, config.loc(out)
        shown = f"{out.key or 'output_dir'}: {value}" + ("" if out.explicit else " (default)")
    lowered = value.lower()
    if lowered.startswith(OBJECT_STORE_SCHEMES):
        return CheckpointStorage(DURABLE, where, shown)
    if "://" in lowered:
        return CheckpointStorage(UNKNOWN)
    mounts = _mounts(link.workload, link.template, link.container)
    path = value
    if not path.startswith("/"):
        working_dir = link.workload.document.get(tuple(link.container.key_path) + ("workingDir",))
        if isinstance(working_dir, str) and working_dir.startswith("/") and "$" not in working_dir:
            path = working_dir.rstrip("/") + "/" + path.lstrip("./")
        elif any(persistent for _, persistent in mounts):
            return CheckpointStorage(UNKNOWN)    # relative to an image WORKDIR we cannot see
        else:
            return CheckpointStorage(EPHEMERAL, where, shown + " (container filesystem)")
    best = None
    for mount_path, persistent in mounts:
        if path == mount_path or path.startswith(mount_path + "/") or mount_path == "/":
            if best is None or len(mount_path) > len(best[0]):
                best = (mount_path, persistent)
    if best is None:
        return CheckpointStorage(EPHEMERAL, where, shown + " (container filesystem)")
    if best[1]:
        return CheckpointStorage(DURABLE, where, shown + f" (persistent volume at {best[0]})")
    return CheckpointStorage(EPHEMERAL, where, shown + f" (non-persistent volume at {best[0]})")


def kind_label(workload: Any) -> str:
    """The kind as a reader knows it ("Volcano Job" for batch.volcano.sh Job)."""
    return "Volcano Job" if is_volcano_job(workload) else workload.kind
