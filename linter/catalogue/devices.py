"""What a message calls an accelerator (rules.md: "GPUs" for GPUs, "TPU
chips", "Trainium chips", "Gaudi devices", and "accelerators" where kinds
mix). One table for every rule: by Kubernetes resource name, and by the
catalogue's GPU model (its ``kind`` and family)."""

from __future__ import annotations

from typing import Iterable

from mlcost_lint.lean_dataclass import dataclass


@dataclass(frozen=True, slots=True)
class DeviceNoun:
    one: str
    many: str

    def count(self, n: float | int | str) -> str:
        """ "1 GPU", "8 TPU chips", "an unknown number of GPUs"."""
        if isinstance(n, str):
            return f"{n} {self.many}"
        text = str(int(n)) if float(n).is_integer() else f"{n:g}"
        return f"{text} {self.one if n == 1 else self.many}"

    def __str__(self) -> str:
        return self.many


GPU = DeviceNoun("GPU", "GPUs")
TPU = DeviceNoun("TPU chip", "TPU chips")
TRAINIUM = DeviceNoun("Trainium chip", "Trainium chips")
INFERENTIA = DeviceNoun("Inferentia chip", "Inferentia chips")
NEURON = DeviceNoun("Neuron device", "Neuron devices")
NEURON_CORE = DeviceNoun("NeuronCore", "NeuronCores")
GAUDI = DeviceNoun("Gaudi device", "Gaudi devices")
ACCELERATOR = DeviceNoun("accelerator", "accelerators")

# Kubernetes extended resources, longest prefix first.
_BY_RESOURCE = (
    ("aws.amazon.com/neuroncore", NEURON_CORE),
    ("aws.amazon.com/neuron", NEURON),
    ("google.com/tpu", TPU),
    ("habana.ai/gaudi", GAUDI),
    ("nvidia.com/", GPU),
    ("amd.com/gpu", GPU),
    ("gpu.intel.com/", GPU),
    ("gres/gpu", GPU),          # Slurm
)
# Catalogue GPU models: by family prefix, then by kind (gpu_models.yaml).
_BY_FAMILY = (("Trainium", TRAINIUM), ("Inferentia", INFERENTIA))
_BY_KIND = {"gpu": GPU, "tpu": TPU, "neuron": NEURON, "hpu": GAUDI}


def noun_for_resource(resource: str) -> DeviceNoun:
    for prefix, noun in _BY_RESOURCE:
        if resource.startswith(prefix):
            return noun
    return ACCELERATOR


def noun_for_model(model: object) -> DeviceNoun:
    """A catalogue GpuModel, a model name ("TPU-v4", "A100-40"), or None."""
    if model is None:
        return GPU
    family = str(getattr(model, "family", "") or getattr(model, "name", "") or model)
    for prefix, noun in _BY_FAMILY:
        if family.startswith(prefix):
            return noun
    kind = getattr(model, "kind", None)
    if kind is None:
        from mlcost_lint.catalogue import gpu_model

        found = gpu_model(family)
        kind = getattr(found, "kind", None) if found is not None else None
    return _BY_KIND.get(kind or "gpu", ACCELERATOR)


def common_noun(nouns: Iterable[DeviceNoun]) -> DeviceNoun:
    """One noun for several devices: theirs when they agree, else "accelerators"."""
    found = set(nouns)
    if len(found) == 1:
        return found.pop()
    return GPU if not found else ACCELERATOR


def noun_for_resources(resources: Iterable[str]) -> DeviceNoun:
    return common_noun(noun_for_resource(r) for r in resources)
