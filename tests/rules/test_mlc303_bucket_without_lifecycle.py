"""MLC303 bucket-without-lifecycle: exact findings on the positive fixtures, none on
the negatives (unknown values included), and once through the real CLI."""

from __future__ import annotations

import json

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC303"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC303', 'positive/azure.tf', 1, 'storage account azurerm_storage_account.training has no lifecycle rule; objects are kept in the hottest class forever; add an azurerm_storage_management_policy with an enabled rule that deletes or tiers base blobs'),
    ('MLC303', 'positive/gcs.tf', 1, 'GCS bucket google_storage_bucket.artifacts has no lifecycle rule; objects are kept in the hottest class forever; add a lifecycle_rule (Delete or SetStorageClass) or enable autoclass'),
    ('MLC303', 'positive/s3.tf', 6, 'S3 bucket aws_s3_bucket.checkpoints has no lifecycle rule; objects are kept in the hottest class forever; add an aws_s3_bucket_lifecycle_configuration with an enabled rule that expires or transitions objects'),
    ('MLC303', 'positive/s3.tf', 18, 'S3 bucket aws_s3_bucket.datasets has no enabled lifecycle rule that expires objects or moves them to a colder class; objects are kept in the hottest class forever; add an aws_s3_bucket_lifecycle_configuration with an enabled rule that expires or transitions objects'),
    # terraform-aws-modules/s3-bucket/aws: the bucket from the call's inputs, at the call
    ('MLC303', 'positive/s3_module.tf', 1, 'S3 bucket module.scratch_bucket.aws_s3_bucket.this[0] has no lifecycle rule; objects are kept in the hottest class forever; pass lifecycle_rule to the module with an enabled rule that expires or transitions objects'),
    ('MLC303', 'positive/s3_module.tf', 6, 'S3 bucket module.disabled_rule_bucket.aws_s3_bucket.this[0] has no enabled lifecycle rule that expires objects or moves them to a colder class; objects are kept in the hottest class forever; pass lifecycle_rule to the module with an enabled rule that expires or transitions objects'),
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


def test_unresolved_lifecycle_target_is_silent_only_in_its_own_deployment():
    """negative/unknown-target holds a lifecycle for var.bucket_id: its bucket is
    not flagged, but buckets of other roots in the same scan still are."""
    got = triples(lint_dir(BASE, cwd=BASE.parent), CODE)
    assert [p for _, p, _, _ in got] == ["MLC303/positive/azure.tf", "MLC303/positive/gcs.tf",
                                         "MLC303/positive/s3.tf", "MLC303/positive/s3.tf",
                                         "MLC303/positive/s3_module.tf", "MLC303/positive/s3_module.tf"]


# ---------------------------------------------------------------------------
# Joins through CloudResource.references (fixtures/terraform/references): the
# buckets' names are known only after apply, so before references were in the
# model these joins failed (the lifecycle/versioning resources could belong to
# any bucket and every rule stayed silent on these folders).
REFS = FIXTURES / "terraform" / "references"


def test_lifecycle_joined_across_module_boundary_and_each_value():
    assert triples(lint_dir(REFS / "modules", cwd=REFS), CODE) == [
        ('MLC303', 'modules/main.tf', 13, 'S3 bucket aws_s3_bucket.datasets has no lifecycle rule; objects are kept in the hottest class forever; add an aws_s3_bucket_lifecycle_configuration with an enabled rule that expires or transitions objects'),
    ]


def test_lifecycle_joined_in_plan_json():
    assert triples(lint_dir(REFS / "plan", cwd=REFS), CODE) == [
        ('MLC303', 'plan/tfplan.json', 23, 'S3 bucket aws_s3_bucket.datasets has no lifecycle rule; objects are kept in the hottest class forever; add an aws_s3_bucket_lifecycle_configuration with an enabled rule that expires or transitions objects'),
    ]


def test_lifecycle_of_a_data_source_bucket_covers_no_bucket_of_the_scan():
    assert triples(lint_dir(REFS / "external", cwd=REFS), CODE) == [
        ('MLC303', 'external/main.tf', 26, 'S3 bucket aws_s3_bucket.scratch has no lifecycle rule; objects are kept in the hottest class forever; add an aws_s3_bucket_lifecycle_configuration with an enabled rule that expires or transitions objects'),
    ]


def test_cli_json_plan():
    result = run_cli("plan", "--format", "json", "--select", CODE, "--no-cache", cwd=REFS)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [("MLC303", "plan/tfplan.json", 23)]
