"""MLC501 cross-region-data-path: every fixture case, exact code, path, line and message; negatives silent;
once through the real CLI."""

from __future__ import annotations

import pytest

from mlc_testing import FIXTURES, cli_json_findings, fixture_case_names, lint_dir, triples

CODE = "MLC501"
BASE = FIXTURES / "rules" / CODE

EXPECTED = {
    'positive/gcs_multi_region': [
        ('MLC501', 'positive/gcs_multi_region/k8s/job.yaml', 15, 'Job vit-pretrain in us-central1 (nodeSelector topology.kubernetes.io/region=us-central1) reads gs://acme-imagenet-eu/train, whose bucket is in EU (google_storage_bucket.imagenet): every byte crosses regions; use a bucket in us-central1 or run the job in EU'),
    ],
    'positive/s3_other_region': [
        ('MLC501', 'positive/s3_other_region/sft.yaml', 2, 'Job sft in us-east-1 (aws_eks_node_group.gpu) reads s3://acme-datasets-eu/chat/v3/, whose bucket is in eu-west-1 (aws_s3_bucket.datasets): every byte crosses regions; use a bucket in us-east-1 or run the job in eu-west-1'),
    ],
    'negative/same_region': [
    ],
    'negative/unknown_compute_region': [
    ],
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_fixture(case):
    result = lint_dir(BASE / case, cwd=BASE)
    assert triples(result, CODE) == EXPECTED[case]
    assert result.project.links.errors == []


def test_every_fixture_case_is_listed():
    assert fixture_case_names(BASE) == sorted(EXPECTED)


def test_cli_json():
    case = next(c for c in sorted(EXPECTED) if c.startswith("positive/"))
    res, got = cli_json_findings(case, CODE, BASE)
    assert res.code == 1, res.err
    assert got == EXPECTED[case]
