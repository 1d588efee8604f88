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


CHILD = """
variable "create" {
  type    = bool
  default = true
}
variable "create_logs" {
  type    = bool
  default = false
}
resource "aws_s3_bucket" "this" {
  count  = var.create ? 1 : 0
  bucket = "ckpt"
}
resource "aws_cloudwatch_log_group" "logs" {
  count = var.create_logs ? 1 : 0
  name  = "train"
}
"""


def test_child_module_arguments_are_values_not_flags():
    """Issue 11 #2 / rules.md: inside a child module called from the scan, `create = false` makes its
    resources absent, and an input the caller does not pass is judged by the child's default."""
    model = build_text({"main.tf": 'module "disabled" {\n  source = "./modules/bucket"\n  create = false\n}\n'
                                   'module "enabled" {\n  source = "./modules/bucket"\n}\n',
                        "modules/bucket/main.tf": CHILD})
    assert sorted(r.address for r in model.resources) == ["module.enabled.aws_s3_bucket.this[0]"]


def test_root_module_flag_defaults_are_still_linted():
    model = build_text({"main.tf": CHILD})
    assert sorted(r.address for r in model.resources) == [
        "aws_cloudwatch_log_group.logs[0]", "aws_s3_bucket.this[0]"]


def test_a_child_resource_reached_through_several_calls_is_reported_once(tmp_path):
    """Issue 11 #5: one finding at the module's line, the other calls as related locations."""
    from mlc_testing import lint_dir

    (tmp_path / "modules" / "bucket").mkdir(parents=True)
    (tmp_path / "modules" / "bucket" / "main.tf").write_text(CHILD.replace("default = false", "default = true"))
    calls = "".join(f'module "m{i}" {{\n  source = "./modules/bucket"\n}}\n' for i in range(3))
    (tmp_path / "main.tf").write_text(calls)
    result = lint_dir(tmp_path, cwd=tmp_path)
    [finding] = [f for f in result.findings if f.code == "MLC401"]
    assert (finding.location.path, finding.location.line) == ("modules/bucket/main.tf", 14)
    assert [(r.location.path, r.location.line, r.message) for r in finding.related] == [
        ("main.tf", 1, "called from this module block"),
        ("main.tf", 4, "also reached through m1: module.m1.aws_cloudwatch_log_group.logs[0]"),
        ("main.tf", 7, "also reached through m2: module.m2.aws_cloudwatch_log_group.logs[0]")]
