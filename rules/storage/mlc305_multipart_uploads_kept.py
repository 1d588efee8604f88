from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.storage.buckets import buckets


class MultipartUploadsKept(Rule):
    """
    ## What it does
    Flags an S3 bucket whose lifecycle configuration (an
    `aws_s3_bucket_lifecycle_configuration`, or inline v3 `lifecycle_rule`
    blocks) has enabled rules but none with `abort_incomplete_multipart_upload`
    (`abort_incomplete_multipart_upload_days` inline). A bucket with no
    lifecycle at all is MLC303's.

    ## Why is this expensive
    Checkpoints of large models are uploaded in parts. When a job is
    preempted or killed mid-upload the parts already sent stay in the bucket,
    invisible in listings and billed as storage, until a lifecycle rule
    aborts the upload. Expiration rules do not remove them.

    ## Example
    ```hcl
    resource "aws_s3_bucket_lifecycle_configuration" "ckpt" {
      bucket = aws_s3_bucket.ckpt.id
      rule {
        id     = "expire"
        status = "Enabled"
        filter {}
        expiration { days = 30 }
      }
    }
    ```

    ## Fix
    Add an abort rule (it may share the rule):
    ```hcl
        abort_incomplete_multipart_upload { days_after_initiation = 7 }
    ```
    """

    code = "MLC305"
    name = "multipart-uploads-kept"
    level = Level.NOTE
    confidence = Confidence.HIGH
    category = Category.STORAGE
    reports_in = frozenset({Reports.CLOUD})
    summary = "S3 lifecycle does not abort incomplete multipart uploads"
    fix = "Add abort_incomplete_multipart_upload { days_after_initiation = 7 } to a lifecycle rule."

    def check(self, project, settings) -> Iterator[Finding]:
        for bucket in buckets(project):
            if bucket.cloud != "aws":
                continue
            if bucket.has_enabled_rule() is not True:
                continue
            if bucket.lifecycle_any(lambda rule: rule.aborts_multipart) is not False:
                continue
            r = bucket.resource
            lifecycle = next(lc for lc in bucket.lifecycles if lc.rules)
            owner = lifecycle.owner
            if owner is r:
                where, related = r.loc("lifecycle_rule"), []
                module_input = r.module_inputs.get("lifecycle_rule")
                what = f"the module input {module_input}" if module_input else "its inline lifecycle_rule blocks"
                hint = "abort_incomplete_multipart_upload_days = 7"
            else:
                where, related = owner.location, [Related(r.location, f"the bucket {r.address}")]
                what = owner.address
                hint = "abort_incomplete_multipart_upload { days_after_initiation = 7 }"
            yield self.finding(
                f"S3 bucket {r.address}: no enabled rule of {what} aborts incomplete multipart uploads; parts of "
                f"interrupted checkpoint uploads stay billed; add {hint} to an enabled rule",
                where, r.address,
                related=[*related, *owner.related_module_calls()],
                object_line=owner.location.line,
            )
