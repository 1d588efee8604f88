"""What each file was read as, from the finished model: for ``--verbose``,
the summary's count of skipped files, and the pre-commit case (a changed
file that is not ours costs nothing and prints nothing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.parse.document import FileKind, ParsedFile
from mlcost_lint.pickling import pickled_by_fields

if TYPE_CHECKING:
    from mlcost_lint.model.project import Project

HELM_PREFIX = "template syntax"

_TERRAFORM = {
    FileKind.TERRAFORM: "Terraform",
    FileKind.TERRAFORM_JSON: "Terraform (JSON)",
    FileKind.TERRAFORM_VARS: "Terraform variables",
    FileKind.TERRAFORM_PLAN: "Terraform plan (terraform show -json)",
}


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ReadAs:
    path: str
    ours: bool          # something a rule looks at (or MLC001 reports)
    what: str           # "Kubernetes: Job/default/train", "skipped: ...", ...
    category: str       # "read" | "error" | "helm" | "not-ours" | "not-slurm" | "skipped"


def _kubernetes(pf: ParsedFile) -> list[str]:
    from mlcost_lint.model.kubernetes_build import is_kubernetes_object

    out = []
    for doc in pf.documents:
        data = doc.data
        if is_kubernetes_object(data):
            meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
            name = meta.get("name")
            out.append(f"{data.get('kind')}/{name}" if isinstance(name, str) else str(data.get("kind")))
    return out


def read_as(project: Project, paths: set[str] | None = None) -> list[ReadAs]:
    """One entry per parsed file (``paths``: only these), in path order."""
    training: dict[str, list[str]] = {}
    for tc in project.training:
        if tc.embedded_in is None:
            training.setdefault(tc.path, []).append(tc.framework.value)
    inputs = _other_inputs(project)
    out = []
    for pf in sorted(project.files, key=lambda f: f.path):
        if not pf.path or (paths is not None and pf.path not in paths):
            continue
        out.append(_one(pf, training.get(pf.path, []), inputs.get(pf.path, []), project.not_read.get(pf.path, [])))
    return out


def _other_inputs(project: Project) -> dict[str, list[str]]:
    """Path -> what else the model read there: managed-service and SkyPilot
    jobs (their label), Slurm jobs, Azure ML compute and ParallelCluster
    compute resources."""
    out: dict[str, list[str]] = {}
    for w in project.kubernetes.workloads:
        if w.managed is not None:
            out.setdefault(w.managed.header.path, []).append(w.managed.title)
        elif w.batch is not None:
            out.setdefault(w.document.path, []).append(w.batch.title)
    for r in project.terraform.resources:
        if r.origin in ("azureml", "parallelcluster") and r.location is not None:
            out.setdefault(r.location.path, []).append(
                "Azure ML compute" if r.origin == "azureml" else "ParallelCluster compute resource")
    return out


def _one(pf: ParsedFile, frameworks: list[str], inputs: list[str] = (), why_not: list[str] = ()) -> ReadAs:
    if pf.errors:
        return ReadAs(pf.path, True, f"{_TERRAFORM.get(pf.kind, pf.kind.value)}, not readable: "
                                     f"{pf.errors[0].message} (MLC001)", "error")
    if pf.skipped_reason and pf.kind is FileKind.SHELL:
        # a shell script that is not a Slurm batch script is simply not ours
        return ReadAs(pf.path, False, f"skipped: {pf.skipped_reason}", "not-slurm")
    if pf.skipped_reason:
        helm = pf.skipped_reason.startswith(HELM_PREFIX)
        return ReadAs(pf.path, helm, f"skipped: {pf.skipped_reason}", "helm" if helm else "skipped")
    if pf.kind in _TERRAFORM:
        return ReadAs(pf.path, True, _TERRAFORM[pf.kind], "read")
    parts = []
    objects = _kubernetes(pf)
    if objects:
        shown = ", ".join(objects[:4]) + (f" and {len(objects) - 4} more" if len(objects) > 4 else "")
        parts.append(f"Kubernetes: {shown}")
    if inputs:
        shown = list(dict.fromkeys(inputs))
        parts.append(", ".join(shown[:4]) + (f" and {len(shown) - 4} more" if len(shown) > 4 else ""))
    if frameworks:
        parts.append(f"training config ({', '.join(sorted(set(frameworks)))})")
    if parts:
        return ReadAs(pf.path, True, "; ".join(parts), "read")
    if why_not:
        return ReadAs(pf.path, False, f"not read: {why_not[0]}", "not-ours")
    return ReadAs(pf.path, False, f"not ours: {pf.kind.value.upper()} that is not a Kubernetes object, a "
                                  "training config or Terraform", "not-ours")
