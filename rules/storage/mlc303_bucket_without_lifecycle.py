from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.storage.buckets import buckets

# What to add, per cloud: the message names the resource the user writes.
_FIX = {
    "aws": "add an aws_s3_bucket_lifecycle_configuration with an enabled rule that expires or "
           "transitions objects",
    "google": "add a lifecycle_rule (Delete or SetStorageClass) or enable autoclass",
    "azure": "add an azurerm_storage_management_policy with an enabled rule that deletes or "
             "tiers base blobs",
}


def _fix(r, cloud: str) -> str:
    module_input = r.module_inputs.get("lifecycle_rule")
    if module_input:
        return f"pass {module_input} to the module with an enabled rule that expires or transitions objects"
    return _FIX[cloud]


class BucketWithoutLifecycle(Rule):
    """
    ## What it does
    Flags an object storage bucket with no lifecycle rule that expires objects
    or moves them to a colder storage class: an S3 bucket without an enabled
    rule in `aws_s3_bucket_lifecycle_configuration` (or an inline v3
    `lifecycle_rule`), a GCS bucket without a `Delete`/`SetStorageClass`
    `lifecycle_rule` and without `autoclass`, an Azure storage account
    (StorageV2/BlobStorage/BlockBlobStorage) without an
    `azurerm_storage_management_policy` that deletes or tiers base blobs.
    A rule limited to a prefix counts; a disabled rule does not.

    ## Why is this expensive
    Training buckets fill with checkpoints, shards and logs that nobody reads
    after the run. Without a lifecycle rule every byte stays in the hottest
    class forever; a 70B checkpoint is about 1 TB with optimizer state.

    ## Example
    ```hcl
    resource "aws_s3_bucket" "checkpoints" {
      bucket = "acme-llm-checkpoints"
    }
    ```

    ## Fix
    ```hcl
    resource "aws_s3_bucket_lifecycle_configuration" "checkpoints" {
      bucket = aws_s3_bucket.checkpoints.id
      rule {
        id     = "expire-checkpoints"
        status = "Enabled"
        filter { prefix = "checkpoints/" }
        expiration { days = 30 }
      }
    }
    ```
    """

    code = "MLC303"
    name = "bucket-without-lifecycle"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.STORAGE
    reports_in = frozenset({Reports.CLOUD})
    summary = "Bucket has no lifecycle rule that expires or moves objects"
    fix = "Add a lifecycle rule that expires old objects or moves them to a colder class."

    def check(self, project, settings) -> Iterator[Finding]:
        for bucket in buckets(project):
            if bucket.expires_or_moves() is not False:
                continue
            r = bucket.resource
            related = [Related(lc.location, f"{lc.owner.address}: no enabled rule expires or moves objects")
                       for lc in bucket.lifecycles if lc.owner is not r]
            if bucket.lifecycles and any(lc.rules for lc in bucket.lifecycles):
                what = "has no enabled lifecycle rule that expires objects or moves them to a colder class"
            else:
                what = "has no lifecycle rule"
            yield self.finding(
                f"{bucket.kind} {r.address} {what}; objects are kept in the hottest class forever; "
                f"{_fix(r, bucket.cloud)}",
                r.location, r.address,
                related=[*related, *r.related_module_calls()],
                object_line=r.location.line,
            )
