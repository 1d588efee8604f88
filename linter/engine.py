"""The rules stage: find every rule, choose which run, run them.

Rules are discovered by walking ``mlcost_lint.rules``: any :class:`Rule`
subclass defined in a module there with a ``code`` is registered. There is
no hand-kept list, and the engine never special-cases a rule.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
import traceback
from dataclasses import dataclass

from mlcost_lint.config import ConfigError, Settings
from mlcost_lint.model.project import Project
from mlcost_lint.rule import Finding, Rule


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


def matches(selector: str, rule: type[Rule]) -> bool:
    """A selector is a code (MLC101), a code prefix (MLC1, MLC), a name, or ALL."""
    s = selector.strip()
    if s.upper() == "ALL":
        return True
    if s.upper().startswith("MLC"):
        return rule.code.startswith(s.upper())
    return s.lower() == rule.name


def check_selectors(selectors: list[str], origin: str) -> None:
    for s in selectors:
        if not any(matches(s, r) for r in all_rules()):
            raise ConfigError(f"{origin}: unknown rule code or name '{s}'")


def selected_rules(settings: Settings) -> list[type[Rule]]:
    rules = all_rules()
    if settings.select:
        rules = tuple(r for r in rules if any(matches(s, r) for s in settings.select))
    if settings.ignore:
        rules = tuple(r for r in rules if not any(matches(s, r) for s in settings.ignore))
    return list(rules)


@dataclass(slots=True)
class RuleFailure:
    code: str
    error: str


def run_rules(project: Project, settings: Settings, rules: list[type[Rule]],
              failures: list[RuleFailure] | None = None) -> list[Finding]:
    findings: list[Finding] = []
    for rule_cls in rules:
        rule = rule_cls()
        try:
            findings.extend(rule.check(project, settings))
        except Exception as exc:  # a rule bug must not hide every other finding
            if failures is not None:
                failures.append(RuleFailure(rule.code, "".join(
                    traceback.format_exception_only(type(exc), exc)).strip()))
            if "--debug" in sys.argv:
                traceback.print_exc()
    findings.sort(key=Finding.sort_key)
    return findings
