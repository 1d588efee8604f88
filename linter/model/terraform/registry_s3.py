"""terraform-aws-modules/s3-bucket/aws, read from the call's inputs.

The module is not downloaded, so its bucket is modelled from the inputs
that decide storage cost (rules.md, "Module sources are matched exactly"):
``create_bucket`` (and ``is_directory_bucket``, whose S3 Express buckets are
not modelled), ``versioning``, ``lifecycle_rule`` and ``tags``. The bucket
carries them in the v3 inline shape that the storage rules already read
(``versioning[0].enabled``, ``lifecycle_rule[*]``), located at the caller's
arguments, so every finding lands where the caller can fix it.

The module's own semantics (its main.tf): versioning is configured only when
the ``versioning`` map is not empty; then ``enabled`` decides, else
``status``, else it is "Enabled". A lifecycle rule is on when ``enabled`` is
true or ``status`` is "Enabled"; ``expiration`` and
``noncurrent_version_expiration`` are maps, ``transition`` and
``noncurrent_version_transition`` lists (or one map).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlcost_lint.model.core import UNKNOWN

if TYPE_CHECKING:   # the call context lives in registry.py
    from mlcost_lint.model.cloud import CloudResource
    from mlcost_lint.model.terraform.registry import _Ctx

_TRUE_STRINGS = {"true": True, "false": False, "1": True, "0": False}


def _bool(value: Any) -> Any:
    """Terraform's tobool over a map(string) input: True/False/UNKNOWN/None."""
    if value is UNKNOWN or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _TRUE_STRINGS.get(value.strip().lower())
    return None


def versioning_enabled(versioning: Any) -> Any:
    """True / False (configured and suspended) / None (not configured) / UNKNOWN."""
    if versioning is UNKNOWN:
        return UNKNOWN
    if not isinstance(versioning, dict) or not versioning:
        return None if versioning in (None, {}) else UNKNOWN
    if "enabled" in versioning:
        return _bool(versioning["enabled"]) if versioning["enabled"] is not None else UNKNOWN
    status = versioning.get("status")
    if status is UNKNOWN:
        return UNKNOWN
    if status is not None:
        as_bool = _bool(status)
        if as_bool is not None:
            return as_bool
        return isinstance(status, str) and status.strip().lower() == "enabled"
    return True


def _blocks(value: Any) -> Any:
    """A map or a list of maps as a list of blocks (the module accepts both)."""
    if value is None:
        return []
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return value
    return UNKNOWN


def _rule(rule: Any) -> Any:
    """One ``lifecycle_rule`` entry in the inline ``lifecycle_rule`` shape."""
    if not isinstance(rule, dict):
        return UNKNOWN
    if "enabled" in rule and rule["enabled"] is not None:
        enabled = _bool(rule["enabled"])
    else:
        status = rule.get("status")
        enabled = UNKNOWN if status is UNKNOWN else (
            _bool(status) if _bool(status) is not None
            else isinstance(status, str) and status.strip().lower() == "enabled")
    noncurrent = rule.get("noncurrent_version_expiration")
    return {
        "id": rule.get("id"),
        "enabled": UNKNOWN if enabled is None else enabled,
        "expiration": _blocks(rule.get("expiration")),
        "transition": _blocks(rule.get("transition")),
        "noncurrent_version_expiration": _blocks(noncurrent),
        "noncurrent_version_transition": _blocks(rule.get("noncurrent_version_transition")),
        "abort_incomplete_multipart_upload_days": rule.get("abort_incomplete_multipart_upload_days"),
    }


def s3_bucket(ctx: "_Ctx") -> list["CloudResource"]:
    from mlcost_lint.model.terraform.registry import _tags

    if ctx.get("create_bucket", True) is False or ctx.get("is_directory_bucket", False) is True:
        return []
    config = ctx.providers.get("aws")
    tags = ctx.get("tags", {})
    attrs: dict[str, Any] = {
        "bucket": ctx.get("bucket", UNKNOWN if "bucket_prefix" in ctx.arg_exprs else None),
        "tags": tags,
    }
    locs = {"bucket": ctx.arg_location("bucket"), "tags": ctx.arg_location("tags")}
    enabled = versioning_enabled(ctx.get("versioning", {}))
    if enabled is not None:
        attrs["versioning"] = [{"enabled": enabled}]
        locs["versioning"] = locs["versioning.enabled"] = ctx.arg_location("versioning")
    rules = ctx.get("lifecycle_rule", [])
    if rules is UNKNOWN or not isinstance(rules, list):
        attrs["lifecycle_rule"] = UNKNOWN
    elif rules:
        attrs["lifecycle_rule"] = [_rule(r) for r in rules]
    if "lifecycle_rule" in attrs:
        locs["lifecycle_rule"] = ctx.arg_location("lifecycle_rule")
    bucket = ctx.resource("aws_s3_bucket", "this", ctx.prefix + ".aws_s3_bucket.this[0]",
                          attrs, locs, "aws", config, ctx.decl.location)
    bucket.module_inputs = {"lifecycle_rule": "lifecycle_rule", "versioning": "versioning", "tags": "tags"}
    bucket.tags = _tags(config.default_tags if config is not None else None, tags)
    return [bucket]
