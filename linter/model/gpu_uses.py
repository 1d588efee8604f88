"""GPU uses of cloud resources: every known accelerator a resource declares
(pools, VMs, notebooks, TPUs), one :data:`GPU_COMPUTE` entry per resource
type that names accelerators.

    gpu_uses(resource) / all_gpu_uses(project) -> list[GpuUse]
        Every known accelerator a resource declares.
    values_at(node, path)
        Every value at a dotted path, through nested block lists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location

if TYPE_CHECKING:
    from mlcost_lint.model.cloud import CloudResource

# type -> (dotted path, what it holds). "instance": an instance/machine type
# or VM size (or a list of them); "accelerator": GCP guest_accelerator-style
# blocks with a type and a count; "tpu": a Cloud TPU accelerator type.
GPU_COMPUTE: dict[str, tuple[tuple[str, str], ...]] = {
    "aws_instance": (("instance_type", "instance"),),
    "aws_spot_instance_request": (("instance_type", "instance"),),
    "aws_launch_template": (("instance_type", "instance"),),
    "aws_launch_configuration": (("instance_type", "instance"),),
    "aws_eks_node_group": (("instance_types", "instance"),),
    # instance_type: self-managed node groups read from the EKS module's inputs.
    "aws_autoscaling_group": (("mixed_instances_policy.launch_template.override.instance_type", "instance"),
                              ("instance_type", "instance")),
    "aws_batch_compute_environment": (("compute_resources.instance_type", "instance"),),
    "aws_sagemaker_notebook_instance": (("instance_type", "instance"),),
    "aws_sagemaker_endpoint_configuration": (("production_variants.instance_type", "instance"),),
    "aws_sagemaker_training_job": (("resource_config.instance_type", "instance"),),
    "azureml/amlcompute": (("size", "instance"),),     # Azure ML compute YAML (mlcost_lint.model.azureml)
    "google_compute_instance": (("machine_type", "instance"), ("guest_accelerator", "accelerator")),
    "google_compute_instance_template": (("machine_type", "instance"), ("guest_accelerator", "accelerator")),
    "google_compute_region_instance_template": (("machine_type", "instance"),
                                                ("guest_accelerator", "accelerator")),
    "google_container_node_pool": (("node_config.machine_type", "instance"),
                                   ("node_config.guest_accelerator", "accelerator")),
    "google_container_cluster": (("node_config.machine_type", "instance"),
                                 ("node_config.guest_accelerator", "accelerator"),
                                 ("node_pool.node_config.machine_type", "instance"),
                                 ("node_pool.node_config.guest_accelerator", "accelerator")),
    "google_workbench_instance": (("gce_setup.machine_type", "instance"),
                                  ("gce_setup.accelerator_configs", "accelerator")),
    "google_notebooks_instance": (("machine_type", "instance"), ("accelerator_config", "accelerator")),
    "google_tpu_v2_vm": (("accelerator_type", "tpu"),),
    "google_tpu_node": (("accelerator_type", "tpu"),),
    "azurerm_kubernetes_cluster": (("default_node_pool.vm_size", "instance"),),
    "azurerm_kubernetes_cluster_node_pool": (("vm_size", "instance"),),
    "azurerm_linux_virtual_machine": (("size", "instance"),),
    "azurerm_windows_virtual_machine": (("size", "instance"),),
    "azurerm_virtual_machine": (("vm_size", "instance"),),
    "azurerm_linux_virtual_machine_scale_set": (("sku", "instance"),),
    "azurerm_windows_virtual_machine_scale_set": (("sku", "instance"),),
    "azurerm_orchestrated_virtual_machine_scale_set": (("sku_name", "instance"),),
    "azurerm_machine_learning_compute_cluster": (("vm_size", "instance"),),
    "azurerm_machine_learning_compute_instance": (("virtual_machine_size", "instance"),),
}


@dataclass(frozen=True, slots=True)
class GpuUse:
    resource: "CloudResource"
    model: Any                 # catalogue GpuModel
    per_instance: float        # accelerators per VM / node
    written: str               # the type as written ("p4d.24xlarge", "nvidia-l4")
    attr: str                  # where it is written (dotted)

    @property
    def location(self) -> Location:
        r = self.resource
        for path in (self.attr, self.attr.rsplit(".", 1)[0]):
            if path in r.attr_locations:
                return r.attr_locations[path]
        return r.location

    def describe(self) -> str:
        count = f"{self.per_instance:g} x " if self.per_instance != 1 else ""
        return f"{self.written} ({count}{self.model.name})"


def values_at(node: Any, path: str) -> Iterator[Any]:
    """Every value at a dotted path, through every element of nested block lists."""
    parts = path.split(".")

    def walk(value: Any, i: int) -> Iterator[Any]:
        if value is UNKNOWN:
            yield UNKNOWN
            return
        if isinstance(value, list) and i < len(parts):
            for item in value:
                yield from walk(item, i)
            return
        if i == len(parts):
            if isinstance(value, list):
                yield from value
            elif value is not None:
                yield value
            return
        if isinstance(value, dict) and parts[i] in value:
            yield from walk(value[parts[i]], i + 1)

    yield from walk(node, 0)


def _accelerator_name(raw: str) -> str:
    # Workbench/Notebooks write NVIDIA_TESLA_T4; Compute writes nvidia-tesla-t4.
    return raw.strip().lower().replace("_", "-")


def _use(resource: "CloudResource", value: Any, kind: str, path: str) -> GpuUse | None:
    from mlcost_lint import catalogue

    if kind in ("instance", "tpu"):
        if not isinstance(value, str):
            return None
        entry = catalogue.instance_type(value) if kind == "instance" else catalogue.gcp_accelerator(value)
        return GpuUse(resource, entry.gpu, entry.count, value, path) if entry is not None else None
    if not isinstance(value, dict):
        return None
    name = value.get("type")
    count = value.get("count", value.get("core_count"))
    if not isinstance(name, str) or isinstance(count, bool) or not isinstance(count, (int, float)) or count <= 0:
        return None   # an unknown or zero count: not known GPU capacity
    entry = catalogue.gcp_accelerator(_accelerator_name(name), int(count))
    return GpuUse(resource, entry.gpu, entry.count, name, path) if entry is not None else None


def gpu_uses(resource: "CloudResource") -> list[GpuUse]:
    """The known accelerators a resource declares (empty when none or unknown)."""
    spec = GPU_COMPUTE.get(resource.type)
    if spec is None or resource.mode != "managed":
        return []
    if resource.type == "google_container_cluster" and resource.attrs.get("remove_default_node_pool") is True:
        spec = tuple(s for s in spec if not s[0].startswith("node_config."))
    out: list[GpuUse] = []
    seen: set[tuple[str, str]] = set()
    for path, kind in spec:
        for value in values_at(resource.attrs, path):
            use = _use(resource, value, kind, path)
            if use is not None and (use.written, use.attr) not in seen:
                seen.add((use.written, use.attr))
                out.append(use)
    return out


def all_gpu_uses(project: Any) -> list[GpuUse]:
    out: list[GpuUse] = []
    for r in project.terraform.resources:
        out.extend(gpu_uses(r))
    return out
