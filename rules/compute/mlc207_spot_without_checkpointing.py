from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.link import capacity_of
from mlcost_lint.model.capacity import SPOT
from mlcost_lint.rules.compute.gpu_capacity import DISABLED, EPHEMERAL, checkpoint_storage


class SpotWithoutCheckpointing(Rule):
    """
    ## What it does
    Flags a training job on preemptible capacity that cannot resume. The
    capacity is spot when the pod template selects or tolerates spot nodes
    (`eks.amazonaws.com/capacityType: SPOT`, `karpenter.sh/capacity-type:
    spot`, `cloud.google.com/gke-spot`, `cloud.google.com/gke-preemptible`,
    `kubernetes.azure.com/scalesetpriority: spot`) or is linked to a
    Terraform pool with a spot setting (`capacity_type = "SPOT"`,
    `node_config.spot`/`preemptible`, AKS `priority = "Spot"`). The job
    cannot resume when its linked training config disables checkpoints
    (`save_strategy: "no"`, Lightning `enable_checkpointing: false`) or
    writes them only to ephemeral storage: an output directory that is
    neither an object-store URI nor under a persistent volume mount. Beyond
    Kubernetes: managed spot without the service's checkpoint store
    (SageMaker `checkpoint_config`, Vertex `baseOutputDirectory`), a SkyPilot
    `use_spot` task or a Slurm job on a ParallelCluster SPOT queue whose
    launch line's `--output_dir` is on the instance's own disk (`/tmp`).

    ## Why is this expensive
    Spot capacity is reclaimed with a two-minute (AWS) or thirty-second
    (GCP, Azure) notice. A job that cannot resume starts again from step 0
    each time, so a 10-hour fine-tune that is preempted at hour 9 costs 19
    hours, and on a busy spot market it may never finish.

    ## Example
    ```yaml
    # Job on spot nodes               # sft.yaml (linked config)
    nodeSelector:                      output_dir: /tmp/out
      karpenter.sh/capacity-type: spot save_strategy: steps
    ```

    ## Fix
    Save checkpoints to durable storage and resume from the last one: an
    `s3://`/`gs://` output directory, or a PersistentVolumeClaim mounted at
    the output directory, with `save_strategy: steps`.
    """

    code = "MLC207"
    name = "spot-without-checkpointing"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.COMPUTE
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "Training job on spot capacity cannot resume after preemption"
    fix = "Save checkpoints to an object store or a persistent volume and resume from them."

    def check(self, project, settings) -> Iterator[Finding]:
        from mlcost_lint.rules.compute.managed_jobs import (
            batch_script_spot_findings, script_spot_findings, spot_findings,
        )

        yield from spot_findings(self, project)   # managed spot without the service's checkpoint store
        yield from script_spot_findings(self, project)   # a SkyPilot run line's --output_dir on local disk
        yield from batch_script_spot_findings(self, project)   # a Slurm launch line's --output_dir on the node
        seen: set[tuple[int, int]] = set()
        for link in project.links.configs:
            key = (id(link.template), id(link.config))
            if key in seen or link.config.launch_line:
                continue        # a launch line's own flags: judged by the script forms above
            capacity = capacity_of(project, link.template)
            if capacity.kind != SPOT:
                continue
            storage = checkpoint_storage(link)
            if storage.kind not in (DISABLED, EPHEMERAL):
                continue
            seen.add(key)
            workload, template = link.workload, link.template
            role = f" ({template.role})" if template.role else ""
            problem = ("saves no checkpoints" if storage.kind == DISABLED
                       else "writes checkpoints only to ephemeral storage")
            related = [Related(storage.where or link.config.location, f"{link.config.path}: {storage.detail}"),
                       Related(link.evidence, f"training config linked by {link.how}"),
                       *capacity.related]
            yield self.finding(
                f"{workload.kind} {workload.name}{role} runs on spot capacity ({capacity.how}) but its training "
                f"config {link.config.path} {problem} ({storage.detail}): a preemption restarts training from "
                "the start; save checkpoints to an object store or a persistent volume and resume from them",
                capacity.evidence or template.spec_loc(),
                f"{workload.address}/{template.role or 'template'}",
                related=related,
                object_line=workload.loc().line,
            )
