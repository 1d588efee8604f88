"""Azure ML CLI v2 YAML: command jobs (also the trial of a sweep job and the
command steps of a pipeline job) as managed jobs, and compute YAML
(``type: amlcompute``) as node pools.

Detection is by content: a ``$schema`` on azuremlschemas.azureedge.net
(commandJob, sweepJob, pipelineJob, amlCompute), or ``type: command`` with a
``command`` string and an ``environment``/``compute``, ``type: sweep`` with
a ``trial``, ``type: pipeline`` with ``jobs``, ``type: amlcompute`` with a
``size``. Anything else is not ours.

Job fields: ``compute: azureml:<name>`` (joined by name to a compute YAML in
the scan or a Terraform ``azurerm_machine_learning_compute_cluster``; the
join is :func:`resolve_compute`), ``resources.instance_count`` (default 1),
``resources.instance_type`` (serverless), ``resources.shm_size`` (default
2g), ``distribution`` (pytorch/mpi/tensorflow ``process_count_per_instance``,
ray), ``limits.timeout`` (seconds; no default), ``queue_settings.job_tier``
(``spot``), ``environment_variables``, ``outputs`` and ``command`` (run by
``/bin/bash -c``, so its launcher line is read like a container's).
"""

from __future__ import annotations

import re
from typing import Any

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.kubernetes import EnvVar, Workload
from mlcost_lint.model.managed import (
    AZUREML, GPU_PATH, DataPath, JobShape, ManagedJob, accelerator_resource, build_workload)
from mlcost_lint.model.kept_capacity import count_value
from mlcost_lint.parse.document import Document

COMPUTE_TYPE = "azureml/amlcompute"          # CloudResource.type of a compute YAML
SHM_DEFAULT = 2 * 1024 ** 3                   # resources.shm_size default: 2g
_SCHEMA_HOST = "azuremlschemas.azureedge.net"
_SCHEMA_KINDS = {"commandjob": "command", "sweepjob": "sweep", "pipelinejob": "pipeline", "amlcompute": "compute"}
_SIZE = re.compile(r"^\s*(\d+)\s*([bkmg]?)b?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


def azureml_kind(data: Any) -> str | None:
    """"command" | "sweep" | "pipeline" | "compute" for an Azure ML YAML document, else None."""
    if not isinstance(data, dict):
        return None
    schema = data.get("$schema")
    kind = data.get("type")
    if isinstance(schema, str) and _SCHEMA_HOST in schema:
        name = schema.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0].lower()
        found = _SCHEMA_KINDS.get(name)
        if found == "compute" and kind not in (None, "amlcompute"):
            return None
        return found
    if kind == "command" and isinstance(data.get("command"), str) and \
            ("environment" in data or "compute" in data):
        return "command"
    if kind == "sweep" and isinstance(data.get("trial"), dict):
        return "sweep"
    if kind == "pipeline" and isinstance(data.get("jobs"), dict):
        return "pipeline"
    if kind == "amlcompute" and isinstance(data.get("size"), str):
        return "compute"
    return None


def shm_bytes(value: Any) -> Any:
    """Docker shm size ("2g", "512m", "1073741824") in bytes; UNKNOWN when not readable."""
    if isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value
    m = _SIZE.match(value) if isinstance(value, str) else None
    if not m:
        return UNKNOWN
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def compute_name(value: Any) -> str | None:
    """"azureml:gpu-cluster" -> "gpu-cluster" (also the long azureml:/.../computes/<name> form)."""
    if not isinstance(value, str) or "$" in value or "<" in value:
        return None
    text = value.strip()
    if text.startswith("azureml:"):
        text = text[len("azureml:"):]
    text = text.rstrip("/").rsplit("/computes/", 1)[-1]
    return text or None


# ------------------------------------------------------------- compute ---

def compute_resource(doc: Document) -> CloudResource:
    data = doc.data
    name = data.get("name")
    name = name if isinstance(name, str) else f"compute in {doc.path}"
    keys = ("name", "size", "min_instances", "max_instances", "tier", "location", "idle_time_before_scale_down",
            "tags")
    attrs = {k: data[k] for k in keys if k in data}
    locations = {k: doc.location((k,)) for k in keys if k in data}
    location = attrs.get("location")
    return CloudResource(type=COMPUTE_TYPE, name=name, address=name, provider="azureml",
                         location=doc.location(()), attrs=attrs, attr_locations=locations,
                         region=location if isinstance(location, str) else UNKNOWN, origin="azureml")


# ---------------------------------------------------------------- jobs ---

def _env(doc: Document, base: tuple, data: dict) -> dict[str, EnvVar]:
    out: dict[str, EnvVar] = {}
    raw = data.get("environment_variables")
    if isinstance(raw, dict):
        for name, value in raw.items():
            shown = value if isinstance(value, str) else (str(value) if isinstance(value, (int, float)) and
                                                          not isinstance(value, bool) else UNKNOWN)
            out[str(name)] = EnvVar(str(name), shown, doc.location(base + ("environment_variables", name)))
    return out


def _outputs(doc: Document, base: tuple, data: dict) -> tuple[list[DataPath], dict[str, str]]:
    """Output URIs, and output name -> its datastore/URI path (for ${{outputs.x}})."""
    paths: list[DataPath] = []
    named: dict[str, str] = {}
    outputs = data.get("outputs")
    if isinstance(outputs, dict):
        for name, spec in outputs.items():
            if isinstance(spec, dict) and isinstance(spec.get("path"), str):
                where = doc.location(base + ("outputs", name, "path"))
                paths.append(DataPath(spec["path"], where, True, f"outputs.{name}.path"))
                if spec.get("mode", "rw_mount") in ("rw_mount", "upload"):
                    named[str(name)] = spec["path"]
    return paths, named


_OUTPUT_FLAG = re.compile(r"--(?:output[_-]dir|checkpoint[_-]dir|save[_-]dir|ckpt[_-]dir|default_root_dir)"
                          r"[=\s]+\$\{\{\s*outputs\.([A-Za-z0-9_]+)\s*\}\}")


def _job(doc: Document, base: tuple, data: dict, label: str, name: str, inherited: dict) -> Workload:
    def loc(*keys: Any) -> Location:
        return doc.location(base + keys)

    def has(*keys: Any) -> bool:
        return doc.position(base + keys) is not None

    resources = data.get("resources") if isinstance(data.get("resources"), dict) else {}
    limits = data.get("limits") if isinstance(data.get("limits"), dict) else inherited.get("limits") or {}
    queue = data.get("queue_settings") if isinstance(data.get("queue_settings"), dict) else {}
    compute = data.get("compute", inherited.get("compute"))
    count = count_value(resources.get("instance_count"))
    timeout = limits.get("timeout") if isinstance(limits, dict) else None
    runtime = count_value(timeout)
    limits_base = base if isinstance(data.get("limits"), dict) else inherited.get("limits_base", base)
    tier = queue.get("job_tier")
    spot: Any = UNKNOWN
    spot_how, spot_at = "", None
    if isinstance(tier, str) and tier.lower() == "spot":
        spot, spot_how, spot_at = True, "queue_settings.job_tier: spot", loc("queue_settings", "job_tier")
    instance_type = resources.get("instance_type")
    from mlcost_lint import catalogue

    accelerator = catalogue.instance_type(instance_type) if isinstance(instance_type, str) else None
    if accelerator is not None and spot is UNKNOWN:
        spot, spot_how = False, "no queue_settings.job_tier: dedicated"
    data_paths, named_outputs = _outputs(doc, base, data)
    command = data.get("command") if isinstance(data.get("command"), str) else ""
    checkpoint, checkpoint_at, checkpoint_field = None, None, "outputs"
    m = _OUTPUT_FLAG.search(command)
    if m and m.group(1) in named_outputs:
        checkpoint, checkpoint_at = named_outputs[m.group(1)], loc("outputs", m.group(1), "path")
        checkpoint_field = f"outputs.{m.group(1)}.path"
    shm = resources.get("shm_size")
    distribution = data.get("distribution") if isinstance(data.get("distribution"), dict) else None
    job = ManagedJob(
        service=AZUREML, label=label, name=name, address=f"azureml/{doc.path}/{'/'.join(map(str, base)) or name}",
        header=loc(),
        instance_type=instance_type if isinstance(instance_type, str) else None,
        instance_type_at=loc("resources", "instance_type") if has("resources", "instance_type") else None,
        accelerator=accelerator,
        instance_count=1 if count is None else count,
        instance_count_at=loc("resources", "instance_count") if has("resources", "instance_count") else None,
        spot=spot, spot_how=spot_how, spot_at=spot_at,
        runtime_limit=runtime,
        runtime_how="limits.timeout" if runtime is not None else "no limits.timeout",
        runtime_at=doc.location(limits_base + ("limits", "timeout")) if runtime is not None else None,
        runtime_field="limits.timeout",
        checkpoint_uri=checkpoint, checkpoint_at=checkpoint_at, checkpoint_field=checkpoint_field,
        data_paths=data_paths,
        rdma_by_service=True,
        shm_bytes=shm_bytes(shm) if shm is not None else None,
        shm_at=loc("resources", "shm_size") if shm is not None else None,
        shm_default=SHM_DEFAULT,
        compute=compute_name(compute),
        compute_at=loc("compute") if "compute" in data else inherited.get("compute_at"),
    )
    job.distribution = distribution_of(doc, base, distribution)
    shape = JobShape(command=["/bin/bash", "-c", command] if command else [],
                     command_at=loc("command") if command else None, env=_env(doc, base, data))
    return build_workload(job, shape)


def distribution_of(doc: Document, base: tuple, raw: dict | None) -> Any:
    """(type, process_count_per_instance, where) of a job's distribution, or None."""
    if raw is None:
        return None
    kind = raw.get("type")
    count = count_value(raw.get("process_count_per_instance"))
    where = doc.location(base + ("distribution", "process_count_per_instance")) \
        if "process_count_per_instance" in raw else doc.location(base + ("distribution",))
    return (kind if isinstance(kind, str) else UNKNOWN, count, where)


def read_azureml(doc: Document) -> tuple[list[Workload], list[CloudResource]]:
    """The jobs and compute one Azure ML YAML document declares."""
    kind = azureml_kind(doc.data)
    data = doc.data
    display = data.get("display_name") or data.get("name") or doc.path
    display = display if isinstance(display, str) else doc.path
    if kind == "compute":
        return [], [compute_resource(doc)]
    if kind == "command":
        return [_job(doc, (), data, "Azure ML command job", display, {})], []
    if kind == "sweep":
        trial = data.get("trial")
        if not isinstance(trial, dict):
            return [], []
        inherited = {"compute": data.get("compute"), "compute_at": doc.location(("compute",)),
                     "limits": data.get("limits"), "limits_base": ()}
        return [_job(doc, ("trial",), {**trial, "compute": trial.get("compute", data.get("compute"))},
                     "Azure ML sweep trial", display, inherited)], []
    if kind == "pipeline":
        out = []
        settings = data.get("settings") if isinstance(data.get("settings"), dict) else {}
        default = settings.get("default_compute", data.get("compute"))
        for step, spec in (data.get("jobs") or {}).items():
            if not isinstance(spec, dict) or spec.get("type", "command") != "command" or \
                    not isinstance(spec.get("command"), str):
                continue
            inherited = {"compute": default, "compute_at": doc.location(("settings", "default_compute"))}
            out.append(_job(doc, ("jobs", step), spec, "Azure ML pipeline step", f"{display}/{step}", inherited))
        return out, []
    return [], []


# ------------------------------------------------------------ the join ---

def _compute_index(project: Any) -> dict[str, list[CloudResource]]:
    index: dict[str, list[CloudResource]] = {}
    for r in project.terraform.resources:
        if r.type == COMPUTE_TYPE or (r.type == "azurerm_machine_learning_compute_cluster" and r.mode == "managed"):
            name = r.attrs.get("name")
            if isinstance(name, str):
                index.setdefault(name, []).append(r)
    return index


def resolve_compute(project: Any) -> None:
    """Give each Azure ML job the capacity of the compute it names: size,
    tier (low_priority / LowPriority is spot), location."""
    from mlcost_lint import catalogue

    index = _compute_index(project)
    for workload in project.kubernetes.workloads:
        job = workload.managed
        if job is None or job.service != AZUREML or job.compute is None:
            continue
        hits = index.get(job.compute, [])
        if len(hits) != 1:
            continue
        compute = hits[0]
        yaml = compute.type == COMPUTE_TYPE
        size_attr, tier_attr = ("size", "tier") if yaml else ("vm_size", "vm_priority")
        size = compute.attrs.get(size_attr)
        if job.accelerator is None and isinstance(size, str):
            job.instance_type, job.instance_type_at = size, compute.loc(size_attr)
            job.accelerator = catalogue.instance_type(size)
            _request(workload, job)
        tier = compute.attrs.get(tier_attr)
        if job.spot is UNKNOWN:
            if tier is UNKNOWN:
                pass
            elif isinstance(tier, str) and tier.replace("_", "").lower() == "lowpriority":
                job.spot, job.spot_how, job.spot_at = True, f"compute {job.compute} {tier_attr}: {tier}", \
                    compute.loc(tier_attr)
            elif tier is None or isinstance(tier, str):
                job.spot = False
                job.spot_how = f"compute {job.compute} {tier_attr}: {tier}" if tier else \
                    f"compute {job.compute} has no {tier_attr}: dedicated"
                job.spot_at = compute.loc(tier_attr) if tier else compute.location
        region = compute.region if isinstance(compute.region, str) else compute.attrs.get("location")
        if isinstance(region, str) and "$" not in region:
            job.region, job.region_how, job.region_at = region, f"compute {job.compute} ({compute.address})", \
                compute.loc("location")
        job.resource = compute


def _request(workload: Workload, job: ManagedJob) -> None:
    """The container requests one instance of the joined compute's accelerators."""
    acc = job.accelerator
    if acc is None:
        return
    for template in workload.templates:
        for container in template.containers:
            count = int(acc.count) if float(acc.count).is_integer() else UNKNOWN
            resource = accelerator_resource(acc)
            container.limits[resource] = count
            at = job.compute_at or job.header     # the job's own line that selects the compute
            container.document.positions[GPU_PATH + (resource,)] = (at.line, at.column)
