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


TAGS = ["team", "project", "cost-center"]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive", cwd=BASE, required_tags=TAGS), CODE) == EXPECTED


@pytest.mark.parametrize("folder", ["negative"])
def test_negative_silent(folder):
    assert triples(lint_dir(BASE / folder, cwd=BASE, required_tags=TAGS), CODE) == []


def test_off_by_default_with_one_summary_line():
    """v2 default set: without required-tags the rule does not run, and the text summary says so once."""
    assert triples(lint_dir(BASE / "positive", cwd=BASE), CODE) == []
    result = run_cli("positive", "--no-cache", cwd=BASE)
    assert "MLC101" not in result.out.split("Found")[0]
    assert result.out.count("Cost-tag rules MLC101/MLC102 are off: set required-tags") == 1


def test_selected_without_required_tags_uses_the_suggested_keys(tmp_path):
    result = run_cli("positive/aws.tf", "--select", CODE, "--no-cache", cwd=BASE)
    assert result.code == 1, result.err
    assert ("positive/aws.tf:31:3: MLC101 [warning] aws_eks_node_group.gpu[0] lacks cost tag cost-center "
            "(suggested keys); its spend cannot be attributed; add it to tags or the provider's default_tags"
            in result.out)
    assert "MLC101/MLC102 check the suggested keys team, project, cost-center" in result.out


def test_required_tags_in_the_config_turns_it_on(tmp_path):
    (tmp_path / "main.tf").write_text((BASE / "positive" / "aws.tf").read_text())
    (tmp_path / ".mlcost-lint.toml").write_text('required-tags = ["owner"]\n')
    result = run_cli(".", "--format", "json", "--no-cache", cwd=tmp_path)
    data = json.loads(result.out)
    messages = [f["message"] for f in data["findings"] if f["code"] == CODE]
    assert messages and all("lacks cost tag owner (required-tags)" in m for m in messages)
    text = run_cli(".", "--no-cache", cwd=tmp_path).out
    assert "are off" not in text and "suggested keys" not in text


def test_gke_module_caller_is_told_the_inputs(tmp_path):
    (tmp_path / "main.tf").write_text('''
module "gke" {
  source            = "terraform-google-modules/kubernetes-engine/google"
  project_id        = "p"
  name              = "train"
  region            = "us-central1"
  network           = "n"
  subnetwork        = "s"
  ip_range_pods     = "pods"
  ip_range_services = "svc"
  node_pools = [{ name = "l4", machine_type = "g2-standard-8", accelerator_type = "nvidia-l4", accelerator_count = 1 }]
}
''')
    result = lint_dir(tmp_path / "main.tf", cwd=tmp_path, required_tags=["team"])
    found = triples(result, CODE)
    assert ('MLC101', 'main.tf', 2, 'module.gke.google_container_cluster.primary lacks cost tag team (required-tags); '
            'its spend cannot be attributed; set the module input cluster_resource_labels') in found
    assert any(m.endswith("set the module input node_pools_resource_labels or cluster_resource_labels")
               for _, _, _, m in found)


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
