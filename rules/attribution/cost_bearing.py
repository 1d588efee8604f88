"""Which Terraform resource types bear cost, and where their cost tags live
(rules.md, Settled questions, MLC101).

Resource types with no tags/labels argument (``google_logging_project_bucket_config``,
IAM, networking, resource groups, key vaults) are absent on purpose.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Maybe

# type -> the argument (dotted) that carries its cost tags/labels.
COST_BEARING: dict[str, str] = {
    # --- AWS: tags (provider default_tags merged by the evaluator)
    "aws_instance": "tags",
    "aws_spot_instance_request": "tags",
    "aws_launch_template": "tags",
    "aws_autoscaling_group": "tag",            # tag blocks; default_tags do not apply
    "aws_eks_cluster": "tags",
    "aws_eks_node_group": "tags",
    "aws_batch_compute_environment": "tags",
    "aws_sagemaker_notebook_instance": "tags",
    "aws_sagemaker_training_job": "tags",
    "aws_sagemaker_domain": "tags",
    "aws_sagemaker_endpoint": "tags",
    "aws_s3_bucket": "tags",
    "aws_efs_file_system": "tags",
    "aws_fsx_lustre_file_system": "tags",
    "aws_fsx_ontap_file_system": "tags",
    "aws_fsx_openzfs_file_system": "tags",
    "aws_fsx_windows_file_system": "tags",
    "aws_cloudwatch_log_group": "tags",
    "parallelcluster_cluster": "Tags",          # AWS ParallelCluster config (mlcost_lint.model.parallelcluster)
    # --- Google: labels (provider default_labels merged by the evaluator)
    "google_compute_instance": "labels",
    "google_compute_instance_template": "labels",
    "google_compute_region_instance_template": "labels",
    "google_container_cluster": "resource_labels",                # default_labels do not apply
    "google_container_node_pool": "node_config.resource_labels",  # nor here (provider issue 19603)
    "google_workbench_instance": "labels",
    "google_notebooks_instance": "labels",
    "google_tpu_v2_vm": "labels",
    "google_tpu_node": "labels",
    "google_storage_bucket": "labels",
    "google_filestore_instance": "labels",
    # --- Azure: tags
    "azurerm_kubernetes_cluster": "tags",
    "azurerm_kubernetes_cluster_node_pool": "tags",
    "azurerm_linux_virtual_machine": "tags",
    "azurerm_windows_virtual_machine": "tags",
    "azurerm_virtual_machine": "tags",
    "azurerm_linux_virtual_machine_scale_set": "tags",
    "azurerm_windows_virtual_machine_scale_set": "tags",
    "azurerm_orchestrated_virtual_machine_scale_set": "tags",
    "azurerm_machine_learning_workspace": "tags",
    "azurerm_machine_learning_compute_cluster": "tags",
    "azurerm_machine_learning_compute_instance": "tags",
    "azurerm_storage_account": "tags",
    "azurerm_netapp_volume": "tags",
    "azurerm_log_analytics_workspace": "tags",
}

def _uses_launch_template(resource: CloudResource) -> bool:
    attrs = resource.attrs
    return bool(attrs.get("launch_template") or attrs.get("mixed_instances_policy")
                or attrs.get("launch_configuration"))


def effective_tags(resource: CloudResource) -> Maybe[dict[str, Any]] | None:
    """The tag/label map a cost allocator sees on the resource, as the
    evaluator merged it (provider default_tags/default_labels, a GKE pool's
    cluster labels); None when the type is not cost-bearing or takes no tags,
    UNKNOWN when it cannot be known."""
    if resource.type not in COST_BEARING:
        return None
    tags = resource.tags
    if tags is None or tags is UNKNOWN:
        return tags
    if not isinstance(tags, dict) or any(k is UNKNOWN for k in tags):
        return UNKNOWN
    if resource.type == "aws_autoscaling_group" and _uses_launch_template(resource):
        # Instances also take the launch template's tag_specifications, which
        # this join does not read: a key missing from the tag blocks is unknown.
        return UNKNOWN
    return tags
