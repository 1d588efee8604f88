from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.compute.gpu_memory import (
    address_of, estimate, gpu_name, is_tpu_or_other, job_gpus, memory_inputs, memory_per_gpu,
    ranked_gpu_resource, sharded, template_label,
)


class PredictedGpuOom(Rule):
    """
    ## What it does
    Estimates the training memory per GPU of the model a GPU workload's
    linked training config names (rules.md "Memory estimate": parameters from
    the model id, 16 bytes per parameter for a mixed-precision Adam full
    fine-tune, sharded by ZeRO stage / FSDP over the job's GPUs, LoRA at the
    load precision) and flags it when this floor, with activations not even
    counted, already exceeds the memory of the requested GPU type.

    The GPU type comes from the linked node group/pool or the node-selector
    labels; unknown models, GPU types or settings never fire. Sharding is
    divided over every GPU the job requests, the most it could be spread over.
    A config made of a script's command-line flags (SageMaker
    `hyper_parameters`) fires only when it states LoRA and sharding: a flag
    it does not pass has the script's own default, which may be LoRA.

    ## Why is this expensive
    The job starts, loads the model, runs out of memory on the first step and
    is retried by the operator: each retry pays for node start-up, image pull
    and model download on every GPU of the job before failing again.

    ## Example
    ```yaml
    # configs/sft.yaml
    model_name_or_path: meta-llama/Llama-3.1-70B
    bf16: true
    # k8s: 8 x nvidia.com/gpu on a g6.48xlarge (L4, 24 GiB), no ZeRO/FSDP
    ```

    ## Fix
    Shard the states (DeepSpeed ZeRO-3, FSDP), train a LoRA/QLoRA adapter
    instead of the full model, or choose a GPU type with enough memory.
    """

    code = "MLC202"
    name = "predicted-gpu-oom"
    level = Level.WARNING
    confidence = Confidence.MEDIUM
    category = Category.COMPUTE
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "Estimated training memory per GPU exceeds the GPU's memory"
    fix = "Shard with ZeRO-3/FSDP, use LoRA/QLoRA, or pick a GPU with more memory."

    def check(self, project, settings) -> Iterator[Finding]:
        from mlcost_lint.link import gpu_of

        for workload in project.kubernetes.workloads:
            for template in workload.gpu_templates():
                gpu = gpu_of(project, template)
                if gpu is None or is_tpu_or_other(gpu) or getattr(gpu, "partial_gpu", False):
                    continue
                memory = memory_per_gpu(gpu)
                if memory is None:
                    continue
                for container in template.containers:
                    n = container.gpu_count()
                    if n is UNKNOWN or n == 0 or ranked_gpu_resource(container) is None:
                        continue
                    inputs = memory_inputs(project, container)
                    if inputs is None or inputs.open_features:
                        continue     # a script's flags that leave LoRA/sharding to the script: no floor
                    ranks = 1
                    if sharded(inputs):
                        total = job_gpus(workload)
                        if not total:
                            continue
                        ranks = total
                    est = estimate(inputs, ranks, "min")
                    if est.gib_per_gpu <= memory:
                        continue
                    explain = est.explain + ("; precision not set, the smaller figure" if len(inputs.precisions) > 1
                                             else "")
                    placement = project.links.placement_of(template)
                    related = [Related(inputs.model_config.loc(inputs.model_setting), f"model {inputs.model_id}")]
                    pools = project.links.pools_of(template)
                    if len(pools) == 1:
                        related.append(Related(pools[0].pool.loc(), f"GPU type from {pools[0].pool.address}"))
                    yield self.finding(
                        f"{template_label(workload, template)} trains {inputs.model_id} on {gpu_name(gpu)} "
                        f"({memory:.0f} GiB per GPU; GPU type from {placement.gpu_how if placement else 'labels'}) "
                        f"but the memory floor is {explain}: it will run out of memory; shard with ZeRO-3/FSDP, "
                        "use LoRA, or choose a larger GPU",
                        container.loc(*container.gpu_resource_path()),
                        address_of(workload, template, container),
                        related=related,
                        object_line=container.loc().line,
                    )
