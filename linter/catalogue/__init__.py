"""Accelerator catalogue: which GPU (or TPU/Neuron/Gaudi device) an instance
type, machine type, VM size, accelerator type or Kubernetes node label names,
and how much memory it has.

The tables are package data (``gpu_models.yaml``, ``aws.yaml``, ``gcp.yaml``,
``azure.yaml``), loaded once on first use. Every lookup returns ``None`` for a
name it does not know: an unknown accelerator never produces a finding.

Public API (re-exported here): :class:`GpuModel`, :class:`Accelerator`,
:func:`instance_type`, :func:`gcp_accelerator`, :func:`gpu_model`,
:func:`gpu_model_matches`, :func:`smaller_gpu_same_cloud`,
:func:`all_accelerators`, from :mod:`.node_labels`: :func:`from_node_labels`
(what Kubernetes node labels pin down), and from :mod:`.model_size`:
:func:`parameter_count`, :func:`estimate_training_memory_gib`,
:class:`MemoryEstimate`.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from mlcost_lint.lean_dataclass import dataclass

from .model_size import (
    LORA_TRAINABLE_FRACTION,
    OPTIMIZERS,
    MemoryEstimate,
    estimate_training_memory_gib,
    parameter_count,
)

__all__ = [
    "GpuModel",
    "Accelerator",
    "instance_type",
    "gcp_accelerator",
    "from_node_labels",
    "gpu_model",
    "gpu_model_matches",
    "smaller_gpu_same_cloud",
    "all_accelerators",
    "parameter_count",
    "estimate_training_memory_gib",
    "MemoryEstimate",
    "OPTIMIZERS",
    "LORA_TRAINABLE_FRACTION",
]

_DATA_DIR = Path(__file__).parent


@dataclass(frozen=True)
class GpuModel:
    """One accelerator device model.

    ``memory_gib`` is per device (nominal vendor figure); ``bf16`` whether it
    computes in bfloat16; ``vendor`` "nvidia" | "amd" | "intel" | "aws" |
    "google"; ``family`` what a bare policy entry matches ("A100" for both
    A100-40 and A100-80); ``kind`` "gpu" | "tpu" | "neuron" | "hpu".
    """

    name: str
    memory_gib: float
    bf16: bool
    vendor: str
    family: str = ""
    kind: str = "gpu"

    @property
    def is_tpu(self) -> bool:
        return self.kind == "tpu"


@dataclass(frozen=True)
class Accelerator:
    """An offering with accelerators: an instance/machine type/VM size, or a
    GCP accelerator type with a count.

    ``count`` is devices per instance (fractional for partial GPUs such as
    Azure NVadsA10_v5; chips for TPUs; Neuron devices for Trainium/Inferentia).
    ``rdma``: RDMA multi-NIC networking as rules.md MLC502 defines it (AWS EFA
    on p4d/p4de/p5*/p6*/trn1n/trn2, Azure InfiniBand, GCP GPUDirect multi-NIC
    shapes). ``efa``: the instance supports AWS EFA at all (single-NIC too).
    ``kind``: "instance" (a machine type) or "accelerator" (a GCP accelerator
    type attached to a VM whose machine type is separate). ``arch``: the host
    CPU architecture, "x86_64" or "arm64" (g5g, p6e-gb200, a4x).
    """

    cloud: str | None
    name: str
    gpu: GpuModel
    count: float
    rdma: bool
    spot_capable: bool
    is_tpu: bool
    source: str
    vcpus: int | None = None
    efa: bool = False
    family: str = ""
    kind: str = "instance"
    arch: str = "x86_64"

    @property
    def partial_gpu(self) -> bool:
        """True when the offering has a fraction of one GPU."""
        return self.count < 1

    @property
    def memory_gib_per_gpu(self) -> float:
        """Accelerator memory available to one requested GPU: the device's
        memory, or the partition's for a partial GPU (1/6 A10 = 4 GiB)."""
        return self.gpu.memory_gib * min(self.count, 1.0)

    @property
    def total_memory_gib(self) -> float:
        return self.gpu.memory_gib * self.count


# ---------------------------------------------------------------- loading ---


def _compact(name: str) -> str:
    """Case- and separator-insensitive key: "NVIDIA-A100-SXM4-80GB" -> "nvidiaa100sxm480gb"."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _load_yaml(file_name: str) -> Any:
    from mlcost_lint.yaml_lib import SAFE_LOADER, yaml  # lazy: only when the catalogue is first used

    with open(_DATA_DIR / file_name, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=SAFE_LOADER)


@dataclass(frozen=True)
class _Tables:
    models: dict[str, GpuModel]  # canonical name -> model
    model_aliases: dict[str, GpuModel]  # compact alias -> model
    family_defaults: dict[str, GpuModel]  # compact family -> default variant
    families: dict[str, tuple[GpuModel, ...]]  # compact family -> variants
    instances: dict[str, Accelerator]  # lookup key -> entry
    aws_families: dict[str, GpuModel]  # "p4d" -> model (Karpenter instance-family)
    gcp_accelerators: dict[str, GpuModel]  # "nvidia-l4" -> model
    gcp_tpu_labels: dict[str, GpuModel]  # "tpu-v5-lite-podslice" -> model
    tpu_generations: dict[str, tuple[GpuModel, str]]  # "v5litepod" -> (model, counts)
    gcp_source: str


def gpu_catalogue_tables() -> None:
    """Load the shipped tables now (later_stages.py): they load on first use otherwise."""
    _tables()


@cache
def _tables() -> _Tables:
    model_data = _load_yaml("gpu_models.yaml")
    models: dict[str, GpuModel] = {}
    aliases: dict[str, GpuModel] = {}
    families: dict[str, list[GpuModel]] = {}
    for row in model_data["models"]:
        model = GpuModel(
            name=row["name"],
            memory_gib=float(row["memory_gib"]),
            bf16=bool(row["bf16"]),
            vendor=row["vendor"],
            family=row.get("family", row["name"]),
            kind=row.get("kind", "gpu"),
        )
        models[model.name] = model
        for alias in [model.name, *row.get("aliases", [])]:
            aliases[_compact(alias)] = model
        families.setdefault(_compact(model.family), []).append(model)
    family_defaults = {
        _compact(fam): models[name] for fam, name in model_data.get("family_defaults", {}).items()
    }
    for fam, variants in families.items():
        if len(variants) == 1:
            family_defaults.setdefault(fam, variants[0])

    instances: dict[str, Accelerator] = {}
    aws_families: dict[str, GpuModel] = {}

    aws = _load_yaml("aws.yaml")
    for fam, spec in aws["families"].items():
        gpu = models[spec["gpu"]]
        aws_families[fam] = gpu
        not_rdma = set(spec.get("not_rdma", []))
        for size, (count, vcpus, efa) in spec["sizes"].items():
            name = f"{fam}.{size}"
            instances[name] = Accelerator(
                cloud="aws",
                name=name,
                gpu=gpu,
                count=float(count),
                rdma=bool(spec.get("rdma", False)) and size not in not_rdma,
                spot_capable=bool(spec["spot"]),
                is_tpu=False,
                source=f"{spec.get('source', aws['source'])} (as of {aws['as_of']})",
                vcpus=int(vcpus),
                efa=bool(efa),
                family=fam,
                arch=spec.get("arch", "x86_64"),
            )

    gcp = _load_yaml("gcp.yaml")
    gcp_source = f"{gcp['source']} (as of {gcp['as_of']})"
    for fam, spec in gcp["machine_families"].items():
        gpu = models[spec["gpu"]]
        rdma_sizes = set(spec.get("rdma_sizes", []))
        for size, (count, vcpus) in spec["sizes"].items():
            name = f"{fam}-{size}"
            instances[name] = Accelerator(
                cloud="gcp",
                name=name,
                gpu=gpu,
                count=float(count),
                rdma=str(size) in rdma_sizes,
                spot_capable=bool(spec["spot"]),
                is_tpu=gpu.is_tpu,
                source=gcp_source,
                vcpus=int(vcpus),
                family=fam,
                arch=spec.get("arch", "x86_64"),
            )
    gcp_accelerators = {k: models[v] for k, v in gcp["accelerator_types"].items()}
    gcp_tpu_labels = {k: models[v] for k, v in gcp["tpu_accelerator_types"].items()}
    tpu_generations = {
        k: (models[v["model"]], v["counts"]) for k, v in gcp["tpu_generations"].items()
    }

    azure = _load_yaml("azure.yaml")
    for fam, spec in azure["families"].items():
        gpu = models[spec["gpu"]]
        rdma_sizes = set(spec.get("rdma_sizes", []))
        for size, (count, vcpus) in spec["sizes"].items():
            name = f"Standard_{size}"
            instances[_compact(size)] = Accelerator(
                cloud="azure",
                name=name,
                gpu=gpu,
                count=float(count),
                rdma=bool(spec.get("rdma", False)) or size in rdma_sizes,
                spot_capable=bool(spec["spot"]),
                is_tpu=False,
                source=f"{spec.get('source', azure['source'])} (as of {azure['as_of']})",
                vcpus=int(vcpus),
                family=fam,
            )
        for alias, size in spec.get("aliases", {}).items():
            # Another spelling of the same size: resolves to the same entry.
            instances[_compact(alias)] = instances[_compact(size)]

    return _Tables(
        models=models,
        model_aliases=aliases,
        family_defaults=family_defaults,
        families={k: tuple(v) for k, v in families.items()},
        instances=instances,
        aws_families=aws_families,
        gcp_accelerators=gcp_accelerators,
        gcp_tpu_labels=gcp_tpu_labels,
        tpu_generations=tpu_generations,
        gcp_source=gcp_source,
    )


def all_accelerators() -> tuple[Accelerator, ...]:
    """Every instance/machine type/VM size entry of the catalogue, once each
    (alias spellings are not repeated)."""
    unique: dict[int, Accelerator] = {}
    for entry in _tables().instances.values():
        unique.setdefault(id(entry), entry)
    return tuple(unique.values())


# ---------------------------------------------------------------- lookups ---

_GCP_SHAPE_SUFFIX = re.compile(r"-(nolssd|lowmem)$")
_AZURE_PREFIX = re.compile(r"^(standard|basic)[_-]", re.IGNORECASE)


def instance_type(name: str) -> Accelerator | None:
    """The catalogue entry of an AWS instance type (also SageMaker ``ml.*``),
    GCP machine type or Azure VM size (any case, with or without
    ``Standard_``). None when the type has no accelerator or is unknown."""
    if not isinstance(name, str):
        return None
    text = name.strip()
    if not text:
        return None
    tables = _tables()
    lowered = text.lower()
    if lowered.startswith("ml."):  # SageMaker: ml.p4d.24xlarge
        lowered = lowered[3:]
    entry = tables.instances.get(lowered)
    if entry is not None:
        return entry
    # GCP machine types may arrive as a URL / path (zones/us-central1-a/machineTypes/a2-highgpu-1g)
    # and with a "-nolssd"/"-lowmem" suffix (the same GPUs, less Local SSD or host memory).
    gcp_name = _GCP_SHAPE_SUFFIX.sub("", lowered.rsplit("/", 1)[-1])
    if gcp_name != lowered:
        entry = tables.instances.get(gcp_name)
        if entry is not None and entry.cloud == "gcp":
            return entry
    azure_key = _compact(_AZURE_PREFIX.sub("", text))
    entry = tables.instances.get(azure_key)
    if entry is not None and entry.cloud == "azure":
        return entry
    return None


_TPU_TYPE = re.compile(r"^(v\d+[a-z]*?)(?:pod)?-(\d+)$")


def gcp_accelerator(name: str, count: int | None = None) -> Accelerator | None:
    """A GCP accelerator type (``guest_accelerator.type``, GKE node_config
    accelerator, ``cloud.google.com/gke-accelerator`` value, GKE TPU label
    value, or Cloud TPU type such as ``v5litepod-8``), optionally given as a
    full resource path. ``count`` is the number attached per VM (default 1;
    for a Cloud TPU type the chip count follows from the name)."""
    if not isinstance(name, str) or not name.strip():
        return None
    tables = _tables()
    key = name.strip().lower().rsplit("/", 1)[-1]
    per_vm = float(count) if isinstance(count, (int, float)) and count > 0 else 1.0

    def entry(gpu: GpuModel, n: float) -> Accelerator:
        return Accelerator(
            cloud="gcp",
            name=key,
            gpu=gpu,
            count=n,
            rdma=False,  # RDMA is a property of the machine type, not of the accelerator
            spot_capable=True,
            is_tpu=gpu.is_tpu,
            source=tables.gcp_source,
            family=key,
            kind="accelerator",
        )

    gpu = tables.gcp_accelerators.get(key) or tables.gcp_tpu_labels.get(key)
    if gpu is not None:
        return entry(gpu, per_vm)
    match = _TPU_TYPE.match(key)
    if match:
        generation, number = match.group(1), int(match.group(2))
        known = tables.tpu_generations.get(generation) or tables.tpu_generations.get(
            generation + "pod"
        )
        if known is not None and number > 0:
            gpu, counts = known
            chips = number / 2 if counts == "cores" else number
            return entry(gpu, float(max(chips, 1)))
    return None


_MIG = re.compile(r"-?mig-(\d+)g\.(\d+)gb", re.IGNORECASE)
_MEMORY_TOKEN = re.compile(r"(\d+)\s*gb", re.IGNORECASE)
# Longest names first so that "l40s" wins over "l4" and "a100" over "a10".
_FAMILY_TOKENS = (
    "gb200", "b200", "h200", "h100", "a100", "a10g", "a10", "l40s", "l40", "l4",
    "a40", "t4g", "t4", "v100", "p100", "p4", "k80", "m60", "mi300x",
)
_FAMILY_RE = re.compile(
    r"(?<![a-z0-9])(" + "|".join(_FAMILY_TOKENS) + r")(?![a-z0-9])"
)


def _parse_product(text: str) -> GpuModel | None:
    """A free-form GPU product string (GFD ``nvidia.com/gpu.product``:
    "NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-16GB", "NVIDIA-H100-80GB-HBM3"):
    find the family token and pick the variant by the memory token."""
    tables = _tables()
    lowered = text.lower().replace("_", "-")
    lowered = re.sub(r"-shared$", "", lowered)  # GFD time-slicing suffix
    mig = _MIG.search(lowered)
    if mig:
        lowered = lowered[: mig.start()]
    exact = tables.model_aliases.get(_compact(lowered))
    base: GpuModel | None = exact
    if base is None:
        found = _FAMILY_RE.search(lowered)
        if found is None:
            return None
        variants = [
            m for m in tables.models.values() if m.family.lower() == found.group(1)
            or m.name.lower() == found.group(1)
        ]
        if not variants:
            return None
        memory = _MEMORY_TOKEN.search(lowered[found.end():])
        if memory:
            gib = float(memory.group(1))
            variants = [m for m in variants if abs(m.memory_gib - gib) <= 0.1 * m.memory_gib]
            if not variants:
                return None
        if "nvl" in lowered:
            variants = [m for m in variants if "NVL" in m.name] or variants
        elif len(variants) > 1:
            variants = [m for m in variants if "NVL" not in m.name]
        if len(variants) != 1:
            return None  # ambiguous (e.g. "A100" with no memory): unknown
        base = variants[0]
    if mig:
        # A MIG slice is a GPU of its own size for the workload that gets it.
        slice_gb = float(mig.group(2))
        return GpuModel(
            name=f"{base.name} MIG {mig.group(1)}g.{mig.group(2)}gb",
            memory_gib=slice_gb,
            bf16=base.bf16,
            vendor=base.vendor,
            family=base.family,
            kind=base.kind,
        )
    return base


def gpu_model(name: str) -> GpuModel | None:
    """Resolve a GPU model name ("L4", "A100-80", "H100"), a cloud accelerator
    name ("nvidia-l4"), a GFD product string ("NVIDIA-A100-SXM4-80GB"), a
    Karpenter GPU name ("a10g") or an instance/machine type/VM size to its
    model. A bare family name with several variants ("A100", "H100", "V100")
    resolves to the family's default variant (A100-40, H100-80, V100-16); use
    :func:`gpu_model_matches` to compare policy entries by family."""
    if not isinstance(name, str) or not name.strip():
        return None
    tables = _tables()
    text = name.strip()
    key = _compact(text)
    model = tables.model_aliases.get(key) or tables.family_defaults.get(key)
    if model is not None:
        return model
    entry = instance_type(text) or gcp_accelerator(text)
    if entry is not None:
        return entry.gpu
    return _parse_product(text)


def gpu_model_matches(entry: str, model: GpuModel) -> bool | None:
    """Whether ``model`` satisfies one policy ``allowed-gpu-types`` entry: a
    bare family name ("A100", "H100") matches every variant of the family, a
    specific name ("A100-80", "nvidia-a100-80gb", "p4d.24xlarge") only its
    model. None when the entry names nothing the catalogue knows."""
    if not isinstance(entry, str) or not entry.strip():
        return None
    tables = _tables()
    key = _compact(entry)
    if key in tables.families and key not in tables.model_aliases:
        return _compact(model.family) == key
    resolved = gpu_model(entry)
    if resolved is None:
        return None
    if _compact(resolved.family) == key:  # "L4", "T4": name == family
        return _compact(model.family) == key
    return resolved.name == model.name or model.name.startswith(resolved.name + " MIG")


# ------------------------------------------------------- smaller offering ---


def smaller_gpu_same_cloud(acc: Accelerator, max_memory_gib: float) -> Accelerator | None:
    """An offering of the same cloud, same GPU vendor, same kind of device
    (CUDA code stays on NVIDIA GPUs) and same host architecture (x86 images
    stay on x86) whose GPU memory is at most ``max_memory_gib`` (MLC201c).

    Deterministic choice: among whole-GPU entries of the same cloud, vendor
    and device kind with ``memory_gib <= max_memory_gib``, prefer the same GPU
    count as ``acc`` (the job's rank layout stays), then the largest memory
    that fits (the smallest step down, so the least risk of running out of
    memory), then the fewest vCPUs (cheapest shape), then the name. GCP
    accelerator types (``kind == "accelerator"``) get an accelerator type back.
    None when the cloud offers nothing that small."""
    if acc.cloud is None or acc.partial_gpu:
        return None
    tables = _tables()
    if acc.kind == "accelerator":
        candidates = [
            gcp_accelerator(name, int(acc.count) if acc.count >= 1 else 1)
            for name in sorted(tables.gcp_accelerators)
        ]
    else:
        candidates = list(all_accelerators())
    fitting = [
        c
        for c in candidates
        if c is not None
        and c.cloud == acc.cloud
        and c.gpu.vendor == acc.gpu.vendor
        and c.gpu.kind == acc.gpu.kind
        and c.arch == acc.arch  # an x86 image does not run on Graviton/Grace
        and not c.partial_gpu
        and c.gpu.memory_gib <= max_memory_gib
    ]
    if not fitting:
        return None

    def preference(c: Accelerator) -> tuple[int, float, int, str]:
        return (
            0 if c.count == acc.count else 1,
            -c.gpu.memory_gib,
            c.vcpus if c.vcpus is not None else 1 << 30,
            c.name,
        )

    return min(fitting, key=preference)


# node_labels.py (what Kubernetes node labels pin down) imports the classes and
# lookups above, so it is imported last.
from .node_labels import from_node_labels  # noqa: E402
