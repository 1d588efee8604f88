from __future__ import annotations

from mlcost_lint.model.managed import per_node_job

from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.compute.gpu_memory import (
    address_of, container_links, estimate, gpu_name, is_tpu_or_other, launched_ranks, memory_inputs,
    memory_per_gpu, ranked_gpu_resource, sharded, template_label,
)
from mlcost_lint.pricing import ALWAYS_ON, HELD, Quantity, Target
from mlcost_lint.rules.compute.gpu_capacity import pods_of, run_bound_hours, template_price, template_target
from mlcost_lint.rules.compute.notebooks import NOTEBOOKS, notebook_target

NOTEBOOK_MAX_GPUS = 4


class OversizedGpu(Rule):
    """
    ## What it does
    Flags GPU capacity the workload cannot use:

    - (a) a container requests N GPUs but its launcher starts fewer ranks
      (`torchrun --nproc_per_node`, `accelerate launch --num_processes` or the
      linked Accelerate config's `num_processes`, `deepspeed --num_gpus`, a
      bare `python train.py` = 1 rank);
    - (b) GPUs are requested while the linked training config forces CPU
      (`use_cpu`/`no_cuda: true`, Accelerate `use_cpu`, Lightning
      `accelerator: cpu`) or the launcher is told `--cpu`;
    - (c) the estimated training memory of the linked model fills under
      `oversized-gpu-memory-fraction` (default 25%) of each requested GPU and
      the same cloud offers a GPU with at most half the memory;
    - (d) an interactive notebook instance (SageMaker notebook, Vertex
      Workbench, Azure ML compute instance) with 4 or more GPUs.

    A Slurm batch script counts too: GPUs per node (`--gres=gpu:N`,
    `--gpus-per-node`, ...) against the ranks per node its launch line starts
    (`srun` tasks per node x the launcher's ranks).
    Unknown rank counts (`$(NPROC)`, `--multi_gpu` without a count, Lightning
    and NeMo scripts, Ray, TPU), unknown models and unknown GPU types never fire.

    ## Why is this expensive
    GPUs are billed per attached device whether a process uses them or not.
    A pod that asks for 8 x H100 and starts `torchrun --nproc_per_node=2`
    pays for six idle H100s (roughly $18 an hour on demand); a 0.5B-parameter
    fine-tune that needs 8 GiB does not need an 80 GiB GPU.

    ## Example
    ```yaml
    containers:
      - name: pytorch
        command: ["torchrun", "--nproc_per_node=2", "train.py"]
        resources:
          limits:
            nvidia.com/gpu: 8
    ```

    ## Fix
    Make the request and the launcher agree (`nvidia.com/gpu: 2`, or
    `--nproc_per_node=8`), drop the GPU from CPU-only jobs, move small models
    to a smaller GPU type, and run notebooks on one GPU, sending multi-GPU work
    to training jobs.
    """

    code = "MLC201"
    name = "oversized-gpu"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.COMPUTE
    reports_in = frozenset({Reports.WORKLOAD, Reports.CLOUD})
    summary = "GPU capacity the workload cannot use"
    fix = "Request as many GPUs as the launcher starts ranks, or a smaller GPU type."

    def check(self, project, settings) -> Iterator[Finding]:
        for workload in project.kubernetes.workloads:
            for template in workload.gpu_templates():
                for container in template.containers:
                    n = container.gpu_count()
                    if n is UNKNOWN or n == 0:
                        continue
                    yield from self._idle_ranks(project, settings, workload, template, container, n)
                    yield from self._forced_cpu(project, settings, workload, template, container, n)
                    yield from self._too_big(project, settings, workload, template, container, n)
        yield from self._notebooks(project)

    # (a) -----------------------------------------------------------------
    def _idle_ranks(self, project, settings, workload, template, container, n: int) -> Iterator[Finding]:
        resource = ranked_gpu_resource(container)
        if resource is None:
            return
        launches = project.links.launches_of(container)
        if len(launches) != 1:
            return
        launch = launches[0]
        ranks = launch.ranks_per_node
        if ranks is UNKNOWN or launch.forces_cpu is not None or ranks >= n:
            return
        where = launch.ranks_location or launch.evidence
        idle = n - ranks
        role = f" per {template.role}" if template.role else ""
        related = [Related(launch.evidence, f"{launch.ranks_text}: {ranks} rank{'s' if ranks != 1 else ''} per "
                                                   f"{'node' if per_node_job(workload) is not None else 'pod'}")]
        if launch.ranks_location is not None and launch.ranks_location != launch.evidence:
            related.append(Related(launch.ranks_location, launch.ranks_what or "where the rank count is written"))
        job = per_node_job(workload)
        if job is not None:
            message = (f"{job.title} requests {n} GPUs per node ({job.gpus_where()}) but starts {launch.ranks_text} "
                       f"({where.path}:{where.line}): {idle} GPU{'s' if idle != 1 else ''} per node idle; "
                       f"request {ranks} or start {n} ranks per node")
            quantity = _held_gpus(project, settings, workload, template, idle) if workload.managed is not None \
                else None
            yield self.finding(message, container.loc(*container.gpu_resource_path()),
                               address_of(workload, template, container), related=related,
                               object_line=job.header.line, quantity=quantity)
            return
        yield self.finding(
            f"{workload.kind} {workload.name} requests {n} x {resource}{role} but starts {launch.ranks_text} "
            f"({where.path}:{where.line}): {idle} GPU{'s' if idle != 1 else ''} idle; request {ranks} "
            f"or start {n} ranks",
            container.loc(*container.gpu_resource_path()),
            address_of(workload, template, container),
            related=related,
            object_line=container.loc().line,
            quantity=_held_gpus(project, settings, workload, template, idle),
        )

    # (b) -----------------------------------------------------------------
    def _forced_cpu(self, project, settings, workload, template, container, n: int) -> Iterator[Finding]:
        evidence = None
        launches = project.links.launches_of(container)
        if len(launches) == 1 and launches[0].forces_cpu is not None:
            evidence = (launches[0].forces_cpu, f"{launches[0].launcher} --cpu")
        else:
            for link in container_links(project, container):
                device = link.config.settings.device
                if device.explicit and device.value == "cpu":
                    loc = link.config.loc(device)
                    evidence = (loc, f"{device.key or 'device'} in the linked config")
                    break
        if evidence is None:
            return
        loc, what = evidence
        resource = next(iter(container.accelerators()))
        yield self.finding(
            f"{template_label(workload, template)} requests {n} x {resource} but runs on CPU ({what}, "
            f"{loc.path}:{loc.line}): {'the GPU stays' if n == 1 else f'all {n} GPUs stay'} idle; remove the GPU request "
            "or the CPU setting",
            container.loc(*container.gpu_resource_path()),
            address_of(workload, template, container),
            related=[Related(loc, "forces CPU training")],
            object_line=container.loc().line,
            quantity=_held_gpus(project, settings, workload, template, n),
        )

    # (c) -----------------------------------------------------------------
    def _too_big(self, project, settings, workload, template, container, n: int) -> Iterator[Finding]:
        from mlcost_lint.catalogue import smaller_gpu_same_cloud
        from mlcost_lint.link import gpu_of

        if ranked_gpu_resource(container) is None:
            return
        gpu = gpu_of(project, template)
        if gpu is None or is_tpu_or_other(gpu) or getattr(gpu, "cloud", None) is None:
            return
        if getattr(gpu, "partial_gpu", False):
            return
        memory = memory_per_gpu(gpu)
        inputs = memory_inputs(project, container)
        if memory is None or inputs is None:
            return
        ranks = 1
        if sharded(inputs):
            known = launched_ranks(project, workload)
            ranks = known if known else 1
        est = estimate(inputs, ranks, "max")
        fraction = settings.oversized_gpu_memory_fraction
        if est.gib_per_gpu >= fraction * memory:
            return
        smaller = smaller_gpu_same_cloud(gpu, memory / 2)
        if smaller is None or smaller.memory_gib_per_gpu < 2 * est.gib_per_gpu:
            return
        placement = project.links.placement_of(template)
        related = [Related(inputs.model_config.loc(inputs.model_setting), f"model {inputs.model_id}")]
        pool_links = project.links.pools_of(template)
        if len(pool_links) == 1:
            related.append(Related(pool_links[0].pool.loc(), f"GPU type from {pool_links[0].pool.address}"))
        share = est.gib_per_gpu / memory
        explain = est.explain + ("; precision not set, the larger fp32 figure" if len(inputs.precisions) > 1 else "")
        yield self.finding(
            f"{template_label(workload, template)} trains {inputs.model_id} on {n} x {gpu_name(gpu)} "
            f"({memory:.0f} GiB each; GPU type from {placement.gpu_how if placement else 'labels'}): "
            f"the memory estimate ({explain}) fills {share:.0%} of each GPU (under {fraction:.0%}); "
            f"a GPU with at most half the memory fits, e.g. {smaller.name} ({smaller.gpu.name}, "
            f"{smaller.gpu.memory_gib:.0f} GiB)",
            container.loc(*container.gpu_resource_path()),
            address_of(workload, template, container),
            related=related,
            object_line=container.loc().line,
            quantity=_held_gpus(project, settings, workload, template, n, smaller),
        )

    # (d) -----------------------------------------------------------------
    def _notebooks(self, project) -> Iterator[Finding]:
        for res in project.terraform.cloud_only_resources():    # findings at the notebooks
            kind = NOTEBOOKS.get(res.type)
            if kind is None or res.mode != "managed":
                continue
            what = kind.label
            found = _notebook_gpus(res, kind.size_attr, kind.accelerators_attr)
            if found is None:
                continue
            count, gpu, attr, shown = found
            if count < NOTEBOOK_MAX_GPUS:
                continue
            yield self.finding(
                f"{what} {res.address} uses {shown} with {count} x {gpu}: an interactive notebook sits idle "
                f"most of the day and bills all {count} GPUs; use a 1-GPU type and run multi-GPU work as "
                "training jobs",
                res.loc(attr),
                res.address,
                related=res.related_module_calls(),
                object_line=res.location.line,
                quantity=Quantity(notebook_target(res, kind.size_attr, kind.accelerators_attr), 1,
                                  ("instance", "instances"), ALWAYS_ON),
            )


def _held_gpus(project, settings, workload, template, per_pod: int, smaller: Any = None) -> Quantity:
    """``per_pod`` GPUs on every replica, held while the job runs, bounded by
    its deadline; with ``smaller``, only the price above that GPU's."""
    replicas, exact = pods_of(template)
    target = template_target(project, template, settings)
    cheaper = None
    if smaller is not None:
        cheaper = Target(smaller.cloud, (smaller.name,) if smaller.kind == "instance" else (),
                         (smaller.name, 1) if smaller.kind == "accelerator" else None, region=target.region)
    return Quantity(target, per_pod * replicas, ("GPU", "GPUs"), HELD, per_accelerator=True, smaller=cheaper,
                    price=template_price(project, template),
                    run_hours=run_bound_hours(workload, template), count_at_least=not exact)


def _notebook_gpus(res, size_attr: str, accel_attr: str | None) -> tuple[int, str, str, str] | None:
    """(GPU count, GPU model name, attribute path, type as written): from the
    attached accelerator block when the type has one and it is set, else from
    the machine size."""
    from mlcost_lint.catalogue import gcp_accelerator, instance_type

    def by_type(value: Any, attr: str) -> tuple[int, str, str, str] | None:
        if not isinstance(value, str):
            return None
        entry = instance_type(value)
        if entry is None or entry.count < 1:
            return None
        return int(entry.count), entry.gpu.name, attr, value

    accel = res.get(accel_attr) if accel_attr else None
    if isinstance(accel, list):
        accel = accel[0] if len(accel) == 1 else None
    if isinstance(accel, dict):
        atype, count = accel.get("type"), accel.get("core_count")
        if isinstance(atype, str) and isinstance(count, int) and not isinstance(count, bool):
            entry = gcp_accelerator(atype, count) or gcp_accelerator(atype.lower().replace("_", "-"), count)
            if entry is not None and not entry.is_tpu:
                return count, entry.gpu.name, accel_attr, f"{count} x {atype}"
        return None
    return by_type(res.get(size_attr), size_attr)
