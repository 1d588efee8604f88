"""MLC101 missing-cost-tags: exact findings on the positive fixtures, none on
the negatives (unknown values included), and once through the real CLI."""

from __future__ import annotations

import json

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC101"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC101', 'positive/aws.tf', 31, "aws_eks_node_group.gpu[0] lacks cost tag cost-center (required-tags); its spend cannot be attributed; add it to tags or the provider's default_tags"),
    ('MLC101', 'positive/azure.tf', 7, 'azurerm_kubernetes_cluster_node_pool.gpu lacks cost tag cost-center (required-tags); its spend cannot be attributed; add it to tags'),
    ('MLC101', 'positive/gcp.tf', 13, 'google_container_cluster.train lacks cost tags team, project, cost-center (required-tags); its spend cannot be attributed; add them to resource_labels (Google default_labels do not apply to GKE)'),
    ('MLC101', 'positive/gcp.tf', 25, 'google_container_node_pool.l4 lacks cost tags team, project, cost-center (required-tags); its spend cannot be attributed; add them to node_config.resource_labels (Google default_labels do not apply to GKE; node_config.labels are Kubernetes node labels, not billing labels)'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive", cwd=BASE), CODE) == EXPECTED


@pytest.mark.parametrize("folder", ["negative"])
def test_negative_silent(folder):
    assert triples(lint_dir(BASE / folder, cwd=BASE), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, "--no-cache", cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]


def test_required_tags_configurable():
    """A custom key list: only `owner` is required, and nobody sets it."""
    got = triples(lint_dir(BASE / "negative", cwd=BASE, required_tags=["owner"]), CODE)
    assert [(p, line) for _, p, line, _ in got] == [
        ("negative/aws.tf", 18), ("negative/aws.tf", 25), ("negative/gcp.tf", 5), ("negative/gcp.tf", 18)]
    assert got[0][3].startswith("aws_instance.trainer lacks cost tag owner (required-tags)")


def test_key_normalisation():
    from mlcost_lint.rules.attribution.tag_keys import missing_keys
    assert missing_keys({"CostCenter": 1, "acme.com/Team": 1, "PROJECT": 1},
                        ["team", "project", "cost-center"]) == []
