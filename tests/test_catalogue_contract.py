"""The public rule codes are a contract (rules.md): each code keeps its name,
level and category, every rule module carries the four doc sections, and the
engine finds them all without a hand-kept list."""

from __future__ import annotations

import pytest

from mlcost_lint.engine import all_rules
from mlcost_lint.rule import REQUIRED_DOC_SECTIONS, Level

# code -> (name, level) as published in the catalogue; never edit a row, only add.
CATALOGUE = {
    "MLC001": ("parse-error", Level.ERROR),
    "MLC002": ("unused-suppression", Level.NOTE),
    "MLC101": ("missing-cost-tags", Level.WARNING),
    "MLC102": ("missing-cost-labels", Level.WARNING),
    "MLC201": ("oversized-gpu", Level.WARNING),
    "MLC202": ("predicted-gpu-oom", Level.WARNING),
    "MLC203": ("idle-gpu-capacity", Level.WARNING),
    "MLC204": ("gpu-job-without-deadline", Level.WARNING),
    "MLC205": ("gpu-not-released", Level.WARNING),
    "MLC206": ("unbounded-gpu-retries", Level.WARNING),
    "MLC207": ("spot-without-checkpointing", Level.WARNING),
    "MLC208": ("spot-eligible-gpu", Level.NOTE),
    "MLC301": ("no-checkpoint-cleanup", Level.WARNING),
    "MLC302": ("checkpoint-too-frequent", Level.WARNING),
    "MLC303": ("bucket-without-lifecycle", Level.WARNING),
    "MLC304": ("versioning-without-expiry", Level.WARNING),
    "MLC305": ("multipart-uploads-kept", Level.NOTE),
    "MLC401": ("no-log-retention", Level.WARNING),
    "MLC402": ("verbose-training-logs", Level.WARNING),
    "MLC403": ("debug-flags-in-training", Level.WARNING),
    "MLC501": ("cross-region-data-path", Level.WARNING),
    "MLC502": ("multi-node-without-rdma", Level.WARNING),
    "MLC601": ("no-mixed-precision", Level.WARNING),
    "MLC602": ("dataloader-starvation", Level.WARNING),
    "MLC603": ("missing-shm-volume", Level.WARNING),
    "MLC701": ("no-budget-guardrail", Level.NOTE),
    "MLC702": ("policy-violation", Level.ERROR),
}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_matches_catalogue_and_has_docs(rule):
    assert rule.code in CATALOGUE, f"{rule.code} is not in the published catalogue"
    assert (rule.name, rule.level) == CATALOGUE[rule.code]
    sections = rule.doc_sections()
    for section in REQUIRED_DOC_SECTIONS:
        assert sections.get(section), f"{rule.code} docs lack '## {section}'"
    assert "```" in sections["Example"], f"{rule.code} example has no code block"
    assert rule.summary and len(rule.summary) <= 120
    assert rule.fix, f"{rule.code} has no one-line fix hint"
    module = rule.__module__.rsplit(".", 1)[-1]
    assert module.startswith(rule.code.lower() + "_"), module


def test_codes_and_names_unique():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
