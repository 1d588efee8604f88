"""MLC701 and module calls: self-managed EKS node groups are GPU capacity; a
budget module call may hold the budget."""

from __future__ import annotations

from mlc_testing import FIXTURES, lint_dir, triples

BASE = FIXTURES / "rules" / "MLC701"


def test_self_managed_gpu_group_needs_a_budget():
    result = lint_dir(BASE / "self_managed", cwd=BASE, require_budget=True)
    assert [(c, p, line) for c, p, line, _ in triples(result, "MLC701")] == [("MLC701", "self_managed/main.tf", 13)]
    assert "p4d.24xlarge" in triples(result, "MLC701")[0][3]


def test_budget_in_a_module_call_is_not_second_guessed():
    result = lint_dir(BASE / "budget_module", cwd=BASE, require_budget=True)
    assert triples(result, "MLC701") == []
    assert [(c.address, c.source) for c in result.project.terraform.module_calls] == [
        ("module.eks", "terraform-aws-modules/eks/aws"), ("module.budgets", "cloudposse/budgets/aws")]
