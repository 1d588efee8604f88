"""MLC603 for managed-service jobs: the service sizes ``/dev/shm`` itself
(SageMaker, Vertex AI: not modelled, no finding; Azure ML: ``resources.shm_size``,
default 2g). A size written below :data:`MIN_SHM_BYTES` on a job with more
than one GPU per instance, or whose linked config uses DataLoader workers,
counts as missing: it is no better than Docker's 64 MiB default for NCCL's
and the DataLoader's shared-memory queues."""

from __future__ import annotations

from typing import Any, Iterator

from mlcost_lint.model.core import Related

MIB = 1024 * 1024
# Below this, a multi-GPU job is in the range where NCCL / DataLoader
# shared-memory segments fail (Docker's 64 MiB default, and the few hundred
# MiB some templates write); Azure ML's own default is 2 GiB.
MIN_SHM_BYTES = 1024 * MIB


def _shown(n: int) -> str:
    return f"{n // (1024 * MIB)} GiB" if n % (1024 * MIB) == 0 else f"{n // MIB} MiB"


def managed_shm_findings(rule: Any, project: Any, linked: dict, workload: Any) -> Iterator[Any]:
    job = workload.managed
    size = job.shm_bytes
    if not isinstance(size, int) or isinstance(size, bool) or size >= MIN_SHM_BYTES:
        return
    for template in workload.gpu_templates():
        gpus = template.gpu_count()
        reason, related = None, []
        if isinstance(gpus, int) and gpus > 1:
            reason = f"it runs {gpus} GPUs per instance (NCCL shares memory between them)"
        else:
            for container in template.containers:
                for link in linked.get((id(template), id(container)), ()):
                    workers = link.config.settings.dataloader_num_workers
                    if isinstance(workers.value, int) and not isinstance(workers.value, bool) and workers.value > 0:
                        reason = (f"its training config {link.config.path} uses {workers.value} DataLoader "
                                  f"workers ({workers.key or 'dataloader_num_workers'})")
                        related = [Related(link.config.loc(workers), f"dataloader_num_workers = {workers.value}")]
                        break
                if reason:
                    break
        if reason is None:
            continue
        default = f" (the service default is {_shown(job.shm_default)})" if job.shm_default else ""
        yield rule.finding(
            f"{job.title} sets /dev/shm to {_shown(size)} (resources.shm_size) but {reason}: below "
            f"{_shown(MIN_SHM_BYTES)} DataLoader workers and NCCL crash mid-run; raise resources.shm_size or "
            f"remove it{default}",
            job.shm_at or job.header,
            f"{workload.address}/shm",
            related=related,
            object_line=job.header.line,
        )
