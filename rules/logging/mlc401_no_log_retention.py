from __future__ import annotations

from typing import Any, Iterator

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.storage.tf_references import root_of


@dataclass(frozen=True, slots=True)
class RetentionArg:
    attr: str
    default: int | None        # the provider's default when unset; None: unset keeps logs forever
    zero_is_forever: bool = False


# Log stores and where their retention is set. Defaults from the provider docs:
# CloudWatch keeps logs forever unless retention_in_days is set (0 = never expire);
# Cloud Logging buckets default to 30 days; Log Analytics to 30; Application Insights to 90.
LOG_STORES: dict[str, RetentionArg] = {
    "aws_cloudwatch_log_group": RetentionArg("retention_in_days", None, zero_is_forever=True),
    "google_logging_project_bucket_config": RetentionArg("retention_days", 30),
    "google_logging_folder_bucket_config": RetentionArg("retention_days", 30),
    "google_logging_organization_bucket_config": RetentionArg("retention_days", 30),
    "google_logging_billing_account_bucket_config": RetentionArg("retention_days", 30),
    "azurerm_log_analytics_workspace": RetentionArg("retention_in_days", 30),
    "azurerm_log_analytics_workspace_table": RetentionArg("retention_in_days", None),
    "azurerm_application_insights": RetentionArg("retention_in_days", 90),
    # AWS ParallelCluster v3 config: Monitoring.Logs.CloudWatch.RetentionInDays, default 180
    "parallelcluster_cluster": RetentionArg("RetentionInDays", 180),
}

# A registry module's synthetic resource is configured through the module's
# input, not the resource argument: name the input in the message. The
# terraform-aws-modules/eks log group defaults to 90 days (counts as set).
_MODULE_INPUT_NAMES = {"aws_cloudwatch_log_group": "cloudwatch_log_group_retention_in_days"}


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


class NoLogRetention(Rule):
    """
    ## What it does
    Flags logs kept forever or longer than `max-log-retention-days` (default
    365): an `aws_cloudwatch_log_group` without `retention_in_days` or with 0
    (never expire); `google_logging_*_bucket_config` `retention_days`,
    `azurerm_log_analytics_workspace` / `azurerm_application_insights`
    `retention_in_days` above the maximum; an `aws_eks_cluster` with
    control-plane logs enabled (`enabled_cluster_log_types`) and no
    `aws_cloudwatch_log_group` named `/aws/eks/<cluster>/cluster` in the scan,
    so EKS creates one that never expires; an AWS ParallelCluster config whose
    `Monitoring.Logs.CloudWatch.RetentionInDays` (default 180) is above the
    maximum. A retention from a variable
    without a value is unknown and silent; the terraform-aws-modules EKS
    module's 90-day default counts as set.

    ## Why is this expensive
    Training jobs, NCCL debug output and control-plane audit logs are
    voluminous. CloudWatch charges for every GB stored every month, and a log
    group without retention keeps growing for the life of the account.

    ## Example
    ```hcl
    resource "aws_cloudwatch_log_group" "training" {
      name = "/ml/training"
    }
    ```

    ## Fix
    ```hcl
    resource "aws_cloudwatch_log_group" "training" {
      name              = "/ml/training"
      retention_in_days = 30
    }
    ```
    """

    code = "MLC401"
    name = "no-log-retention"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.LOGGING
    reports_in = frozenset({Reports.CLOUD})
    summary = "Logs kept forever or longer than the configured maximum"
    fix = "Set a retention period (retention_in_days / retention_days) within max-log-retention-days."

    def check(self, project, settings) -> Iterator[Finding]:
        limit = settings.max_log_retention_days
        resources = [r for r in project.terraform.resources if r.mode == "managed"]
        # Log groups by root module, built once: a scan of every resource per
        # cluster was quadratic.
        log_groups: dict[str, list[CloudResource]] | None = None
        for r in resources:
            arg = LOG_STORES.get(r.type)
            if arg is not None:
                yield from self._store(r, arg, limit)
            elif r.type == "aws_eks_cluster":
                if log_groups is None:
                    log_groups = {}
                    for group in resources:
                        if group.type == "aws_cloudwatch_log_group":
                            log_groups.setdefault(root_of(group), []).append(group)
                yield from self._eks(r, log_groups, limit)

    def _store(self, r: CloudResource, arg: RetentionArg, limit: int) -> Iterator[Finding]:
        raw = r.attrs.get(arg.attr)
        if raw is UNKNOWN:
            return
        where = r.loc(arg.attr) if arg.attr in r.attr_locations else r.location
        written = arg.attr
        if r.origin == "module-input":
            written = f"module input {_MODULE_INPUT_NAMES.get(r.type, arg.attr)}"
        if raw is None:
            if arg.default is not None:
                raw = arg.default
            else:
                if r.type != "aws_cloudwatch_log_group":
                    return   # a table without its own retention inherits the workspace's
                yield self.finding(
                    f"{r.address} has no {arg.attr}: its logs never expire and are billed forever; "
                    f"set {arg.attr} (at most {limit}, max-log-retention-days)",
                    where, r.address, related=r.related_module_calls(), object_line=r.location.line)
                return
        days = _number(raw)
        if days is None:
            return
        if days == 0 and arg.zero_is_forever:
            yield self.finding(
                f"{r.address} sets {written} = 0, which keeps logs forever; set a retention of at "
                f"most {limit} days (max-log-retention-days)",
                where, r.address, related=r.related_module_calls(), object_line=r.location.line)
        elif days > limit:
            yield self.finding(
                f"{r.address} keeps logs {days:g} days ({written}), above max-log-retention-days "
                f"{limit}; lower it",
                where, r.address, related=r.related_module_calls(), object_line=r.location.line)

    def _eks(self, cluster: CloudResource, log_groups: dict[str, list[CloudResource]],
             limit: int) -> Iterator[Finding]:
        log_types = cluster.attrs.get("enabled_cluster_log_types")
        if not isinstance(log_types, list) or not log_types:
            return   # unknown, or control-plane logging off
        name = cluster.attrs.get("name")
        if not isinstance(name, str):
            return
        expected = f"/aws/eks/{name}/cluster"
        root = root_of(cluster)
        # The log group must exist before the cluster: it lives in the same deployment.
        for group in log_groups.get(root, ()):
            group_name = group.attrs.get("name")
            if not isinstance(group_name, str) or group_name == expected:
                return   # the cluster's log group is in the scan (or may be): judged on its own
        types = ", ".join(str(t) for t in log_types if isinstance(t, str))
        where = cluster.loc("enabled_cluster_log_types") \
            if "enabled_cluster_log_types" in cluster.attr_locations else cluster.location
        yield self.finding(
            f"{cluster.address} sends control-plane logs ({types}) to CloudWatch but no "
            f"aws_cloudwatch_log_group named {expected} is defined, so EKS creates one that never "
            f"expires; define it with retention_in_days (at most {limit}, max-log-retention-days)",
            where, cluster.address, related=cluster.related_module_calls(),
            object_line=cluster.location.line)
