"""The model stage: parsed files -> :class:`Project`.

Content decides what each YAML/JSON document is: a Kubernetes object
(``apiVersion`` + ``kind``), a Terraform plan, a training config (the
framework readers' detection), or nothing we read (skipped silently).
Heavy readers are imported only when a file needs them.
"""

from __future__ import annotations

from mlcost_lint.config import Settings
from mlcost_lint.model.kubernetes_build import add_document, is_kubernetes_object
from mlcost_lint.model.project import Project
from mlcost_lint.parse.document import FileKind, ParsedFile

_TERRAFORM_KINDS = (FileKind.TERRAFORM, FileKind.TERRAFORM_JSON, FileKind.TERRAFORM_VARS, FileKind.TERRAFORM_PLAN)


def _looks_like_plan(data: object) -> bool:
    return isinstance(data, dict) and "format_version" in data and (
        "planned_values" in data or "terraform_version" in data)


def build_project(parsed: list[ParsedFile], settings: Settings, *,
                  var_files: list[ParsedFile] = (), cli_vars: dict[str, str] | None = None) -> Project:
    project = Project(files=parsed)
    terraform_files: list[ParsedFile] = []
    for pf in parsed:
        if pf.errors or pf.skipped_reason:
            continue
        if pf.kind in _TERRAFORM_KINDS:
            terraform_files.append(pf)
            continue
        for doc in pf.documents:
            if pf.kind is FileKind.JSON and _looks_like_plan(doc.data):
                pf.kind = FileKind.TERRAFORM_PLAN
                terraform_files.append(pf)
                break
            if is_kubernetes_object(doc.data):
                add_document(project.kubernetes, doc)
                continue
            _add_training(project, doc)
    for cm in project.kubernetes.config_maps:
        _add_embedded(project, cm)
    if terraform_files or var_files:
        from mlcost_lint.model.terraform import build_terraform

        project.terraform = build_terraform(terraform_files, settings, var_files=list(var_files),
                                            cli_vars=cli_vars or {})
    return project


def _add_training(project: Project, doc) -> None:
    from mlcost_lint.model.training.detect import read_training_config

    config = read_training_config(doc)
    if config is not None:
        project.training.append(config)


def _add_embedded(project: Project, cm) -> None:
    from mlcost_lint.model.training.detect import read_embedded_configs

    for key, text in cm.data.items():
        pos = cm.document.position(cm.key_path + ("data", key))
        base_line = pos[0] if pos else cm.document.start_line
        project.training.extend(read_embedded_configs(text, cm.document.path, base_line, cm.address, key))
