"""Links of managed-service training jobs (SageMaker, Azure ML, Vertex AI).

A managed job states its own capacity, so its :class:`Placement` comes
from the job (instance type, spot, region), not from node selectors; its
data URIs become :class:`DataPathLink` entries joined to buckets like any
other; an Azure ML job is joined to the compute it names
(``compute: azureml:<name>``): a compute YAML in the scan or a Terraform
``azurerm_machine_learning_compute_cluster`` of that name.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.config import Settings
from mlcost_lint.model.capacity import ON_DEMAND, SPOT, TemplateCapacity
from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.model.managed import ManagedJob, managed_jobs
from mlcost_lint.model.project import ConfigLink, DataPathLink, Placement, Project


def job_capacity(job: ManagedJob) -> TemplateCapacity:
    """Spot / on-demand of a managed job, as :func:`mlcost_lint.link.capacity_of` answers."""
    if job.spot is UNKNOWN:
        return TemplateCapacity(UNKNOWN)
    # Reported at the job's own line that picks the capacity (Azure ML compute:), else where spot is said.
    where = job.compute_at or job.spot_at or job.instance_type_at or job.header
    said = job.spot_at or where
    related = [Related(said, f"{job.title}: {job.spot_how}")] if job.spot_how else []
    return TemplateCapacity(SPOT if job.spot else ON_DEMAND, where, job.spot_how, [], related,
                            job.spot_how, job.spot_at)


def _placement(workload: Any, template: Any, job: ManagedJob) -> Placement:
    placement = Placement(workload, template)
    if job.accelerator is not None:
        placement.gpu = job.accelerator
        # A node type is known only from an instance type (a SkyPilot accelerators: A100:8 names none).
        placement.node_type = job.accelerator if job.accelerator.kind == "instance" else None
        placement.gpu_how = placement.node_type_how = f"{job.title} instance type {job.instance_type}" \
            if job.instance_type is not None or job.gpus_written is None else f"{job.title} {job.gpus_written}"
    capacity = job_capacity(job)
    placement.spot = capacity.spot
    placement.spot_reason, placement.spot_location = capacity.reason, capacity.reason_location
    if isinstance(job.region, str) and job.region:
        placement.region, placement.region_how, placement.region_location = job.region, job.region_how, job.region_at
    return placement


def link_managed(project: Project, settings: Settings) -> None:
    from mlcost_lint.link.data_paths import BucketIndex, parse_uri, resolve_bucket

    jobs = managed_jobs(project)
    if not jobs:
        return
    apply_distribution(project)
    templates = {id(t) for w, _ in jobs for t in w.templates}
    # The generic pool linker placed these templates from (empty) selectors: the job decides.
    project.links.placements[:] = [p for p in project.links.placements if id(p.template) not in templates]
    index = BucketIndex.build(project)
    for workload, job in jobs:
        for template in workload.templates:
            project.links.placements.append(_placement(workload, template, job))
        template = workload.templates[0] if workload.templates else None
        if job.config is not None and template is not None and template.containers:
            project.links.configs.append(ConfigLink(
                workload, template, template.containers[0], job.config, job.config.location,
                "hyper_parameters (passed to the entry point as flags)"))
        for data in job.data_paths:
            if not isinstance(data.uri, str):
                continue
            parsed = parse_uri(data.uri)
            if parsed is None or not parsed.bucket:
                continue
            bucket, region, source, where = resolve_bucket(parsed, index, settings)
            project.links.data_paths.append(DataPathLink(
                uri=data.uri, evidence=data.location,
                bucket_name=(parsed.account or parsed.bucket) if parsed.scheme == "azure" else parsed.bucket,
                bucket=bucket, used_by=workload, scheme=parsed.scheme, account=parsed.account,
                bucket_region=region, region_source=source, region_location=where, template=template,
                container=template.containers[0] if template is not None and template.containers else None,
                writes=data.writes))


# Distribution types whose process_count_per_instance Azure ML starts per
# instance, each process running the job's command.
_PROCESS_DISTRIBUTIONS = ("pytorch", "mpi", "tensorflow")


def apply_distribution(project: Project) -> None:
    """An Azure ML ``distribution`` starts ``process_count_per_instance``
    copies of the command on each instance: a bare ``python train.py`` is
    then that many ranks, a launcher's ranks are multiplied; Ray decides its
    own workers (unknown)."""
    for workload, job in managed_jobs(project):
        if job.distribution is None:
            continue
        kind, count, where = job.distribution
        for template in workload.templates:
            for container in template.containers:
                for launch in project.links.launches_of(container):
                    if kind == "ray" or kind is UNKNOWN or kind not in _PROCESS_DISTRIBUTIONS:
                        launch.ranks_per_node = UNKNOWN
                        launch.unknown_reason = f"distribution type {kind} decides its own workers"
                        continue
                    if count is None:
                        continue          # the default: one process per instance
                    if count is UNKNOWN:
                        launch.ranks_per_node = UNKNOWN
                        launch.unknown_reason = "process_count_per_instance is not a number"
                        continue
                    if not isinstance(launch.ranks_per_node, int):
                        continue
                    launch.ranks_per_node = launch.ranks_per_node * count
                    launch.ranks_text = (f"{count} processes (distribution {kind} process_count_per_instance: "
                                         f"{count}) each running {launch.ranks_text}")
                    launch.ranks_location = where
                    launch.ranks_what = "process_count_per_instance in the job's distribution"
