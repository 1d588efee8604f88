from __future__ import annotations

from mlcost_lint.model.managed import per_node_job

from typing import Iterator

from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.link import capacity_of
from mlcost_lint.model.capacity import ON_DEMAND
from mlcost_lint.pricing import HELD, SPOT_SAVING, Quantity
from mlcost_lint.rules.compute.gpu_capacity import (DURABLE, checkpoint_storage, pods_of, run_bound_hours,
                                                    template_target)


def _templates_of(project, address: str) -> list:
    """The templates of the managed job a finding was reported on."""
    return [t for w in project.kubernetes.workloads if w.managed is not None and w.address == address
            for t in w.templates]


def _spot_offered(capacity, template, workload=None) -> bool:
    """Spot is offered for the GPU that runs the job: every linked pool's
    instance type is spot-capable, or the node selector names a
    spot-capable type; unknown types count (most GPU types are)."""
    if capacity.pools:
        return all(pool.accelerator.spot_capable for pool in capacity.pools)
    if workload is not None and workload.managed is not None and workload.managed.accelerator is not None:
        return workload.managed.accelerator.spot_capable
    from mlcost_lint.catalogue import Accelerator, from_node_labels

    pinned = from_node_labels({k: v for k, v in template.node_selector.items() if isinstance(v, str)})
    if isinstance(pinned, Accelerator):
        return pinned.spot_capable
    return True


class SpotEligibleGpu(Rule):
    """
    ## What it does
    Notes a GPU training job on known on-demand capacity (linked to a
    Terraform node group/pool with no spot setting, or selecting on-demand
    nodes with `eks.amazonaws.com/capacityType: ON_DEMAND` or
    `karpenter.sh/capacity-type: on-demand`) whose linked training config
    checkpoints to durable storage (an object store or a persistent volume).
    Such a job can resume after a preemption, so it could run on spot
    capacity. Reserved capacity (capacity blocks, reservations) is already
    paid for and is not noted; a job whose capacity is unknown is silent.

    ## Why is this expensive
    Spot and preemptible GPUs cost 60-90% less than on-demand. A job that
    already saves resumable checkpoints to durable storage loses at most the
    steps since its last checkpoint when preempted.

    ## Example
    ```hcl
    resource "aws_eks_node_group" "gpu" {
      instance_types = ["g5.12xlarge"]      # no capacity_type: ON_DEMAND
    }
    ```
    with a Job on that group whose config writes `output_dir: s3://ckpt/run1`.

    ## Fix
    Run it on a spot node group (`capacity_type = "SPOT"`, GKE
    `node_config.spot = true`, AKS `priority = "Spot"`) and resume from the
    last checkpoint on restart.
    """

    code = "MLC208"
    name = "spot-eligible-gpu"
    level = Level.NOTE
    confidence = Confidence.LOW
    category = Category.COMPUTE
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "On-demand GPU job checkpoints to durable storage and could use spot capacity"
    fix = "Move the job to a spot/preemptible GPU pool; it already resumes from durable checkpoints."

    def check(self, project, settings) -> Iterator[Finding]:
        from mlcost_lint.rules.compute.managed_jobs import spot_eligible_findings

        reported = list(spot_eligible_findings(self, project, settings))   # managed jobs with a service checkpoint store
        yield from reported
        seen: set[int] = {id(t) for f in reported for t in _templates_of(project, f.address)}
        for link in project.links.configs:
            template = link.template
            if id(template) in seen or link.config.launch_line:
                continue        # a launch line's own flags: no config file to move to spot
            gpus = template.gpu_count()
            if gpus is UNKNOWN or gpus <= 0:
                continue
            capacity = capacity_of(project, template)
            if capacity.kind != ON_DEMAND or not _spot_offered(capacity, template, link.workload):
                continue
            storage = checkpoint_storage(link)
            if storage.kind != DURABLE:
                continue
            seen.add(id(template))
            workload = link.workload
            role = f" ({template.role})" if template.role else ""
            related = [*capacity.related,
                       Related(storage.where or link.config.location, f"{link.config.path}: {storage.detail}"),
                       Related(link.evidence, f"training config linked by {link.how}")]
            yield self.finding(
                f"{workload.kind} {workload.name}{role} runs {gpus} GPU{'s' if gpus != 1 else ''} per "
                f"{'node' if per_node_job(workload) is not None else 'pod'} on "
                f"on-demand capacity ({capacity.how}) and checkpoints to durable storage ({storage.detail}): it "
                "can resume after preemption, so spot capacity at 60-90% lower price would fit",
                capacity.evidence or template.spec_loc(),
                f"{workload.address}/{template.role or 'template'}",
                related=related,
                object_line=workload.loc().line,
                # The saving: on-demand minus spot for every GPU of every replica, per hour.
                quantity=Quantity(template_target(project, template, settings), gpus * pods_of(template)[0],
                                  ("GPU", "GPUs"), HELD, per_accelerator=True, price=SPOT_SAVING,
                                  run_hours=run_bound_hours(workload, template),
                                  count_at_least=not pods_of(template)[1]),
            )
