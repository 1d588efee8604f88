"""Registry module sources are matched exactly (rules.md, Settled questions):
each modelled module names the sources and submodules it stands for, and a
submodule that is not modelled (karpenter) is not its root module."""

from __future__ import annotations

import pytest

from mlcost_lint.model.terraform.registry import REGISTRY_MODULES, module_key

from conftest import build_text

KARPENTER = """
module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 20.0"

  cluster_name          = "training"
  enable_v1_permissions = true
}
"""


@pytest.mark.parametrize("source, modelled", [
    ("terraform-aws-modules/eks/aws", "eks"),
    ("registry.terraform.io/terraform-aws-modules/eks/aws", "eks"),
    ("github.com/terraform-aws-modules/terraform-aws-eks?ref=v20.8.5", "eks"),
    ("git::https://github.com/terraform-aws-modules/terraform-aws-eks.git//modules/eks-managed-node-group?ref=v20",
     "eks-managed-node-group"),
    ("terraform-aws-modules/eks/aws//modules/self-managed-node-group", "self-managed-node-group"),
    ("terraform-aws-modules/eks/aws//modules/karpenter", None),
    ("terraform-aws-modules/eks/aws//modules/fargate-profile", None),
    ("terraform-google-modules/kubernetes-engine/google//modules/beta-private-cluster", "gke"),
    ("terraform-google-modules/kubernetes-engine/google//modules/workload-identity", None),
    ("Azure/aks/azurerm", "aks"),
    ("./modules/eks", None),
    ("app.terraform.io/acme/eks/aws", None),
])
def test_sources_and_submodules(source, modelled):
    key = module_key(source)
    assert (REGISTRY_MODULES.get(key) if key else None) == modelled


def test_karpenter_submodule_is_no_phantom_cluster():
    model = build_text({"karpenter.tf": KARPENTER})
    assert [r.type for r in model.resources if r.origin == "module-input"] == []
    assert not any(r.type in ("aws_eks_cluster", "aws_cloudwatch_log_group") for r in model.resources)
