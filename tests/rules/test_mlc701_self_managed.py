"""MLC701 sees GPU capacity declared as a self-managed EKS node group."""

from __future__ import annotations

from mlc_testing import FIXTURES, lint_dir, triples

BASE = FIXTURES / "rules" / "MLC701"


def test_self_managed_gpu_group_needs_a_budget():
    result = lint_dir(BASE / "self_managed", cwd=BASE)
    assert [(c, p, line) for c, p, line, _ in triples(result, "MLC701")] == [("MLC701", "self_managed/main.tf", 13)]
    assert "p4d.24xlarge" in triples(result, "MLC701")[0][3]
