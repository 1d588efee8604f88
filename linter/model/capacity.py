"""GPU capacity kinds and the capacity decision for a pod template:
:data:`SPOT`, :data:`ON_DEMAND`, :data:`RESERVED`, the node labels and
taints that say which one a node is (:data:`NODE_LABEL_CAPACITY`,
:data:`SPOT_TAINTS`), and

    template_capacity(template, linked) -> TemplateCapacity
        Spot / on-demand / reserved for a pod template from its selectors,
        tolerations and the pools the link stage joined it to.

The other GPU capacity and placement facts the link stage and every rule
read live next to it:

    mlcost_lint.model.scheduling
        Kubernetes node label tables; selector_of(template) -> Selector, the
        node labels a pod template requires; pinned_gpu(labels), the GPU
        model node labels pin down.
    mlcost_lint.model.pool_specs
        Which Terraform resources are GPU capacity and how each states its
        instance type / accelerator, size, spot / on-demand / reserved
        setting, labels and taints (PoolSpec rows in POOL_SPECS and
        NESTED_POOL_SPECS).
    mlcost_lint.model.node_pools
        node_pools(resource) / gpu_pools(project) / karpenter_pools(documents)
        -> list[NodePool]: each node group / pool as scheduling and the cost
        rules see it.
    mlcost_lint.model.kept_capacity
        kept_capacity(pool) -> KeptCapacity | UNKNOWN | None: what a pool
        keeps running with no job; count_value.
    mlcost_lint.model.gpu_uses
        gpu_uses(resource) / all_gpu_uses(project) -> list[GpuUse]: every
        known accelerator a resource declares (pools, VMs, notebooks, TPUs;
        GPU_COMPUTE).

pool_specs and node_pools import the capacity kinds from here, so this
module imports only scheduling at run time (NodePool only for type checking).

Every answer may be UNKNOWN (or None where documented); callers never fire
on an unknown.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe, Related
from mlcost_lint.model.scheduling import Selector, selector_of

if TYPE_CHECKING:
    from mlcost_lint.model.kubernetes import PodTemplate
    from mlcost_lint.model.node_pools import NodePool

SPOT = "spot"
ON_DEMAND = "on-demand"
RESERVED = "reserved"


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
