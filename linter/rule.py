"""The rule interface: what a rule module declares and what it returns.

A rule is a small class in ``mlcost_lint.rules.<category>``::

    class MissingCostTags(Rule):
        \"\"\"## What it does ... ## Why is this expensive ... ## Example ... ## Fix ...\"\"\"
        code = "MLC101"
        name = "missing-cost-tags"
        level = Level.WARNING
        confidence = Confidence.HIGH
        category = Category.ATTRIBUTION
        summary = "Cost-bearing resource lacks required cost tags"
        fix = "Add the missing keys to tags (or the provider's default_tags)."

        def check(self, project, settings):
            yield self.finding(...)

It inspects the model and yields findings; it never parses files or formats
output. The engine finds every Rule subclass by walking the package.
"""

from __future__ import annotations

import inspect
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location, Related
from mlcost_lint.pickling import pickled_by_fields

if TYPE_CHECKING:
    from mlcost_lint.config import Settings
    from mlcost_lint.model.project import Project
    from mlcost_lint.pricing import Cost, Quantity


class Level(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "note": 1}[self.value]


class Confidence(str, Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def sarif_precision(self) -> str:
        return {"high": "very-high", "medium": "high", "low": "medium"}[self.value]


class Reports(str, Enum):
    """What the files a rule's findings are located in hold (a rule's
    ``reports_in``). A run that reports only some files (the pre-commit
    hook: explicit files with the project as context) skips a rule none of
    whose kinds those files hold: its findings would all be dropped."""

    CLOUD = "cloud"          # cloud resources or module calls: Terraform, ParallelCluster
    WORKLOAD = "workload"    # workloads: Kubernetes, Slurm, SkyPilot, SageMaker / Azure ML / Vertex AI jobs
    TRAINING = "training"    # training configs (files of their own or embedded in a ConfigMap)


class Category(str, Enum):
    DIAGNOSTICS = "diagnostics"
    ATTRIBUTION = "attribution"
    COMPUTE = "compute"
    STORAGE = "storage"
    LOGGING = "logging"
    NETWORK = "network"
    EFFICIENCY = "efficiency"   # training efficiency: compute spent on waste
    RELIABILITY = "reliability"
    GOVERNANCE = "governance"


@pickled_by_fields
@dataclass(slots=True)
class Finding:
    code: str
    message: str
    location: Location
    address: str                       # logical address of the flagged object (fingerprints, baselines)
    level: Level = Level.WARNING
    related: tuple[Related, ...] = ()
    # First line of the block / mapping the finding flags: a suppression
    # comment directly above it applies (product.md, Suppressions).
    object_line: int | None = None
    # What the finding keeps or holds, declared by the rule; the pricing step
    # (mlcost_lint.pricing) turns it into ``cost``. Rules never set ``cost``.
    quantity: "Quantity | None" = None
    cost: "Cost | None" = None

    def sort_key(self) -> tuple:
        return (self.location.path, self.location.line, self.location.column, self.code,
                self.address, self.message)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    level: ClassVar[Level]
    confidence: ClassVar[Confidence]
    category: ClassVar[Category]
    summary: ClassVar[str]            # one line, shown by `mlcost-lint rules` and in SARIF shortDescription
    fix: ClassVar[str] = ""           # one-line fix hint for the grouped text output
    # Opt-in rules (rules.md, "The default set"): a rule that checks an
    # organisation's own convention is in the default set only when the
    # Settings attribute named here is set (truthy); selecting it explicitly
    # (--select / select / extend-select) runs it regardless.
    enabled_by: ClassVar[str | None] = None
    # One summary line shown when the rule is off because that setting is unset.
    off_notice: ClassVar[str] = ""
    # One summary line shown when the rule runs by selection without the setting.
    selected_notice: ClassVar[str] = ""
    # Where its findings are located (after engine.move_to_callers): every
    # finding's file holds one of these. None: any file (diagnostics).
    # tests/test_reports_in.py checks it on the fixtures and the corpus.
    reports_in: ClassVar[frozenset[Reports] | None] = None

    def check(self, project: "Project", settings: "Settings") -> Iterable[Finding]:
        raise NotImplementedError

    # -- helpers for rule authors ----------------------------------------
    def finding(
        self,
        message: str,
        location: Location,
        address: str,
        *,
        related: Iterable[Related] = (),
        object_line: int | None = None,
        quantity: "Quantity | None" = None,
    ) -> Finding:
        return Finding(
            code=self.code,
            message=message,
            location=location,
            address=address,
            level=self.level,
            related=tuple(related),
            object_line=object_line,
            quantity=quantity,
        )

    @classmethod
    def docs(cls) -> str:
        """The rule's ruff-style documentation (Markdown), from its docstring."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        sections: dict[str, str] = {}
        current = None
        lines: list[str] = []
        for line in cls.docs().splitlines():
            if line.startswith("## "):
                if current is not None:
                    sections[current] = "\n".join(lines).strip()
                current, lines = line[3:].strip(), []
            else:
                lines.append(line)
        if current is not None:
            sections[current] = "\n".join(lines).strip()
        return sections


REQUIRED_DOC_SECTIONS = ("What it does", "Why is this expensive", "Example", "Fix")
