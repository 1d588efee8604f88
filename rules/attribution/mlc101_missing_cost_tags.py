from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.attribution.cost_bearing import COST_BEARING, effective_tags
from mlcost_lint.rules.attribution.tag_keys import OFF_NOTICE, SELECTED_NOTICE, keys_source, missing_keys

# Where the fix goes, by provider: the resource's own argument, or the
# provider-wide defaults that the evaluator already merged.
_DEFAULTS = {"aws": "the provider's default_tags", "google": "the provider's default_labels"}
_NO_DEFAULTS = {
    "google_container_cluster": "Google default_labels do not apply to GKE",
    "google_container_node_pool": "Google default_labels do not apply to GKE; node_config.labels "
                                  "are Kubernetes node labels, not billing labels",
    "aws_autoscaling_group": "default_tags do not apply to autoscaling groups",
    "parallelcluster_cluster": "as - Key: k / Value: v items; ParallelCluster tags every resource it creates "
                               "with them",
}


class MissingCostTags(Rule):
    """
    ## What it does
    Flags a cost-bearing Terraform resource (instances, launch templates,
    autoscaling groups, EKS/GKE/AKS clusters and node groups/pools, Batch
    compute environments, SageMaker notebooks/domains/endpoints, Workbench and
    TPU VMs, Azure VMs, scale sets and ML compute, buckets and storage
    accounts, EFS/FSx/Filestore, log groups, Log Analytics workspaces) that
    lacks a required tag key after merging provider `default_tags` (AWS),
    `default_labels` (Google) and module tag variables. The keys come from
    `required-tags` and compare case- and separator-insensitively. The rule
    is opt-in: it runs when `required-tags` is set, or when selected (then
    it checks the suggested keys `team`, `project`, `cost-center`). GKE clusters are read from
    `resource_labels` and node pools from `node_config.resource_labels` plus
    their cluster's `resource_labels`. A tag map that cannot be known (an
    unset variable, a node pool whose cluster is not in the scan) is silent.

    ## Why is this expensive
    Cloud bills are split by tags. GPU capacity without a team or project tag
    shows up as "untagged" in Cost Explorer, Billing reports and Cost
    Management, so nobody owns it and nobody turns it off.

    ## Example
    ```hcl
    resource "aws_eks_node_group" "gpu" {
      cluster_name   = aws_eks_cluster.main.name
      instance_types = ["p4d.24xlarge"]
      tags           = { team = "research" }
    }
    ```

    ## Fix
    Add the missing keys to the resource or, for every resource at once, to
    the provider:
    ```hcl
    provider "aws" {
      default_tags { tags = { team = "research", project = "llm", cost-center = "cc-42" } }
    }
    ```
    """

    code = "MLC101"
    name = "missing-cost-tags"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.ATTRIBUTION
    reports_in = frozenset({Reports.CLOUD})
    summary = "Cost-bearing resource lacks required cost tags"
    fix = "Add the missing keys to tags/labels (or the provider's default_tags/default_labels)."
    enabled_by = "required_tags"
    off_notice = OFF_NOTICE
    selected_notice = SELECTED_NOTICE

    @staticmethod
    def _source(settings) -> str:
        return keys_source(settings)

    def check(self, project, settings) -> Iterator[Finding]:
        for r in project.terraform.resources:
            if r.mode != "managed" or r.type not in COST_BEARING:
                continue
            tags = effective_tags(r)
            if tags is UNKNOWN or tags is None:
                continue
            missing = missing_keys(tags, settings.tag_keys)
            if not missing:
                continue
            attr = COST_BEARING[r.type]
            written = _written_at(r, attr)
            where = r.loc(written) if written else r.location
            note = _NO_DEFAULTS.get(r.type)
            if r.tag_inputs:
                hint = f"set the module input {' or '.join(r.tag_inputs)}"
            elif note is None:
                default = _DEFAULTS.get(r.provider)
                hint = f"add {'them' if len(missing) > 1 else 'it'} to {attr}" + (
                    f" or {default}" if default else "")
            else:
                hint = f"add {'them' if len(missing) > 1 else 'it'} to {attr} ({note})"
            yield self.finding(
                f"{r.address} lacks cost tag{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
                f"{self._source(settings)}; its spend cannot be attributed; {hint}",
                where, r.address,
                related=r.related_module_calls(),
                object_line=r.location.line,
            )



def _written_at(r: CloudResource, attr: str) -> str | None:
    for candidate in (attr, attr.split(".")[0]):
        if candidate in r.attr_locations:
            return candidate
    return None
