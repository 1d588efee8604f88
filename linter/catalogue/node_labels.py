"""What Kubernetes node labels pin down: the label keys that clouds, node
provisioners and device plugins put on accelerator nodes (instance-type
labels, AKS node auto-provisioning's sku name, Karpenter / EKS Auto Mode
instance facts, the GKE accelerator and TPU labels, NVIDIA GPU feature
discovery and AMD product names), and :func:`from_node_labels`, which reads a
node selector's or node affinity's labels as the catalogue entry they name
(the link stage's pools, :func:`mlcost_lint.model.scheduling.pinned_gpu`,
MLC208).

A module of its own because the label vocabulary and its order of precedence
(an instance type before a family alone, a GPU name's variant chosen by a
memory label in MiB) are a concern apart from the lookups by name. Each label
value resolves through those lookups in the package ``__init__``
(:func:`~mlcost_lint.catalogue.instance_type`,
:func:`~mlcost_lint.catalogue.gcp_accelerator`, the GPU product-string
parser), which imports this module last and re-exports
:func:`from_node_labels`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from . import (
    _FAMILY_RE,
    Accelerator,
    GpuModel,
    _compact,
    _parse_product,
    _tables,
    gcp_accelerator,
    instance_type,
)

_INSTANCE_TYPE_LABELS = (
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "karpenter.azure.com/sku-name",  # AKS node auto-provisioning: Standard_NC24ads_A100_v4
)
# Karpenter on AWS and EKS Auto Mode publish the same instance facts under two
# prefixes (instance-family, instance-size, instance-gpu-name, instance-gpu-memory
# in MiB, instance-accelerator-name); AKS node auto-provisioning names the GPU
# under karpenter.azure.com/sku-gpu-name.
_AWS_LABEL_PREFIXES = ("karpenter.k8s.aws/", "eks.amazonaws.com/")
_GPU_NAME_LABELS = (
    ("karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-memory"),
    ("eks.amazonaws.com/instance-gpu-name", "eks.amazonaws.com/instance-gpu-memory"),
    ("karpenter.azure.com/sku-gpu-name", None),
)
# Device-reported product names: NVIDIA GPU feature discovery, AMD node labeller.
_PRODUCT_LABELS = (
    ("nvidia.com/gpu.product", "nvidia.com/gpu.memory"),
    ("amd.com/gpu.product-name", None),
    ("beta.amd.com/gpu.product-name", None),
)


def _mib_to_variant(variants: Iterable[GpuModel], mib: float) -> GpuModel | None:
    """The variant whose memory is closest to a MiB figure, within 15% (EC2
    and GFD report usable memory, e.g. 22888 MiB for a 24 GB L4; an H100 at
    81559 MiB is the 80 GB one, not the 94 GB NVL)."""
    gib = mib / 1024.0
    close = sorted(
        (abs(m.memory_gib - gib), m.name, m)
        for m in variants
        if abs(m.memory_gib - gib) <= 0.15 * m.memory_gib
    )
    if not close or (len(close) > 1 and close[0][0] == close[1][0]):
        return None
    return close[0][2]


def _number(text: Any) -> float | None:
    try:
        value = float(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def from_node_labels(labels: Mapping[str, str]) -> Accelerator | GpuModel | None:
    """What node-selector / node-affinity labels pin down: a full
    :class:`Accelerator` when an instance/machine type is named (instance-type
    labels, AKS sku-name, Karpenter / EKS Auto Mode instance family + size), a
    :class:`GpuModel` when only the device model is known (GKE accelerator or
    TPU label, Karpenter / EKS Auto Mode GPU or Neuron name, an AWS instance
    family alone, GFD / AMD product name), None when nothing GPU-related is
    pinned or the value is unknown or ambiguous ("a100" without a memory label)."""
    if not isinstance(labels, Mapping):
        return None
    values = {str(k).strip(): str(v).strip() for k, v in labels.items() if isinstance(v, (str, int, float))}
    tables = _tables()

    for key in _INSTANCE_TYPE_LABELS:
        if key in values:
            entry = instance_type(values[key])
            if entry is not None:
                return entry

    families: list[str] = []
    for prefix in _AWS_LABEL_PREFIXES:
        family = values.get(prefix + "instance-family", "").lower()
        size = values.get(prefix + "instance-size", "").lower()
        if family and size:
            entry = instance_type(f"{family}.{size}")
            if entry is not None:
                return entry
        if family:
            families.append(family)

    gke = values.get("cloud.google.com/gke-accelerator")
    if gke:
        acc = gcp_accelerator(gke)
        if acc is not None:
            return acc.gpu
    tpu = values.get("cloud.google.com/gke-tpu-accelerator")
    if tpu:
        model = tables.gcp_tpu_labels.get(tpu.lower())
        if model is not None:
            return model

    # Neuron devices are named separately: instance-accelerator-name
    # "inferentia" / "trainium" (+ "2" for the second generations).
    for prefix in _AWS_LABEL_PREFIXES:
        accelerator_name = values.get(prefix + "instance-accelerator-name")
        if accelerator_name:
            model = tables.model_aliases.get(_compact(accelerator_name))
            if model is not None and model.kind == "neuron":
                return model

    for name_label, memory_label in _GPU_NAME_LABELS:
        gpu_name = values.get(name_label)
        if not gpu_name:
            continue
        key = _compact(gpu_name)
        exact = tables.model_aliases.get(key)  # "t4" is the T4, not the T4 family (T4G)
        variants = (exact,) if exact is not None else tables.families.get(key, ())
        mib = _number(values.get(memory_label)) if memory_label else None
        if len(variants) == 1:
            return variants[0]
        if variants and mib is not None:
            chosen = _mib_to_variant(variants, mib)
            if chosen is not None:
                return chosen

    for family in families:
        if family in tables.aws_families:
            return tables.aws_families[family]

    for product_label, memory_label in _PRODUCT_LABELS:
        product = values.get(product_label)
        if not product:
            continue
        model = _parse_product(product)
        if model is None and memory_label:
            # "NVIDIA-A100" style without memory: the memory label disambiguates.
            found = _FAMILY_RE.search(product.lower().replace("_", "-"))
            mib = _number(values.get(memory_label))
            if found and mib is not None:
                variants = tables.families.get(_compact(found.group(1)), ())
                model = _mib_to_variant(variants, mib)
        if model is not None:
            return model
    return None
