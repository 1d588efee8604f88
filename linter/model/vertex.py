"""Vertex AI custom jobs: the ``CustomJobSpec`` YAML/JSON that ``gcloud ai
custom-jobs create --config`` takes (``workerPoolSpecs`` at the top, one
mapping or a list), and the REST ``CustomJob`` body (``displayName`` and a
``jobSpec`` holding the spec), as managed jobs.

Detection is by content: ``workerPoolSpecs`` (top level or under
``jobSpec``) whose pools are mappings and at least one has a
``machineSpec`` mapping; never a Kubernetes object. Keys are the camelCase
ones gcloud requires ("keys with underscore are invalid").

Fields: per pool ``machineSpec`` (``machineType``; ``acceleratorType`` such
as ``NVIDIA_TESLA_A100`` is the Compute Engine accelerator
``nvidia-tesla-a100``; ``acceleratorCount``), ``replicaCount`` (default 1),
``containerSpec`` (``imageUri``, ``command`` + ``args`` is what the
container runs, ``env``) or ``pythonPackageSpec`` (``python -m
<pythonModule> <args>``); job-wide ``scheduling`` (``timeout``, a duration
such as ``"86400s"``, default 7 days, so an absent value is a bound:
rules.md MLC204; ``strategy``: ``SPOT`` is spot, ``FLEX_START`` is the
Dynamic Workload Scheduler (not preemptible), anything else on-demand;
``restartJobOnWorkerRestart``) and ``baseOutputDirectory.outputUriPrefix``
(a ``gs://`` path: Vertex passes ``AIP_CHECKPOINT_DIR`` under it to the
container, a durable checkpoint store). An output flag in the arguments
(``--output_dir gs://...`` or a ``/gcs/`` Cloud Storage FUSE path) is a
durable store too.

GPU pools with the same machine spec (the chief pool 0 and the workers of
pool 1, the usual distributed shape) are one job of their summed replicas;
pools without accelerators (a reduction server) are not GPU capacity and
are left out. Vertex does not set up GPUDirect networking on A3 itself: the
container must (MLC502).
"""

from __future__ import annotations

import re
from typing import Any

from mlcost_lint.model.kept_capacity import count_value
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.kubernetes import EnvVar, Workload
from mlcost_lint.model.managed import VERTEX, DataPath, JobShape, ManagedJob, build_workload
from mlcost_lint.parse.document import Document

DEFAULT_TIMEOUT = 7 * 86400       # Scheduling.timeout default: 7 days
_DURATION = re.compile(r"^\s*(\d+)(?:\.\d+)?s\s*$")
_OUTPUT_FLAG = re.compile(r"--(?:output[_-]dir|checkpoint[_-]dir|save[_-]dir|ckpt[_-]dir|default_root_dir|"
                          r"model[_-]dir|job[_-]dir)(?:=|\s+)((?:gs://|/gcs/)\S+)")
_SPOT, _FLEX = "SPOT", "FLEX_START"
_ON_DEMAND = ("ON_DEMAND", "STANDARD", "STRATEGY_UNSPECIFIED", "LOW_COST")


def _spec_base(data: Any) -> tuple | None:
    """Key path of the CustomJobSpec inside a document, or None when it is not one."""
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return None
    for base in ((), ("jobSpec",)):
        spec = data if not base else data.get(base[0])
        if not isinstance(spec, dict):
            continue
        pools = spec.get("workerPoolSpecs")
        items = [pools] if isinstance(pools, dict) else pools if isinstance(pools, list) else None
        if items and all(isinstance(p, dict) for p in items) and \
                any(isinstance(p.get("machineSpec"), dict) for p in items):
            return base
    return None


def is_vertex_job(data: Any) -> bool:
    return _spec_base(data) is not None


def duration_seconds(value: Any) -> Any:
    """"604800s" -> 604800; a number counts as seconds; UNKNOWN when not readable."""
    if isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value
    m = _DURATION.match(value) if isinstance(value, str) else None
    return int(m.group(1)) if m else UNKNOWN


def gce_accelerator(name: Any) -> str | None:
    """"NVIDIA_TESLA_A100" -> "nvidia-tesla-a100" (the Compute Engine accelerator type)."""
    if not isinstance(name, str) or not name.strip() or name.upper() == "ACCELERATOR_TYPE_UNSPECIFIED":
        return None
    return name.strip().lower().replace("_", "-")


def machine_accelerator(machine: Any, accelerator: Any, count: Any) -> Any:
    """The catalogue entry of a machine spec: the machine type when it
    carries its GPUs (a2/a3/g2...), else the attached accelerator x count."""
    from mlcost_lint import catalogue

    entry = catalogue.instance_type(machine) if isinstance(machine, str) else None
    if entry is not None:
        return entry
    acc = gce_accelerator(accelerator)
    if acc is None or not isinstance(count, int) or count <= 0:
        return None
    return catalogue.gcp_accelerator(acc, count)


def _pool_argv(pool: dict) -> tuple[list[str], tuple]:
    """What the pool's container runs, and the key (under the pool) it is written at."""
    container = pool.get("containerSpec")
    if isinstance(container, dict):
        command = container.get("command") if isinstance(container.get("command"), list) else []
        args = container.get("args") if isinstance(container.get("args"), list) else []
        where = ("containerSpec", "command") if command else ("containerSpec", "args") if args else ("containerSpec",)
        return [str(a) for a in [*command, *args]], where
    package = pool.get("pythonPackageSpec")
    if isinstance(package, dict) and isinstance(package.get("pythonModule"), str):
        args = package.get("args") if isinstance(package.get("args"), list) else []
        return ["python", "-m", package["pythonModule"], *map(str, args)], ("pythonPackageSpec", "pythonModule")
    return [], ()


def _pool_env(doc: Document, path: tuple, pool: dict) -> dict[str, EnvVar]:
    out: dict[str, EnvVar] = {}
    for section in ("containerSpec", "pythonPackageSpec"):
        spec = pool.get(section)
        env = spec.get("env") if isinstance(spec, dict) else None
        if not isinstance(env, list):
            continue
        for i, item in enumerate(env):
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                value = item.get("value")
                shown = value if isinstance(value, str) else str(value) if isinstance(value, (int, float)) \
                    and not isinstance(value, bool) else UNKNOWN
                out[item["name"]] = EnvVar(item["name"], shown, doc.location(path + (section, "env", i)))
    return out


def _strategy(doc: Document, base: tuple, scheduling: dict) -> tuple[Any, str, Location | None]:
    value = scheduling.get("strategy")
    if value is None:
        return False, "no scheduling.strategy: on-demand", None
    where = doc.location(base + ("scheduling", "strategy"))
    if not isinstance(value, str):
        return UNKNOWN, "", where
    name = value.strip().upper()
    if name == _SPOT:
        return True, "scheduling.strategy: SPOT", where
    if name == _FLEX or name in _ON_DEMAND:
        return False, f"scheduling.strategy: {value}", where
    return UNKNOWN, "", where


def read_vertex(doc: Document) -> list[Workload]:
    """The GPU replica groups of one Vertex AI custom job document, as workloads."""
    data = doc.data
    base = _spec_base(data)
    if base is None:
        return []
    spec = data if not base else data[base[0]]
    display = data.get("displayName")
    display = display if isinstance(display, str) and display else doc.path.rsplit("/", 1)[-1]
    raw_pools = spec["workerPoolSpecs"]
    pools = [((), raw_pools)] if isinstance(raw_pools, dict) else list(enumerate(raw_pools))
    scheduling = spec.get("scheduling") if isinstance(spec.get("scheduling"), dict) else {}
    spot, spot_how, spot_at = _strategy(doc, base, scheduling)
    timeout = scheduling.get("timeout")
    if timeout is None:
        limit, limit_how, limit_at = DEFAULT_TIMEOUT, "no scheduling.timeout: the Vertex default of 7 days applies", None
    else:
        limit = duration_seconds(timeout)
        limit_how, limit_at = f"scheduling.timeout: {timeout}", doc.location(base + ("scheduling", "timeout"))
    output = spec.get("baseOutputDirectory")
    prefix = output.get("outputUriPrefix") if isinstance(output, dict) else None
    prefix_at = doc.location(base + ("baseOutputDirectory", "outputUriPrefix")) if prefix is not None else None

    groups: dict[tuple, list[tuple[tuple, dict, Any, int | Any]]] = {}
    for index, pool in pools:
        if not isinstance(pool, dict) or not isinstance(pool.get("machineSpec"), dict):
            continue
        machine = pool["machineSpec"]
        count = count_value(machine.get("acceleratorCount"))
        accelerator = machine_accelerator(machine.get("machineType"), machine.get("acceleratorType"), count)
        if accelerator is None:
            continue                  # no accelerators (or not known to the catalogue): not GPU capacity
        path = base + ("workerPoolSpecs",) + ((index,) if index != () else ())
        replicas = count_value(pool.get("replicaCount"))
        # repr: a value of the wrong type (a list where a name goes) must still group, not raise.
        key = tuple(v if isinstance(v, (str, int, float, type(None))) else repr(v)
                    for v in (machine.get("machineType"), machine.get("acceleratorType"), count))
        groups.setdefault(key, []).append((path, pool, accelerator, 1 if replicas is None else replicas))

    out: list[Workload] = []
    for members in groups.values():
        path, pool, accelerator, _ = members[0]
        counts = [m[3] for m in members]
        total = sum(counts) if all(isinstance(c, int) for c in counts) else UNKNOWN
        label = "pool " + "+".join(str(p[-1]) if isinstance(p[-1], int) else "0" for p, *_ in members)
        argv, argv_key = _pool_argv(pool)
        checkpoint, checkpoint_at, checkpoint_field = prefix, prefix_at, "baseOutputDirectory.outputUriPrefix"
        if checkpoint is None:
            m = _OUTPUT_FLAG.search(" ".join(argv))
            if m:
                checkpoint, checkpoint_at = m.group(1), doc.location(path + argv_key)
                checkpoint_field = f"the output flag in {'/'.join(argv_key)}"
        data_paths = [DataPath(prefix, prefix_at, True, "baseOutputDirectory.outputUriPrefix")] \
            if isinstance(prefix, str) and prefix_at is not None else []
        machine = pool["machineSpec"]
        shown_type = machine.get("machineType") if isinstance(machine.get("machineType"), str) else None
        has_count = doc.position(path + ("replicaCount",)) is not None
        job = ManagedJob(
            service=VERTEX, label="Vertex AI custom job", name=display if len(groups) == 1 else f"{display} ({label})",
            address=f"vertex/{doc.path}/{'/'.join(map(str, path))}", header=doc.location(path),
            group="" if len(groups) == 1 else label,
            instance_type=shown_type, instance_type_at=doc.location(path + ("machineSpec", "machineType")),
            accelerator=accelerator, instance_count=total,
            instance_count_at=doc.location(path + ("replicaCount",)) if has_count else None,
            spot=spot, spot_how=spot_how, spot_at=spot_at,
            runtime_limit=limit, runtime_how=limit_how, runtime_at=limit_at, runtime_field="scheduling.timeout",
            checkpoint_uri=checkpoint if checkpoint is None or isinstance(checkpoint, str) else UNKNOWN,
            checkpoint_at=checkpoint_at, checkpoint_field=checkpoint_field,
            data_paths=data_paths,
            discounted=spot_how if spot is False and _FLEX in spot_how.upper() else "",
        )
        if accelerator.kind != "instance":
            job.instance_type = machine.get("machineType") if isinstance(machine.get("machineType"), str) else None
            job.attached_accelerator = (gce_accelerator(machine.get("acceleratorType")), count)
        shape = JobShape(command=argv, command_at=doc.location(path + argv_key) if argv else None,
                         env=_pool_env(doc, path, pool))
        out.append(build_workload(job, shape))
    return out
