"""Training jobs submitted to a managed service (SageMaker training jobs,
Azure ML command jobs, Vertex AI custom jobs), as rules see them.

Such a job joins the project model as a
:class:`~mlcost_lint.model.kubernetes.Workload` (one pod template per
replica group, whose container requests the accelerators of one instance
and runs the job's command) so that the launch, config and data-path links
and the GPU rules read it like any other workload. :class:`ManagedJob`
holds what a pod spec does not have, as the service states it: the
instance type and count, spot, the service's run-time bound (and its
default), where checkpoints go, the data URIs, the region, and the names
of the fields a fix changes. The readers of each format live beside this
module (``managed_sagemaker``, ``azureml``, ``vertex``); rules never read
the formats, only these fields.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.model.kubernetes import Container, EnvVar, PodTemplate, Workload
from mlcost_lint.parse.document import Document, KeyPath

SAGEMAKER = "sagemaker"
AZUREML = "azureml"
VERTEX = "vertex"


@dataclass(frozen=True, slots=True)
class DataPath:
    """An object-store URI the job reads or writes, as the service names it."""

    uri: Any                    # str, or UNKNOWN when not literal
    location: Location
    writes: bool                # an output / checkpoint location
    field: str                  # "input_data_config.data_source.s3_data_source.s3_uri"


@dataclass(slots=True)
class ManagedJob:
    service: str                          # SAGEMAKER | AZUREML | VERTEX
    label: str                            # "SageMaker training job", "Azure ML command job"
    name: str
    address: str                          # unique, stable: "aws_sagemaker_training_job.llm"
    header: Location                      # the job's first line: where a missing field goes
    group: str = ""                       # replica group (Vertex worker pool "workerPoolSpecs[0]")
    # Capacity, for rules and for pricing: type as written, catalogue entry, count.
    instance_type: Maybe[str] | None = None
    instance_type_at: Location | None = None
    accelerator: Any = None               # catalogue Accelerator | None
    instance_count: Maybe[int] = 1
    instance_count_at: Location | None = None
    # Spot: True / False (on-demand, the service default) / UNKNOWN; what said so.
    spot: Maybe[bool] = False
    spot_how: str = ""
    spot_at: Location | None = None
    # Run-time bound in seconds; None: none at all; UNKNOWN: written, not readable.
    runtime_limit: Maybe[int] | None = None
    runtime_how: str = ""                 # "stopping_condition.max_runtime_in_seconds = 3600", "the default of 1 day"
    runtime_at: Location | None = None
    runtime_field: str = ""               # what a fix sets: "limits.timeout"
    # Checkpoints: the durable URI the service syncs (SageMaker checkpoint_config.s3_uri),
    # None when the job names none, UNKNOWN when written but not literal.
    checkpoint_uri: Maybe[str] | None = None
    checkpoint_at: Location | None = None
    checkpoint_field: str = ""            # what a fix sets: "checkpoint_config.s3_uri"
    data_paths: list[DataPath] = field(default_factory=list)
    region: Maybe[str] | None = None
    region_how: str = ""
    region_at: Location | None = None
    # The service wires multi-node networking itself (SageMaker EFA, Azure ML
    # InfiniBand on ND sizes): MLC502's pod-side signals do not apply.
    rdma_by_service: bool = False
    # Size of /dev/shm in bytes (Azure ML resources.shm_size); None: not written
    # (the service default applies), UNKNOWN: not readable.
    shm_bytes: Maybe[int] | None = None
    shm_at: Location | None = None
    shm_default: int | None = None        # the service default when not written
    # Azure ML distribution: (type, process_count_per_instance, where), None when not written.
    distribution: Any = None
    # A GCP accelerator attached per VM (Vertex N1 + NVIDIA_TESLA_T4): (GCE type, count), for pricing.
    attached_accelerator: tuple[str, int] | None = None
    # The job already runs on a discounted capacity model that is not
    # preemptible (Vertex scheduling.strategy FLEX_START): MLC208 does not suggest spot.
    discounted: str = ""
    compute: str | None = None            # Azure ML compute target name
    compute_at: Location | None = None
    resource: Any = None                  # the Terraform CloudResource, when it comes from one
    # Storage the service mounts into the job: (path, durable) (SkyPilot bucket file_mounts).
    mounts: list = field(default_factory=list)
    # Where the per-node accelerator count is written, as written ("accelerators: A100:8"),
    # for services that state it per node (SkyPilot); None otherwise.
    gpus_written: Any = None
    # A training config the service hands the job's script (SageMaker
    # hyper_parameters): linked to the job's container like a config a command names.
    config: Any = None

    @property
    def title(self) -> str:
        return f"{self.label} {self.name}"

    def gpus_where(self) -> str:
        """"accelerators: A100:8, line 5" (services that state GPUs per node)."""
        at = self.gpus_written
        return f"{at.written}, line {at.location.line}" if at is not None else ""

    def gpus_text(self) -> str:
        """"8 GPUs per node: accelerators: A100:8 on line 5"."""
        at = self.gpus_written
        if at is None:
            return ""
        count = self.accelerator.count if self.accelerator is not None else None
        if count is not None and float(count).is_integer():
            from mlcost_lint.catalogue.devices import noun_for_model

            shown = f"{noun_for_model(self.accelerator.gpu).count(int(count))} per node"
        else:
            shown = "GPUs per node"
        return f"{shown}: {at.written} on line {at.location.line}"

    @property
    def gpus_per_instance(self) -> Maybe[float] | None:
        if self.accelerator is None:
            return None
        return self.accelerator.count

    def capacity_text(self) -> str:
        """"2 x ml.p4d.24xlarge (16 A100-40 GPUs)"."""
        count = self.instance_count if isinstance(self.instance_count, int) else "?"
        shown = self.instance_type if isinstance(self.instance_type, str) else "an unknown type"
        if self.accelerator is None:
            return f"{count} x {shown}"
        from mlcost_lint.catalogue.devices import noun_for_model

        noun = noun_for_model(self.accelerator.gpu)
        total = self.accelerator.count * self.instance_count if isinstance(self.instance_count, int) else None
        what = noun.count(total) if total is not None else f"an unknown number of {noun.many}"
        return f"{count} x {shown} ({what.replace(' ', ' ' + self.accelerator.gpu.name + ' ', 1)})"


# The accelerator resource a synthetic container requests, by catalogue GPU kind / vendor.
_RESOURCE_BY_KIND = {"tpu": "google.com/tpu", "neuron": "aws.amazon.com/neuron", "hpu": "habana.ai/gaudi"}
_RESOURCE_BY_VENDOR = {"amd": "amd.com/gpu", "intel": "gpu.intel.com/i915"}


def accelerator_resource(accelerator: Any) -> str:
    gpu = accelerator.gpu
    return _RESOURCE_BY_KIND.get(gpu.kind) or _RESOURCE_BY_VENDOR.get(gpu.vendor, "nvidia.com/gpu")


# Key paths inside the synthetic document.
TEMPLATE: KeyPath = ("job",)
CONTAINER: KeyPath = ("job", "container")
GPU_PATH: KeyPath = CONTAINER + ("resources", "limits")


@dataclass(slots=True)
class JobShape:
    """What the synthetic pod template of a job holds, beyond ManagedJob."""

    command: list[str] = field(default_factory=list)
    command_at: Location | None = None
    env: dict[str, EnvVar] = field(default_factory=dict)
    # Extra key paths of the job's own document (real YAML/JSON jobs), kept so
    # rules that address fields by path still find their lines.
    document: Document | None = None
    key_path: KeyPath = ()


def build_workload(job: ManagedJob, shape: JobShape | None = None) -> Workload:
    """The job as a workload: one template of ``instance_count`` replicas
    whose container requests one instance's accelerators."""
    shape = shape or JobShape()
    path = job.header.path
    positions: dict[KeyPath, tuple[int, int]] = {
        (): (job.header.line, job.header.column),
        TEMPLATE: (job.header.line, job.header.column),
        TEMPLATE + ("spec",): (job.header.line, job.header.column),
        CONTAINER: (job.header.line, job.header.column),
    }
    gpu_at = job.instance_type_at or job.header
    command_at = shape.command_at or job.header
    positions[GPU_PATH] = (gpu_at.line, gpu_at.column)
    positions[CONTAINER + ("command",)] = (command_at.line, command_at.column)
    data: dict[str, Any] = {"job": {"container": {"command": list(shape.command)}}}
    document = Document(path=path, index=0, data=data, positions=positions,
                        start_line=job.header.line, end_line=job.header.line)
    container = Container(document, CONTAINER, name=job.group or "main", command=list(shape.command),
                          env=dict(shape.env))
    acc = job.accelerator
    if acc is not None:
        count = int(acc.count) if float(acc.count).is_integer() else UNKNOWN
        resource = accelerator_resource(acc)
        container.limits[resource] = count
        positions[GPU_PATH + (resource,)] = (gpu_at.line, gpu_at.column)
    replicas = job.instance_count
    template = PodTemplate(document, TEMPLATE, spec_path=TEMPLATE + ("spec",), role=job.group,
                           replicas=replicas, containers=[container])
    workload = Workload(document, (), kind=job.label, name=job.name, templates=[template])
    workload.managed = job
    return workload


def managed_jobs(project: Any) -> list[tuple[Workload, ManagedJob]]:
    """Every managed-service job of the project with its workload."""
    return [(w, w.managed) for w in project.kubernetes.workloads if getattr(w, "managed", None) is not None]


def per_node_job(workload: Any) -> Any:
    """The job of a workload that states its GPUs per node in one place (a
    Slurm job's ``#SBATCH`` line, a SkyPilot task's ``accelerators``), for
    messages that name that line; None for other workloads."""
    if getattr(workload, "batch", None) is not None:
        return workload.batch
    job = getattr(workload, "managed", None)
    return job if job is not None and job.gpus_written is not None else None


def is_managed(workload: Any) -> bool:
    return getattr(workload, "managed", None) is not None
