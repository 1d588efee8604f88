"""Vertex AI custom jobs inside a compiled Kubeflow Pipelines (KFP v2)
pipeline spec: the YAML (``kfp.compiler``; schema 2.1.0) or JSON file, bare
or as a ``PipelineJob`` body with ``pipelineSpec``, whose ``deploymentSpec``
executors run the google_cloud_pipeline_components CustomJob launcher
(``--type CustomJob``; ``CustomTrainingJobOp``,
``create_custom_training_job_from_component``, the older payload wrapper).

Detection is by content: ``deploymentSpec.executors`` and a ``root`` with a
``dag`` (never a Kubernetes object). A task is a custom job when its
component's executor container has ``--type CustomJob`` in its args. Its
worker pool specs are literal in one of three places, first found wins:

- the task's input ``worker_pool_specs`` as a ``runtimeValue.constant``
  (or the older ``constantValue.stringValue`` holding JSON);
- the component's ``inputDefinitions`` default (what
  ``create_custom_training_job_from_component`` compiles to);
- a ``--payload`` argument that is plain JSON (the older wrapper) with
  ``job_spec.worker_pool_specs``.

``timeout``, ``strategy``, ``restart_job_on_worker_restart`` and
``base_output_directory`` are read from the same places. A value that is a
pipeline parameter (a task input from ``componentInputParameter``, or a
``{{$.inputs.parameters[...]}}`` placeholder) is unknown. The specs are
snake_case (the launcher parses them with ``json_format``, which accepts
both spellings); they are turned into the camelCase CustomJobSpec that
:func:`mlcost_lint.model.vertex.read_vertex` reads, keeping each value's
line, so the Vertex rules (MLC201(a), MLC207, MLC208, MLC502, MLC702)
apply unchanged.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.kubernetes import Workload
from mlcost_lint.parse.document import Document, KeyPath

_PLACEHOLDER = re.compile(r"\{\{\s*\$\.")
# The task inputs of the CustomJob component that become CustomJobSpec fields.
_JOB_INPUTS = ("worker_pool_specs", "timeout", "strategy", "restart_job_on_worker_restart",
               "base_output_directory", "display_name")


def _base(data: Any) -> KeyPath | None:
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return None
    for base in ((), ("pipelineSpec",)):
        spec = data if not base else data.get(base[0])
        if not isinstance(spec, dict):
            continue
        deployment = spec.get("deploymentSpec")
        root = spec.get("root")
        if isinstance(deployment, dict) and isinstance(deployment.get("executors"), dict) \
                and isinstance(root, dict) and isinstance(root.get("dag"), dict):
            return base
    return None


def is_vertex_pipeline(data: Any) -> bool:
    return _base(data) is not None


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _unknown_placeholders(value: Any) -> Any:
    return UNKNOWN if isinstance(value, str) and _PLACEHOLDER.search(value) else value


class _Spec:
    """The camelCase CustomJobSpec being built, with positions."""

    def __init__(self, doc: Document, fallback: tuple[int, int]) -> None:
        self.doc = doc
        self.data: dict[str, Any] = {}
        self.positions: dict[KeyPath, tuple[int, int]] = {(): fallback}

    def put(self, new: KeyPath, value: Any, old: KeyPath | None, at: tuple[int, int]) -> Any:
        """Copy ``value`` (from ``old`` in the source document, or from
        inside a JSON string written at ``at``) to ``new``, converting keys."""
        pos = self.doc.position(old) if old is not None else None
        self.positions[new] = pos or at
        here = pos or at
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if isinstance(k, str):
                    key = k if new[-1:] == ("env",) or "_" not in k else _camel(k)
                    out[key] = self.put(new + (key,), v, old + (k,) if old is not None else None, here)
            return out
        if isinstance(value, list):
            return [self.put(new + (i,), v, old + (i,) if old is not None else None, here)
                    for i, v in enumerate(value)]
        if "args" in new or "command" in new:
            return value        # launcher words: a placeholder there is just an unknown word
        return _unknown_placeholders(value)


def _walk_tasks(spec: dict, base: KeyPath) -> Iterator[tuple[KeyPath, str, dict]]:
    """(key path, task name, task) of every task in the root DAG and in sub-DAG components."""
    dags: list[tuple[KeyPath, Any]] = [(base + ("root", "dag"), spec["root"].get("dag"))]
    components = spec.get("components") if isinstance(spec.get("components"), dict) else {}
    for name, component in components.items():
        if isinstance(component, dict) and isinstance(component.get("dag"), dict):
            dags.append((base + ("components", name, "dag"), component["dag"]))
    for path, dag in dags:
        tasks = dag.get("tasks") if isinstance(dag, dict) else None
        if isinstance(tasks, dict):
            for name, task in tasks.items():
                if isinstance(task, dict):
                    yield path + ("tasks", name), str(name), task


def _executor(spec: dict, task: dict) -> tuple[str, dict, dict] | None:
    """(component name, component, container) of a task whose executor runs a CustomJob."""
    ref = task.get("componentRef")
    name = ref.get("name") if isinstance(ref, dict) else None
    components = spec.get("components") if isinstance(spec.get("components"), dict) else {}
    component = components.get(name) if isinstance(name, str) else None
    if not isinstance(component, dict):
        return None
    label = component.get("executorLabel")
    executor = spec["deploymentSpec"]["executors"].get(label) if isinstance(label, str) else None
    container = executor.get("container") if isinstance(executor, dict) else None
    if not isinstance(container, dict):
        return None
    args = container.get("args")
    if not isinstance(args, list):
        return None
    pairs = zip(args, args[1:])
    if not any(a == "--type" and b == "CustomJob" for a, b in pairs):
        return None
    return name, component, container


def _payload(doc: Document, container_path: KeyPath, container: dict) -> tuple[dict, KeyPath] | None:
    """The ``--payload`` JSON job of the older wrapper, when it is plain JSON."""
    args = container["args"]
    for i, arg in enumerate(args[:-1]):
        if arg != "--payload" or not isinstance(args[i + 1], str):
            continue
        try:
            job = json.loads(args[i + 1])
        except ValueError:
            return None
        if isinstance(job, dict) and "Concat" not in job and isinstance(job.get("job_spec"), dict):
            return job, container_path + ("args", i + 1)
    return None


def _input(doc: Document, task: dict, task_path: KeyPath, component: dict, component_path: KeyPath,
           payload: tuple[dict, KeyPath] | None, name: str) -> tuple[Any, KeyPath | None, KeyPath] | None:
    """(value, source key path or None for a value inside a JSON string,
    where the JSON string is) of one CustomJob input; UNKNOWN for a
    pipeline parameter; None when no source states it."""
    params = task.get("inputs", {}).get("parameters") if isinstance(task.get("inputs"), dict) else None
    given = params.get(name) if isinstance(params, dict) else None
    here = task_path + ("inputs", "parameters", name)
    if isinstance(given, dict):
        runtime = given.get("runtimeValue")
        if isinstance(runtime, dict) and "constant" in runtime:
            return runtime["constant"], here + ("runtimeValue", "constant"), here
        if isinstance(runtime, dict) and isinstance(runtime.get("constantValue"), dict):
            text = runtime["constantValue"].get("stringValue")
            where = here + ("runtimeValue", "constantValue", "stringValue")
            if name == "worker_pool_specs" and isinstance(text, str):
                try:
                    return json.loads(text), None, where
                except ValueError:
                    return UNKNOWN, where, where
            return text, where, where
        return UNKNOWN, here, here          # componentInputParameter, taskOutputParameter: run time
    defaults = component.get("inputDefinitions", {}).get("parameters") \
        if isinstance(component.get("inputDefinitions"), dict) else None
    declared = defaults.get(name) if isinstance(defaults, dict) else None
    if isinstance(declared, dict) and "defaultValue" in declared:
        where = component_path + ("inputDefinitions", "parameters", name, "defaultValue")
        return declared["defaultValue"], where, where
    if payload is not None:
        job, where = payload
        spec = job["job_spec"]
        source = {"display_name": job.get("display_name"),
                  "worker_pool_specs": spec.get("worker_pool_specs"),
                  "timeout": (spec.get("scheduling") or {}).get("timeout")
                  if isinstance(spec.get("scheduling"), dict) else None,
                  "strategy": (spec.get("scheduling") or {}).get("strategy")
                  if isinstance(spec.get("scheduling"), dict) else None,
                  "base_output_directory": (spec.get("base_output_directory") or {}).get("output_uri_prefix")
                  if isinstance(spec.get("base_output_directory"), dict) else None}.get(name)
        if source is not None:
            return source, None, where
    return None


def read_vertex_pipeline(doc: Document) -> list[Workload]:
    """The custom jobs of one compiled pipeline, as workloads (one per GPU machine spec)."""
    from mlcost_lint.model.vertex import read_vertex

    base = _base(doc.data)
    if base is None:
        return []
    spec = doc.data if not base else doc.data[base[0]]
    info = spec.get("pipelineInfo") if isinstance(spec.get("pipelineInfo"), dict) else {}
    pipeline = info.get("name") if isinstance(info.get("name"), str) else doc.path.rsplit("/", 1)[-1]
    out: list[Workload] = []
    for task_path, task_name, task in _walk_tasks(spec, base):
        found = _executor(spec, task)
        if found is None:
            continue
        component_name, component, container = found
        component_path = base + ("components", component_name)
        label = component.get("executorLabel")
        payload = _payload(doc, base + ("deploymentSpec", "executors", label, "container"), container)
        pools = _input(doc, task, task_path, component, component_path, payload, "worker_pool_specs")
        if pools is None or not isinstance(pools[0], list) or not pools[0]:
            continue                       # not literal (a pipeline parameter) or empty: nothing known
        task_pos = doc.position(task_path) or (doc.start_line, 1)
        job = _Spec(doc, task_pos)
        value, old, where = pools
        at = doc.position(where) or task_pos
        job.data["workerPoolSpecs"] = job.put(("workerPoolSpecs",), value, old, at)
        scheduling: dict[str, Any] = {}
        for name, key in (("timeout", "timeout"), ("strategy", "strategy"),
                          ("restart_job_on_worker_restart", "restartJobOnWorkerRestart")):
            got = _input(doc, task, task_path, component, component_path, payload, name)
            if got is not None and got[0] != "":
                scheduling[key] = job.put(("scheduling", key), got[0], got[1], doc.position(got[2]) or task_pos)
        if scheduling:
            job.data["scheduling"] = scheduling
            job.positions.setdefault(("scheduling",), task_pos)
        output = _input(doc, task, task_path, component, component_path, payload, "base_output_directory")
        if output is not None and output[0] not in ("", None):
            prefix = job.put(("baseOutputDirectory", "outputUriPrefix"), output[0], output[1],
                             doc.position(output[2]) or task_pos)
            job.data["baseOutputDirectory"] = {"outputUriPrefix": prefix}
            job.positions.setdefault(("baseOutputDirectory",), job.positions[("baseOutputDirectory",
                                                                               "outputUriPrefix")])
        display = _input(doc, task, task_path, component, component_path, payload, "display_name")
        shown = display[0] if display is not None and isinstance(display[0], str) \
            and not _PLACEHOLDER.search(display[0]) and display[0] else task_name
        job.data["displayName"] = f"{pipeline}/{shown}"
        synthetic = Document(path=doc.path, index=doc.index, data=job.data, positions=job.positions,
                             start_line=task_pos[0], end_line=task_pos[0])
        for workload in read_vertex(synthetic):
            managed = workload.managed
            managed.address = f"vertex-pipeline/{doc.path}/{task_name}" + (f"/{managed.group}" if managed.group
                                                                           else "")
            out.append(workload)
    return out
