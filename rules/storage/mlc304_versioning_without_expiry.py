from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.storage.buckets import buckets

_FIX = {
    "aws": "add an enabled lifecycle rule with noncurrent_version_expiration (noncurrent_days)",
    "google": "add a Delete lifecycle_rule on num_newer_versions or days_since_noncurrent_time",
    "azure": "add a management policy rule with actions.version.delete_after_days_since_creation",
}


def _fix(r, cloud: str) -> str:
    module_input = r.module_inputs.get("lifecycle_rule")
    if module_input:
        return (f"add noncurrent_version_expiration (days) to an enabled rule of the module's "
                f"{module_input} input")
    return _FIX[cloud]


class VersioningWithoutExpiry(Rule):
    """
    ## What it does
    Flags a bucket with versioning on whose old versions never expire: S3
    versioning `Enabled` (`aws_s3_bucket_versioning` or inline `versioning`)
    without an enabled lifecycle rule carrying `noncurrent_version_expiration`;
    GCS `versioning { enabled = true }` without a `Delete` lifecycle rule on
    `num_newer_versions`, `days_since_noncurrent_time` (or an `age` rule
    without `with_state = "LIVE"`, which deletes old versions too); an Azure
    storage account with `blob_properties.versioning_enabled` and no
    management policy rule deleting versions.

    ## Why is this expensive
    Checkpoint jobs overwrite the same keys (`last.ckpt`, `checkpoint-latest/`)
    again and again. With versioning every overwrite keeps the previous
    object as a billed noncurrent version, so storage grows with every save
    of every run, invisibly: the bucket listing shows only the latest.

    ## Example
    ```hcl
    resource "aws_s3_bucket_versioning" "ckpt" {
      bucket = aws_s3_bucket.ckpt.id
      versioning_configuration { status = "Enabled" }
    }
    ```

    ## Fix
    ```hcl
    resource "aws_s3_bucket_lifecycle_configuration" "ckpt" {
      bucket = aws_s3_bucket.ckpt.id
      rule {
        id     = "old-versions"
        status = "Enabled"
        filter {}
        noncurrent_version_expiration { noncurrent_days = 7 }
      }
    }
    ```
    """

    code = "MLC304"
    name = "versioning-without-expiry"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.STORAGE
    reports_in = frozenset({Reports.CLOUD})
    summary = "Bucket versioning is on but old versions never expire"
    fix = "Add a lifecycle rule that expires noncurrent versions."

    def check(self, project, settings) -> Iterator[Finding]:
        for bucket in buckets(project):
            if bucket.versioning is not True or bucket.versioning_owner is None:
                continue
            if bucket.expires_noncurrent() is not False:
                continue
            r = bucket.resource
            owner = bucket.versioning_owner
            related = []
            if owner is not r:
                related.append(Related(r.location, f"the bucket {r.address}"))
            yield self.finding(
                f"{bucket.kind} {r.address} has versioning enabled"
                f"{f' by {owner.address}' if owner is not r else ''} but no lifecycle rule expires "
                f"noncurrent versions; every overwritten object is billed forever; {_fix(r, bucket.cloud)}",
                owner.loc(bucket.versioning_attr), r.address,
                related=[*related, *owner.related_module_calls()],
                object_line=owner.location.line,
            )
