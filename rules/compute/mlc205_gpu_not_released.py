from __future__ import annotations

import json
import re
from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.pricing import ALWAYS_ON, Quantity
from mlcost_lint.rules.compute.gpu_capacity import (
    first_written,
    format_gpus,
    held_text,
    job_kind,
    pods_of,
    template_noun,
    template_price,
    template_target,
)
from mlcost_lint.rules.compute.notebooks import NOTEBOOKS, NotebookKind, notebook_target

# Kinds whose pods run until deleted: a waiting command there holds its GPUs.
LONG_RUNNING_KINDS = frozenset({"Deployment", "StatefulSet", "Pod", "ReplicaSet"})
_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/env", "dash", "zsh"})

# A whole script that only waits (after `exec` and trailing `;`/whitespace).
_WAIT_SCRIPTS = tuple(re.compile(p) for p in (
    r"sleep\s+(infinity|inf)",
    r"sleep\s+\d{6,}",                                     # >= 100000 s (> a day)
    r"sleep\s+\d+d",                                       # GNU sleep days
    r"tail\s+-f\s+/dev/null",
    r"while\s+(true|:)\s*;\s*do\s+sleep\s+\S+\s*;\s*done",
    r"trap\s+.*;\s*sleep\s+(infinity|inf)\s*&\s*wait(\s+\$!)?",
))


def _script_of(argv: list[str]) -> str | None:
    """The shell script a container runs: ``sh -c "<script>"`` or the argv itself."""
    if not argv:
        return None
    args = list(argv)
    if args[0] in ("/usr/bin/env", "env") and len(args) > 1:
        args = args[1:]
    if args[0].rsplit("/", 1)[-1] in {s.rsplit("/", 1)[-1] for s in _SHELLS}:
        flags = [a for a in args[1:] if a.startswith("-")]
        rest = [a for a in args[1:] if not a.startswith("-")]
        if any("c" in f for f in flags) and rest:
            return rest[0]
        return None
    import shlex    # here: most runs never quote a command (4.8 ms to import)

    return " ".join(shlex.quote(a) if " " in a else a for a in args)


def only_waits(argv: list[str]) -> str | None:
    """The waiting command when ``argv`` does nothing but wait, else None."""
    script = _script_of(argv)
    if script is None:
        return None
    text = script.strip().rstrip(";").strip()
    text = re.sub(r"^exec\s+", "", text)
    text = re.sub(r"\s+", " ", text)
    for pattern in _WAIT_SCRIPTS:
        if pattern.fullmatch(text):
            return text
    return None


def _azapi_idle(resource) -> Any:
    body = resource.get("body")
    if body is UNKNOWN:
        return UNKNOWN
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return UNKNOWN
    if not isinstance(body, dict):
        return UNKNOWN
    props = body.get("properties", {})
    inner = props.get("properties", {}) if isinstance(props, dict) else {}
    if not isinstance(inner, dict):
        return UNKNOWN
    value = inner.get("idleTimeBeforeShutdown")
    if value is UNKNOWN:
        return UNKNOWN
    return bool(value)


def _azapi_compute_instance(resource) -> tuple[Any, str] | None:
    rtype = resource.get("type")
    if not isinstance(rtype, str) or not rtype.lower().startswith("microsoft.machinelearningservices/workspaces/computes@"):
        return None
    body = resource.get("body")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    if not isinstance(body, dict):
        return None
    props = body.get("properties")
    if not isinstance(props, dict) or props.get("computeType") != "ComputeInstance":
        return None
    inner = props.get("properties")
    size = inner.get("vmSize") if isinstance(inner, dict) else None
    return (size, "body.properties.properties.vmSize") if isinstance(size, str) else None


def notebook_gpus(resource, entry: NotebookKind) -> Any:
    """GPUs per notebook instance: from the machine size, or attached accelerators."""
    from mlcost_lint.catalogue import gcp_accelerator, instance_type

    accels = resource.get(entry.accelerators_attr) if entry.accelerators_attr else None
    if accels is UNKNOWN:
        return UNKNOWN
    if isinstance(accels, list) and accels:
        first = accels[0]
        if not isinstance(first, dict):
            return UNKNOWN
        kind, count = first.get("type"), first.get("core_count", 1)
        if not isinstance(kind, str) or not isinstance(count, int):
            return UNKNOWN
        acc = gcp_accelerator(kind.lower().replace("_", "-"), count)
        return acc if acc is not None else UNKNOWN
    size = resource.get(entry.size_attr)
    if not isinstance(size, str):
        return UNKNOWN if size is UNKNOWN else None
    return instance_type(size)


def _container_held(container) -> str:
    from mlcost_lint.catalogue.devices import noun_for_resources

    counts = container.accelerators()
    noun = noun_for_resources(counts)
    if any(n is UNKNOWN for n in counts.values()):
        return f"an unknown number of {noun.many}"
    return noun.count(sum(counts.values()))


def _held_around_the_clock(project, settings, template, container) -> Quantity:
    """The container's accelerators on every replica, always on."""
    from mlcost_lint.catalogue.devices import NEURON_CORE, noun_for_resources

    counts = container.accelerators()
    noun = noun_for_resources(counts)
    replicas, exact = pods_of(template)
    known = noun is not NEURON_CORE and not any(n is UNKNOWN for n in counts.values())
    return Quantity(template_target(project, template, settings),
                    sum(counts.values()) * replicas if known else None, (noun.one, noun.many), ALWAYS_ON,
                    per_accelerator=True, price=template_price(project, template), count_at_least=not exact)


def _noun_word(model, n) -> str:
    from mlcost_lint.catalogue.devices import noun_for_model

    noun = noun_for_model(model)
    return noun.one if n == 1 else noun.many


class GpuNotReleased(Rule):
    """
    ## What it does
    Flags GPUs kept after the work ends or while nobody uses them:
    - a RayJob without `shutdownAfterJobFinishes: true` (its Ray cluster,
      GPU workers included, outlives the job);
    - a Kubeflow training job with `runPolicy.cleanPodPolicy: None` written
      (pods still running when the job finishes are kept);
    - a Deployment, StatefulSet or Pod holding GPUs whose command only waits
      (`sleep infinity`, `tail -f /dev/null`, also inside `bash -c`): a dev
      box that holds its GPUs around the clock;
    - a GPU notebook instance without idle shutdown: a SageMaker notebook
      without a lifecycle configuration, a Vertex AI Workbench instance
      without `idle-timeout-seconds` metadata, an Azure ML compute instance
      (the azurerm provider cannot set idle shutdown; azapi without
      `idleTimeBeforeShutdown`).

    ## Why is this expensive
    GPUs are billed by the hour whether or not anything runs on them. A
    finished RayJob's cluster, a `sleep infinity` pod kept "for debugging"
    and a notebook left open over the weekend are the most common sources
    of GPU hours that produce nothing.

    ## Example
    ```yaml
    kind: Deployment
    spec:
      template:
        spec:
          containers:
            - command: ["sleep", "infinity"]
              resources: {limits: {nvidia.com/gpu: 1}}
    ```

    ## Fix
    Run the work as a Job, or scale dev boxes to zero when unused; set
    `shutdownAfterJobFinishes: true` on RayJobs; use `cleanPodPolicy:
    Running`; give notebooks an idle shutdown.
    """

    code = "MLC205"
    name = "gpu-not-released"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.COMPUTE
    reports_in = frozenset({Reports.WORKLOAD, Reports.CLOUD})
    summary = "GPUs are kept after the work ends or while idle"
    fix = "Release GPUs when work ends: shutdownAfterJobFinishes, cleanPodPolicy Running, idle shutdown."

    def check(self, project, settings) -> Iterator[Finding]:
        for workload in project.kubernetes.workloads:
            templates = workload.accelerator_templates()
            if not templates:
                continue
            if workload.kind == "RayJob":
                yield from self._rayjob(workload, templates)
            elif job_kind(workload) == "kubeflow":
                yield from self._kubeflow(workload, templates)
            elif workload.kind in LONG_RUNNING_KINDS:
                yield from self._waiting(project, settings, workload, templates)
        for resource in project.terraform.cloud_only_resources():    # notebooks: findings at them
            if resource.mode != "managed":
                continue
            yield from self._notebook(resource)

    def _rayjob(self, workload, templates) -> Iterator[Finding]:
        value, path = first_written(workload, [("spec", "shutdownAfterJobFinishes")])
        if value is True or value is UNKNOWN or (value is not None and not isinstance(value, bool)):
            return
        held = held_text(templates)
        where = workload.document.location(path) if path else workload.loc("spec")
        state = "shutdownAfterJobFinishes: false" if value is False else "no shutdownAfterJobFinishes"
        yield self.finding(
            f"RayJob {workload.name} has {state}: its Ray cluster ({held}) keeps running after the job ends; "
            "set shutdownAfterJobFinishes: true",
            where, workload.address, object_line=workload.loc().line,
        )

    def _kubeflow(self, workload, templates) -> Iterator[Finding]:
        value, path = first_written(workload, [("spec", "runPolicy", "cleanPodPolicy"), ("spec", "cleanPodPolicy")])
        if value != "None":
            return
        noun = template_noun(*templates)
        yield self.finding(
            f"{workload.kind} {workload.name} sets cleanPodPolicy: None: pods still running when the job "
            f"finishes are kept and hold their {noun.many}; use cleanPodPolicy: Running",
            workload.document.location(path), workload.address, object_line=workload.loc().line,
        )

    def _waiting(self, project, settings, workload, templates) -> Iterator[Finding]:
        for template in templates:
            for container in template.containers:
                if not any(n is UNKNOWN or n > 0 for n in container.accelerators().values()):
                    continue
                # Without a command the image's entrypoint runs the args: unknown.
                waiting = only_waits(container.argv) if container.command else None
                if waiting is None:
                    continue
                key = "command"
                yield self.finding(
                    f"{workload.kind} {workload.name} container {container.name} holds {_container_held(container)} "
                    f"while its command only waits ({waiting}): they are billed around the clock; run the work "
                    "as a Job or scale the workload to zero when unused",
                    container.loc(key), f"{workload.address}/{container.name}",
                    object_line=workload.loc().line,
                    quantity=_held_around_the_clock(project, settings, template, container),
                )

    def _notebook(self, resource) -> Iterator[Finding]:
        entry = NOTEBOOKS.get(resource.type)
        size_attr = None
        if entry is None and resource.type == "azapi_resource":
            found = _azapi_compute_instance(resource)
            if found is None:
                return
            size, size_attr = found
            from mlcost_lint.catalogue import instance_type

            accelerator = instance_type(size)
            target = notebook_target(resource, size_attr, None)
            idle = _azapi_idle(resource)
            label, fix, idle_attr = "Azure ML compute instance", \
                "set properties.properties.idleTimeBeforeShutdown (e.g. \"PT60M\")", "body"
        elif entry is None or entry.idle is None:
            return
        else:
            accelerator = notebook_gpus(resource, entry)
            target = notebook_target(resource, entry.size_attr, entry.accelerators_attr)
            idle = entry.idle(resource)
            label, fix, idle_attr, size_attr = entry.label, entry.idle_fix, entry.idle_attr, entry.size_attr
        if accelerator is None or accelerator is UNKNOWN or idle is UNKNOWN or idle:
            return
        gpus = accelerator.count
        yield self.finding(
            f"{label} {resource.address} has {format_gpus(gpus)} {accelerator.gpu.name} "
            f"{_noun_word(accelerator.gpu, gpus)} and no idle shutdown: it bills while nobody uses it; {fix}",
            resource.loc(idle_attr) if idle_attr and resource.get(idle_attr) is not None else resource.location,
            resource.address,
            related=resource.related_module_calls(),
            object_line=resource.location.line,
            quantity=Quantity(target, 1, ("instance", "instances"), ALWAYS_ON),
        )
