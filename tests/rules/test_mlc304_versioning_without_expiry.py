"""MLC304 versioning-without-expiry: exact findings on the positive fixtures, none on
the negatives (unknown values included), and once through the real CLI."""

from __future__ import annotations

import json

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC304"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC304', 'positive/azure.tf', 9, 'storage account azurerm_storage_account.ml has versioning enabled but no lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add a management policy rule with actions.version.delete_after_days_since_creation'),
    ('MLC304', 'positive/gcs.tf', 6, 'GCS bucket google_storage_bucket.models has versioning enabled but no lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add a Delete lifecycle_rule on num_newer_versions or days_since_noncurrent_time'),
    ('MLC304', 'positive/s3.tf', 13, 'S3 bucket aws_s3_bucket.ckpt has versioning enabled by aws_s3_bucket_versioning.ckpt but no lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add an enabled lifecycle rule with noncurrent_version_expiration (noncurrent_days)'),
    ('MLC304', 'positive/s3_module.tf', 4, "S3 bucket module.versioned_ckpt.aws_s3_bucket.this[0] has versioning enabled but no lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add noncurrent_version_expiration (days) to an enabled rule of the module's lifecycle_rule input"),
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


# ---------------------------------------------------------------------------
# Joins through CloudResource.references (fixtures/terraform/references): the
# buckets' names are known only after apply, so before references were in the
# model these joins failed (the lifecycle/versioning resources could belong to
# any bucket and every rule stayed silent on these folders).
REFS = FIXTURES / "terraform" / "references"

REFS_EXPECTED = [
    (20, 'S3 bucket aws_s3_bucket.checkpoints has versioning enabled by aws_s3_bucket_versioning.checkpoints but no lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add an enabled lifecycle rule with noncurrent_version_expiration (noncurrent_days)'),
    (40, 'S3 bucket aws_s3_bucket.shards["eval"] has versioning enabled by aws_s3_bucket_versioning.shards["eval"] but no lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add an enabled lifecycle rule with noncurrent_version_expiration (noncurrent_days)'),
]


def test_versioning_and_lifecycle_joined_across_module_boundary():
    # shards["train"] gets noncurrent_days = 7 through its module instance: not flagged
    assert triples(lint_dir(REFS / "modules", cwd=REFS), CODE) == [
        (CODE, "modules/main.tf", line, message) for line, message in REFS_EXPECTED]


def test_versioning_and_lifecycle_joined_in_plan_json():
    assert triples(lint_dir(REFS / "plan", cwd=REFS), CODE) == [
        (CODE, "plan/tfplan.json", 86, REFS_EXPECTED[0][1]),
        (CODE, "plan/tfplan.json", 106, REFS_EXPECTED[1][1]),
    ]
