"""MLC701 no-budget-guardrail: exact findings on the positive fixtures, none on
the negatives (unknown values included), and once through the real CLI."""

from __future__ import annotations

import json

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC701"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC701', 'positive/compute.tf', 5, 'aws_launch_template.gpu defines GPU capacity (g5.12xlarge (4 x A10G)) and 1 more GPU resource but the scan has no budget with an alert; add an aws_budgets_budget with a notification, a google_billing_budget with threshold_rules or an azurerm_consumption_budget_* with a notification'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive", cwd=BASE, require_budget=True), CODE) == EXPECTED


@pytest.mark.parametrize("folder", ["negative/with-budget", "negative/cpu-only"])
def test_negative_silent(folder):
    assert triples(lint_dir(BASE / folder, cwd=BASE, require_budget=True), CODE) == []


def test_opt_in(tmp_path):
    """v2 default set: off unless require-budget = true or selected."""
    assert triples(lint_dir(BASE / "positive", cwd=BASE), CODE) == []
    (tmp_path / "compute.tf").write_text((BASE / "positive" / "compute.tf").read_text())
    assert CODE not in run_cli(".", "--no-cache", "--fail-on", "note", cwd=tmp_path).out
    (tmp_path / ".mlcost-lint.toml").write_text("require-budget = true\n")
    assert "compute.tf:5:1: MLC701 [note]" in run_cli(".", "--no-cache", cwd=tmp_path).out


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, "--no-cache", "--fail-on", "note", cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]
