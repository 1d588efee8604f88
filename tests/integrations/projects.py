"""Small projects for the integration tests, written into a temp folder."""

from __future__ import annotations

from pathlib import Path

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
    - name: c
      image: x
"""

# A Transformers config with a fixable MLC301 finding (and per-step logging, not reported since v2).
SFT = (Path(__file__).parent / "data" / "fix" / "sft_before.yaml").read_text()

# Terraform split over files: the node group's size and tags come from the
# other files (variables, tfvars, provider default_tags).
TF_PROVIDERS = """\
provider "aws" {
  region = "us-east-1"
  default_tags {
    tags = {
      team    = "ml"
      project = "llm"
    }
  }
}
"""
TF_VARIABLES = """\
variable "gpu_min_nodes" {
  type    = number
  default = 0
}
"""
TF_VARS = "gpu_min_nodes = 2\n"
TF_NODES = """\
resource "aws_eks_node_group" "gpu" {
  cluster_name    = "training"
  node_group_name = "gpu"
  node_role_arn   = "arn:aws:iam::123456789012:role/nodes"
  subnet_ids      = ["subnet-1"]
  instance_types  = ["p4d.24xlarge"]

  scaling_config {
    min_size     = var.gpu_min_nodes
    desired_size = var.gpu_min_nodes
    max_size     = 4
  }
}
"""


# The organisation's conventions the projects below follow: required-tags
# turns on MLC101/MLC102 (off by default since v2), which these tests use as
# their vehicle for baselines, suppressions and formats.
ORG_CONFIG = 'required-tags = ["team", "project", "cost-center"]\n'


def write(root: Path, files: dict[str, str], config: str | None = ORG_CONFIG) -> Path:
    if config is not None and ".mlcost-lint.toml" not in files:
        files = {".mlcost-lint.toml": config, **files}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def terraform_project(root: Path) -> Path:
    return write(root, {"infra/providers.tf": TF_PROVIDERS, "infra/variables.tf": TF_VARIABLES,
                        "infra/terraform.tfvars": TF_VARS, "infra/nodes.tf": TF_NODES})
