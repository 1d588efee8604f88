"""Shared by MLC201 and MLC202: the training settings that reach one GPU
container through its config links, merged, and the memory estimate.

Merging: the configs linked to the container (direct links first, then the
ones reached through references such as a Trainer config's ``deepspeed:``
file). For each setting the first written, known value wins; a written value
that is unknown (``"auto"``) yields to a known one from another linked config
(the Trainer's ``deepspeed: ds.json`` leaves ZeRO to the DeepSpeed file); two
written, different known values make the setting unknown.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.kubernetes import Container, PodTemplate, Workload
from mlcost_lint.model.project import ConfigLink, Project
from mlcost_lint.model.sagemaker_hyper import SCRIPT_FLAGS
from mlcost_lint.model.training import Setting, TrainingConfig

MIXED = frozenset({"bf16", "fp16", "fp8", "mixed"})
# Accelerator resources whose count is whole GPUs a launcher puts ranks on.
RANKED_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gres/gpu")


def container_links(project: Project, container: Container) -> list[ConfigLink]:
    links = project.links.configs_of_container(container)
    return sorted(links, key=lambda c: c.via is not None)


def merged(links: list[ConfigLink], name: str) -> tuple[Any, Setting[Any] | None, TrainingConfig | None]:
    """(value, setting, config) of one setting over the linked configs."""
    written: list[tuple[Setting[Any], TrainingConfig]] = []
    default: tuple[Setting[Any], TrainingConfig] | None = None
    for link in links:
        setting: Setting[Any] = getattr(link.config.settings, name)
        if setting.explicit:
            written.append((setting, link.config))
        elif setting.value is not UNKNOWN and default is None and link.via is None:
            # A referenced config's own default (DeepSpeed fp32) does not
            # override what the config that drives the run leaves open.
            default = (setting, link.config)
    known = [(s, c) for s, c in written if s.value is not UNKNOWN]
    if known:
        values = {repr(s.value) for s, _ in known}
        if len(values) > 1:
            return UNKNOWN, known[0][0], known[0][1]
        return known[0][0].value, known[0][0], known[0][1]
    if written:
        return UNKNOWN, written[0][0], written[0][1]
    if default is not None:
        return default[0].value, default[0], default[1]
    return UNKNOWN, None, None


@dataclass(slots=True)
class MemoryInputs:
    model_id: str
    model_setting: Setting[Any]
    model_config: TrainingConfig
    params: float
    lora: bool
    load_bits: int | None
    precisions: tuple[bool, ...]     # mixed_precision values still possible
    zero_stage: int | None
    fsdp: bool
    # Features a script-flags config (SageMaker hyper_parameters) does not
    # state: the script's own default decides, so they may be on. The
    # estimate then is the largest (features off), fine for MLC201(c) and no
    # ground for MLC202.
    open_features: tuple[str, ...] = ()


def memory_inputs(project: Project, container: Container) -> MemoryInputs | None:
    from mlcost_lint.catalogue import parameter_count

    links = container_links(project, container)
    if not links:
        return None
    model_id, model_setting, model_config = merged(links, "model_id")
    if not isinstance(model_id, str) or model_setting is None or model_config is None:
        return None
    params = parameter_count(model_id)
    if params is None:
        return None
    def value(name: str, unwritten: Any) -> Any:
        found, setting, _ = merged(links, name)
        # Not written in any linked config and no framework default: the
        # feature is off (no LoRA, 16-bit load, no ZeRO, no FSDP).
        return unwritten if found is UNKNOWN and setting is None else found

    lora = value("lora", False)
    load_bits = value("load_bits", None)
    zero = value("zero_stage", None)
    fsdp = value("fsdp", False)
    precision, _, _ = merged(links, "precision")
    if lora is UNKNOWN or load_bits is UNKNOWN or zero is UNKNOWN or fsdp is UNKNOWN:
        return None
    open_features: tuple[str, ...] = ()
    if any(link.config.flavour == SCRIPT_FLAGS for link in links):
        def unstated(name: str) -> bool:
            return merged(links, name)[1] is None

        open_features = tuple(name for name, gap in (
            ("LoRA", unstated("lora")),
            ("sharding", unstated("zero_stage") and unstated("fsdp")),
            ("load precision", bool(lora) and unstated("load_bits")),
        ) if gap)
    if precision is UNKNOWN:
        precisions: tuple[bool, ...] = (True, False)
    else:
        precisions = (precision in MIXED,)
    return MemoryInputs(model_id, model_setting, model_config, params, bool(lora),
                        load_bits if isinstance(load_bits, int) else None, precisions,
                        zero if isinstance(zero, int) else None, bool(fsdp), open_features)


def estimate(inputs: MemoryInputs, ranks: int, pick: str):
    """The estimate over the precisions still possible: ``pick`` "max" (for
    MLC201c, so a small estimate is certainly small) or "min" (MLC202)."""
    from mlcost_lint.catalogue import estimate_training_memory_gib

    results = [estimate_training_memory_gib(inputs.params, lora=inputs.lora, load_bits=inputs.load_bits,
                                            mixed_precision=mp, zero_stage=inputs.zero_stage, fsdp=inputs.fsdp,
                                            data_parallel_ranks=ranks)
               for mp in inputs.precisions]
    return (max if pick == "max" else min)(results, key=lambda e: e.gib_per_gpu)


def sharded(inputs: MemoryInputs) -> bool:
    return inputs.fsdp or bool(inputs.zero_stage)


def job_gpus(workload: Workload) -> int | None:
    """GPUs the whole job requests (replicas x per pod), None when unknown."""
    total = 0
    for t in workload.templates:
        n = t.gpu_count()
        if n is UNKNOWN:
            return None
        if n == 0:
            continue
        replicas = t.replicas if t.replicas is not None else 1
        if replicas is UNKNOWN:
            return None
        total += replicas * n
    return total


def launched_ranks(project: Project, workload: Workload) -> int | None:
    """Ranks the job's launchers start over all GPU pods, None when any is unknown."""
    total = 0
    for t in workload.templates:
        n = t.gpu_count()
        if n is UNKNOWN:
            return None
        if n == 0:
            continue
        replicas = t.replicas if t.replicas is not None else 1
        if replicas is UNKNOWN:
            return None
        for c in t.containers:
            if c.gpu_count() in (0, UNKNOWN):
                continue
            launches = project.links.launches_of(c)
            if len(launches) != 1 or launches[0].ranks_per_node is UNKNOWN:
                return None
            total += replicas * launches[0].ranks_per_node
    return total


def ranked_gpu_resource(container: Container) -> str | None:
    """The container's accelerator resource when it is whole GPUs of one kind."""
    accs = container.accelerators()
    if len(accs) != 1:
        return None
    name = next(iter(accs))
    return name if name in RANKED_RESOURCES else None


def template_label(workload: Workload, template: PodTemplate) -> str:
    return f"{workload.kind} {workload.name}" + (f" {template.role}" if template.role else "")


def address_of(workload: Workload, template: PodTemplate, container: Container | None = None) -> str:
    base = f"{workload.address}/{template.role or 'template'}"
    if container is not None and len(template.containers) > 1:
        base += f"/{container.name}"
    return base


def gpu_name(gpu: Any) -> str:
    """"H100-80 (p5.48xlarge)" for an instance type, "L4" for a model."""
    model = getattr(gpu, "gpu", gpu)
    name = getattr(model, "name", str(gpu))
    if getattr(gpu, "kind", "") == "instance":
        return f"{name} GPUs of {gpu.name}"
    return f"{name} GPUs"


def memory_per_gpu(gpu: Any) -> float | None:
    if gpu is None:
        return None
    if hasattr(gpu, "memory_gib_per_gpu"):
        return gpu.memory_gib_per_gpu
    return getattr(gpu, "memory_gib", None)


def is_tpu_or_other(gpu: Any) -> bool:
    model = getattr(gpu, "gpu", gpu)
    return getattr(model, "kind", "gpu") != "gpu"
