"""Node scheduling of a pod template: the Kubernetes node labels each cloud
(and Karpenter) puts on nodes (:data:`INSTANCE_TYPE_LABELS`,
:data:`REGION_LABELS`, :data:`ZONE_LABELS`, :data:`POOL_NAME_LABELS`,
:data:`CLOUD_SET_LABEL_PREFIXES`) and what a template requires of them.

    selector_of(template) -> Selector
        The node labels a pod template requires.
    is_cloud_set_label(label) -> bool
        Whether the cloud or the node provisioner sets the label.
    pinned_gpu(labels) -> GpuModel | None
        The GPU model node labels pin down.

Read by the link stage (:mod:`mlcost_lint.link.pools`), the rules and
:func:`mlcost_lint.model.capacity.template_capacity`.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Mapping

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location

if TYPE_CHECKING:
    from mlcost_lint.catalogue import GpuModel
    from mlcost_lint.model.kubernetes import PodTemplate

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
