"""MLC203 idle-gpu-capacity: exact findings on the positive fixtures, none on the negatives,
and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC203"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC203', 'positive/azure.tf', 6, 'AKS node pool azurerm_kubernetes_cluster_node_pool.a100 keeps 1 x Standard_NC24ads_A100_v4 = 1 A100-80 GPU running with no job (min_count = 1); set auto_scaling_enabled = true with min_count = 0 (instead of a fixed node_count); the AKS cluster autoscaler adds nodes when pods are pending'),
    ('MLC203', 'positive/azure.tf', 14, 'AKS node pool azurerm_kubernetes_cluster_node_pool.t4 keeps 3 x Standard_NC4as_T4_v3 = 3 T4 GPUs running with no job (no autoscaling, node_count = 3); set auto_scaling_enabled = true with min_count = 0 (instead of a fixed node_count); the AKS cluster autoscaler adds nodes when pods are pending'),
    ('MLC203', 'positive/azure.tf', 25, 'Azure ML compute cluster azurerm_machine_learning_compute_cluster.train keeps 1 x Standard_NC24ads_A100_v4 = 1 A100-80 GPU running with no job (scale_settings.min_node_count = 1); set scale_settings.min_node_count = 0 (Azure ML scales out when jobs are queued)'),
    ('MLC203', 'positive/eks.tf', 10, 'EKS node group aws_eks_node_group.a100 keeps 2 x p4d.24xlarge = 16 A100-40 GPUs running with no job (scaling_config.min_size = 2); set scaling_config.min_size = 0 and desired_size = 0; a cluster autoscaler or Karpenter must run in the cluster to add nodes when jobs arrive'),
    ('MLC203', 'positive/eks.tf', 24, 'EKS node group module.eks.eks_managed_node_groups["l4"] keeps 1 x g6.xlarge = 1 L4 GPU running with no job (min_size not set: the module\'s default is 1); set min_size = 0 and desired_size = 0 in the module\'s node group; a cluster autoscaler or Karpenter must run in the cluster to add nodes when jobs arrive'),
    ('MLC203', 'positive/eks.tf', 39, 'Batch compute environment aws_batch_compute_environment.gpu keeps at least 1 x g5.12xlarge = 4 A10G GPUs running with no job (compute_resources.min_vcpus = 48); set compute_resources.min_vcpus = 0 and desired_vcpus = 0 (Batch scales out when jobs are queued)'),
    ('MLC203', 'positive/gke.tf', 5, 'GKE node pool google_container_node_pool.t4_fixed keeps 2 x n1-standard-8 = 2 T4 GPUs per zone running with no job (no autoscaling, node_count = 2); add an autoscaling block with min_node_count = 0 (or total_min_node_count = 0) and drop a fixed node_count; the GKE cluster autoscaler adds nodes when pods are pending'),
    ('MLC203', 'positive/gke.tf', 22, 'GKE node pool google_container_node_pool.a100 keeps 1 x a2-highgpu-1g = 1 A100-40 GPU per zone running with no job (autoscaling.min_node_count = 1); add an autoscaling block with min_node_count = 0 (or total_min_node_count = 0) and drop a fixed node_count; the GKE cluster autoscaler adds nodes when pods are pending'),
    # values handed through a typed variable, a local and the EKS group defaults are set, not defaulted
    ('MLC203', 'positive/module_values/main.tf', 43, 'GKE node pool module.gke.google_container_node_pool.pools["l4-serving"] keeps 2 x g2-standard-8 = 2 L4 GPUs per zone running with no job (min_count = 2); set autoscaling = true with min_count = 0 in the module\'s node_pools entry (and no fixed node_count)'),
    ('MLC203', 'positive/module_values/main.tf', 43, 'GKE node pool module.gke.google_container_node_pool.pools["t4-batch"] keeps 1 x n1-standard-8 = 1 T4 GPU per zone running with no job (min_count = 1); set autoscaling = true with min_count = 0 in the module\'s node_pools entry (and no fixed node_count)'),
    ('MLC203', 'positive/module_values/main.tf', 53, 'EKS node group module.eks.eks_managed_node_groups["a10g"] keeps 1 x g5.2xlarge = 1 A10G GPU running with no job (min_size = 1); set min_size = 0 and desired_size = 0 in the module\'s node group; a cluster autoscaler or Karpenter must run in the cluster to add nodes when jobs arrive'),
    ('MLC203', 'positive/raycluster.yaml', 18, 'RayCluster batch-inference worker group gpu-workers keeps minReplicas: 2 x 4 GPUs = 8 GPUs running with no job; set minReplicas: 0 with spec.enableInTreeAutoscaling: true (the Ray autoscaler adds workers for jobs)'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive"), CODE) == EXPECTED


def test_negative_silent():
    assert triples(lint_dir(BASE / "negative"), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]


def test_capacity_reservation_through_the_launch_template_is_reserved():
    """Issue 11 #9: an EKS node group whose launch template targets an ODCR is reserved capacity."""
    result = lint_dir(BASE / "negative" / "odcr.tf", cwd=BASE)
    [group] = [r for r in result.project.terraform.resources if r.type == "aws_eks_node_group"]
    assert group.reserved_by == "aws_launch_template.p5"
    assert [f for f in result.findings if f.code in ("MLC203", "MLC208")] == []
