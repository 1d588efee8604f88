"""MLC305 multipart-uploads-kept: exact findings on the positive fixtures, none on
the negatives (unknown values included), and once through the real CLI."""

from __future__ import annotations

import json

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC305"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC305', 'positive/main.tf', 9, 'S3 bucket aws_s3_bucket.ckpt: no enabled rule of aws_s3_bucket_lifecycle_configuration.ckpt aborts incomplete multipart uploads; parts of interrupted checkpoint uploads stay billed; add abort_incomplete_multipart_upload { days_after_initiation = 7 } to an enabled rule'),
    ('MLC305', 'positive/main.tf', 29, 'S3 bucket aws_s3_bucket.legacy: no enabled rule of its inline lifecycle_rule blocks aborts incomplete multipart uploads; parts of interrupted checkpoint uploads stay billed; add abort_incomplete_multipart_upload_days = 7 to an enabled rule'),
    ('MLC305', 'positive/s3_module.tf', 4, 'S3 bucket module.ckpt.aws_s3_bucket.this[0]: no enabled rule of the module input lifecycle_rule aborts incomplete multipart uploads; parts of interrupted checkpoint uploads stay billed; add abort_incomplete_multipart_upload_days = 7 to an enabled rule'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive", cwd=BASE), CODE) == EXPECTED


@pytest.mark.parametrize("folder", ["negative"])
def test_negative_silent(folder):
    assert triples(lint_dir(BASE / folder, cwd=BASE), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, "--no-cache", "--fail-on", "note", cwd=BASE)
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

REFS_MESSAGE = 'S3 bucket aws_s3_bucket.checkpoints: no enabled rule of module.checkpoint_lifecycle.aws_s3_bucket_lifecycle_configuration.this aborts incomplete multipart uploads; parts of interrupted checkpoint uploads stay billed; add abort_incomplete_multipart_upload { days_after_initiation = 7 } to an enabled rule'


def test_lifecycle_joined_across_module_boundary():
    assert triples(lint_dir(REFS / "modules", cwd=REFS), CODE) == [
        (CODE, "modules/modules/lifecycle/main.tf", 19, REFS_MESSAGE)]


def test_lifecycle_joined_in_plan_json():
    assert triples(lint_dir(REFS / "plan", cwd=REFS), CODE) == [(CODE, "plan/tfplan.json", 136, REFS_MESSAGE)]
