"""Object-storage buckets with their lifecycle and versioning, joined across
resources (MLC303, MLC304, MLC305).

S3 splits a bucket over several resources since AWS provider v4:
``aws_s3_bucket`` plus ``aws_s3_bucket_lifecycle_configuration`` and
``aws_s3_bucket_versioning`` whose ``bucket`` argument refers to it (v3
inline ``lifecycle_rule`` / ``versioning`` blocks are read too). Azure
lifecycle lives in ``azurerm_storage_management_policy`` joined by
``storage_account_id``. GCS keeps everything on ``google_storage_bucket``.

Every answer is three-valued: True, False, or None for unknown. A
configuration resource that cannot be joined to a bucket (its ``bucket`` is a
module variable without a value, or a computed value that refers to no
bucket: see ``CloudResource.references``) may belong to
any bucket of the scan, so it makes every bucket of that cloud uncertain:
the rules stay silent rather than guess.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Callable, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.rules.storage.tf_references import referenced, root_of

Tri = "bool | None"  # None: unknown


def any3(values: Iterable[bool | None]) -> bool | None:
    result: bool | None = False
    for v in values:
        if v is True:
            return True
        if v is None:
            result = None
    return result


def all3(values: Iterable[bool | None]) -> bool | None:
    result: bool | None = True
    for v in values:
        if v is False:
            return False
        if v is None:
            result = None
    return result


def _blocks(value: Any) -> list[dict] | None:
    """A nested-block value as a list of dicts; None when it is unknown."""
    if value is UNKNOWN:
        return None
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        return None
    if any(not isinstance(item, dict) for item in value):
        return None
    return value


def _present(value: Any) -> bool | None:
    """Whether a nested block is written at all."""
    blocks = _blocks(value)
    return None if blocks is None else bool(blocks)


@dataclass(slots=True)
class RuleView:
    """What one lifecycle rule does."""

    enabled: bool | None
    expires_or_moves: bool | None      # expires or transitions objects (current or noncurrent)
    expires_noncurrent: bool | None    # deletes old versions
    aborts_multipart: bool | None

    def active(self, what: bool | None) -> bool | None:
        return all3((self.enabled, what))


@dataclass(slots=True)
class Lifecycle:
    owner: CloudResource               # the configuration resource, or the bucket itself (inline)
    attr: str                          # the argument holding the rules
    rules: list[RuleView] | None       # None: the rule list is unknown (dynamic block)

    @property
    def location(self) -> Location:
        return self.owner.loc(self.attr)

    def any_rule(self, pick: Callable[[RuleView], bool | None]) -> bool | None:
        if self.rules is None:
            return None
        return any3(r.active(pick(r)) for r in self.rules)


@dataclass(slots=True)
class Bucket:
    resource: CloudResource
    cloud: str                                   # "aws" | "google" | "azure"
    lifecycles: list[Lifecycle] = field(default_factory=list)
    lifecycle_uncertain: bool = False
    autoclass: bool | None = False               # GCS Autoclass
    versioning: bool | None = False
    versioning_owner: CloudResource | None = None
    versioning_attr: str = ""
    versioning_uncertain: bool = False

    @property
    def kind(self) -> str:
        return {"aws": "S3 bucket", "google": "GCS bucket", "azure": "storage account"}[self.cloud]

    def lifecycle_any(self, pick: Callable[[RuleView], bool | None]) -> bool | None:
        if self.lifecycle_uncertain:
            return None
        return any3(lc.any_rule(pick) for lc in self.lifecycles)

    def expires_or_moves(self) -> bool | None:
        """MLC303: an enabled rule that expires or moves objects, or Autoclass."""
        return any3((self.autoclass, self.lifecycle_any(lambda r: r.expires_or_moves)))

    def expires_noncurrent(self) -> bool | None:
        return self.lifecycle_any(lambda r: r.expires_noncurrent)

    def has_enabled_rule(self) -> bool | None:
        return self.lifecycle_any(lambda r: True)


# ------------------------------------------------------------------ S3 ---

def _s3_expiration(blocks: Any, days_key: str) -> bool | None:
    items = _blocks(blocks)
    if items is None:
        return None
    results: list[bool | None] = []
    for b in items:
        days, date = b.get(days_key), b.get("date")
        if days is UNKNOWN or date is UNKNOWN:
            results.append(None)
        else:
            # expired_object_delete_marker alone removes only delete markers
            results.append((isinstance(days, (int, float)) and not isinstance(days, bool) and days > 0)
                           or (isinstance(date, str) and bool(date)))
    return any3(results)


def _s3_status(status: Any) -> bool | None:
    if status is UNKNOWN:
        return None
    return status == "Enabled"


def _s3_rule(rule: dict) -> RuleView:
    """An ``aws_s3_bucket_lifecycle_configuration`` ``rule`` block."""
    return RuleView(
        enabled=_s3_status(rule.get("status")),
        expires_or_moves=any3((_s3_expiration(rule.get("expiration"), "days"),
                               _present(rule.get("transition")),
                               _present(rule.get("noncurrent_version_expiration")),
                               _present(rule.get("noncurrent_version_transition")))),
        expires_noncurrent=_present(rule.get("noncurrent_version_expiration")),
        aborts_multipart=_present(rule.get("abort_incomplete_multipart_upload")),
    )


def _s3_inline_rule(rule: dict) -> RuleView:
    """A v3 inline ``lifecycle_rule`` block of ``aws_s3_bucket``."""
    enabled = rule.get("enabled")
    abort = rule.get("abort_incomplete_multipart_upload_days")
    return RuleView(
        enabled=None if enabled is UNKNOWN else enabled is True,
        expires_or_moves=any3((_s3_expiration(rule.get("expiration"), "days"),
                               _present(rule.get("transition")),
                               _present(rule.get("noncurrent_version_expiration")),
                               _present(rule.get("noncurrent_version_transition")))),
        expires_noncurrent=_present(rule.get("noncurrent_version_expiration")),
        aborts_multipart=None if abort is UNKNOWN else (abort is not None and abort is not False),
    )


def _rules(owner: CloudResource, attr: str, reader: Callable[[dict], RuleView]) -> Lifecycle:
    items = _blocks(owner.attrs.get(attr))
    return Lifecycle(owner, attr, None if items is None else [reader(i) for i in items])


def _join(project: Any, config: CloudResource, attr: str, target_type: str,
          targets: list[CloudResource], name_of: Callable[[CloudResource], Any],
          value_to_name: Callable[[str], str]) -> list[CloudResource] | None:
    """The buckets a configuration resource applies to; None when unknown.

    The argument's recorded reference decides (``bucket =
    aws_s3_bucket.ckpt.id``, through locals, module variables, plans). Only an
    argument that refers to no bucket resource is matched by name: a literal
    name (``bucket = "ml-ckpt"``, ``var.bucket_name`` from tfvars) has no
    reference to record, yet names a bucket of the scan by its ``bucket``
    argument (or a plan's known ``id``). A reference is never overruled by a
    name, and a name never joins a value the model could not know."""
    found = referenced(project, config, attr, (target_type,))
    if found is not None:
        return found
    value = config.attrs.get(attr)
    if not isinstance(value, str):
        return None    # a computed value that refers to no bucket of the scan, or a module variable
    wanted = value_to_name(value)
    matches = [t for t in targets if name_of(t) == wanted]
    if matches:
        return matches
    if any(not isinstance(name_of(t), str) for t in targets):
        return None    # a bucket with an unknown name may be the one
    return []          # a bucket outside the scan


def _mark(by_address: dict[int, Bucket], config: CloudResource, flag: str) -> None:
    """A configuration that cannot be joined may apply to any bucket of its deployment."""
    root = root_of(config)
    for b in by_address.values():
        if root_of(b.resource) == root:
            setattr(b, flag, True)


def _s3_name(bucket: CloudResource) -> Any:
    name = bucket.attrs.get("bucket")
    if name is None:
        name = bucket.attrs.get("id", UNKNOWN)   # plans carry the id; bucket_prefix is unknown
    return name


def _s3(project: Any, resources: list[CloudResource]) -> list[Bucket]:
    buckets = [r for r in resources if r.type == "aws_s3_bucket"]
    by_address = {id(b): Bucket(b, "aws") for b in buckets}
    for b in by_address.values():
        r = b.resource
        inline = r.attrs.get("lifecycle_rule")
        if inline is not None:
            b.lifecycles.append(_rules(r, "lifecycle_rule", _s3_inline_rule))
        versioning = _blocks(r.attrs.get("versioning"))
        if versioning is None:
            b.versioning = None
        elif versioning:
            enabled = versioning[0].get("enabled")
            b.versioning = None if enabled is UNKNOWN else enabled is True
            b.versioning_owner, b.versioning_attr = r, "versioning.enabled"

    for config in (r for r in resources if r.type == "aws_s3_bucket_lifecycle_configuration"):
        targets = _join(project, config, "bucket", "aws_s3_bucket", buckets, _s3_name, lambda v: v)
        if targets is None:
            _mark(by_address, config, "lifecycle_uncertain")
            continue
        lifecycle = _rules(config, "rule", _s3_rule)
        for t in targets:
            by_address[id(t)].lifecycles.append(lifecycle)

    for config in (r for r in resources if r.type == "aws_s3_bucket_versioning"):
        targets = _join(project, config, "bucket", "aws_s3_bucket", buckets, _s3_name, lambda v: v)
        if targets is None:
            _mark(by_address, config, "versioning_uncertain")
            continue
        status = config.get("versioning_configuration.status")
        on = None if status is UNKNOWN else status == "Enabled"
        for t in targets:
            bucket = by_address[id(t)]
            bucket.versioning = any3((bucket.versioning, on)) if on is not False else bucket.versioning
            if on is not False:
                bucket.versioning_owner, bucket.versioning_attr = config, "versioning_configuration.status"
    return list(by_address.values())


# ----------------------------------------------------------------- GCS ---

_GCS_MOVES = {"Delete", "SetStorageClass"}
_GCS_NONCURRENT_CONDITIONS = ("num_newer_versions", "days_since_noncurrent_time", "noncurrent_time_before")


def _gcs_rule(rule: dict) -> RuleView:
    actions = _blocks(rule.get("action"))
    conditions = _blocks(rule.get("condition"))
    if actions is None or conditions is None or not actions:
        return RuleView(True, None, None, None)
    kind = actions[0].get("type")
    if not isinstance(kind, str):   # UNKNOWN, or a value Terraform would reject: unknown, never a guess
        return RuleView(True, None, None, None)
    cond = conditions[0] if conditions else {}
    deletes = kind == "Delete"
    noncurrent: bool | None = False
    if deletes:
        checks: list[bool | None] = []
        for key in _GCS_NONCURRENT_CONDITIONS:
            value = cond.get(key)
            checks.append(None if value is UNKNOWN else value not in (None, ""))
        # An age rule without with_state (or with ARCHIVED/ANY) also deletes
        # noncurrent versions (rules.md, Settled questions).
        age, state = cond.get("age"), cond.get("with_state")
        if age is UNKNOWN or state is UNKNOWN:
            checks.append(None)
        else:
            checks.append(age is not None and state in (None, "", "ANY", "ARCHIVED"))
        noncurrent = any3(checks)
    return RuleView(
        enabled=True,   # GCS lifecycle rules have no on/off switch
        expires_or_moves=kind in _GCS_MOVES,
        expires_noncurrent=noncurrent,
        aborts_multipart=kind == "AbortIncompleteMultipartUpload",
    )


def _gcs(resources: list[CloudResource]) -> list[Bucket]:
    out = []
    for r in resources:
        if r.type != "google_storage_bucket":
            continue
        b = Bucket(r, "google")
        b.lifecycles.append(_rules(r, "lifecycle_rule", _gcs_rule))
        autoclass = _blocks(r.attrs.get("autoclass"))
        if autoclass is None:
            b.autoclass = None
        elif autoclass:
            enabled = autoclass[0].get("enabled")
            b.autoclass = None if enabled is UNKNOWN else enabled is True
        versioning = _blocks(r.attrs.get("versioning"))
        if versioning is None:
            b.versioning = None
        elif versioning:
            enabled = versioning[0].get("enabled")
            b.versioning = None if enabled is UNKNOWN else enabled is True
            b.versioning_owner, b.versioning_attr = r, "versioning.enabled"
        out.append(b)
    return out


# --------------------------------------------------------------- Azure ---

# Storage account kinds that support blob lifecycle management (GPv1 and
# FileStorage accounts do not).
_AZURE_LIFECYCLE_KINDS = {"StorageV2", "BlobStorage", "BlockBlobStorage"}


def _azure_days(block: dict, prefixes: tuple[str, ...]) -> bool | None:
    """Whether an action block sets any delete/tier action (azurerm writes -1 for unset)."""
    checks: list[bool | None] = []
    for key, value in block.items():
        if key.startswith(prefixes):
            checks.append(None if value is UNKNOWN else value not in (None, -1))
    return any3(checks)


def _azure_rule(rule: dict) -> RuleView:
    enabled = rule.get("enabled")
    actions = _blocks(rule.get("actions"))
    if actions is None:
        return RuleView(None if enabled is UNKNOWN else enabled is True, None, None, None)
    act = actions[0] if actions else {}
    base = _blocks(act.get("base_blob"))
    version = _blocks(act.get("version"))
    moves = None if base is None else any3(_azure_days(b, ("delete_after", "tier_to")) for b in base)
    old_versions = None if version is None else any3(
        _azure_days(v, ("delete_after",)) for v in version)
    return RuleView(
        enabled=None if enabled is UNKNOWN else enabled is True,
        expires_or_moves=moves,
        expires_noncurrent=old_versions,
        aborts_multipart=False,
    )


def _azure_name(account: CloudResource) -> Any:
    return account.attrs.get("name", UNKNOWN)


def _azure(project: Any, resources: list[CloudResource]) -> list[Bucket]:
    accounts = [r for r in resources if r.type == "azurerm_storage_account"]
    by_address: dict[int, Bucket] = {}
    for r in accounts:
        kind = r.attrs.get("account_kind", "StorageV2")
        b = Bucket(r, "azure")
        if kind is UNKNOWN:
            b.lifecycle_uncertain = True
        elif not isinstance(kind, str) or kind not in _AZURE_LIFECYCLE_KINDS:
            continue  # a kind that is not a string is not a valid account kind
        props = _blocks(r.attrs.get("blob_properties"))
        if props is None:
            b.versioning = None
        elif props:
            enabled = props[0].get("versioning_enabled")
            b.versioning = None if enabled is UNKNOWN else enabled is True
            b.versioning_owner, b.versioning_attr = r, "blob_properties.versioning_enabled"
        by_address[id(r)] = b
    for policy in (r for r in resources if r.type == "azurerm_storage_management_policy"):
        targets = _join(project, policy, "storage_account_id", "azurerm_storage_account", accounts,
                        _azure_name, lambda v: v.rstrip("/").rsplit("/", 1)[-1])
        if targets is None:
            _mark(by_address, policy, "lifecycle_uncertain")
            continue
        lifecycle = _rules(policy, "rule", _azure_rule)
        for t in targets:
            if id(t) in by_address:
                by_address[id(t)].lifecycles.append(lifecycle)
    return list(by_address.values())


# ----------------------------------------------------------------- all ---

_cache: dict[int, tuple[Any, list[Bucket]]] = {}


def buckets(project: Any) -> list[Bucket]:
    """Every managed bucket / storage account of the scan with its lifecycle
    and versioning, in model order. Computed once per project."""
    hit = _cache.get(id(project))
    if hit is not None and hit[0] is project:
        return hit[1]
    resources = [r for r in project.terraform.resources if r.mode == "managed"]
    out = [*_s3(project, resources), *_gcs(resources), *_azure(project, resources)]
    _cache.clear()
    _cache[id(project)] = (project, out)
    return out
