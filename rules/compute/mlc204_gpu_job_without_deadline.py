from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.model.kept_capacity import count_value
from mlcost_lint.pricing import HELD, LIST, Quantity, Target
from mlcost_lint.rules.compute.gpu_capacity import (
    DEADLINE_PATHS,
    child_job_path,
    first_written,
    held_text,
    job_kind,
    kind_label,
    pods_of,
    template_noun,
    template_price,
    template_target,
)

# Where the fix goes, per batch family (relative to the object).
_FIX_AT: dict[str, tuple[str, ...]] = {
    "job": ("spec",),
    "cronjob": ("spec", "jobTemplate", "spec"),
    "kubeflow": ("spec", "runPolicy"),
    "trainjob": ("spec",),
    "rayjob": ("spec",),
}
_FIX_FIELD: dict[str, str] = {
    "job": "spec.activeDeadlineSeconds",
    "cronjob": "spec.jobTemplate.spec.activeDeadlineSeconds",
    "kubeflow": "spec.runPolicy.activeDeadlineSeconds",
    "trainjob": "spec.activeDeadlineSeconds",
    "rayjob": "spec.activeDeadlineSeconds",
    "jobset": "activeDeadlineSeconds on the child Job (replicatedJobs[].template.spec)",
    "volcano": "activeDeadlineSeconds in the task's pod template spec",
}


# Run-time bounds set outside the job's own spec, as (metadata field, key):
# Kueue stops a workload after the label's seconds (kueue.x-k8s.io docs,
# "maximum execution time"); GKE DWS / Kueue ProvisioningRequests bound the
# run by the annotation (provreq.kueue.x-k8s.io/maxRunDurationSeconds).
_METADATA_BOUNDS = (
    ("labels", "kueue.x-k8s.io/max-exec-time-seconds"),
    ("annotations", "provreq.kueue.x-k8s.io/maxRunDurationSeconds"),
)


def _metadata_bound(workload, template) -> object:
    """A bound from Kueue/DWS metadata on the job or its pod template: the
    seconds, UNKNOWN when written but not a number, None when absent."""
    for field, key in _METADATA_BOUNDS:
        for base in (workload.key_path, template.key_path):
            value = workload.document.get(tuple(base) + ("metadata", field, key))
            if value is not None:
                return count_value(value)
    return None


def _hung_run(project, settings, templates) -> Quantity:
    """What each hour of a hung run holds: every accelerator of the unbounded
    templates (one price: all on the same kind of node, else unknown)."""
    from mlcost_lint.catalogue.devices import NEURON_CORE

    targets = {template_target(project, t, settings) for t in templates}
    noun = template_noun(*templates)
    total, exact = 0, True
    for t in templates:
        n = t.gpu_count()
        replicas, known = pods_of(t)
        if not isinstance(n, int) or isinstance(n, bool):
            total = None
            break
        total += n * replicas
        exact = exact and known
    if len(targets) != 1 or noun is NEURON_CORE:
        total = None
    target = next(iter(targets)) if len(targets) == 1 else Target(None)
    prices = {template_price(project, t) for t in templates}
    return Quantity(target, total if len(prices) == 1 else None, (noun.one, noun.many), HELD, per_accelerator=True,
                    price=prices.pop() if len(prices) == 1 else LIST, count_at_least=not exact)


class GpuJobWithoutDeadline(Rule):
    """
    ## What it does
    Flags a GPU batch workload with no bound on its run time: a Job or
    CronJob without `activeDeadlineSeconds`, a Kubeflow training job
    (PyTorchJob, TFJob, MPIJob, ...) without `runPolicy.activeDeadlineSeconds`,
    a TrainJob or RayJob without `activeDeadlineSeconds`, a JobSet whose GPU
    child Jobs have no `activeDeadlineSeconds`, a Volcano Job with none in its
    GPU task pods. A pod-level `activeDeadlineSeconds` in the pod template
    counts for every kind. A Slurm batch script that requests GPUs with no
    `#SBATCH --time` (or `--time=UNLIMITED`/`0`) is flagged too: the
    partition's default limit then applies, and Slurm's default is UNLIMITED.

    ## Why is this expensive
    Distributed training hangs rather than fails: one rank dies, the others
    wait in an NCCL collective forever, and every GPU of the job stays
    allocated until someone notices. A deadline turns a silent hang over a
    weekend into a failed job after a known number of hours.

    ## Example
    ```yaml
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    spec:
      pytorchReplicaSpecs:
        Worker:
          replicas: 4
          template: {spec: {containers: [{resources: {limits: {nvidia.com/gpu: 8}}}]}}
    ```

    ## Fix
    Bound the run time a little above the expected training time:
    ```yaml
    spec:
      runPolicy:
        activeDeadlineSeconds: 172800   # 48 h
    ```
    """

    code = "MLC204"
    name = "gpu-job-without-deadline"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.COMPUTE
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "GPU batch job has no activeDeadlineSeconds: a hung run holds its GPUs indefinitely"
    fix = "Set activeDeadlineSeconds (runPolicy.activeDeadlineSeconds for Kubeflow) above the expected run time."

    def check(self, project, settings) -> Iterator[Finding]:
        from mlcost_lint.rules.compute.managed_jobs import deadline_findings

        yield from deadline_findings(self, project, settings)   # SageMaker / Azure ML / Vertex jobs
        for workload in project.kubernetes.workloads:
            if workload.batch is not None:
                yield from self._batch(workload)
                continue
            family = job_kind(workload)
            if family is None:
                continue
            value, _ = first_written(workload, DEADLINE_PATHS[family])
            deadline = count_value(value)
            if deadline is UNKNOWN or deadline is not None:
                continue   # bounded (or bound unknown) for every pod of the job
            unbounded = []
            for template in workload.accelerator_templates():
                bound = template.active_deadline_seconds   # pod-level: int, None or UNKNOWN
                if bound is None:
                    bound = _metadata_bound(workload, template)
                child = child_job_path(workload, template)
                if child is not None and bound is None:
                    bound = count_value(workload.document.get(child + ("activeDeadlineSeconds",)))
                if bound is None:
                    unbounded.append(template)
                elif bound is UNKNOWN:
                    unbounded = []
                    break
            if not unbounded:
                continue
            first = unbounded[0]
            if family in _FIX_AT:
                fix_path = _FIX_AT[family]
                if family == "kubeflow" and not workload.has(*fix_path):
                    fix_path = ("spec",)
                where = workload.loc(*fix_path)
            elif family == "jobset":
                where = workload.document.location(child_job_path(workload, first))
            else:
                where = first.spec_loc()
            held = held_text(unbounded)
            roles = ", ".join(t.role for t in unbounded if t.role)
            role_text = f" ({roles})" if roles else ""
            it = "it" if held.startswith("1 ") else "them"
            yield self.finding(
                f"{kind_label(workload)} {workload.name} holds {held}{role_text} with no run-time bound; "
                f"a hung run keeps {it} until someone notices: set {_FIX_FIELD[family]}",
                where,
                workload.address,
                object_line=workload.loc().line,
                quantity=_hung_run(project, settings, unbounded),
            )

    def _batch(self, workload) -> Iterator[Finding]:
        """A scheduler job outside Kubernetes (Slurm): no --time, or one
        that says UNLIMITED, leaves the partition's default (UNLIMITED unless
        the admins set one)."""
        job = workload.batch
        if job.time_limit is UNKNOWN or (job.time is not None and not job.time_unbounded):
            return
        templates = workload.accelerator_templates()
        if not templates:
            return
        held = held_text(templates)
        it = "it" if held.startswith("1 ") else "them"
        if job.time is None:
            what, where = f"no {job.directive_prefix} --time", job.header
            why = "the partition's default limit applies (Slurm's default is UNLIMITED)"
        else:
            what, where = f"{job.time.written} (line {job.time.location.line})", job.time.location
            why = "no time limit"
        yield self.finding(
            f"{job.title} holds {held} ({job.gpus_where()}) with {what}: {why}; a hung run keeps {it} "
            f"until someone notices: add {job.directive_prefix} --time=HH:MM:SS above the expected run time",
            where,
            workload.address,
            object_line=job.header.line,
        )
