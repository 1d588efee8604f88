"""Effective cost tags/labels of a resource, after provider defaults.

AWS: ``tags`` over the provider's ``default_tags`` (the resource wins);
``aws_autoscaling_group`` carries ``tag`` blocks and takes no default tags.
Google: ``labels`` over ``default_labels``; GKE clusters use
``resource_labels`` and node pools ``node_config.resource_labels`` plus their
cluster's, with no provider defaults (rules.md, Settled questions). Azure:
``tags``. ``tags`` is None for types known to take none.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.cloud import CloudResource, ProviderConfig
from mlcost_lint.model.core import UNKNOWN

# Types that take no tags/labels argument (a non-exhaustive list of the
# common ones next to cost-bearing resources); other types get {} when
# nothing is written.
UNTAGGED_TYPES = frozenset({
    "aws_s3_bucket_lifecycle_configuration", "aws_s3_bucket_versioning", "aws_s3_bucket_policy",
    "aws_s3_bucket_public_access_block", "aws_s3_bucket_server_side_encryption_configuration",
    "aws_s3_bucket_acl", "aws_s3_bucket_ownership_controls", "aws_s3_bucket_notification",
    "aws_s3_bucket_logging", "aws_s3_bucket_cors_configuration", "aws_s3_bucket_website_configuration",
    "aws_s3_bucket_replication_configuration", "aws_s3_bucket_intelligent_tiering_configuration",
    "aws_s3_object_copy", "aws_iam_role_policy", "aws_iam_role_policy_attachment",
    "aws_iam_policy_attachment", "aws_iam_user_policy_attachment", "aws_iam_group_policy_attachment",
    "aws_security_group_rule", "aws_route", "aws_route_table_association", "aws_eks_addon_version",
    "aws_autoscaling_policy", "aws_autoscaling_attachment", "aws_autoscaling_schedule",
    "aws_volume_attachment", "aws_lb_target_group_attachment", "aws_budgets_budget_action",
    "aws_cloudwatch_log_stream", "aws_cloudwatch_log_subscription_filter", "aws_eks_access_policy_association",
    "aws_vpc_security_group_ingress_rule_association",
    "google_project_iam_member", "google_project_iam_binding", "google_project_iam_policy",
    "google_storage_bucket_iam_member", "google_storage_bucket_iam_binding", "google_storage_bucket_object",
    "google_service_account", "google_service_account_iam_member", "google_service_account_key",
    "google_project_service", "google_logging_project_bucket_config", "google_logging_project_sink",
    "google_compute_firewall", "google_compute_route", "google_compute_subnetwork", "google_compute_network",
    "google_compute_router", "google_compute_router_nat", "google_billing_budget",
    "azurerm_role_assignment", "azurerm_storage_management_policy", "azurerm_subnet",
    "azurerm_subnet_network_security_group_association", "azurerm_storage_container",
    "azurerm_monitor_diagnostic_setting", "azurerm_consumption_budget_subscription",
    "azurerm_consumption_budget_resource_group",
})

# Cloud prefixes whose resources we tag; others get tags=None.
TAGGED_PROVIDERS = frozenset({"aws", "google", "azurerm"})


def _merge_over(defaults: Any, own: Any) -> Any:
    if own is UNKNOWN or defaults is UNKNOWN:
        return UNKNOWN
    if own is not None and not isinstance(own, dict):
        return UNKNOWN
    out: dict[str, Any] = dict(defaults or {})
    out.update(own or {})
    return out


def _asg_tags(attrs: dict) -> Any:
    blocks = attrs.get("tag")
    legacy = attrs.get("tags")   # provider < 5: list of {key, value, propagate_at_launch}
    out: dict[str, Any] = {}
    for source in (legacy, blocks):
        if source is None:
            continue
        if source is UNKNOWN or not isinstance(source, list):
            return UNKNOWN
        for item in source:
            if not isinstance(item, dict):
                return UNKNOWN
            key = item.get("key")
            if key is UNKNOWN or not isinstance(key, str):
                return UNKNOWN
            out[key] = item.get("value")
    return out


def apply_tags(res: CloudResource, config: ProviderConfig | None, instance: Any) -> None:
    """Fill ``res.tags`` / ``res.tags_attribute``. ``instance`` resolves a
    node pool's cluster (``cluster_tags(expr)``)."""
    rtype = res.type
    attrs = res.attrs
    provider = res.provider
    if provider not in TAGGED_PROVIDERS or rtype in UNTAGGED_TYPES:
        res.tags = None
        return
    defaults = config.default_tags if config is not None else None
    if provider == "aws":
        if rtype == "aws_autoscaling_group":
            res.tags_attribute = "tag"
            res.tags = _asg_tags(attrs)
            return
        res.tags_attribute = "tags"
        res.tags = _merge_over(defaults, attrs.get("tags"))
        return
    if provider == "google":
        if rtype == "google_container_cluster":
            res.tags_attribute = "resource_labels"
            res.tags = _merge_over(None, attrs.get("resource_labels"))
            return
        if rtype == "google_container_node_pool":
            res.tags_attribute = "node_config.resource_labels"
            own = res.get("node_config.resource_labels")
            cluster = UNKNOWN
            decl = _cluster_expr(res, instance)
            if instance is not None and (decl is not None or isinstance(attrs.get("cluster"), str)):
                cluster = instance.cluster_tags(decl, attrs.get("cluster"))
            res.tags = _merge_over(cluster, own)
            return
        res.tags_attribute = "labels"
        res.tags = _merge_over(defaults, attrs.get("labels"))
        return
    res.tags_attribute = "tags"
    res.tags = _merge_over(None, attrs.get("tags"))


def _cluster_expr(res: CloudResource, instance: Any) -> Any:
    """The expression written for a node pool's ``cluster`` argument."""
    source = getattr(instance, "source", None)
    if source is None or not hasattr(source, "resources"):
        return None
    d = source.decls.get(("resource", res.type, res.name))
    if d is None:
        return None
    attr = d.block.attributes.get("cluster")
    return attr.expr if attr is not None else None
