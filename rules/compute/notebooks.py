"""Interactive notebook instances in Terraform, for MLC201(d) and MLC205: one
table of what each resource type is called and where its size, attached GPUs
and idle-shutdown setting are written."""

from __future__ import annotations

from typing import Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN


def _sagemaker_idle(resource) -> Any:
    value = resource.get("lifecycle_config_name")
    if value is UNKNOWN:
        return UNKNOWN
    return bool(value)


def _workbench_idle(resource) -> Any:
    metadata = resource.get("gce_setup.metadata")
    if metadata is UNKNOWN:
        return UNKNOWN
    if not isinstance(metadata, dict):
        return False
    value = metadata.get("idle-timeout-seconds")
    if value is UNKNOWN:
        return UNKNOWN
    return value is not None and str(value).strip() not in ("", "0")


@dataclass(frozen=True, slots=True)
class NotebookKind:
    label: str                                  # how messages name it
    size_attr: str                              # machine / instance size
    accelerators_attr: str | None = None        # attached accelerator block(s), when the type has them
    # Whether idle shutdown is set (True / False / UNKNOWN); None: MLC205 does not judge this type.
    idle: Callable[[Any], Any] | None = None
    idle_attr: str | None = None                # where idle shutdown is written
    idle_fix: str = ""                          # MLC205's fix text


NOTEBOOKS: dict[str, NotebookKind] = {
    "aws_sagemaker_notebook_instance": NotebookKind(
        "SageMaker notebook instance", "instance_type",
        idle=_sagemaker_idle, idle_attr="lifecycle_config_name",
        idle_fix="attach a lifecycle configuration (lifecycle_config_name) that stops the instance when idle",
    ),
    "google_workbench_instance": NotebookKind(
        "Vertex AI Workbench instance", "gce_setup.machine_type", "gce_setup.accelerator_configs",
        idle=_workbench_idle, idle_attr="gce_setup.metadata",
        idle_fix="set gce_setup.metadata idle-timeout-seconds (e.g. \"10800\")",
    ),
    "google_notebooks_instance": NotebookKind(
        "Vertex AI Workbench (user-managed) instance", "machine_type", "accelerator_config",
    ),
    "azurerm_machine_learning_compute_instance": NotebookKind(
        "Azure ML compute instance", "virtual_machine_size",
        # The azurerm provider has no idle shutdown argument (provider issue 20973).
        idle=lambda r: False, idle_attr=None,
        idle_fix="the azurerm provider cannot set idle shutdown: create the instance with azapi_resource "
                 "and properties.idleTimeBeforeShutdown, or assign the built-in idle-shutdown Azure Policy",
    ),
}


def notebook_target(resource: Any, size_attr: str | None, accelerators_attr: str | None) -> Any:
    """One notebook instance for pricing: its machine size, with the attached
    GCP accelerator when it has one (mlcost_lint.pricing.Target)."""
    from mlcost_lint.rules.compute.gpu_capacity import resource_target

    size = resource.get(size_attr) if size_attr else None
    accel = resource.get(accelerators_attr) if accelerators_attr else None
    attached = None
    if isinstance(accel, list) and len(accel) == 1 and isinstance(accel[0], dict):
        kind, count = accel[0].get("type"), accel[0].get("core_count", 1)
        if isinstance(kind, str) and isinstance(count, int) and not isinstance(count, bool):
            attached = (kind.lower().replace("_", "-"), count)
    return resource_target(resource, (size,) if isinstance(size, str) else (), attached)
