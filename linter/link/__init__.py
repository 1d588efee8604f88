"""The link stage: joins across files, recorded in ``project.links`` with the
locations of both ends.

- ``links.configs`` (:class:`ConfigLink`): workload container -> training
  config (:mod:`.configs`); ``links.config_refs``: config -> config
  (``deepspeed: ds_z3.json``), and the configs so reached are linked to the
  workload too, with ``via`` set.
- ``links.launches`` (:class:`Launch`): container -> launcher and ranks per
  pod (:mod:`.launcher`).
- ``links.pools`` (:class:`PoolLink`) and ``links.placements``
  (:class:`Placement`, one per pod template): template -> Terraform node
  group/pool, accelerator, node type, capacity type, region (:mod:`.pools`).
- ``links.data_paths`` (:class:`DataPathLink`): object-store URI -> bucket
  resource and region (:mod:`.data_paths`).

Helpers for rules (all return None for "not known", never a guess)::

    gpu_of(project, template) -> Accelerator | GpuModel | None
        The accelerator one pod of ``template`` runs on: the linked pool's
        instance/machine type (or GKE guest accelerator), else what the node
        selector / required affinity labels pin down
        (catalogue.from_node_labels; a GKE accelerator label gives a GCP
        Accelerator with the pod's GPU count).

    node_type_of(project, template) -> Accelerator | None
        The node's instance/machine type, only when known from a type (an
        instance-type selector, Karpenter family+size, or a linked pool with
        one type); an accelerator-only label leaves it None.

    spot_of(project, template) -> bool | None
        True on spot/preemptible capacity: selectors or required affinity
        (eks.amazonaws.com/capacityType=SPOT, karpenter.sh/capacity-type=spot,
        cloud.google.com/gke-spot=true, cloud.google.com/gke-preemptible=true,
        kubernetes.azure.com/scalesetpriority=spot), else the linked pool
        (capacity_type SPOT, spot/preemptible = true, priority = "Spot"; a
        pool with no spot setting is on-demand = False, Terraform's default),
        else a toleration of a spot-only taint (True). False for on-demand and
        for reserved capacity (CAPACITY_BLOCK, karpenter reserved, GKE
        reservation, AKS capacity reservation group). None when unknown.

    capacity_of(project, template) -> Capacity (model.capacity.TemplateCapacity)
        The same with the evidence: ``kind`` (SPOT / ON_DEMAND / RESERVED /
        UNKNOWN), ``evidence`` and ``how`` for messages, the linked GPU
        ``pools`` and ``related``; ``spot``, ``reserved``, ``reason`` and
        ``location`` in the link stage's short form. Reserved wins, then spot;
        where the most specific statement disagrees the answer is unknown.

    compute_region_of(project, template, settings) -> tuple[str, str, Location | None] | None
        (region, how, where): the linked pool's region, a
        topology.kubernetes.io/region (or zone) selector, else
        settings.default_region.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.config import Settings
from mlcost_lint.model.capacity import TemplateCapacity, template_capacity
from mlcost_lint.model.core import Location
from mlcost_lint.model.kubernetes import PodTemplate
from mlcost_lint.model.project import Placement, Project

__all__ = ["link_project", "gpu_of", "node_type_of", "spot_of", "capacity_of", "Capacity", "compute_region_of",
           "placement_of"]


def link_project(project: Project, settings: Settings) -> None:
    """Fill ``project.links``. Each linker only adds what it can prove; a
    linker that fails on odd input leaves its links out, never the run."""
    from mlcost_lint.link.configs import ConfigIndex, link_configs
    from mlcost_lint.link.data_paths import link_data_paths
    from mlcost_lint.link.launcher import link_launches
    from mlcost_lint.link.line_args import link_line_settings
    from mlcost_lint.link.managed import link_managed
    from mlcost_lint.link.pools import link_pools

    from mlcost_lint.gc_pause import gc_paused

    with gc_paused():   # the links live for the whole run: frozen, not re-walked by every collection
        index = ConfigIndex.build(project.training, project.absent)
        steps = (
            ("configs", lambda: link_configs(project, index)),
            ("launches", lambda: link_launches(project, index)),
            ("launch-line settings", lambda: link_line_settings(project, index)),
            ("pools", lambda: link_pools(project)),
            ("data paths", lambda: link_data_paths(project, settings)),
            ("managed jobs", lambda: link_managed(project, settings)),
        )
        for name, step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - a linker bug must not stop the lint run
                project.links.errors.append(f"link stage {name}: {type(exc).__name__}: {exc}")


def placement_of(project: Project, template: PodTemplate) -> Placement | None:
    return project.links.placement_of(template)


def gpu_of(project: Project, template: PodTemplate) -> Any:
    p = project.links.placement_of(template)
    return p.gpu if p is not None else None


def node_type_of(project: Project, template: PodTemplate) -> Any:
    p = project.links.placement_of(template)
    return p.node_type if p is not None else None


# The answer of :func:`capacity_of`: kind (SPOT / ON_DEMAND / RESERVED /
# UNKNOWN), evidence and how for messages, spot / reserved / reason / location
# for the link stage's short form.
Capacity = TemplateCapacity


def capacity_of(project: Project, template: PodTemplate) -> TemplateCapacity:
    """Spot / on-demand / reserved for a template: its selectors and
    tolerations and the pool the link stage joined it to, decided once by
    :func:`mlcost_lint.model.capacity.template_capacity`."""
    from mlcost_lint.link.pools import linked_pools

    # Asked per rule per template (7,600 times on the 2,000-file bench
    # repository): answered once per template while the links stay as they
    # are (the stamp, as Links._lookup keeps it). Callers only read it.
    links = project.links
    memo = links.stamped(_CAPACITY_KEY, (id(links.pools), len(links.pools), id(links.placements),
                                         len(links.placements)), dict)
    hit = memo.get(id(template))
    if hit is not None and hit[0] is template:
        return hit[1]
    job = getattr(links.placement_of(template), "workload", None)
    if job is not None and job.managed is not None:   # a managed job states its own capacity
        from mlcost_lint.link.managed import job_capacity

        answer = job_capacity(job.managed)
    else:
        answer = template_capacity(template, linked_pools(project, template))
    memo[id(template)] = (template, answer)
    return answer


_CAPACITY_KEY = "link.capacity_of"


def spot_of(project: Project, template: PodTemplate) -> bool | None:
    return capacity_of(project, template).spot


def compute_region_of(project: Project, template: PodTemplate | None, settings: Settings
                      ) -> tuple[str, str, Location | None] | None:
    if template is not None:
        p = project.links.placement_of(template)
        if p is not None and p.region:
            return p.region, p.region_how, p.region_location
    if settings.default_region:
        return settings.default_region, "default-region in the config", None
    return None
