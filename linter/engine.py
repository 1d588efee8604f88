"""The rules stage: find every rule, choose which run, run them.

Rules are discovered by walking ``mlcost_lint.rules``: any :class:`Rule`
subclass defined in a module there with a ``code`` is registered. There is
no hand-kept list, and the engine never special-cases a rule. Choosing
rules reads what they declare from the registry (mlcost_lint.registry, a
table generated from them), so that a run imports only the rules it runs.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from typing import TYPE_CHECKING, Sequence

from mlcost_lint.config import ConfigError, Settings
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.rule import Finding, Reports, Rule

if TYPE_CHECKING:
    from mlcost_lint.model.project import Project
    from mlcost_lint.registry import RuleInfo


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    import mlcost_lint.rules as package

    found: dict[str, type[Rule]] = {}
    names: dict[str, str] = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule
                    and obj.__module__ == module.__name__ and "code" in vars(obj)):
                if obj.code in found:
                    raise RuntimeError(f"rule code {obj.code} defined twice")
                if obj.name in names:
                    raise RuntimeError(f"rule name {obj.name} used by {names[obj.name]} and {obj.code}")
                found[obj.code] = obj
                names[obj.name] = obj.code
    return tuple(found[code] for code in sorted(found))


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    for rule in all_rules():
        if key.upper() == rule.code or key.lower() == rule.name:
            return rule
    return None


def matches(selector: str, rule: "type[Rule] | RuleInfo") -> bool:
    """A selector is a code (MLC101), a code prefix (MLC1, MLC), a name, or ALL."""
    s = selector.strip()
    if s.upper() == "ALL":
        return True
    if s.upper().startswith("MLC"):
        return rule.code.startswith(s.upper())
    return s.lower() == rule.name


def check_selectors(selectors: list[str], origin: str) -> None:
    from mlcost_lint.registry import rule_index

    for s in selectors:
        if not any(matches(s, r) for r in rule_index()):
            raise ConfigError(f"{origin}: unknown rule code or name '{s}'")


def in_default_set(rule: "type[Rule] | RuleInfo", settings: Settings) -> bool:
    """An opt-in rule is on by default only when its setting is set."""
    return rule.enabled_by is None or bool(getattr(settings, rule.enabled_by))


def _explicitly_selected(rule: "type[Rule] | RuleInfo", settings: Settings) -> bool:
    return any(matches(s, rule) for s in (*settings.select, *settings.extend_select))


def selected_rules(settings: Settings) -> list[type[Rule]]:
    """The classes of the rules :func:`selected_rule_info` chooses (their modules imported now)."""
    return [info.load() for info in selected_rule_info(settings)]


def selected_rule_info(settings: Settings) -> "list[RuleInfo]":
    """As in ruff: ``select`` replaces the default set, ``extend-select``
    adds to it, ``ignore`` removes from the result. Selecting an opt-in rule
    (by code, prefix or name) turns it on. What the rules declare, from the
    registry: no rule is imported."""
    from mlcost_lint.registry import rule_index

    rules = rule_index()
    if settings.select:
        chosen = [r for r in rules if any(matches(s, r) for s in settings.select)]
    else:
        chosen = [r for r in rules if in_default_set(r, settings)]
    chosen += [r for r in rules if r not in chosen and any(matches(s, r) for s in settings.extend_select)]
    chosen = [r for r in rules if r in chosen]   # catalogue order
    if settings.ignore:
        chosen = [r for r in chosen if not any(matches(s, r) for s in settings.ignore)]
    return chosen


def selection_notices(settings: Settings, running: "list[RuleInfo] | list[type[Rule]]") -> list[str]:
    """Summary lines about opt-in rules: running by selection on suggested
    values, or off because their setting is unset (only with the default
    set, and not when a rule of the same group was selected). One line per
    distinct text."""
    from mlcost_lint.registry import rule_index

    selected: list[str] = []
    off: list[str] = []
    running_codes = {r.code for r in running}
    for rule in rule_index():
        if rule.enabled_by is None or getattr(settings, rule.enabled_by):
            continue
        if rule.code in running_codes:
            if rule.selected_notice and _explicitly_selected(rule, settings):
                selected.append(rule.selected_notice)
        elif not settings.select and not any(matches(s, rule) for s in settings.ignore) \
                and rule.off_notice and rule.selected_notice not in selected:
            off.append(rule.off_notice)
    notices: list[str] = []
    for text in selected + [t for t in off if t]:
        if text not in notices:
            notices.append(text)
    # A group partly selected says so once, not also that it is off.
    groups = {r.off_notice: r.selected_notice for r in rule_index() if r.enabled_by}
    return [t for t in notices if groups.get(t) not in notices]


@dataclass(slots=True)
class RuleFailure:
    """A rule that raised: an internal error the user sees (exit 2), never a
    silent loss. ``path`` is the file whose object the rule was checking,
    when the traceback shows one."""

    code: str
    error: str                      # one line: "TypeError: ..."
    path: str | None = None
    traceback: str = ""


def _subject_path(tb) -> str | None:
    """The file of the innermost model object a failing rule was looking at:
    a local variable of the rule's frames with a ``location.path`` (a
    workload, resource, training config) or a ``document.path``."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            for holder in (getattr(value, "location", None), getattr(value, "document", None)):
                path = getattr(holder, "path", None)
                if isinstance(path, str) and path:
                    return path
    return None


def run_rules(project: Project, settings: Settings, rules: "Sequence[type[Rule] | RuleInfo]",
              failures: list[RuleFailure] | None = None,
              report_paths: frozenset[str] | None = None) -> list[Finding]:
    """Every finding of ``rules`` (classes, or the registry's RuleInfo,
    whose class is imported only when the rule runs). With
    ``report_paths`` (the run reports only findings in those files), a rule
    whose ``reports_in`` none of those files holds is not run: all it finds
    would be dropped."""
    from mlcost_lint.gc_pause import gc_paused
    from mlcost_lint.registry import RuleInfo

    if report_paths is not None:
        held = reports_held(project, report_paths)
        rules = [r for r in rules if r.reports_in is None or r.reports_in & held]
    rules = [r.load() if isinstance(r, RuleInfo) else r for r in rules]

    # Collection paused as in the model and link stages: the findings and the
    # rules' shared indexes live to the end of the run, and the full
    # collections they set off re-walked all of them, a cost that grew
    # faster than the input (rules stage on bench/'s 4-copy tree: 5.3 x the
    # 1-copy tree's time for 4 x the input; MLC303 and MLC402, which build
    # shared indexes, 8 x and 16 x).
    with gc_paused():
        return _run_rules(project, settings, rules, failures)


def reports_held(project: Project, paths: frozenset[str]) -> frozenset[Reports]:
    """What ``paths`` hold, as Rule.reports_in names it. Errs on the side of
    more: a Terraform file is CLOUD whatever it declares, and a script
    (Slurm or shell) or a file with a ConfigMap is WORKLOAD."""
    from mlcost_lint.model.absent import is_absent
    from mlcost_lint.parse.document import FileKind

    held: set[Reports] = set()
    for pf in project.files:
        if pf.path in paths:
            if pf.kind.value.startswith("terraform"):
                held.add(Reports.CLOUD)
            elif pf.kind in (FileKind.SLURM, FileKind.SHELL):
                held.add(Reports.WORKLOAD)
    terraform, kubernetes = project.terraform, project.kubernetes
    # (resources a sliced run left out are in Terraform files, which it never reports)
    if any(x.location.path in paths for x in (*terraform.resources, *terraform.module_calls) if not is_absent(x)):
        held.add(Reports.CLOUD)
    if any(w.location.path in paths for w in (*kubernetes.workloads, *kubernetes.fragments)) \
            or any(cm.document.path in paths for cm in kubernetes.config_maps):
        held.add(Reports.WORKLOAD)
    if any(config.path in paths for config in project.training):
        held.add(Reports.TRAINING)
    return frozenset(held)


def _run_rules(project: Project, settings: Settings, rules: list[type[Rule]],
               failures: list[RuleFailure] | None) -> list[Finding]:
    findings: list[Finding] = []
    for rule_cls in rules:
        rule = rule_cls()
        produced: list[Finding] = []
        try:
            for finding in rule.check(project, settings):
                produced.append(finding)
        except Exception as exc:  # a rule bug must not hide every other finding
            if failures is not None:
                import traceback    # here: 6 ms to import (with textwrap) for runs where no rule fails

                failures.append(RuleFailure(
                    rule.code,
                    "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1],
                    _subject_path(exc.__traceback__),
                    "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))))
        # What the rule reported before it failed is still reported.
        findings.extend(produced)
    findings = move_to_callers(findings, project)
    findings.sort(key=Finding.sort_key)
    return merge_module_repeats(findings)


def move_to_callers(findings: list[Finding], project: Project) -> list[Finding]:
    """A finding on an argument of a child module's resource that the module
    call sets (the argument reads a module variable) is reported at the
    caller's argument, or its module block when it is not passed, with the
    line inside the module as related: one finding per call, where the fix
    is made (rules.md, "Where a finding about a child module's resource
    lands"). A cause written inside the module stays there
    (merge_module_repeats reports it once)."""
    from mlcost_lint.model.absent import is_absent
    from mlcost_lint.model.core import Related

    # Arguments of child modules' resources are written in Terraform files:
    # a run with no finding in one (a pre-commit hook on a YAML file) has
    # nothing to move.
    terraform_paths = {pf.path for pf in project.files if pf.kind.value.startswith("terraform")}
    if not any(f.location.path in terraform_paths for f in findings):
        return findings
    # (path, line, column) of an argument -> the resources and argument paths written there
    written_at: dict[tuple, list] = {}
    for res in project.terraform.resources:
        if is_absent(res):
            continue    # left out of a sliced run, whose reported files hold no Terraform
        for path, caller in res.input_locations.items():
            loc = res.attr_locations.get(path)
            if loc is not None:
                written_at.setdefault((loc.path, loc.line, loc.column), []).append((res, path, caller))
    if not written_at:
        return findings
    for f in findings:
        candidates = written_at.get((f.location.path, f.location.line, f.location.column))
        if not candidates:
            continue
        # the instance of the module the finding is about (module.a["x"].)
        prefix = _module_prefix(f.address)
        for res, path, caller in candidates:
            if _module_prefix(res.address) != prefix or not prefix:
                continue
            f.related = (Related(f.location, f"{path} of {res.address}, set from the module call"),
                         *(r for r in f.related if not res.module_calls or r.location != res.module_calls[-1]))
            f.location = caller
            f.object_line = res.module_calls[-1].line if res.module_calls else caller.line
            break
    return findings


_MODULE_PREFIX = re.compile(r'^(module\.[^.\[]+(\[[^\]]*\])?\.)+')


def _module_prefix(address: str) -> str:
    """module.a["x"].module.b.aws_s3_bucket.this[0] -> module.a["x"].module.b."""
    m = _MODULE_PREFIX.match(address)
    return m.group(0) if m else ""


def _in_module(address: str) -> str:
    """The address inside the module: module.a["x"].module.b.aws_s3_bucket.this[0] -> aws_s3_bucket.this[0]."""
    return _MODULE_PREFIX.sub("", address)


def merge_module_repeats(findings: list[Finding]) -> list[Finding]:
    """The same finding reached through several module calls (one resource
    block inside a child module, several callers) is reported once, at that
    line, with the other calls as related locations (rules.md, "Where a
    finding about a child module's resource lands"; product.md: never as
    identical lines). ``findings`` is sorted; the first of a group stays."""
    from mlcost_lint.model.core import Related

    out: list[Finding] = []
    first: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.code, f.location.path, f.location.line, f.location.column)
        kept = first.get(key)
        if kept is None or not (kept.address.startswith("module.") and f.address.startswith("module.")) \
                or _in_module(kept.address) != _in_module(f.address):
            first.setdefault(key, f)
            out.append(f)
            continue
        calls = [r for r in f.related if r.message == "called from this module block"]
        extra = tuple(Related(r.location, f"also reached through {f.address.split('.', 2)[1]}: {f.address}")
                      for r in calls[:1]) or (Related(f.location, f"also reached as {f.address}"),)
        known = {(r.location, r.message) for r in kept.related}
        kept.related = kept.related + tuple(r for r in extra if (r.location, r.message) not in known)
        kept.quantity = _add_quantities(kept.quantity, f.quantity)
    return out


def _add_quantities(kept, other):
    """Each module call is capacity of its own: the one finding prices them
    all (the same type and region: summed; otherwise the first, "at least")."""
    import dataclasses

    if kept is None or other is None:
        return kept if other is None else dataclasses.replace(other, count_at_least=True)
    if (kept.target, kept.kind, kept.price, kept.units, kept.per_accelerator, kept.smaller) == \
            (other.target, other.kind, other.price, other.units, other.per_accelerator, other.smaller) \
            and kept.count is not None and other.count is not None:
        return dataclasses.replace(kept, count=kept.count + other.count,
                                   count_at_least=kept.count_at_least or other.count_at_least)
    return dataclasses.replace(kept, count_at_least=True)
