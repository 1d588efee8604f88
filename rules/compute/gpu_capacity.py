"""Shared by the GPU job rules (MLC203-MLC208): batch job shapes (which
family a workload is, where it bounds its run time) and whether a training
config's checkpoints survive the loss of the node.

What GPU capacity a Terraform resource keeps and where a pod template runs
(spot / on-demand / reserved) are model facts: :mod:`mlcost_lint.model.kept_capacity`,
:mod:`mlcost_lint.model.capacity` and :func:`mlcost_lint.link.capacity_of`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe

if TYPE_CHECKING:
    from mlcost_lint.catalogue.devices import DeviceNoun
    from mlcost_lint.pricing import Target

def format_gpus(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


# ------------------------------------------------- Kubernetes batch jobs ---

KUBEFLOW_V1_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"})


def is_volcano_job(workload: Any) -> bool:
    return workload.kind == "Job" and workload.api_version.startswith("batch.volcano.sh/")


def job_kind(workload: Any) -> str | None:
    """The batch family of a workload: "job", "cronjob", "kubeflow",
    "trainjob", "rayjob", "volcano", "jobset"; None for long-running kinds."""
    if is_volcano_job(workload):
        return "volcano"
    return {
        "Job": "job", "CronJob": "cronjob", "TrainJob": "trainjob", "RayJob": "rayjob", "JobSet": "jobset",
        **{k: "kubeflow" for k in KUBEFLOW_V1_KINDS},
    }.get(workload.kind)


# Where each batch family bounds its run time, relative to the object. Kubeflow
# v1 operators read runPolicy; the older top-level fields are still accepted.
DEADLINE_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "job": (("spec", "activeDeadlineSeconds"),),
    "cronjob": (("spec", "jobTemplate", "spec", "activeDeadlineSeconds"),),
    "kubeflow": (("spec", "runPolicy", "activeDeadlineSeconds"), ("spec", "activeDeadlineSeconds")),
    "trainjob": (("spec", "activeDeadlineSeconds"),),
    "rayjob": (("spec", "activeDeadlineSeconds"),),
    "volcano": (),      # Volcano Job has no run-time bound of its own (only per pod)
    "jobset": (),       # per child Job: see child_job_path
}


def workload_value(workload: Any, path: tuple) -> tuple[Any, tuple]:
    """(value, absolute key path) of ``path`` under a workload; (None, path) when absent."""
    full = tuple(workload.key_path) + tuple(path)
    return workload.document.get(full), full


def first_written(workload: Any, paths: Iterable[tuple]) -> tuple[Any, tuple | None]:
    for path in paths:
        value, full = workload_value(workload, path)
        if value is not None:
            return value, full
    return None, None


def child_job_path(workload: Any, template: Any) -> tuple | None:
    """For a JobSet template: the absolute key path of its child Job spec."""
    if workload.kind != "JobSet":
        return None
    return tuple(template.key_path[:-1])


# ------------------------------------------------ checkpoint durability ---

DISABLED = "disabled"     # the config saves no checkpoints
EPHEMERAL = "ephemeral"   # saved where a preempted node takes them along
DURABLE = "durable"       # object store or a persistent volume

OBJECT_STORE_SCHEMES = ("s3://", "s3a://", "gs://", "gcs://", "az://", "abfs://", "abfss://", "wasb://",
                        "wasbs://", "hf://", "dbfs:/", "oci://", "r2://")
# Volume sources whose data outlives the pod and its node.
PERSISTENT_VOLUME_SOURCES = frozenset({
    "persistentVolumeClaim", "nfs", "csi", "azureFile", "azureDisk", "cephfs", "glusterfs", "awsElasticBlockStore",
    "gcePersistentDisk", "iscsi", "fc", "rbd", "portworxVolume", "quobyte", "storageos", "vsphereVolume",
    "cinder", "flocker", "photonPersistentDisk", "scaleIO",
})
# Flags that override the config's output directory on the command line.
OUTPUT_DIR_FLAGS = ("--output_dir", "--output-dir", "--default_root_dir", "--trainer.default_root_dir")
# Hub strategies that push resumable checkpoints (not just the final model).
HUB_CHECKPOINT_STRATEGIES = frozenset({"checkpoint", "all_checkpoints"})


@dataclass(slots=True)
class CheckpointStorage:
    kind: Maybe[str]              # DISABLED / EPHEMERAL / DURABLE / UNKNOWN
    where: Location | None = None
    detail: str = ""


def _mounts(workload: Any, template: Any, container: Any) -> list[tuple[str, bool]]:
    """(mount path, persistent?) for the container, plus Volcano job-level PVC mounts."""
    # A volume named by anything but a string (a list, a map) names no mount.
    volumes = {v["name"]: v for v in template.volumes if isinstance(v, dict) and isinstance(v.get("name"), str)}
    out = []
    for mount in container.volume_mounts:
        volume = volumes.get(mount.name)
        persistent = isinstance(volume, dict) and any(k in PERSISTENT_VOLUME_SOURCES for k in volume)
        out.append((mount.mount_path.rstrip("/") or "/", persistent))
    managed = getattr(workload, "managed", None) if workload is not None else None
    if managed is not None:
        out.extend((path, durable) for path, durable in managed.mounts)   # SkyPilot bucket file_mounts
    if workload is not None and is_volcano_job(workload):
        for v in workload.spec.get("volumes") or []:
            if isinstance(v, dict) and isinstance(v.get("mountPath"), str):
                out.append((v["mountPath"].rstrip("/") or "/", True))
    return out


SAVE_STRATEGY_FLAGS = ("--save_strategy", "--save-strategy")


def script_output_dir(container: Any) -> tuple[str | None, Location | None, bool]:
    """(value, where, found) of an output-dir flag on a command of the shell
    script a container runs (a Slurm batch script, a SkyPilot run block):
    the last command that writes one wins, as it runs last."""
    return script_flag(container, OUTPUT_DIR_FLAGS)


def script_checkpoints_off(container: Any) -> Location | None:
    """Where a launch line of the container's script says ``--save_strategy no``."""
    value, at, found = script_flag(container, SAVE_STRATEGY_FLAGS)
    return at if found and value is not None and value.lower() == "no" else None


def script_flag(container: Any, flags: tuple[str, ...]) -> tuple[str | None, Location | None, bool]:
    """(value, where, found) of the last ``--flag value`` / ``--flag=value``
    on a command of the container's shell script."""
    from mlcost_lint.link.shell import program_of, word_location

    hit: tuple[str | None, Location | None, bool] = (None, None, False)
    for command in program_of(container).commands:
        words = command.words
        for i, word in enumerate(words):
            for flag in flags:
                if word.text == flag:
                    value = words[i + 1].text.strip("'\"") if i + 1 < len(words) else None
                    hit = (value, word_location(container, word), True)
                elif word.text.startswith(flag + "="):
                    hit = (word.text[len(flag) + 1:].strip("'\""), word_location(container, word), True)
    return hit


def _argv_output_dir(container: Any) -> tuple[str | None, bool]:
    """(value, found) of an output-dir flag in the container's argv (also inside sh -c)."""
    words: list[str] = []
    for arg in container.argv:
        words.extend(arg.split())
    for i, word in enumerate(words):
        for flag in OUTPUT_DIR_FLAGS:
            if word == flag:
                return (words[i + 1].strip("'\"") if i + 1 < len(words) else None), True
            if word.startswith(flag + "="):
                return word[len(flag) + 1:].strip("'\""), True
    return None, False


def checkpoint_storage(link: Any) -> CheckpointStorage:
    """Whether the linked config's checkpoints survive the loss of the node."""
    settings = link.config.settings
    config = link.config
    strategy = settings.save_strategy
    if strategy.value == "no":
        return CheckpointStorage(DISABLED, config.loc(strategy), f"{strategy.key or 'save_strategy'}: \"no\"")
    enabled = settings.checkpointing_enabled
    if enabled.value is False:
        return CheckpointStorage(DISABLED, config.loc(enabled), f"{enabled.key or 'enable_checkpointing'}: false")
    if strategy.value is UNKNOWN and strategy.explicit:
        return CheckpointStorage(UNKNOWN)
    hub = settings.hub_strategy
    if hub.explicit and (hub.value is UNKNOWN or hub.value in HUB_CHECKPOINT_STRATEGIES):
        return CheckpointStorage(UNKNOWN)
    value, found = _argv_output_dir(link.container)
    script_at = None
    if not found and link.container.script is not None:
        value, script_at, found = script_output_dir(link.container)
    if found:
        if value is None or "$" in value:
            return CheckpointStorage(UNKNOWN)
        where, shown = link.container.loc("command" if link.container.command else "args"), f"--output_dir {value}"
        where = script_at or where
    else:
        out = settings.output_dir
        if not isinstance(out.value, str) or "$" in out.value or "{" in out.value:
            return CheckpointStorage(UNKNOWN)
        value, where = out.value, config.loc(out)
        shown = f"{out.key or 'output_dir'}: {value}" + ("" if out.explicit else " (default)")
    lowered = value.lower()
    if lowered.startswith(OBJECT_STORE_SCHEMES):
        return CheckpointStorage(DURABLE, where, shown)
    if "://" in lowered:
        return CheckpointStorage(UNKNOWN)
    return storage_of_path(value, where, shown, link.workload, link.template, link.container)


def storage_of_path(value: str, where: Location | None, shown: str, workload: Any, template: Any,
                    container: Any) -> CheckpointStorage:
    """Whether a checkpoint directory outlives the node: an object store, a
    persistent volume or bucket mount, or the container's / instance's own disk."""
    lowered = value.lower()
    if lowered.startswith(OBJECT_STORE_SCHEMES):
        return CheckpointStorage(DURABLE, where, shown)
    if "://" in lowered:
        return CheckpointStorage(UNKNOWN)
    if getattr(workload, "batch", None) is not None:
        # A Slurm node sees the cluster's shared file systems, which are not in the
        # scan: only node-local scratch is known to be lost with the node.
        if value == "/tmp" or value.startswith(("/tmp/", "/dev/shm")):
            return CheckpointStorage(EPHEMERAL, where, shown + " (node-local disk)")
        return CheckpointStorage(UNKNOWN)
    mounts = _mounts(workload, template, container)
    skypilot = getattr(getattr(workload, "managed", None), "service", "") == "skypilot"
    local = "the instance's local disk" if skypilot else "container filesystem"
    path = value
    if path.startswith("~") and path[1:2] not in ("", "/"):
        return CheckpointStorage(UNKNOWN)         # ~user/...
    if not path.startswith(("/", "~")):
        working_dir = workload.document.get(tuple(container.key_path) + ("workingDir",))
        if isinstance(working_dir, str) and working_dir.startswith("/") and "$" not in working_dir:
            path = working_dir.rstrip("/") + "/" + path.lstrip("./")
        elif any(persistent for _, persistent in mounts):
            return CheckpointStorage(UNKNOWN)    # relative to an image WORKDIR we cannot see
        else:
            return CheckpointStorage(EPHEMERAL, where, shown + f" ({local})")
    best = None
    for mount_path, persistent in mounts:
        if path == mount_path or path.startswith(mount_path + "/") or mount_path == "/":
            if best is None or len(mount_path) > len(best[0]):
                best = (mount_path, persistent)
    if best is None:
        return CheckpointStorage(EPHEMERAL, where, shown + f" ({local})")
    if best[1]:
        kind = "bucket mount" if skypilot else "persistent volume"
        return CheckpointStorage(DURABLE, where, shown + f" ({kind} at {best[0]})")
    return CheckpointStorage(EPHEMERAL, where, shown + f" (non-persistent volume at {best[0]})")


def kind_label(workload: Any) -> str:
    """The kind as a reader knows it ("Volcano Job" for batch.volcano.sh Job)."""
    return "Volcano Job" if is_volcano_job(workload) else workload.kind


# ------------------------------------------------------- device wording ---

def template_noun(*templates: Any) -> "DeviceNoun":
    """What the accelerators of these pod templates are called ("GPUs",
    "TPU chips", ...; "accelerators" when kinds mix)."""
    from mlcost_lint.catalogue.devices import noun_for_resources

    return noun_for_resources(name for t in templates for c in t.containers for name in c.accelerators())


def pool_noun(pool: Any) -> "DeviceNoun":
    """What a Terraform GPU pool's devices are called, from its GPU model."""
    from mlcost_lint.catalogue.devices import noun_for_model

    return noun_for_model(getattr(pool, "gpu_name", None))


def held_text(templates: Iterable[Any], per_pod: bool = False) -> str:
    """The accelerators some pod templates hold, for a message: "16 GPUs",
    "at least 8 TPU chips" (a replica count unknown), "an unknown number of
    GPUs" (a request count unknown). ``per_pod``: one pod of each, not
    every replica."""
    templates = list(templates)
    noun = template_noun(*templates)
    total, exact = 0, True
    for t in templates:
        n = t.gpu_count()
        if n is UNKNOWN:
            return f"an unknown number of {noun.many}"
        if per_pod:
            total += n
        elif isinstance(t.replicas, int):
            total += n * t.replicas
        else:
            total += n
            exact = False
    return ("" if exact else "at least ") + noun.count(total)


# ------------------------------------------------- what findings cost ---
# Rules declare the quantity (mlcost_lint.pricing.Quantity); the pricing step
# turns it into money. These helpers say which capacity one unit is.

CLOUD_OF_PROVIDER = {"aws": "aws", "google": "gcp", "google-beta": "gcp", "azurerm": "azure", "azapi": "azure"}
# Node-label prefixes that tell the cloud when only a GPU model is pinned.
CLOUD_OF_LABEL_PREFIX = (("karpenter.k8s.aws/", "aws"), ("eks.amazonaws.com/", "aws"),
                         ("cloud.google.com/", "gcp"), ("karpenter.azure.com/", "azure"),
                         ("kubernetes.azure.com/", "azure"))


def _region(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def resource_target(resource: Any, types: Iterable[Any] = (), accelerator: tuple[str, int] | None = None) -> "Target":
    """One instance of a Terraform resource's type(s) in its region."""
    from mlcost_lint.pricing import Target

    names = tuple(t for t in types if isinstance(t, str) and t)
    return Target(CLOUD_OF_PROVIDER.get(resource.provider), names, accelerator, region=_region(resource.region))


def pool_target(pool: Any) -> "Target":
    """One node of a Terraform node group / pool: its instance type(s) (several
    listed: the cheapest), a GCP guest accelerator, its region."""
    from mlcost_lint.pricing import Target

    types = pool.instance_types if isinstance(pool.instance_types, list) else \
        (pool.node_types if isinstance(pool.node_types, list) else [])
    acc = pool.guest_accelerator
    accelerator = (str(acc[0]), int(acc[1])) if acc and isinstance(acc[0], str) and isinstance(acc[1], int) else None
    if not types and accelerator is None and pool.is_gpu and pool.accelerator.kind == "accelerator":
        accelerator = (pool.accelerator.name, int(pool.accelerator.count) or 1)
    cloud = pool.accelerator.cloud if pool.is_gpu and pool.accelerator.cloud else \
        CLOUD_OF_PROVIDER.get(pool.resource.provider)
    return Target(cloud, tuple(t for t in types if isinstance(t, str)), accelerator,
                  region=_region(pool.resource.region))


def template_target(project: Any, template: Any, settings: Any) -> "Target":
    """One node of where a pod template runs: the linked pool, else the
    instance type its selector names, else the GPU model it pins (priced as
    the cheapest instance carrying it, "at least"). Region: the pool's, a
    region selector, else ``default-region``."""
    from mlcost_lint.catalogue import Accelerator
    from mlcost_lint.link import compute_region_of
    from mlcost_lint.link.pools import linked_pool
    from mlcost_lint.model.scheduling import selector_of
    from mlcost_lint.pricing import Target

    found = compute_region_of(project, template, settings)
    region = found[0] if found else None
    pool = linked_pool(project, template)
    if pool is not None:
        target = pool_target(pool)
        return target if target.region else Target(target.cloud, target.types, target.accelerator, region=region)
    placement = project.links.placement_of(template)
    job = getattr(placement.workload, "managed", None) if placement is not None else None
    if job is not None:
        return managed_target(job, region)
    node = placement.node_type if placement is not None else None
    if isinstance(node, Accelerator) and node.kind == "instance":
        return Target(node.cloud, (node.name,), region=region)
    gpu = placement.gpu if placement is not None else None
    if isinstance(gpu, Accelerator):
        if gpu.kind == "instance":
            return Target(gpu.cloud, (gpu.name,), region=region)
        return Target(gpu.cloud, model=gpu.gpu.name, region=region)
    if gpu is not None:
        labels = selector_of(template).labels()
        cloud = next((c for prefix, c in CLOUD_OF_LABEL_PREFIX if any(k.startswith(prefix) for k in labels)), None)
        return Target(cloud, model=getattr(gpu, "name", None), region=region)
    return Target(None, region=region)


def managed_target(job: Any, region: str | None) -> "Target":
    """One instance of a managed-service job, as the job names it: the
    instance type as written (a SageMaker ``ml.`` name stays, so the price
    says it is the EC2 price, "at least"), a Vertex N1 machine with its
    attached accelerators, else the GPU model."""
    from mlcost_lint.pricing import Target

    acc = job.accelerator
    cloud = acc.cloud if acc is not None else None
    types = (job.instance_type,) if isinstance(job.instance_type, str) and job.instance_type else ()
    attached = job.attached_accelerator
    if attached is not None and attached[0] and isinstance(attached[1], int):
        return Target(cloud, types, attached, region=region)
    if types and acc is not None and acc.kind == "instance":
        return Target(cloud, types, region=region)
    if acc is not None:
        return Target(cloud, model=acc.gpu.name, region=region)
    return Target(cloud, region=region)


def run_bound_hours(workload: Any, template: Any = None) -> float | None:
    """Hours one run of a batch workload may last (activeDeadlineSeconds of
    the job or of the pod template; a managed job's run-time bound, the
    service default included), None when unbounded or unknown."""
    from mlcost_lint.model.kept_capacity import count_value

    job = getattr(workload, "managed", None)
    if job is not None:
        limit = job.runtime_limit
        return limit / 3600 if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None
    family = job_kind(workload)
    seconds: Any = None
    if family is not None:
        value, _ = first_written(workload, DEADLINE_PATHS[family])
        seconds = count_value(value)
    if not isinstance(seconds, int) and template is not None:
        seconds = template.active_deadline_seconds
    return seconds / 3600 if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0 else None


def pods_of(template: Any) -> tuple[int, bool]:
    """(replicas, exact): an unknown replica count counts 1, "at least"."""
    replicas = template.replicas
    return (replicas, True) if isinstance(replicas, int) and not isinstance(replicas, bool) else (1, False)


def pool_price(pool: Any) -> str:
    """Which price a pool's nodes bill at: spot on a spot pool, else on-demand."""
    from mlcost_lint.pricing import LIST, SPOT

    return SPOT if pool.spot is True else LIST


def template_price(project: Any, template: Any) -> str:
    """Which price a pod template's nodes bill at: spot when it runs on spot capacity."""
    from mlcost_lint.link import spot_of
    from mlcost_lint.pricing import LIST, SPOT

    return SPOT if spot_of(project, template) is True else LIST
