from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.compute.gpu_capacity import template_noun

if TYPE_CHECKING:
    from mlcost_lint.model.project import ConfigLink

SHM_PATH = "/dev/shm"
# KubeRay mounts a memory-backed /dev/shm into Ray pods itself, and a
# TrainJob's pod spec lives in its runtime, not in the scanned object.
SKIP_KINDS = frozenset({"RayCluster", "RayJob", "RayService", "TrainJob"})
# TPU hosts use neither NCCL nor shared-memory DataLoader queues by default.
NO_SHM_RESOURCES = ("google.com/tpu",)


def _shm_gpus(container) -> int | None:
    total = 0
    for name, count in container.accelerators().items():
        if name.startswith(NO_SHM_RESOURCES):
            continue
        if count is UNKNOWN:
            return None
        total += count
    return total


def _has_shm_mount(container) -> bool:
    """Anything mounted at /dev/shm lifts the 64 MiB default (a memory-backed
    emptyDir is the usual one; a hostPath or disk emptyDir there also does)."""
    return any(m.mount_path.rstrip("/") == SHM_PATH for m in container.volume_mounts)


class MissingShmVolume(Rule):
    """
    ## What it does
    Flags a GPU pod that has more than one GPU, or whose linked training
    config uses DataLoader worker processes (`dataloader_num_workers` > 0),
    when its GPU container has no memory-backed `emptyDir` mounted at
    `/dev/shm`.

    ## Why is this expensive
    Containers get a 64 MiB `/dev/shm` by default. PyTorch DataLoader
    workers pass batches through shared memory and NCCL uses it between GPUs
    of one node; with 64 MiB they crash with "bus error" or "No space left on
    device" partway through training, and the job is retried on GPU time.

    ## Example
    ```yaml
    spec:
      containers:
        - name: train
          resources: {limits: {nvidia.com/gpu: 8}}
    ```

    ## Fix
    Mount a memory-backed volume at `/dev/shm`:
    ```yaml
    spec:
      volumes:
        - name: dshm
          emptyDir: {medium: Memory, sizeLimit: 64Gi}
      containers:
        - name: train
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
    ```
    """

    code = "MLC603"
    name = "missing-shm-volume"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.EFFICIENCY
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "Multi-GPU or multi-worker training pod without a memory-backed /dev/shm"
    fix = "Mount an emptyDir with medium: Memory at /dev/shm in the GPU container."

    def check(self, project, settings) -> Iterator[Finding]:
        # Config links by (pod template, container), built once: a scan of
        # every link per container was quadratic. Same links, same order.
        linked: dict[tuple[int, int], list[ConfigLink]] = {}
        for link in project.links.configs:
            linked.setdefault((id(link.template), id(link.container)), []).append(link)
        for workload in project.kubernetes.workloads:
            if workload.kind in SKIP_KINDS or workload.batch is not None:
                continue   # a Slurm job runs on the host, with the host's /dev/shm
            if workload.managed is not None:
                from mlcost_lint.rules.efficiency.managed_shm import managed_shm_findings

                yield from managed_shm_findings(self, project, linked, workload)
                continue
            for template in workload.gpu_templates():
                yield from self._template(linked, workload, template)

    def _template(self, linked: dict[tuple[int, int], list[ConfigLink]], workload,
                  template) -> Iterator[Finding]:
        counts = [_shm_gpus(c) for c in template.containers]
        if any(n is None for n in counts):
            return
        pod_gpus = sum(counts)
        for container, gpus in zip(template.containers, counts):
            if gpus <= 0 or _has_shm_mount(container):
                continue
            reason, related = None, []
            if pod_gpus > 1:
                noun = template_noun(template)
                between = " (NCCL shares memory between them)" if noun.many == "GPUs" else \
                    " (the collective library shares memory between them)"
                reason = f"its pod has {noun.count(pod_gpus)}{between}"
            else:
                for link in linked.get((id(template), id(container)), ()):
                    if link.template is not template or link.container is not container:
                        continue
                    workers = link.config.settings.dataloader_num_workers
                    if isinstance(workers.value, int) and not isinstance(workers.value, bool) and workers.value > 0:
                        where = link.config.loc(workers)
                        reason = (f"its training config {link.config.path} uses {workers.value} DataLoader "
                                  f"workers ({workers.key or 'dataloader_num_workers'})")
                        related = [Related(where, f"dataloader_num_workers = {workers.value}"),
                                   Related(link.evidence, f"config linked by {link.how}")]
                        break
            if reason is None:
                continue
            role = f" ({template.role})" if template.role else ""
            yield self.finding(
                f"{workload.kind} {workload.name}{role} container {container.name} has no memory-backed "
                f"emptyDir at /dev/shm but {reason}: the 64 MiB default makes DataLoader workers and NCCL "
                "crash mid-run; mount an emptyDir with medium: Memory at /dev/shm",
                container.loc(*container.gpu_resource_path()),
                f"{workload.address}/{template.role or 'template'}/{container.name}",
                related=related,
                object_line=workload.loc().line,
            )
