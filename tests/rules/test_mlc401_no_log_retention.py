"""MLC401 no-log-retention: exact findings on the positive fixtures, none on
the negatives (unknown values included), and once through the real CLI."""

from __future__ import annotations

import json

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC401"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC401', 'positive/aws.tf', 5, 'aws_cloudwatch_log_group.sagemaker has no retention_in_days: its logs never expire and are billed forever; set retention_in_days (at most 365, max-log-retention-days)'),
    ('MLC401', 'positive/aws.tf', 11, 'aws_cloudwatch_log_group.batch sets retention_in_days = 0, which keeps logs forever; set a retention of at most 365 days (max-log-retention-days)'),
    ('MLC401', 'positive/aws.tf', 16, 'aws_cloudwatch_log_group.audit keeps logs 3653 days (retention_in_days), above max-log-retention-days 365; lower it'),
    ('MLC401', 'positive/aws.tf', 22, 'aws_eks_cluster.research sends control-plane logs (api, audit, authenticator) to CloudWatch but no aws_cloudwatch_log_group named /aws/eks/research/cluster is defined, so EKS creates one that never expires; define it with retention_in_days (at most 365, max-log-retention-days)'),
    ('MLC401', 'positive/eks-module/main.tf', 9, 'module.eks.aws_cloudwatch_log_group.this[0] sets module input cloudwatch_log_group_retention_in_days = 0, which keeps logs forever; set a retention of at most 365 days (max-log-retention-days)'),
    ('MLC401', 'positive/gcp_azure.tf', 4, 'google_logging_project_bucket_config.training keeps logs 3650 days (retention_days), above max-log-retention-days 365; lower it'),
    ('MLC401', 'positive/gcp_azure.tf', 13, 'azurerm_log_analytics_workspace.aks keeps logs 730 days (retention_in_days), above max-log-retention-days 365; lower it'),
    ('MLC401', 'positive/pcluster-config.yaml', 25, 'ParallelCluster config pcluster-config.yaml keeps logs 3653 days (RetentionInDays), above max-log-retention-days 365; lower it'),
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


def test_threshold_configurable():
    got = triples(lint_dir(BASE / "negative", cwd=BASE, max_log_retention_days=60), CODE)
    assert [(p, line) for _, p, line, _ in got] == [
        ("negative/aws.tf", 39), ("negative/eks-module/main.tf", 2), ("negative/gcp_azure.tf", 12),
        # ParallelCluster's default retention is 180 days (the config's first key)
        ("negative/pcluster/default-retention.yaml", 2)]
