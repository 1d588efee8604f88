"""Terraform to the project model.

    build_terraform(files, settings, *, var_files=(), cli_vars=None) -> TerraformModel
    is_plan_json(data) -> bool

``files`` are parsed .tf / .tf.json / .tfvars files and plan JSON documents.
Files are grouped into modules by directory; every directory with
configuration that no other scanned module uses as a local ``source`` is a
root module and is evaluated with its ``terraform.tfvars`` and
``*.auto.tfvars`` (then ``var_files``, then ``cli_vars``).
"""

from __future__ import annotations

import posixpath
from typing import Any, Iterable

from mlcost_lint.model.cloud import TerraformModel
from mlcost_lint.model.core import UNKNOWN, Location


def is_plan_json(data: Any) -> bool:
    """True for `terraform show -json` output (a plan, or a state)."""
    if not isinstance(data, dict) or "format_version" not in data:
        return False
    if isinstance(data.get("planned_values"), dict) or "resource_changes" in data:
        return True
    return isinstance(data.get("values"), dict) and "terraform_version" in data


def _dir_of(path: str) -> str:
    d = posixpath.dirname(path.replace("\\", "/"))
    return posixpath.normpath(d) if d else "."


def _is_auto_vars(name: str) -> bool:
    return name in ("terraform.tfvars", "terraform.tfvars.json") or name.endswith(
        (".auto.tfvars", ".auto.tfvars.json"))


def build_terraform(files: list, settings: Any, *, var_files: Iterable = (),
                    cli_vars: dict[str, str] | None = None) -> TerraformModel:
    from mlcost_lint.model.terraform.builder import Build, ModuleInstance, ModuleSource, prepare
    from mlcost_lint.model.terraform.evaluator import Budget
    from mlcost_lint.model.terraform.plan import load_plan
    from mlcost_lint.model.terraform.tfjson import json_to_hcl
    from mlcost_lint.parse.document import FileKind

    model = TerraformModel()
    budget = Budget(getattr(settings, "max_evaluation_steps", 2_000_000))
    sources: dict[str, ModuleSource] = {}
    tfvars_by_dir: dict[str, list] = {}
    plans: list = []

    for f in sorted(files, key=lambda f: f.path):
        kind = f.kind
        try:
            if kind is FileKind.TERRAFORM and f.hcl is not None:
                d = _dir_of(f.path)
                sources.setdefault(d, ModuleSource(d)).add(f.hcl)
            elif kind is FileKind.TERRAFORM_JSON and f.documents:
                d = _dir_of(f.path)
                sources.setdefault(d, ModuleSource(d)).add(json_to_hcl(f.documents[0]))
            elif kind is FileKind.TERRAFORM_VARS:
                name = posixpath.basename(f.path)
                if _is_auto_vars(name):
                    body = _vars_body(f)
                    if body is not None:
                        tfvars_by_dir.setdefault(_dir_of(f.path), []).append((name, body))
            elif kind in (FileKind.TERRAFORM_PLAN, FileKind.JSON) and f.documents:
                doc = f.documents[0]
                if is_plan_json(doc.data):
                    plans.append(doc)
        except RecursionError:
            model.diagnostics.append((Location(f.path), "configuration nested too deeply to evaluate"))

    # Root modules: directories no scanned module calls as a local source.
    called: dict[str, set[str]] = {}
    for d, src in sources.items():
        for decl in src.modules:
            attr = decl.block.attributes.get("source")
            value = getattr(getattr(attr, "expr", None), "value", None)
            if isinstance(value, str) and value.startswith(("./", "../")):
                child = posixpath.normpath(posixpath.join(d, value))
                if child in sources and child != d:
                    called.setdefault(d, set()).add(child)
    children = set().union(*called.values()) if called else set()
    roots = [d for d in sorted(sources) if d not in children]
    reached = _reachable(roots, called)
    for d in sorted(sources):   # modules only reachable through a cycle: start somewhere
        if d not in reached:
            roots.append(d)
            reached |= _reachable([d], called)

    for src in sources.values():
        try:
            prepare(src)
        except RecursionError:
            model.diagnostics.append((Location(src.dir), "configuration nested too deeply to evaluate"))
    build = Build(sources, budget, model, {})
    extra_vars = [b for b in (_vars_body(f) for f in var_files) if b is not None]
    for d in roots:
        src = sources[d]
        inputs = _root_inputs(src, tfvars_by_dir.get(d, []), extra_vars, cli_vars or {}, build)
        instance = ModuleInstance(build, src, inputs, {}, "", (), (d,), d)
        try:
            instance.run()
        except RecursionError:
            model.diagnostics.append((Location(d), "configuration nested too deeply to evaluate"))

    for doc in plans:
        load_plan(doc, model)
    mark_capacity_reservations(model.resources)
    return model


# Pools that launch from a launch template with one of these set run on an
# On-Demand Capacity Reservation (ODCR): reserved capacity, already paid for
# (rules.md, "Reserved capacity also includes").
_ODCR_TARGETS = ("capacity_reservation_id", "capacity_reservation_resource_group_arn")
_LAUNCH_TEMPLATE_USERS = ("aws_eks_node_group", "aws_autoscaling_group")


def _targets_reservation(template: Any) -> bool:
    spec = template.attrs.get("capacity_reservation_specification")
    blocks = spec if isinstance(spec, list) else [spec]
    for block in blocks:
        target = block.get("capacity_reservation_target") if isinstance(block, dict) else None
        for item in target if isinstance(target, list) else [target]:
            if isinstance(item, dict) and any(item.get(k) not in (None, "") for k in _ODCR_TARGETS):
                return True
    return False


def mark_capacity_reservations(resources: list) -> None:
    """Set ``reserved_by`` on node groups / autoscaling groups whose launch
    template (followed through ``references``) targets a reservation."""
    reserving = {r.address for r in resources if r.type == "aws_launch_template" and _targets_reservation(r)}
    if not reserving:
        return
    for r in resources:
        if r.type not in _LAUNCH_TEMPLATE_USERS:
            continue
        for path, addresses in r.references.items():
            if "launch_template" in path:
                hit = next((a for a in addresses if a in reserving), None)
                if hit is not None:
                    r.reserved_by = hit
                    break


def _reachable(start: list[str], edges: dict[str, set[str]]) -> set[str]:
    seen = set(start)
    stack = list(start)
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _vars_body(f: Any) -> Any:
    from mlcost_lint.model.terraform.tfjson import json_vars_to_hcl

    if getattr(f, "hcl", None) is not None:
        return f.hcl
    if getattr(f, "documents", None):
        return json_vars_to_hcl(f.documents[0])
    return None


def _root_inputs(src: Any, auto_vars: list, var_files: list, cli_vars: dict[str, str], build: Any) -> dict:
    """Root variable values: tfvars (lexical order of *.auto.tfvars after
    terraform.tfvars), then -var-file, then -var."""
    from mlcost_lint.model.terraform.builder import Input
    from mlcost_lint.model.terraform.evaluator import BudgetExceeded, Scope
    from mlcost_lint.model.terraform.types import ANY, is_complex
    from mlcost_lint.parse.hcl import HclSyntaxError, parse_expression

    def rank(item: tuple) -> tuple:
        name = item[0]
        return (0 if name.startswith("terraform.tfvars") else 1, name)

    bodies = [b for _, b in sorted(auto_vars, key=rank)] + list(var_files)
    inputs: dict[str, Input] = {}
    empty = Scope({})

    def value(expr: Any) -> Any:
        try:
            return build.evaluator.evaluate(expr, empty)
        except BudgetExceeded:
            return UNKNOWN

    for body in bodies:
        for name, attr in body.attributes.items():
            inputs[name] = Input(value(attr.expr), False)
    value_of = value
    for name, text in cli_vars.items():
        spec = src.var_types.get(name, ANY)
        cli_value: Any = text
        if is_complex(spec) and spec.kind != "any" or text.lstrip().startswith(("[", "{")):
            try:
                cli_value = value_of(parse_expression(text))
            except HclSyntaxError:
                cli_value = UNKNOWN
        inputs[name] = Input(cli_value, False)
    return inputs


__all__ = ["build_terraform", "is_plan_json"]
