"""MLC204, MLC207 and MLC208 for managed-service training jobs (SageMaker,
Azure ML, Vertex AI), from the facts the job states itself
(:class:`mlcost_lint.model.managed.ManagedJob`): its run-time bound, spot,
and the durable checkpoint location the service restores from.

A job whose checkpoints go through a linked training config (an Azure ML or
Vertex command that names one) is judged by the config path of MLC207 /
MLC208 like any workload; these checks cover what the service itself says.
"""

from __future__ import annotations

from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.model.managed import managed_jobs
from mlcost_lint.pricing import HELD, SPOT_SAVING, Quantity
from mlcost_lint.rules.compute.gpu_capacity import held_text, pods_of, run_bound_hours, template_target

# What a fix sets, per service (SageMaker CreateTrainingJob, Azure ML job YAML, Vertex CustomJobSpec).
_CHECKPOINT_FIX = {
    "sagemaker": "set checkpoint_config.s3_uri (SageMaker syncs /opt/ml/checkpoints there and restores it on "
                 "restart) and resume from the latest checkpoint",
    "vertex": "set baseOutputDirectory.outputUriPrefix to a gs:// path (Vertex passes AIP_CHECKPOINT_DIR under it "
              "to the container) and save and resume checkpoints there",
}
_SPOT_FIX = {
    "sagemaker": "enable_managed_spot_training = true (with stopping_condition.max_wait_time_in_seconds)",
    "azureml": "a compute with tier: low_priority (queue_settings.job_tier: spot on serverless compute)",
    "vertex": "scheduling.strategy: SPOT",
}


def _job_gpus(project: Any, settings: Any, workload: Any, price: str) -> Quantity:
    """Every accelerator of the job's instances, held while it runs, at ``price``."""
    from mlcost_lint.rules.compute.gpu_capacity import template_price

    template = workload.templates[0]
    gpus = template.gpu_count()
    replicas, exact = pods_of(template)
    count = gpus * replicas if isinstance(gpus, int) and gpus > 0 else None
    return Quantity(template_target(project, template, settings), count, ("GPU", "GPUs"), HELD,
                    per_accelerator=True, price=template_price(project, template) if price is None else price,
                    run_hours=run_bound_hours(workload, template), count_at_least=not exact)


def deadline_findings(rule: Any, project: Any, settings: Any) -> Iterator[Any]:
    """MLC204: a GPU job with no bound at all (the service has no default)."""
    for workload, job in managed_jobs(project):
        if job.runtime_limit is not None:       # bounded, by the job or the service default, or unknown
            continue
        if not job.runtime_field:
            continue        # the service has no run-time bound to set (SkyPilot tasks)
        templates = workload.accelerator_templates()
        if not templates:
            continue
        held = held_text(templates)
        it = "it" if held.startswith("1 ") else "them"
        yield rule.finding(
            f"{job.title} holds {held} ({job.capacity_text()}) with no run-time bound ({job.runtime_how}); "
            f"a hung run keeps {it} until someone notices: set {job.runtime_field} above the expected run time",
            job.header, workload.address, object_line=job.header.line,
            quantity=_job_gpus(project, settings, workload, None))


def _durable(job: Any) -> bool:
    return isinstance(job.checkpoint_uri, str) and "://" in job.checkpoint_uri


def spot_findings(rule: Any, project: Any) -> Iterator[Any]:
    """MLC207: managed spot whose service keeps no checkpoints to restore."""
    for workload, job in managed_jobs(project):
        if job.spot is not True or job.service not in _CHECKPOINT_FIX or job.checkpoint_uri is not None:
            continue
        if not workload.accelerator_templates():
            continue
        yield rule.finding(
            f"{job.title} runs {job.capacity_text()} on managed spot capacity ({job.spot_how}) with no "
            f"{job.checkpoint_field}: every interruption restarts training from the start; "
            f"{_CHECKPOINT_FIX[job.service]}",
            job.spot_at or job.header, workload.address,
            related=[Related(job.instance_type_at, f"instance type {job.instance_type}")]
            if job.instance_type_at and isinstance(job.instance_type, str) else [],
            object_line=job.header.line)


def _script_checkpoint_problem(project: Any, linked: set[int], workload: Any, template: Any,
                               container: Any) -> tuple[bool, str, list] | None:
    """What the launch line of a container's shell script (a SkyPilot run
    block, a Slurm batch script) does to checkpoints when no training config
    is linked: (disabled, what, related) when it saves none
    (``--save_strategy no``) or writes ``--output_dir`` only to the
    instance's own disk; None otherwise or when unknown."""
    from mlcost_lint.rules.compute.gpu_capacity import (
        EPHEMERAL, script_checkpoints_off, script_output_dir, storage_of_path,
    )

    if id(container) in linked or container.script is None or not project.links.launches_of(container):
        return None
    off = script_checkpoints_off(container)
    if off is not None:
        return True, "saves no checkpoints (--save_strategy no)", [Related(off, "--save_strategy no")]
    value, at, found = script_output_dir(container)
    if not found or value is None or "$" in value:
        return None
    storage = storage_of_path(value, at, f"--output_dir {value}", workload, template, container)
    if storage.kind != EPHEMERAL:
        return None
    return False, f"writes checkpoints only to {storage.detail}", \
        [Related(at, f"--output_dir {value}")] if at is not None else []


def script_spot_findings(rule: Any, project: Any) -> Iterator[Any]:
    """MLC207 for a job that states GPUs per node and runs a shell script (a
    SkyPilot run block) with no linked training config: spot capacity while
    the run line saves no checkpoints or writes them to the instance's own disk."""
    linked = {id(link.container) for link in project.links.configs if not link.config.launch_line}
    for workload, job in managed_jobs(project):
        if job.spot is not True or job.gpus_written is None:
            continue
        for template in workload.accelerator_templates():
            for container in template.containers:
                problem = _script_checkpoint_problem(project, linked, workload, template, container)
                if problem is None:
                    continue
                disabled, what, related = problem
                fix = ("save checkpoints to a bucket mounted at the output directory and resume from them"
                       if disabled else "mount a bucket at the output directory (file_mounts with source: "
                       "s3://... or gs://..., mode: MOUNT) and resume from it")
                yield rule.finding(
                    f"{job.title} ({job.gpus_text()}) runs on spot capacity ({job.spot_how}) but its run line "
                    f"{what}: a preemption restarts training from the start; {fix}",
                    job.spot_at or job.header, workload.address, related=related, object_line=job.header.line)


def batch_script_spot_findings(rule: Any, project: Any) -> Iterator[Any]:
    """MLC207 for a Slurm batch job on spot capacity (a ParallelCluster
    SPOT queue its ``--partition`` names) with no linked training config,
    whose launch line saves no checkpoints or writes ``--output_dir`` only to
    the node's own disk (``/tmp``, ``/dev/shm``): a reclaimed node takes the
    checkpoints along."""
    from mlcost_lint.link import capacity_of
    from mlcost_lint.model.capacity import SPOT

    linked = {id(link.container) for link in project.links.configs if not link.config.launch_line}
    for workload in project.kubernetes.workloads:
        if workload.batch is None:
            continue
        for template in workload.accelerator_templates():
            capacity = capacity_of(project, template)
            if capacity.kind != SPOT:
                continue
            for container in template.containers:
                problem = _script_checkpoint_problem(project, linked, workload, template, container)
                if problem is None:
                    continue
                disabled, what, related = problem
                fix = ("save checkpoints to the cluster's shared file system or an object store and resume from them"
                       if disabled else
                       "write them to the cluster's shared file system or an object store and resume from them")
                yield rule.finding(
                    f"{workload.kind} {workload.name} runs on spot capacity ({capacity.how}) but its launch line "
                    f"{what}: a preemption restarts training from the start; {fix}",
                    capacity.evidence or template.loc(), workload.address,
                    related=[*related, *capacity.related], object_line=template.loc().line)


def spot_eligible_findings(rule: Any, project: Any, settings: Any) -> Iterator[Any]:
    """MLC208: an on-demand GPU job whose service checkpoints to durable storage."""
    for workload, job in managed_jobs(project):
        acc = job.accelerator
        if job.spot is not False or acc is None or not acc.spot_capable or not _durable(job):
            continue
        if job.service not in _SPOT_FIX or job.discounted:
            continue      # FLEX_START (Dynamic Workload Scheduler) is already discounted and not preemptible
        templates = workload.gpu_templates()
        if not templates:
            continue
        where = job.compute_at or job.instance_type_at or job.header
        yield rule.finding(
            f"{job.title} runs {job.capacity_text()} on on-demand capacity ({job.spot_how}) and checkpoints to "
            f"durable storage ({job.checkpoint_field} = {job.checkpoint_uri}): it can resume after preemption, "
            f"so spot capacity at 60-90% lower price would fit: {_SPOT_FIX[job.service]}",
            where, workload.address,
            related=[Related(job.checkpoint_at, f"checkpoints: {job.checkpoint_uri}")] if job.checkpoint_at else [],
            object_line=job.header.line,
            # The saving: on-demand minus spot for every GPU of every instance, per hour.
            quantity=_job_gpus(project, settings, workload, SPOT_SAVING))


def unknown_runtime(job: Any) -> bool:
    return job.runtime_limit is UNKNOWN
