"""Parse vs evaluation time of the Terraform model on a synthetic repository.

    /work/venv/bin/python bench/terraform_eval.py [--files 1000] [--calls 200]

Writes a repository to a temporary folder: ``live/`` root modules with
variables, locals, tfvars and resources, ``modules/`` (a GPU pool module
with count/for_each/dynamic blocks, a bucket module), and ``--calls`` module
calls spread over the roots. Prints the time to parse every file
(python-hcl2's Lark parse, then our tree conversion), the time to evaluate
(``build_terraform``), resource counts and evaluation steps.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

MODULE_POOL = '''
variable "name" { type = string }
variable "instance_type" { type = string }
variable "pools" {
  type = map(object({
    min = optional(number, 0)
    max = optional(number, 4)
  }))
  default = { a = {}, b = { min = 1 } }
}
variable "tags" {
  type    = map(string)
  default = {}
}
locals {
  tags = merge(var.tags, { module = "gpu-pool", name = var.name })
}
resource "aws_eks_node_group" "this" {
  for_each        = var.pools
  cluster_name    = "c-${var.name}"
  node_group_name = "${var.name}-${each.key}"
  instance_types  = [var.instance_type]
  scaling_config {
    min_size     = each.value.min
    max_size     = each.value.max
    desired_size = max(each.value.min, 1)
  }
  dynamic "taint" {
    for_each = { gpu = "NO_SCHEDULE" }
    content {
      key    = taint.key
      effect = taint.value
    }
  }
  tags = local.tags
}
output "names" { value = [for k, v in aws_eks_node_group.this : v.node_group_name] }
'''

MODULE_BUCKET = '''
variable "name" { type = string }
resource "aws_s3_bucket" "this" {
  bucket = var.name
  tags   = { Name = var.name }
}
resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    id     = "expire"
    status = "Enabled"
    expiration { days = 30 }
  }
}
output "bucket" { value = aws_s3_bucket.this.bucket }
'''


def resource_file(i: int) -> str:
    return f'''
locals {{
  name_{i}  = "${{var.prefix}}-{i}"
  tags_{i}  = merge(local.common_tags, {{ index = "{i}" }})
  ports_{i} = [for p in range(3) : p * 100 + {i}]
}}
resource "aws_instance" "vm_{i}" {{
  count         = var.enabled ? 2 : 0
  instance_type = var.sizes[count.index % length(var.sizes)]
  ami           = data.aws_ami.base.id
  tags          = merge(local.tags_{i}, {{ Name = "${{local.name_{i}}}-${{count.index}}" }})
  root_block_device {{
    volume_size = 100 + {i} % 7
  }}
  user_data = <<-EOT
    #!/bin/bash
    echo "${{local.name_{i}}}"
  EOT
}}
resource "aws_cloudwatch_log_group" "lg_{i}" {{
  name              = "/app/${{local.name_{i}}}"
  retention_in_days = lookup(var.retention, "default", 30)
  tags              = local.tags_{i}
}}
'''


def root_common(r: int) -> str:
    return f'''
provider "aws" {{
  region = var.region
  default_tags {{ tags = {{ team = "bench", root = "{r}" }} }}
}}
variable "region" {{ default = "us-east-1" }}
variable "prefix" {{ default = "bench{r}" }}
variable "enabled" {{ default = true }}
variable "sizes" {{ default = ["g5.xlarge", "p4d.24xlarge"] }}
variable "retention" {{ default = {{ default = 14 }} }}
locals {{
  common_tags = {{ project = "bench", cost-center = "cc-{r}" }}
}}
'''


def module_calls(start: int, n: int) -> str:
    out = []
    for j in range(start, start + n):
        if j % 2:
            out.append(f'''
module "pool_{j}" {{
  source        = "../../modules/gpu-pool"
  name          = "pool-{j}"
  instance_type = var.sizes[{j} % 2]
  tags          = local.common_tags
}}''')
        else:
            out.append(f'''
module "bucket_{j}" {{
  source = "../../modules/bucket"
  name   = "${{var.prefix}}-bucket-{j}"
}}''')
    return "\n".join(out)


def generate(root: Path, files: int, calls: int, roots: int = 10) -> None:
    (root / "modules/gpu-pool").mkdir(parents=True)
    (root / "modules/bucket").mkdir(parents=True)
    (root / "modules/gpu-pool/main.tf").write_text(MODULE_POOL)
    (root / "modules/bucket/main.tf").write_text(MODULE_BUCKET)
    remaining = files - 2
    per_root_files = remaining // roots
    calls_per_root = calls // roots
    idx = 0
    for r in range(roots):
        d = root / f"live/root{r}"
        d.mkdir(parents=True)
        (d / "providers.tf").write_text(root_common(r))
        (d / "terraform.tfvars").write_text(f'region = "eu-west-{r % 3 + 1}"\n')
        (d / "modules.tf").write_text(module_calls(r * calls_per_root, calls_per_root))
        count = per_root_files - 3 + (remaining - per_root_files * roots if r == roots - 1 else 0)
        for _ in range(count):
            (d / f"res_{idx}.tf").write_text(resource_file(idx))
            idx += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    import hcl2

    from mlcost_lint.config import Settings
    from mlcost_lint.model.terraform import build_terraform
    from mlcost_lint.model.terraform.budget import Budget
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind
    from mlcost_lint.parse.hcl import HclBody
    from mlcost_lint.parse.hcl_reference import _Converter

    hcl2.parses_to_tree("x = 1\n")   # load the grammar cache outside the timings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root, args.files, args.calls)
        paths = sorted(p for p in root.rglob("*") if p.is_file())
        texts = [(os.path.relpath(p, root), p.read_bytes()) for p in paths]
        total_bytes = sum(len(b) for _, b in texts)

        # python-hcl2 alone vs our conversion on top of it
        # CPU time (process_time): the machine is shared, wall time is noisy
        t0 = time.process_time()
        trees = [hcl2.parses_to_tree(b.decode()) for _, b in texts]
        t_lark = time.process_time() - t0
        t0 = time.process_time()
        for tree in trees:
            _Converter().body(tree.children[0], HclBody("x"))
        t_convert = time.process_time() - t0
        del trees

        t0 = time.process_time()
        parsed = []
        for rel, data in texts:
            kind = FileKind.TERRAFORM_VARS if rel.endswith(".tfvars") else FileKind.TERRAFORM
            parsed.append(parse_bytes(data, rel, kind))
        t_parse = time.process_time() - t0
        errors = [e for f in parsed for e in f.errors]

        steps = {}
        real_budget = Budget.__init__

        def spy(self, limit):
            real_budget(self, limit)
            steps["budget"] = self
        Budget.__init__ = spy
        t0 = time.process_time()
        model = build_terraform(parsed, Settings())
        t_eval = time.process_time() - t0
        Budget.__init__ = real_budget

    print(f"files: {len(texts)} ({total_bytes / 1e6:.2f} MB), module calls: {args.calls}, parse errors: {len(errors)}")
    print("CPU seconds:")
    print(f"python-hcl2 parses_to_tree: {t_lark:.2f} s ({total_bytes / 1e6 / t_lark:.2f} MB/s)")
    print(f"tree conversion (ours):     {t_convert:.2f} s ({100 * t_convert / t_lark:.0f}% of the Lark parse)")
    print(f"parse stage (parse_bytes):  {t_parse:.2f} s")
    print(f"evaluation (build_terraform): {t_eval:.2f} s, {steps['budget'].steps} steps, "
          f"{len(model.resources)} resources, {len(model.diagnostics)} diagnostics")


if __name__ == "__main__":
    main()
