"""Kubernetes documents -> :class:`KubernetesModel`.

Where each kind keeps its pod templates is data (``TEMPLATE_LAYOUTS``), not
branches: adding a CRD is adding a row.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Maybe
from mlcost_lint.model.kubernetes import (
    ConfigMap,
    Container,
    EnvVar,
    KubernetesModel,
    PodTemplate,
    VolumeMount,
    Workload,
    parse_count,
)
from mlcost_lint.parse.document import Document, KeyPath


@dataclass(frozen=True, slots=True)
class TemplateSpot:
    """One pod template found in an object: where it is and its replica count."""

    role: str
    template_path: KeyPath        # the PodTemplateSpec (metadata + spec)
    replicas: Maybe[int] | None
    min_replicas: Maybe[int] | None = None
    hosts_per_replica: Maybe[int] = 1


def _count_at(obj: dict, path: KeyPath, default: int | None) -> Maybe[int] | None:
    node: Any = obj
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return default
        node = node[key]
    return parse_count(node)


def _times(count: Maybe[int] | None, factor: Maybe[int] | None) -> Maybe[int] | None:
    """count x factor; UNKNOWN when either is; None stays None."""
    if count is None:
        return None
    if count is UNKNOWN or factor is UNKNOWN:
        return UNKNOWN
    return count * (factor if factor is not None else 1)


def _single(path: KeyPath, replicas_path: KeyPath | None = None, default: int | None = None
            ) -> Callable[[dict], Iterator[TemplateSpot]]:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        if isinstance(_get(obj, path), dict):
            replicas = _count_at(obj, replicas_path, default) if replicas_path else None
            yield TemplateSpot("", path, replicas)
    return find


def _replica_specs(field_name: str) -> Callable[[dict], Iterator[TemplateSpot]]:
    """Kubeflow training operator v1: spec.<x>ReplicaSpecs.<Role>.template."""
    def find(obj: dict) -> Iterator[TemplateSpot]:
        specs = _get(obj, ("spec", field_name))
        if not isinstance(specs, dict):
            return
        for role, spec in specs.items():
            if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
                yield TemplateSpot(str(role), ("spec", field_name, role, "template"),
                                   _count_at(spec, ("replicas",), 1))
    return find


def _ray(cluster_path: KeyPath) -> Callable[[dict], Iterator[TemplateSpot]]:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        cluster = _get(obj, cluster_path)
        if not isinstance(cluster, dict):
            return
        if isinstance(_get(cluster, ("headGroupSpec", "template")), dict):
            yield TemplateSpot("head", cluster_path + ("headGroupSpec", "template"), 1)
        groups = cluster.get("workerGroupSpecs")
        if isinstance(groups, list):
            for i, group in enumerate(groups):
                if isinstance(group, dict) and isinstance(group.get("template"), dict):
                    # A multi-host group (KubeRay numOfHosts, TPU slices) makes
                    # numOfHosts pods per replica: ``replicas`` counts pods.
                    hosts = _count_at(group, ("numOfHosts",), 1)
                    yield TemplateSpot(
                        str(group.get("groupName") or f"worker-{i}"),
                        cluster_path + ("workerGroupSpecs", i, "template"),
                        _times(_count_at(group, ("replicas",), 1), hosts),
                        _count_at(group, ("minReplicas",), 0),
                        hosts if hosts is not None else 1,
                    )
    return find


def _volcano(job_spec: KeyPath) -> Callable[[dict], Iterator[TemplateSpot]]:
    """Volcano Job (spec.tasks) and Volcano CronJob (spec.jobTemplate.spec.tasks)."""
    def find(obj: dict) -> Iterator[TemplateSpot]:
        tasks = _get(obj, job_spec + ("tasks",))
        if isinstance(tasks, list):
            for i, task in enumerate(tasks):
                if isinstance(task, dict) and isinstance(task.get("template"), dict):
                    yield TemplateSpot(str(task.get("name") or f"task-{i}"),
                                       job_spec + ("tasks", i, "template"),
                                       _count_at(task, ("replicas",), 1))
    return find


def _jobset(obj: dict) -> Iterator[TemplateSpot]:
    jobs = _get(obj, ("spec", "replicatedJobs"))
    if isinstance(jobs, list):
        for i, job in enumerate(jobs):
            if not isinstance(job, dict):
                continue
            path = ("spec", "replicatedJobs", i, "template", "spec", "template")
            if isinstance(_get(obj, path), dict):
                replicas = _count_at(job, ("replicas",), 1)
                parallelism = _count_at(job, ("template", "spec", "parallelism"), 1)
                total: Maybe[int] | None = UNKNOWN
                if replicas is not UNKNOWN and parallelism is not UNKNOWN and replicas is not None \
                        and parallelism is not None:
                    total = replicas * parallelism
                yield TemplateSpot(str(job.get("name") or f"job-{i}"), path, total)


def _leader_worker_set(obj: dict) -> Iterator[TemplateSpot]:
    lwt = ("spec", "leaderWorkerTemplate")
    groups = _count_at(obj, ("spec", "replicas"), 1)
    size = _count_at(obj, lwt + ("size",), 1)
    if isinstance(_get(obj, lwt + ("leaderTemplate",)), dict):
        yield TemplateSpot("leader", lwt + ("leaderTemplate",), groups)
    if isinstance(_get(obj, lwt + ("workerTemplate",)), dict):
        workers: Maybe[int] | None = UNKNOWN
        if groups is not UNKNOWN and size is not UNKNOWN and groups is not None and size is not None:
            workers = groups * max(size - 1, 0) if isinstance(_get(obj, lwt + ("leaderTemplate",)), dict) \
                else groups * size
        yield TemplateSpot("worker", lwt + ("workerTemplate",), workers)


def _pod(obj: dict) -> Iterator[TemplateSpot]:
    yield TemplateSpot("", (), 1)


# (apiVersion group or "" for any, kind) -> where its pod templates are.
TEMPLATE_LAYOUTS: dict[tuple[str, str], Callable[[dict], Iterator[TemplateSpot]]] = {
    ("", "Pod"): _pod,
    ("", "Deployment"): _single(("spec", "template"), ("spec", "replicas"), 1),
    ("", "StatefulSet"): _single(("spec", "template"), ("spec", "replicas"), 1),
    ("", "ReplicaSet"): _single(("spec", "template"), ("spec", "replicas"), 1),
    ("", "DaemonSet"): _single(("spec", "template")),
    ("batch", "Job"): _single(("spec", "template"), ("spec", "parallelism"), 1),
    ("", "CronJob"): _single(("spec", "jobTemplate", "spec", "template"),
                             ("spec", "jobTemplate", "spec", "parallelism"), 1),
    ("", "PyTorchJob"): _replica_specs("pytorchReplicaSpecs"),
    ("", "TFJob"): _replica_specs("tfReplicaSpecs"),
    ("", "MPIJob"): _replica_specs("mpiReplicaSpecs"),
    ("", "XGBoostJob"): _replica_specs("xgbReplicaSpecs"),
    ("", "PaddleJob"): _replica_specs("paddleReplicaSpecs"),
    ("", "JAXJob"): _replica_specs("jaxReplicaSpecs"),
    ("", "MXJob"): _replica_specs("mxReplicaSpecs"),
    ("", "RayCluster"): _ray(("spec",)),
    ("", "RayJob"): _ray(("spec", "rayClusterSpec")),
    ("", "RayService"): _ray(("spec", "rayClusterConfig")),
    ("batch.volcano.sh", "Job"): _volcano(("spec",)),
    ("batch.volcano.sh", "CronJob"): _volcano(("spec", "jobTemplate", "spec")),
    ("", "JobSet"): _jobset,
    ("", "LeaderWorkerSet"): _leader_worker_set,
}

WORKLOAD_KINDS = frozenset(kind for _, kind in TEMPLATE_LAYOUTS) | {"TrainJob"}


def _get(node: Any, path: KeyPath) -> Any:
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            return None
    return node


def _layout(api_version: str, kind: str) -> Callable[[dict], Iterator[TemplateSpot]] | None:
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    # Volcano reuses core kind names (Job, CronJob) under its own API group.
    if group == "batch.volcano.sh" and (group, kind) in TEMPLATE_LAYOUTS:
        return TEMPLATE_LAYOUTS[(group, kind)]
    if kind == "Job":
        return TEMPLATE_LAYOUTS[("batch", "Job")]
    return TEMPLATE_LAYOUTS.get(("", kind))


def _str_dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items()}


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        return []
    return [v if isinstance(v, str) else str(v) for v in value if v is not None]


def build_container(doc: Document, path: KeyPath, raw: dict, is_init: bool = False) -> Container:
    resources = raw.get("resources") if isinstance(raw.get("resources"), dict) else {}
    env: dict[str, EnvVar] = {}
    raw_env = raw.get("env")
    if isinstance(raw_env, list):
        for i, item in enumerate(raw_env):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            value: Maybe[str] = UNKNOWN
            if "value" in item and "valueFrom" not in item:
                v = item["value"]
                value = v if isinstance(v, str) else ("" if v is None else str(v))
            env[item["name"]] = EnvVar(item["name"], value, doc.location(path + ("env", i)))
    mounts = []
    raw_mounts = raw.get("volumeMounts")
    if isinstance(raw_mounts, list):
        for m in raw_mounts:
            if isinstance(m, dict) and isinstance(m.get("mountPath"), str):
                mounts.append(VolumeMount(str(m.get("name", "")), m["mountPath"]))
    return Container(
        document=doc,
        key_path=path,
        name=str(raw.get("name", "")),
        image=raw.get("image") if isinstance(raw.get("image"), str) else None,
        command=_str_list(raw.get("command")),
        args=_str_list(raw.get("args")),
        env=env,
        requests=_str_dict(resources.get("requests")),
        limits=_str_dict(resources.get("limits")),
        volume_mounts=mounts,
        is_init=is_init,
    )


def build_template(doc: Document, base: KeyPath, obj: dict, spot: TemplateSpot, is_pod: bool) -> PodTemplate | None:
    template = _get(obj, spot.template_path)
    if not isinstance(template, dict):
        return None
    meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    spec = template.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    spec_path = base + spot.template_path + ("spec",)
    containers = []
    init_containers = []
    for field_name, target, is_init in (("containers", containers, False),
                                        ("initContainers", init_containers, True)):
        raw_list = spec.get(field_name)
        if isinstance(raw_list, list):
            for i, raw in enumerate(raw_list):
                if isinstance(raw, dict):
                    target.append(build_container(doc, spec_path + (field_name, i), raw, is_init))
    tolerations = spec.get("tolerations")
    deadline = spec.get("activeDeadlineSeconds")
    return PodTemplate(
        document=doc,
        key_path=base + spot.template_path,
        spec_path=spec_path,
        role=spot.role,
        replicas=spot.replicas,
        min_replicas=spot.min_replicas,
        hosts_per_replica=spot.hosts_per_replica,
        labels=_str_dict(meta.get("labels")),
        annotations=_str_dict(meta.get("annotations")),
        node_selector=_str_dict(spec.get("nodeSelector")),
        affinity=_str_dict(spec.get("affinity")),
        tolerations=[t for t in tolerations if isinstance(t, dict)] if isinstance(tolerations, list) else [],
        containers=containers,
        init_containers=init_containers,
        volumes=[v for v in spec.get("volumes", []) if isinstance(v, dict)]
        if isinstance(spec.get("volumes"), list) else [],
        active_deadline_seconds=None if deadline is None else parse_count(deadline),
        restart_policy=spec.get("restartPolicy") if isinstance(spec.get("restartPolicy"), str) else None,
    )


def _train_job_template(doc: Document, base: KeyPath, obj: dict) -> PodTemplate | None:
    """Kubeflow Trainer v2 TrainJob: one container described by spec.trainer."""
    trainer = _get(obj, ("spec", "trainer"))
    if not isinstance(trainer, dict):
        return None
    raw = dict(trainer)
    raw["resources"] = trainer.get("resourcesPerNode") if isinstance(trainer.get("resourcesPerNode"), dict) else {}
    raw.setdefault("name", "trainer")
    container = build_container(doc, base + ("spec", "trainer"), raw)
    # TrainJob spec.labels are put on the pods the runtime creates.
    labels = _get(obj, ("spec", "labels"))
    return PodTemplate(
        document=doc, key_path=base + ("spec", "trainer"), spec_path=base + ("spec", "trainer"),
        role="trainer", replicas=_count_at(obj, ("spec", "trainer", "numNodes"), 1),
        labels=dict(labels) if isinstance(labels, dict) else {},
        containers=[container],
    )


def build_workload(doc: Document, base: KeyPath, obj: dict) -> Workload | None:
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return None
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    templates: list[PodTemplate] = []
    if kind == "TrainJob":
        t = _train_job_template(doc, base, obj)
        if t is not None:
            templates.append(t)
    else:
        layout = _layout(api_version, kind)
        if layout is None:
            return None
        for spot in layout(obj):
            t = build_template(doc, base, obj, spot, kind == "Pod")
            if t is not None:
                templates.append(t)
    name = meta.get("name") if isinstance(meta.get("name"), str) else meta.get("generateName", "<unnamed>")
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    return Workload(
        document=doc, key_path=base, kind=kind, api_version=api_version, name=str(name),
        namespace=namespace, labels=_str_dict(meta.get("labels")),
        spec=obj.get("spec") if isinstance(obj.get("spec"), dict) else {},
        templates=templates,
    )


def build_config_map(doc: Document, base: KeyPath, obj: dict) -> ConfigMap:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
    return ConfigMap(
        document=doc, key_path=base, name=str(meta.get("name", "<unnamed>")),
        namespace=meta.get("namespace") if isinstance(meta.get("namespace"), str) else None,
        data={str(k): v for k, v in data.items() if isinstance(v, str)},
    )


def is_kubernetes_object(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("apiVersion"), str) and isinstance(data.get("kind"), str)


def iter_objects(doc: Document) -> Iterator[tuple[KeyPath, dict]]:
    """Objects of a document, unpacking ``kind: List`` (and *List kinds)."""
    data = doc.data
    if not is_kubernetes_object(data):
        return
    if data["kind"].endswith("List") and isinstance(data.get("items"), list):
        for i, item in enumerate(data["items"]):
            if is_kubernetes_object(item):
                yield ("items", i), item
        return
    yield (), data


def add_document(model: KubernetesModel, doc: Document) -> None:
    for base, obj in iter_objects(doc):
        kind = obj["kind"]
        if kind == "ConfigMap":
            model.config_maps.append(build_config_map(doc, base, obj))
            continue
        workload = build_workload(doc, base, obj)
        if workload is not None:
            model.workloads.append(workload)
        else:
            model.other_kinds[kind] = model.other_kinds.get(kind, 0) + 1
