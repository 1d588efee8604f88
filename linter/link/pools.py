"""Pod template -> Terraform node group / pool (``PoolLink``) and where the
template runs (``Placement``: accelerator, node type, capacity type, region).

Node labels a template asks for: ``nodeSelector`` plus required node
affinity ``In`` expressions with one value (only when there is a single
``nodeSelectorTerm``: several terms are alternatives). A pool offers its
explicit labels (EKS ``labels``, GKE ``node_config.labels``, AKS
``node_labels``, a Karpenter NodePool's template labels and single-valued
requirements) and the labels the cloud puts on its nodes (pool name,
instance type, capacity type, GKE accelerator, region). Pools are the
Terraform node groups / pools of :mod:`mlcost_lint.model.node_pools` (self-managed
EKS groups included) and the Karpenter NodePools in the scan. A pool is linked when

1. a selector names it (pool-name label or one of its own labels), nothing
   in the selector contradicts it and the template tolerates its taints; or
2. an instance-type selector matches exactly one pool; or
3. the template requests GPUs, tolerates a taint of exactly one GPU pool
   (and all of that pool's taints), and nothing contradicts.

Ambiguity (several pools fit equally) links nothing.
"""

from __future__ import annotations

import heapq
from dataclasses import field
from typing import Any, Iterator

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.capacity import template_capacity
from mlcost_lint.model.node_pools import NodePool, Taint, karpenter_pools, schedulable_pools
from mlcost_lint.model.scheduling import (
    INSTANCE_TYPE_LABELS,
    POOL_NAME_LABELS,
    REGION_LABELS,
    ZONE_LABELS,
    Selector,
    is_cloud_set_label,
    selector_of,
)
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.parse.document import FileKind
from mlcost_lint.model.kubernetes import PodTemplate, Workload
from mlcost_lint.model.project import Placement, PoolLink, Project
from mlcost_lint.link.regions import zone_to_region

# The link stage's name for a node pool (kept for callers of this module).
Pool = NodePool

__all__ = ["Pool", "Selector", "selector_of", "pools_of", "link_pools", "linked_pool", "match_pool",
           "tolerates_all", "place", "PoolIndex"]


def pools_of(project: Project) -> list[NodePool]:
    """Every node group / pool Kubernetes pods can be scheduled on: Terraform
    node groups / pools and Karpenter NodePools in the scan."""
    out: list[NodePool] = []
    for res in project.terraform.resources:
        out.extend(schedulable_pools(res))
    out.extend(karpenter_pools(doc for f in project.files if f.kind == FileKind.YAML for doc in f.documents))
    return out


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


# Clouds whose API server runs the ExtendedResourceToleration admission
# plugin: a pod that requests an extended resource (nvidia.com/gpu) gets a
# toleration for the taint of that name (GKE taints its GPU pools with
# nvidia.com/gpu=present:NoSchedule and adds the toleration itself).
_EXTENDED_RESOURCE_TOLERATION_CLOUDS = frozenset({"google"})


def _implicitly_tolerated(template: PodTemplate, pool: Pool, taint: Taint) -> bool:
    if pool.cloud not in _EXTENDED_RESOURCE_TOLERATION_CLOUDS or taint.key is UNKNOWN:
        return False
    return any(taint.key in c.accelerators() for c in template.containers)


def tolerates_all(template: PodTemplate, pool: Pool) -> bool | None:
    if pool.taints is UNKNOWN:
        return None
    result: bool | None = True
    for taint in pool.taints:
        if _implicitly_tolerated(template, pool, taint):
            continue
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
            if pool.node_types is UNKNOWN:
                continue
            if not any(t.lower() == value.lower() for t in pool.node_types):
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
        if key in POOL_NAME_LABELS.get(pool.cloud, ()) or not is_cloud_set_label(key):
            identifying.append(source)
    return Match(identifying, False)


def pool_owned_labels(pool: Pool) -> set[str]:
    """Cloud-set labels a pool would carry with a known value when set
    (absent from ``labels`` means the node does not have them)."""
    owned = set(pool.spec.scheduling.absent_labels) if pool.spec.scheduling is not None else set()
    if pool.cloud == "google" and pool.guest_accelerator is None and pool.node_type() is None \
            and pool.node_types is not UNKNOWN:
        owned.add("cloud.google.com/gke-accelerator")
    return owned


@dataclass(slots=True)
class LinkResult:
    pool: Pool | None
    how: str
    evidence: Location | None


def _label_key(label: str, value: Any) -> tuple[str, str]:
    """The index key under which :func:`_eq` finds ``value`` for ``label``."""
    text = str(value)
    if label in INSTANCE_TYPE_LABELS or label.endswith("capacityType") or label.endswith("scalesetpriority"):
        text = text.lower()
    return label, text


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
_ALL_NAME_LABELS = frozenset(label for names in POOL_NAME_LABELS.values() for label in names)


@dataclass(slots=True)
class PoolIndex:
    """The pools of a project with the per-pool facts :func:`link_template`
    needs, computed once, and indexes that give each template only the pools
    it could be linked to (every candidate is still checked in full by
    :func:`match_pool` / :func:`tolerates_all`, in pool order, so the answer is
    the one a scan of every pool gives):

    - ``by_label``: (label, value) -> pools whose label identifies them in a
      selector (a pool-name label of their cloud, or a user label) — the only
      pools rule 1 can name;
    - ``by_type``: lower-case instance type -> pools with known node types
      offering it — the only pools rule 2 can pick;
    - ``by_taint_key``: taint key -> GPU pools with known, non-empty taints
      that have a NoSchedule / NoExecute taint with that key — the only pools
      rule 3 can pick (``taint_unindexed``: such pools whose taint key cannot
      be a dict key, checked for every template).
    """

    pools: list[Pool]
    by_label: dict[tuple[str, str], list[int]]
    by_type: dict[str, list[int]]
    by_taint_key: dict[Any, list[int]]
    taint_unindexed: list[int]
    # For a pool-name or instance-type selector: the pools it does not
    # contradict (see :meth:`allowed`). survivors[(label, value)] for a
    # pool-name label: pools with that value; name_open[label]: pools with an
    # unknown value or lacking the label without that contradicting them.
    by_name_value: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    name_open: dict[str, list[int]] = field(default_factory=dict)
    types_unknown: list[int] = field(default_factory=list)
    gpu_tainted: list[bool] = field(default_factory=list)

    @classmethod
    def build(cls, pools: list[Pool]) -> "PoolIndex":
        by_label: dict[tuple[str, str], list[int]] = {}
        by_type: dict[str, list[int]] = {}
        by_taint_key: dict[Any, list[int]] = {}
        taint_unindexed: list[int] = []
        for i, pool in enumerate(pools):
            name_labels = POOL_NAME_LABELS.get(pool.cloud, ())
            for label, value in pool.labels.items():
                if value is UNKNOWN or not isinstance(label, str):
                    continue
                if label in INSTANCE_TYPE_LABELS or label in REGION_LABELS:
                    continue  # match_pool decides these from node_types / region, never identifying
                if label in name_labels or not is_cloud_set_label(label):
                    by_label.setdefault(_label_key(label, value), []).append(i)
            if pool.node_types is not UNKNOWN:
                for t in {str(t).lower() for t in pool.node_types}:
                    by_type.setdefault(t, []).append(i)
            if pool.taints is UNKNOWN or not pool.taints or pool.has_gpu() is not True:
                continue
            keys = {id(t.key): t.key for t in pool.taints if t.effect in _BLOCKING_EFFECTS}
            for key in keys.values():
                ids = by_taint_key.setdefault(key, []) if _hashable(key) else taint_unindexed
                if not ids or ids[-1] != i:
                    ids.append(i)
        index = cls(pools, by_label, by_type, by_taint_key, taint_unindexed)
        for i, pool in enumerate(pools):
            index.gpu_tainted.append(pool.taints is not UNKNOWN and bool(pool.taints) and pool.has_gpu() is True)
            if pool.node_types is UNKNOWN:
                index.types_unknown.append(i)
            own_names = POOL_NAME_LABELS.get(pool.cloud, ())
            owned = pool_owned_labels(pool)
            for label in _ALL_NAME_LABELS:
                # The same decisions as match_pool for a pool-name label.
                if label in pool.labels:
                    value = pool.labels[label]
                    if value is UNKNOWN:
                        index.name_open.setdefault(label, []).append(i)
                    else:
                        index.by_name_value.setdefault(_label_key(label, value), []).append(i)
                elif label in own_names and label not in owned:
                    index.name_open.setdefault(label, []).append(i)
        return index

    def allowed(self, sel: Selector) -> list[int] | None:
        """The pools (ids, in pool order) that no pool-name or instance-type
        label of the selector contradicts, or None when it has no such label.
        match_pool contradicts every other pool, and all three rules skip a
        contradicted pool."""
        found: set[int] | None = None
        for key, (value, _loc, _source) in sel.pairs.items():
            if key in INSTANCE_TYPE_LABELS:
                ids = set(self.types_unknown)
                ids.update(self.by_type.get(value.lower(), ()))
            elif key in _ALL_NAME_LABELS:
                ids = set(self.name_open.get(key, ()))
                ids.update(self.by_name_value.get(_label_key(key, value), ()))
            else:
                continue
            found = ids if found is None else found & ids
        return None if found is None else sorted(found)

    # Each index list is in pool order; the candidates come out merged, in
    # pool order, lazily: the caller stops at the second pool that fits
    # (two make the link ambiguous), so a label every pool shares (the same
    # node group name in every project) does not cost a scan per template.
    def named_candidates(self, sel: Selector) -> Iterator[Pool]:
        lists = [self.by_label.get(_label_key(key, value), ()) for key, (value, _loc, _source) in sel.pairs.items()]
        return self._pools(lists)

    def type_candidates(self, sel: Selector) -> Iterator[Pool]:
        lists = [self.by_type.get(sel.pairs[key][0].lower(), ()) for key in INSTANCE_TYPE_LABELS if key in sel.pairs]
        # match_pool rejects a pool lacking any of the selected types: the
        # pools of one list are enough to try.
        return self._pools([min(lists, key=len)] if lists else [])

    def taint_candidates(self, template: PodTemplate) -> Iterator[Pool]:
        lists: list[Any] = [self.taint_unindexed]
        for tol in template.tolerations:
            key = tol.get("key")
            if _hashable(key):
                lists.append(self.by_taint_key.get(key, ()))
            else:
                lists.extend(self.by_taint_key.values())
        return self._pools(lists)

    def _pools(self, lists: list[Any]) -> Iterator[Pool]:
        lists = [ids for ids in lists if ids]
        merged = lists[0] if len(lists) == 1 else heapq.merge(*lists)
        last = -1
        for i in merged:
            if i != last:
                last = i
                yield self.pools[i]


def link_template(workload: Workload, template: PodTemplate, pools: list[Pool],
                  index: PoolIndex | None = None) -> LinkResult:
    """Link one template to a pool (rules 1-3 of the module docstring).
    ``index``: :meth:`PoolIndex.build` of ``pools``, built once by the caller
    that links many templates."""
    if index is None:
        index = PoolIndex.build(pools)
    sel = selector_of(template)
    # A selector naming a pool (or an instance type) contradicts every other
    # pool: then only the few it allows are tried, by each rule's own test.
    allowed = index.allowed(sel)
    named: list[tuple[Pool, list[str]]] = []
    for pool in index.named_candidates(sel) if allowed is None else (index.pools[i] for i in allowed):
        m = match_pool(sel, pool)
        if m.contradicted or tolerates_all(template, pool) is False:
            continue
        if m.identifying:
            named.append((pool, m.identifying))
            if len(named) == 2:
                break  # ambiguous
    if named:
        if len(named) == 1:
            pool, sources = named[0]
            loc = next((l for k, (_, l, s) in sel.pairs.items() if s == sources[0]), template.loc())
            return LinkResult(pool, sources[0], loc)
        return LinkResult(None, "", None)
    by_type: list[Pool] = []
    if any(k in INSTANCE_TYPE_LABELS for k in sel.pairs):
        for pool in index.type_candidates(sel) if allowed is None else \
                (index.pools[i] for i in allowed if index.pools[i].node_types is not UNKNOWN):
            m = match_pool(sel, pool)
            if m.contradicted or tolerates_all(template, pool) is False:
                continue
            # A pool that identifies itself was named above; none was.
            by_type.append(pool)
            if len(by_type) == 2:
                break  # ambiguous
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
    for pool in index.taint_candidates(template) if allowed is None else \
            (index.pools[i] for i in allowed if index.gpu_tainted[i]):
        if match_pool(sel, pool).contradicted or tolerates_all(template, pool) is not True:
            continue
        specific = [t for t in pool.taints if t.effect in _BLOCKING_EFFECTS
                    and any(tol.get("key") == t.key for tol in template.tolerations)]
        if specific:
            candidates.append((pool, specific[0]))
            if len(candidates) == 2:
                break  # ambiguous
    if len(candidates) == 1:
        pool, taint = candidates[0]
        i = next(i for i, tol in enumerate(template.tolerations) if tol.get("key") == taint.key)
        return LinkResult(pool, f"toleration {taint.key} matches the taint of the only GPU pool that has it",
                          template.spec_loc("tolerations", i))
    return LinkResult(None, "", None)


# ---------------------------------------------------------- placement ---


def place(workload: Workload, template: PodTemplate, result: "LinkResult") -> Placement:
    from mlcost_lint import catalogue

    sel = selector_of(template)
    labels = sel.labels()
    placement = Placement(workload, template)
    linked = result.pool
    # Accelerator and node type: the linked pool first, then the labels.
    if linked is not None:
        acc = linked.node_accelerator()
        if acc is not None:
            placement.gpu, placement.gpu_how = acc, f"node group/pool {linked.resource.address}"
        if acc is None and linked.pins_gpu:
            # A Karpenter NodePool that pins the GPU by family / GPU name, not by type.
            found_model = catalogue.from_node_labels({k: v for k, v in linked.labels.items() if isinstance(v, str)})
            if found_model is not None:
                placement.gpu, placement.gpu_how = found_model, f"node group/pool {linked.resource.address}"
        node = linked.node_type()
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
    # Capacity type: one answer for the link stage and the rules.
    capacity = template_capacity(template, linked_evidence(result))
    placement.spot, placement.reserved = capacity.spot, capacity.reserved
    placement.spot_reason, placement.spot_location = capacity.reason, capacity.reason_location
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
    if not project.kubernetes.workloads:
        return      # nothing to place (a hook on a config alone): the pools are not read
    pools = pools_of(project)
    index = PoolIndex.build(pools)
    for workload in project.kubernetes.workloads:
        for template in workload.templates:
            if workload.batch is not None:     # a Slurm job: its --partition names the pool
                from mlcost_lint.link.slurm import partition_link

                result = partition_link(project, workload)
            else:
                result = link_template(workload, template, pools, index) if pools else LinkResult(None, "", None)
            if result.pool is not None and result.evidence is not None:
                project.links.pools.append(PoolLink(workload, template, result.pool.resource, result.evidence,
                                                    result.how, block=result.pool.block_path, detail=result.pool))
            project.links.placements.append(place(workload, template, result))


def linked_evidence(result: "LinkResult") -> list[tuple[NodePool, Location, str]]:
    if result.pool is None or result.evidence is None:
        return []
    return [(result.pool, result.evidence, result.how)]


def linked_pool(project: Project, template: PodTemplate) -> NodePool | None:
    """The :class:`NodePool` a template is linked to, or None."""
    links = project.links.pools_of(template)
    if len(links) != 1:
        return None
    return links[0].detail if isinstance(links[0].detail, NodePool) else None


def linked_pools(project: Project, template: PodTemplate) -> list[tuple[NodePool, Location, str]]:
    """(pool, link evidence, link how) for every pool the link stage joined a template to."""
    return [(link.detail, link.evidence, link.how) for link in project.links.pools_of(template)
            if isinstance(link.detail, NodePool)]
