from __future__ import annotations

import re
from typing import Iterator

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.model.kept_capacity import count_value
from mlcost_lint.rules.compute.gpu_capacity import (
    first_written,
    held_text,
    template_noun,
    job_kind,
)

JOB_BACKOFF_DEFAULT = 6           # Kubernetes Job backoffLimit default
KUBEFLOW_RETRYING = frozenset({"OnFailure", "Always", "ExitCode"})
MACRO_GAPS = {"@hourly": 3600, "@daily": 86400, "@midnight": 86400, "@weekly": 7 * 86400}
_TZ_PREFIX = re.compile(r"^(CRON_TZ|TZ)=\S+\s+")


def _field_values(text: str, low: int, high: int) -> set[int] | None:
    """Values of one cron field made of numbers, lists, ranges and steps
    (``*/N``, ``a-b/N``); None for anything else (names, ``?``, ``L``...)."""
    out: set[int] = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, _, step_text = part.partition("/")
            if not (step_text.isascii() and step_text.isdigit() and len(step_text) <= 4) or int(step_text) == 0:
                return None
            step = int(step_text)
        if part == "*":
            start, end = low, high
        elif re.fullmatch(r"\d+-\d+", part):
            start, end = (int(x) for x in part.split("-"))
        elif part.isascii() and part.isdigit() and len(part) <= 4:
            start = int(part)
            end = start if step == 1 else high
        else:
            return None
        if start < low or end > high or start > end:
            return None
        out.update(range(start, end + 1, step))
    return out or None


def shortest_gap_seconds(schedule: str) -> int | None:
    """The shortest clock-time gap between two runs of a cron schedule
    whose day fields are ``*`` (or a macro of fixed period); None for any
    other schedule (counted as overlapping, rules.md Settled questions)."""
    text = _TZ_PREFIX.sub("", schedule.strip())
    if text in MACRO_GAPS:
        return MACRO_GAPS[text]
    fields = text.split()
    if len(fields) != 5 or any(f != "*" for f in fields[2:]):
        return None
    minutes = _field_values(fields[0], 0, 59)
    hours = _field_values(fields[1], 0, 23)
    if minutes is None or hours is None:
        return None
    runs = sorted(h * 60 + m for h in hours for m in minutes)
    gaps = [b - a for a, b in zip(runs, runs[1:])] + [runs[0] + 1440 - runs[-1]]
    return min(gaps) * 60


def _duration(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


class UnboundedGpuRetries(Rule):
    """
    ## What it does
    Flags a GPU job that retries without a sensible bound:
    - a Job (also a CronJob's job template or a JobSet child Job) whose
      `backoffLimit` is above `max-job-backoff-limit` (default 6, the
      Kubernetes default);
    - a Kubeflow training job whose replicas restart (`restartPolicy`
      OnFailure, Always or ExitCode, written explicitly) with no
      `runPolicy.backoffLimit`: the operator then restarts them forever;
    - a GPU CronJob with `concurrencyPolicy: Allow` (written or the default)
      unless its `activeDeadlineSeconds` ends a run before the next one
      starts.

    ## Why is this expensive
    A job that fails on start (bad image, missing data, OOM) fails the same
    way on every retry, and every retry waits for, starts and loads onto
    GPUs. With no limit, a broken training job burns GPU hours all weekend.
    A CronJob that allows overlap starts the next run while the last one
    still holds its GPUs, doubling the bill when runs get slow.

    ## Example
    ```yaml
    apiVersion: batch/v1
    kind: Job
    spec:
      backoffLimit: 50
      template:
        spec:
          containers: [{resources: {limits: {nvidia.com/gpu: 8}}}]
    ```

    ## Fix
    Keep retries small, bound Kubeflow restarts, and forbid overlapping runs:
    ```yaml
    spec:
      backoffLimit: 3
    ---
    spec:
      runPolicy: {backoffLimit: 3}
    ---
    spec:
      concurrencyPolicy: Forbid
    ```
    """

    code = "MLC206"
    name = "unbounded-gpu-retries"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.COMPUTE
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "Failing GPU job restarts without a sensible bound"
    fix = "Lower backoffLimit, set runPolicy.backoffLimit, or set concurrencyPolicy: Forbid."

    def check(self, project, settings) -> Iterator[Finding]:
        limit = settings.max_job_backoff_limit
        for workload in project.kubernetes.workloads:
            templates = workload.accelerator_templates()
            if not templates:
                continue
            family = job_kind(workload)
            if family in ("job", "cronjob", "jobset"):
                yield from self._backoff(workload, family, templates, limit)
            if family == "kubeflow":
                yield from self._kubeflow(workload, templates)
            if family == "cronjob":
                yield from self._cron(workload, templates)

    # -- Job backoffLimit -------------------------------------------------
    def _backoff(self, workload, family, templates, limit) -> Iterator[Finding]:
        if family == "job":
            job_specs = [(("spec",), templates[0])]
        elif family == "cronjob":
            job_specs = [(("spec", "jobTemplate", "spec"), templates[0])]
        else:  # JobSet: each GPU child Job
            job_specs = [(tuple(t.key_path[len(workload.key_path):-1]), t) for t in templates]
        for spec_path, template in job_specs:
            value, full = first_written(workload, [spec_path + ("backoffLimit",)])
            what = "backoffLimit"
            if value is None:
                value, full = first_written(workload, [spec_path + ("backoffLimitPerIndex",)])
                what = "backoffLimitPerIndex"
            backoff = count_value(value)
            defaulted = backoff is None
            if backoff is UNKNOWN:
                continue
            if defaulted:
                backoff, what = JOB_BACKOFF_DEFAULT, "backoffLimit"
            if backoff <= limit:
                continue
            where = workload.document.location(full) if full else workload.loc(*spec_path)
            held = held_text([template], per_pod=True)
            role = f" child Job {template.role}" if family == "jobset" else ""
            yield self.finding(
                f"{workload.kind} {workload.name}{role} retries up to {backoff} times "
                f"({what}{' default' if defaulted else ''}; max-job-backoff-limit is {limit}), "
                f"each retry on {held} per pod: "
                f"set backoffLimit to {limit} or less",
                where,
                workload.address + (f"/{template.role}" if family == "jobset" else ""),
                object_line=workload.loc().line,
            )

    # -- Kubeflow restartPolicy without runPolicy.backoffLimit ------------
    def _kubeflow(self, workload, templates) -> Iterator[Finding]:
        value, _ = first_written(workload, [("spec", "runPolicy", "backoffLimit"), ("spec", "backoffLimit")])
        if value is not None:
            return   # bounded (or bound unknown)
        retrying = []
        for template in workload.templates:
            replica_path = tuple(template.key_path[:-1])
            policy = workload.document.get(replica_path + ("restartPolicy",))
            if isinstance(policy, str) and policy in KUBEFLOW_RETRYING:
                retrying.append((template, policy, replica_path))
        if not retrying:
            return
        template, policy, replica_path = retrying[0]
        roles = ", ".join(f"{t.role}: {p}" for t, p, _ in retrying)
        yield self.finding(
            f"{workload.kind} {workload.name} restarts replicas ({roles}) with no runPolicy.backoffLimit: "
            f"a job that fails on start restarts on its {template_noun(*templates).many} without end; "
            "set runPolicy.backoffLimit",
            workload.document.location(replica_path + ("restartPolicy",)),
            workload.address,
            object_line=workload.loc().line,
        )

    # -- CronJob concurrencyPolicy Allow -----------------------------------
    def _cron(self, workload, templates) -> Iterator[Finding]:
        policy, policy_path = first_written(workload, [("spec", "concurrencyPolicy")])
        if policy is None:
            policy_text, defaulted = "Allow", True
        elif isinstance(policy, str):
            policy_text, defaulted = policy, False
        else:
            return
        if policy_text != "Allow":
            return
        schedule, _ = first_written(workload, [("spec", "schedule")])
        if not isinstance(schedule, str):
            return
        gap = shortest_gap_seconds(schedule)
        deadlines = []
        for value in (
            first_written(workload, [("spec", "jobTemplate", "spec", "activeDeadlineSeconds")])[0],
            templates[0].active_deadline_seconds,
        ):
            bound = count_value(value) if value is not UNKNOWN else UNKNOWN
            if bound is UNKNOWN:
                return
            if bound is not None:
                deadlines.append(bound)
        deadline = min(deadlines) if deadlines else None
        if gap is not None and deadline is not None and deadline < gap:
            return
        held = held_text(templates)
        noun = template_noun(*templates)
        if gap is None:
            timing = (f"its schedule \"{schedule}\" is not a plain minute/hour pattern, so a run may still "
                      "be going when the next starts")
        elif deadline is None:
            timing = f"it runs every {_duration(gap)} at the shortest with no activeDeadlineSeconds"
        else:
            timing = (f"it runs every {_duration(gap)} at the shortest and activeDeadlineSeconds "
                      f"{deadline} does not end a run before the next")
        where = workload.document.location(policy_path) if policy_path else workload.loc("spec", "schedule")
        yield self.finding(
            f"CronJob {workload.name} uses {held} per run with "
            f"concurrencyPolicy Allow{' (default)' if defaulted else ''}; {timing}; overlapping runs "
            f"double the {noun.many}: set concurrencyPolicy: Forbid",
            where,
            workload.address,
            object_line=workload.loc().line,
        )
