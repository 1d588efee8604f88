"""How each Terraform resource type (and other pool sources: registry-module
node groups, Karpenter NodePools, Azure ML compute YAML, ParallelCluster
compute resources) states its GPU capacity: one :class:`PoolSpec` row per
resource type in :data:`POOL_SPECS`, pool blocks nested in a cluster
resource in :data:`NESTED_POOL_SPECS`. A row names the attributes holding
the instance types / attached accelerators, the minimum or fixed size, the
:class:`Marker` attributes that make it spot or reserved, and, for pools
Kubernetes pods run on, what scheduling sees of it (:class:`Scheduling`).

Read into node pools by :mod:`mlcost_lint.model.node_pools`.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.capacity import ON_DEMAND, RESERVED, SPOT
from mlcost_lint.model.core import UNKNOWN, Maybe


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
