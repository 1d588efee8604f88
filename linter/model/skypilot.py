"""SkyPilot task YAML (``sky launch`` / ``sky jobs launch``) as a job of the
project model.

Detection is by content (:func:`skypilot_task`): a mapping whose
``resources`` holds a SkyPilot resource key (``accelerators``,
``instance_type``, ``cloud``, ``infra``, ``use_spot``, ``region``, or
``any_of``/``ordered`` candidates holding one) and which has a ``run`` or
``setup`` block, ``num_nodes`` or ``file_mounts``. A document that has
those but also top-level keys a task does not have (``apiVersion``,
``model``, ...) is ambiguous: it is not read, and ``-v`` says why.

The task is a :class:`~mlcost_lint.model.managed.ManagedJob` (service
``skypilot``) and so a workload with one template of ``num_nodes``
replicas whose container requests one node's accelerators and runs the
``run`` block as a shell script (read, never run). What SkyPilot sets on
each node is modelled as it does it: ``SKYPILOT_NUM_GPUS_PER_NODE`` (the
accelerator count) and ``SKYPILOT_NUM_NODES`` join the ``envs:`` values,
so ``torchrun --nproc_per_node=$SKYPILOT_NUM_GPUS_PER_NODE`` starts one
rank per GPU.

- ``accelerators``: ``A100:8``, ``{H100: 8}``, ``H100`` (count 1); a set or
  list of several candidates is an unknown model (the count is known when
  every candidate has the same one); ``any_of``/``ordered`` entries are
  candidates too: a field is known only when every candidate agrees.
- ``use_spot``: true is spot; false or absent is on-demand (SkyPilot's
  default) when the infra names a cloud; on Kubernetes/SSH node pools, or
  with no cloud written, the capacity is unknown.
- ``infra`` (``aws/us-east-1``), ``cloud``, ``region``, ``zone``: the cloud
  and region (region from the zone when only it is written).
- ``file_mounts``: a destination whose source is a bucket (``s3://``,
  ``gs://``, ``r2://``, ... or ``source:``/``store:``/``name:`` with mode
  MOUNT/MOUNT_CACHED/COPY) is durable storage at that path; every bucket
  URI is a data path (MLC501).
"""

from __future__ import annotations

import re
from typing import Any

from mlcost_lint.model.batch import Directive
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.kubernetes import EnvVar, Workload
from mlcost_lint.model.managed import GPU_PATH, DataPath, JobShape, ManagedJob, build_workload
from mlcost_lint.parse.document import Document

SKYPILOT = "skypilot"
LABEL = "SkyPilot task"
RESOURCE_KEYS = frozenset({"accelerators", "instance_type", "cloud", "infra", "use_spot", "region"})
_CANDIDATE_LISTS = ("any_of", "ordered")
TASK_SIGNS = ("run", "setup", "num_nodes", "file_mounts")
# Top-level keys of a task YAML (SkyPilot docs, "YAML spec").
TOP_KEYS = frozenset({"name", "workdir", "num_nodes", "resources", "envs", "secrets", "file_mounts", "setup",
                      "run", "config", "service", "volumes", "event_callback", "experimental", "inputs",
                      "outputs", "pool"})
# Infra names that are not a cloud's on-demand/spot market.
_NOT_A_CLOUD = frozenset({"kubernetes", "k8s", "ssh", "slurm", "local"})
BUCKET_SCHEMES = ("s3://", "gs://", "gcs://", "r2://", "cos://", "oci://", "nebius://", "az://", "https://")
_BUCKET_STORES = frozenset({"s3", "gcs", "r2", "azure", "ibm", "oci", "nebius", "cos"})
_COUNT = re.compile(r"^\d{1,6}$")


def _is_resources(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if any(k in value for k in RESOURCE_KEYS):
        return True
    return any(isinstance(value.get(k), list) and any(isinstance(c, dict) and RESOURCE_KEYS & set(c)
                                                      for c in value[k]) for k in _CANDIDATE_LISTS)


def skypilot_task(data: Any) -> tuple[bool, str]:
    """(is a task, why not when it looks like one). ``why`` is "" for a
    document that does not look like a SkyPilot task at all."""
    if not isinstance(data, dict) or not _is_resources(data.get("resources")):
        return False, ""
    signs = [k for k in TASK_SIGNS if k in data]
    if not signs:
        return False, ("has a SkyPilot-like resources block but no run, setup, num_nodes or file_mounts: "
                       "not read as a SkyPilot task")
    foreign = sorted(str(k) for k in data if k not in TOP_KEYS)
    if foreign:
        return False, (f"has SkyPilot resources and {', '.join(signs)} but also keys a SkyPilot task does not "
                       f"have ({', '.join(foreign[:4])}): not read as a SkyPilot task")
    for key in ("run", "setup"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            return False, f"has SkyPilot resources but its {key} is not a shell block: not read as a SkyPilot task"
    return True, ""


# ----------------------------------------------------------- resources ---

def _candidates(doc: Document, res: dict) -> list[tuple[dict, tuple]]:
    """(fields, key path of each field's mapping) of every candidate resource set."""
    base = {k: v for k, v in res.items() if k not in _CANDIDATE_LISTS}
    out = []
    for key in _CANDIDATE_LISTS:
        entries = res.get(key)
        if isinstance(entries, list):
            for i, entry in enumerate(entries):
                if isinstance(entry, dict):
                    out.append(({**base, **entry}, {k: ("resources", key, i) if k in entry else ("resources",)
                                                    for k in {**base, **entry}}))
    return out or [(base, {k: ("resources",) for k in base})]


class _Field:
    """One resource field over every candidate: its value when they agree."""

    def __init__(self, doc: Document, candidates: list, key: str) -> None:
        values = [c.get(key) for c, _ in candidates]
        self.key = key
        self.written = any(key in c for c, _ in candidates)
        self.agreed = all(repr(v) == repr(values[0]) for v in values)
        self.value = values[0] if self.agreed else UNKNOWN
        first = next(((c, paths) for c, paths in candidates if key in c), None)
        self.at = doc.location(first[1][key] + (key,)) if first is not None else None


def _accelerator_entries(value: Any) -> list[tuple[str, Any]] | None:
    """[(name, count)] of an accelerators value; None when not readable."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{") or text.startswith("["):
            inner = text.strip("{}[] ")
            parts = [p.strip() for p in inner.split(",") if p.strip()]
        else:
            parts = [text]
        out = []
        for part in parts:
            name, _, count = part.partition(":")
            out.append((name.strip().strip("'\""), count.strip() or 1))
        return out or None
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            name = str(k)
            if v is None and ":" in name:          # {A100:8, H100:8}: YAML reads "A100:8" as a key
                name, _, v = name.partition(":")
            out.append((name.strip(), 1 if v is None else v))
        return out or None
    if isinstance(value, list):
        out = []
        for item in value:
            entries = _accelerator_entries(item)
            if entries is None:
                return None
            out.extend(entries)
        return out or None
    return None


def _count_of(raw: Any) -> Any:
    if isinstance(raw, bool):
        return UNKNOWN
    if isinstance(raw, int):
        return raw if raw > 0 else UNKNOWN
    if isinstance(raw, str) and _COUNT.match(raw.strip()):
        return int(raw.strip())
    return UNKNOWN         # fractional GPUs, $VAR


def _model_of(name: str) -> Any:
    from mlcost_lint import catalogue

    if "$" in name or "{" in name:
        return None
    if name.lower().startswith("tpu-"):
        acc = catalogue.gcp_accelerator(name[4:])
        return acc.gpu if acc is not None else None
    return catalogue.gpu_model(name)


def accelerators(value: Any) -> tuple[Any, Any, str]:
    """(GpuModel | None, count per node, shown) of an ``accelerators`` value;
    the model is None when unknown or when several candidates are written."""
    entries = _accelerator_entries(value)
    if not entries:
        return None, UNKNOWN, ""
    counts = {repr(_count_of(c)) for _, c in entries}
    count = _count_of(entries[0][1]) if len(counts) == 1 else UNKNOWN
    shown = ", ".join(f"{n}:{c}" for n, c in entries)
    if len(entries) != 1:
        return None, count, "{" + shown + "}"
    name = entries[0][0]
    model = _model_of(name)
    if model is not None and model.kind == "tpu" and name.lower().startswith("tpu-"):
        from mlcost_lint import catalogue

        chips = catalogue.gcp_accelerator(name[4:])
        count = int(chips.count) if chips is not None else UNKNOWN
    return model, count, shown


def _cloud_region(doc: Document, cands: list) -> tuple[Any, Any, Location | None, str]:
    """(cloud, region, where, how); UNKNOWN / None as not known."""
    infra, cloud, region, zone = (_Field(doc, cands, k) for k in ("infra", "cloud", "region", "zone"))
    c: Any = None
    r: Any = None
    where, how = None, ""
    if infra.written:
        value = infra.value
        if not isinstance(value, str) or "$" in value:
            return UNKNOWN, UNKNOWN, infra.at, ""
        parts = [p.strip() for p in value.strip().split("/")]
        c = parts[0].lower() or None
        if len(parts) > 1 and parts[1] and parts[1] != "*":
            r, where, how = parts[1], infra.at, f"infra: {value}"
    elif cloud.written:
        c = cloud.value.lower() if isinstance(cloud.value, str) and "$" not in cloud.value else UNKNOWN
    if r is None and region.written:
        ok = isinstance(region.value, str) and "$" not in region.value
        r = region.value if ok else UNKNOWN
        where, how = region.at, f"region: {region.value}" if ok else ""
    if r is None and zone.written and isinstance(zone.value, str) and "$" not in zone.value:
        z = zone.value.strip()
        derived = z[:-1] if c == "aws" and z[-1:].isalpha() else z.rsplit("-", 1)[0] if c in ("gcp", "azure") else None
        if derived:
            r, where, how = derived, zone.at, f"zone: {z}"
    return c, r, where, how


# --------------------------------------------------------- file mounts ---

def _mounts(doc: Document, data: dict, envs: dict[str, str]) -> tuple[list[tuple[str, bool]], list[DataPath]]:
    mounts: list[tuple[str, bool]] = []
    paths: list[DataPath] = []
    raw = data.get("file_mounts")
    if not isinstance(raw, dict):
        return mounts, paths

    def expand(text: Any) -> Any:
        if not isinstance(text, str):
            return None
        out = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: envs.get(m.group(1), m.group(0)), text)
        return out if "$" not in out else UNKNOWN

    for dest, spec in raw.items():
        target = str(dest).rstrip("/") or "/"
        where = doc.location(("file_mounts", dest))
        source, durable = None, False
        if isinstance(spec, str):
            source = expand(spec)         # "/data: s3://bucket": COPY mode, a read-only local copy
            durable = False
        elif isinstance(spec, dict):
            mode = spec.get("mode", "MOUNT")
            source = expand(spec.get("source"))
            store = expand(spec.get("store"))
            named = spec.get("name") is not None
            bucket = (isinstance(source, str) and source.lower().startswith(BUCKET_SCHEMES)) or \
                (source is None and (named or store is not None))
            durable = bucket and isinstance(mode, str) and mode.upper() in ("MOUNT", "MOUNT_CACHED") or \
                (bucket and source is None and named)          # a named bucket SkyPilot creates and syncs
            if isinstance(store, str) and store.lower() not in _BUCKET_STORES:
                durable = False
            where = doc.location(("file_mounts", dest, "source")) if "source" in spec else where
        if "$" in target:
            continue
        mounts.append((target, durable))
        if isinstance(source, str) and source.lower().startswith(BUCKET_SCHEMES) and "://" in source:
            paths.append(DataPath(source, where, durable, f"file_mounts.{dest}"))
    return mounts, paths


# ---------------------------------------------------------------- task ---

def _envs(doc: Document, data: dict) -> tuple[dict[str, EnvVar], dict[str, str]]:
    out: dict[str, EnvVar] = {}
    literal: dict[str, str] = {}
    raw = data.get("envs")
    if isinstance(raw, dict):
        for name, value in raw.items():
            if isinstance(value, bool):
                shown: Any = "true" if value else "false"
            elif isinstance(value, (int, float, str)):
                shown = str(value)
            else:
                shown = UNKNOWN
            out[str(name)] = EnvVar(str(name), shown, doc.location(("envs", name)))
            if isinstance(shown, str):
                literal[str(name)] = shown
    return out, literal


def read_skypilot(doc: Document) -> Workload:
    from mlcost_lint import catalogue
    from mlcost_lint.model.slurm import exported_vars

    data = doc.data
    res = data["resources"]
    cands = _candidates(doc, res)
    acc_field = _Field(doc, cands, "accelerators")
    model, count, shown = accelerators(acc_field.value) if acc_field.agreed and acc_field.written \
        else (None, UNKNOWN, "")
    if acc_field.written and not acc_field.agreed:
        shown = "several candidates"
    type_field = _Field(doc, cands, "instance_type")
    node = catalogue.instance_type(type_field.value) if isinstance(type_field.value, str) else None
    cloud, region, region_at, region_how = _cloud_region(doc, cands)
    if node is not None and cloud is None:
        cloud = node.cloud
    accelerator = node if node is not None and node.count >= 1 else None
    if accelerator is None and model is not None:
        accelerator = catalogue.Accelerator(
            cloud=cloud if isinstance(cloud, str) else None, name=shown, gpu=model,
            count=float(count) if isinstance(count, int) else 1.0, rdma=False, spot_capable=True,
            is_tpu=model.is_tpu, source="SkyPilot accelerators", kind="accelerator")
    spot_field = _Field(doc, cands, "use_spot")
    spot: Any
    if not spot_field.agreed or (spot_field.written and not isinstance(spot_field.value, bool)):
        spot, spot_how = UNKNOWN, ""
    elif spot_field.value is True:
        spot, spot_how = True, "use_spot: true"
    elif not isinstance(cloud, str) or cloud in _NOT_A_CLOUD:
        spot, spot_how = UNKNOWN, ""       # SkyPilot may place it on a Kubernetes/SSH pool, not a cloud market
    else:
        spot = False
        spot_how = "use_spot: false" if spot_field.written else "no use_spot: on-demand (SkyPilot's default)"
    nodes_raw = data.get("num_nodes", 1)
    nodes = _count_of(nodes_raw) if nodes_raw is not None else 1
    envs, literal = _envs(doc, data)
    mounts, data_paths = _mounts(doc, data, literal)
    name = data.get("name") if isinstance(data.get("name"), str) and data.get("name") else doc.path
    gpus_at = acc_field.at or type_field.at
    job = ManagedJob(
        service=SKYPILOT, label=LABEL, name=name, address=f"skypilot/{doc.path}", header=doc.location(()),
        instance_type=type_field.value if isinstance(type_field.value, str) else None,
        instance_type_at=gpus_at, accelerator=accelerator,
        instance_count=nodes, instance_count_at=doc.location(("num_nodes",)) if "num_nodes" in data else None,
        spot=spot, spot_how=spot_how, spot_at=spot_field.at if spot_field.written else None,
        runtime_limit=None, runtime_field="",
        data_paths=data_paths, region=region if isinstance(region, str) else None, region_how=region_how,
        region_at=region_at, rdma_by_service=True,
    )
    job.mounts = mounts
    if gpus_at is not None:
        written = f"accelerators: {shown}" if acc_field.written else f"instance_type: {type_field.value}"
        job.gpus_written = Directive(written, gpus_at)
    # What SkyPilot sets on every node before run starts.
    if isinstance(count, int) and (model is None or not model.is_tpu):
        envs.setdefault("SKYPILOT_NUM_GPUS_PER_NODE", EnvVar("SKYPILOT_NUM_GPUS_PER_NODE", str(count),
                                                              gpus_at or job.header))
    elif node is not None and float(node.count).is_integer():
        envs.setdefault("SKYPILOT_NUM_GPUS_PER_NODE", EnvVar("SKYPILOT_NUM_GPUS_PER_NODE", str(int(node.count)),
                                                              gpus_at or job.header))
    if isinstance(nodes, int):
        envs.setdefault("SKYPILOT_NUM_NODES", EnvVar("SKYPILOT_NUM_NODES", str(nodes), job.header))
    run = data.get("run") if isinstance(data.get("run"), str) else ""
    run_at = doc.location(("run",)) if run else None
    # Where a literal block's text starts (line, column): words and exports
    # inside it are located at their own column. Other scalars: column 1.
    block = doc.blocks.get(("run",)) if run else None
    if run:
        for var in exported_vars(run, doc.path).values():     # export NCCL_DEBUG=INFO in the run block
            line = run_at.line + var.location.line if "\n" in run.strip("\n") else run_at.line
            column = 1
            if block is not None:
                line, column = block[0] + var.location.line - 1, block[1] + var.location.column - 1
            envs[var.name] = EnvVar(var.name, var.value, Location(doc.path, line, column))
    workload = build_workload(job, JobShape(env=envs, command_at=run_at))
    container = workload.templates[0].containers[0]
    if run and block is not None:
        # The words are located from the block's first content line.
        multi = "\n" in run.strip("\n")
        start = Location(run_at.path, block[0] - 1 if multi else block[0] + len(run) - len(run.lstrip("\n")), 1)
        container.script = (run if multi else run.strip("\n"), start, ("script", 0), block[1])
    elif run:
        if "\n" not in run.strip("\n") and run.endswith("\n"):
            # A one-line block scalar (run: |): its text is on the next line.
            run_at = Location(run_at.path, run_at.line + 1, 1)
            run = run.strip("\n")
        container.script = (run, run_at)
    if accelerator is None and model is None and count is not UNKNOWN and acc_field.written:
        # Several candidate GPU models, one count: GPUs of an unknown model.
        container.limits["nvidia.com/gpu"] = count
        container.document.positions[GPU_PATH + ("nvidia.com/gpu",)] = (gpus_at.line, gpus_at.column)
    elif accelerator is None and acc_field.written:
        container.limits["nvidia.com/gpu"] = UNKNOWN
        container.document.positions[GPU_PATH + ("nvidia.com/gpu",)] = (gpus_at.line, gpus_at.column)
    elif accelerator is not None and count is UNKNOWN and node is None:
        for resource in list(container.limits):
            container.limits[resource] = UNKNOWN
    return workload
