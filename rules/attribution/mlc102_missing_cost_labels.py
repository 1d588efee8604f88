from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.training._values import key_text
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.attribution.tag_keys import (
    OFF_NOTICE, SELECTED_NOTICE, keys_source, missing_keys)


class MissingCostLabels(Rule):
    """
    ## What it does
    Flags a Kubernetes workload (Pod, Deployment, StatefulSet, DaemonSet, Job,
    CronJob, Kubeflow PyTorchJob/TFJob/MPIJob/XGBoostJob/PaddleJob/JAXJob,
    TrainJob, RayJob/RayCluster/RayService, Volcano Job, JobSet,
    LeaderWorkerSet) whose pod template lacks a required cost label. The
    required keys come from `required-tags`; keys compare case- and
    separator-insensitively, and a prefixed key counts by its last segment
    (`acme.com/cost-center`). The message says where the labels go: the pod
    template's `metadata.labels`, a TrainJob's `spec.labels` (or
    `podTemplateOverrides`), each Ray head and worker group template. The
    rule is opt-in: it runs when `required-tags` is set, or when selected
    (then it checks the suggested keys `team`, `project`, `cost-center`).

    ## Why is this expensive
    Cost allocators such as OpenCost and Kubecost attribute spend by the
    labels on pods, not on the Job or Deployment object. A GPU pod without
    team or project labels lands in "unallocated", so nobody sees the bill
    for their experiments and nobody turns them off.

    ## Example
    ```yaml
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: llama-sft
      labels: {team: research}        # on the job, not the pods
    spec:
      pytorchReplicaSpecs:
        Worker:
          template:
            spec:
              containers: [...]
    ```

    ## Fix
    Put the labels on every pod template:
    ```yaml
          template:
            metadata:
              labels: {team: research, project: llama, cost-center: cc-123}
    ```
    """

    code = "MLC102"
    name = "missing-cost-labels"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.ATTRIBUTION
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "Workload pod template lacks required cost labels"
    fix = "Add the missing keys to the pod template's metadata.labels."
    enabled_by = "required_tags"
    off_notice = OFF_NOTICE
    selected_notice = SELECTED_NOTICE

    @staticmethod
    def _source(settings) -> str:
        return keys_source(settings)

    def check(self, project, settings) -> Iterator[Finding]:
        for workload in project.kubernetes.workloads:
            if workload.managed is not None:
                continue   # a managed-service job has no pod labels (its tags are MLC101's)
            if workload.batch is not None:
                continue   # a Slurm job has no pod labels
            for template in workload.templates:
                missing = missing_keys(template.labels, settings.tag_keys)
                if not missing:
                    continue
                train_job = workload.kind == "TrainJob"
                if train_job:
                    # The template is spec.trainer; TrainJob labels sit beside it in spec.
                    where = template.key_path[:-1] + ("labels",)
                    where_text = f"{key_text(where)} (or spec.podTemplateOverrides)"
                    loc = template.document.location(where)
                else:
                    where = ("metadata", "labels") if template.has("metadata", "labels") else ("metadata",)
                    where_text = key_text(template.key_path + ("metadata", "labels"))
                    loc = template.loc(*where)
                role = f" pod template {template.role}" if template.role else " pod template"
                yield self.finding(
                    f"{workload.kind} {workload.name}{role} lacks cost label"
                    f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}{self._source(settings)}; "
                    f"cost allocators read pod labels: add {'them' if len(missing) > 1 else 'it'} to {where_text}",
                    loc,
                    f"{workload.address}/{template.role or 'template'}",
                    object_line=template.loc().line,
                )
