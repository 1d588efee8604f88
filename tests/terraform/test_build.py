"""Configuration to CloudResources: modules, variables, count/for_each,
providers, regions, tags and locations, on fixtures laid out like real repos."""

from mlcost_lint.model.core import UNKNOWN, Location

from conftest import build_dir, build_text, by_address

P = "fixtures/terraform/aws_ml_platform/"


def test_addresses_of_every_instance(aws_model):
    assert sorted(by_address(aws_model)) == [
        "aws_cloudwatch_log_group.training",
        "aws_instance.inference[0]",            # count = 0 only by a variable default: linted
        "aws_s3_bucket.checkpoints",
        "aws_s3_bucket.datasets",
        "aws_s3_bucket_lifecycle_configuration.checkpoints",
        "module.eks.aws_cloudwatch_log_group.this[0]",
        "module.eks.aws_eks_cluster.this[0]",
        'module.eks.eks_managed_node_groups["gpu"]',
        'module.eks.eks_managed_node_groups["system"]',
        'module.pool["eval"].aws_eks_node_group.this',
        'module.pool["eval"].aws_iam_role.node',
        'module.pool["train"].aws_eks_node_group.this',
        'module.pool["train"].aws_iam_role.node',
        "module.pool_west.aws_eks_node_group.this",
        "module.pool_west.aws_iam_role.node",
    ]
    # aws_instance.debug: 0 from terraform.tfvars; aws_instance.disabled: literal 0


def test_tfvars_override_defaults_and_locals_follow(aws_model):
    r = by_address(aws_model)
    assert r["aws_s3_bucket.checkpoints"].attrs["bucket"] == "llm-finetune-eu-west-1-ckpt"
    assert r["aws_s3_bucket.datasets"].attrs["bucket"] == "llm-finetune-eu-west-1-datasets"
    assert r["aws_cloudwatch_log_group.training"].attrs["retention_in_days"] == 0


def test_regions_from_provider_and_alias(aws_model):
    r = by_address(aws_model)
    assert r["aws_s3_bucket.checkpoints"].region == "eu-west-1"
    assert r["aws_s3_bucket.datasets"].region == "us-west-2"
    assert r["aws_s3_bucket.datasets"].provider_key == "aws.data"
    assert r["module.pool_west.aws_eks_node_group.this"].region == "us-west-2"   # providers = { aws = aws.data }
    assert r['module.pool["train"].aws_eks_node_group.this'].region == "eu-west-1"


def test_tags_merge_default_tags_resource_wins(aws_model):
    r = by_address(aws_model)
    assert r["aws_s3_bucket.checkpoints"].tags == {
        "team": "ml-platform", "project": "llm-finetune", "cost-center": "ml-1234",
        "environment": "default", "Name": "checkpoints"}
    assert r["aws_s3_bucket.datasets"].tags == {}          # aws.data has no default_tags
    assert r["aws_s3_bucket_lifecycle_configuration.checkpoints"].tags is None
    assert r['module.pool["train"].aws_eks_node_group.this'].tags == {
        "team": "ml-platform", "project": "llm-finetune", "cost-center": "ml-1234",
        "environment": "default", "pool": "train"}


def test_local_module_for_each_and_optional_defaults(aws_model):
    r = by_address(aws_model)
    train = r['module.pool["train"].aws_eks_node_group.this']
    assert train.attrs["instance_types"] == ["p4d.24xlarge"]
    assert train.attrs["capacity_type"] == "ON_DEMAND"
    assert train.attrs["scaling_config"] == [{"min_size": 1, "max_size": 4, "desired_size": 1}]
    evalp = r['module.pool["eval"].aws_eks_node_group.this']
    assert evalp.attrs["capacity_type"] == "SPOT"
    assert evalp.attrs["scaling_config"] == [{"min_size": 0, "max_size": 4, "desired_size": 1}]
    assert evalp.attrs["node_role_arn"] is UNKNOWN              # computed attribute of another resource
    west = r["module.pool_west.aws_eks_node_group.this"]
    assert west.attrs["scaling_config"] == [{"min_size": 0, "max_size": 2, "desired_size": 1}]


def test_module_resource_locations_point_into_the_module(aws_model):
    train = by_address(aws_model)['module.pool["train"].aws_eks_node_group.this']
    mod = "fixtures/terraform/aws_ml_platform/modules/gpu-pool/main.tf"
    assert train.location == Location("modules/gpu-pool/main.tf", 1, 1, 19)
    assert train.loc("scaling_config.min_size") == Location("modules/gpu-pool/main.tf", 9, 5, 9)
    assert train.loc("scaling_config") == Location("modules/gpu-pool/main.tf", 8, 3, 12)
    assert train.loc("labels.pool") == Location("modules/gpu-pool/main.tf", 15, 5)
    assert train.module_calls == (Location("compute.tf", 20, 1, 31),)
    del mod


def test_eks_registry_module_node_groups(aws_model):
    r = by_address(aws_model)
    gpu = r['module.eks.eks_managed_node_groups["gpu"]']
    assert gpu.type == "aws_eks_node_group" and gpu.origin == "module-input"
    assert gpu.attrs["instance_types"] == ["p4d.24xlarge"]
    assert (gpu.attrs["min_size"], gpu.attrs["desired_size"], gpu.attrs["max_size"]) == (2, 2, 8)
    assert gpu.attrs["scaling_config"] == [{"min_size": 2, "max_size": 8, "desired_size": 2}]
    assert gpu.attrs["ami_type"] == "AL2_x86_64_GPU"             # from eks_managed_node_group_defaults
    assert gpu.attrs["capacity_type"] == "ON_DEMAND"
    assert gpu.attrs["labels"] == {"nvidia.com/gpu.present": "true"}
    assert gpu.attrs["taint"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert gpu.attrs["enable_efa_support"] is False
    assert gpu.tags == {"team": "ml-platform", "project": "llm-finetune", "cost-center": "ml-1234",
                        "environment": "default", "workload": "training"}
    assert gpu.region == "eu-west-1"
    assert gpu.location == Location("eks.tf", 15, 5)
    assert gpu.loc("min_size") == Location("eks.tf", 17, 7)
    assert gpu.loc("scaling_config.min_size") == Location("eks.tf", 17, 7)
    assert gpu.module_calls == (Location("eks.tf", 1, 1, 39),)
    system = r['module.eks.eks_managed_node_groups["system"]']
    assert (system.attrs["min_size"], system.attrs["max_size"], system.attrs["desired_size"]) == (1, 3, 1)


def test_eks_cluster_and_log_group_defaults(aws_model):
    r = by_address(aws_model)
    cluster = r["module.eks.aws_eks_cluster.this[0]"]
    assert cluster.attrs["enabled_cluster_log_types"] == ["api", "audit"]
    assert cluster.attrs["cloudwatch_log_group_retention_in_days"] == 90
    lg = r["module.eks.aws_cloudwatch_log_group.this[0]"]
    assert lg.attrs["retention_in_days"] == 90
    assert lg.attrs["name"] == "/aws/eks/llm-finetune-eu-west-1-eks/cluster"


def test_providers_listed(aws_model):
    got = [(p.name, p.alias, p.region, p.default_tags, p.location.path, p.location.line)
           for p in aws_model.providers]
    assert got == [
        ("aws", None, "eu-west-1", {"team": "ml-platform", "project": "llm-finetune"}, "providers.tf", 1),
        ("aws", "data", "us-west-2", None, "providers.tf", 13),
    ]
    assert aws_model.diagnostics == []


def test_gke_module_pools(gke_model):
    r = by_address(gke_model)
    a100 = r['module.gke.google_container_node_pool.pools["a100"]']
    assert a100.attrs["node_config"][0]["machine_type"] == "a2-highgpu-1g"
    assert a100.attrs["node_config"][0]["guest_accelerator"] == [{"type": "nvidia-tesla-a100", "count": 1}]
    assert a100.attrs["autoscaling"] == [{"min_node_count": 1, "max_node_count": 4,
                                          "total_min_node_count": None, "total_max_node_count": None}]
    assert a100.attrs["node_config"][0]["labels"] == {"env": "prod", "gpu": "a100"}   # Kubernetes labels
    assert a100.tags == {"team": "research", "project": "llm", "cost-center": "cc-7"}
    assert a100.tags_attribute == "node_config.resource_labels"
    assert a100.region == "europe-west4"
    assert a100.location == Location("main.tf", 31, 5)
    assert a100.loc("machine_type") == Location("main.tf", 33, 7)
    cpu = r['module.gke.google_container_node_pool.pools["cpu"]']
    assert cpu.attrs["autoscaling"] == [] and cpu.attrs["node_count"] == 2
    assert cpu.attrs["node_config"][0]["guest_accelerator"] == []


def test_google_labels_regions_and_gke_rules(gke_model):
    r = by_address(gke_model)
    bucket = r["google_storage_bucket.datasets"]
    assert bucket.region == "US"                                   # multi-region kept, upper-cased
    assert bucket.tags == {"team": "research", "project": "llm"}   # default_labels apply
    cluster = r["google_container_cluster.inference"]
    assert (cluster.region, cluster.zone) == ("us-east1", "us-east1-b")
    assert cluster.tags == {"team": "serving"}                     # no default_labels on GKE
    pool = r["google_container_node_pool.l4"]
    assert pool.tags == {"team": "serving", "project": "chat"}     # cluster's resource_labels + its own
    assert (pool.region, pool.zone) == ("us-east1", "us-east1-b")  # from its cluster
    orphan = r["google_container_node_pool.orphan"]
    assert orphan.tags is UNKNOWN                                  # cluster not in the scan
    assert orphan.region == "asia-east1"
    vm = r["google_compute_instance.notebook"]
    assert (vm.region, vm.zone, vm.tags) == ("us-west1", "us-west1-b", {"team": "research"})


def test_aks_module():
    r = by_address(build_dir("aks_platform"))
    pool = r['module.aks.azurerm_kubernetes_cluster_node_pool.node_pool["gpu"]']
    assert pool.attrs["vm_size"] == "Standard_NC24ads_A100_v4"
    assert (pool.attrs["min_count"], pool.attrs["auto_scaling_enabled"]) == (1, True)
    assert pool.region == "westeurope" and pool.tags == {"team": "ml"}
    cluster = r["module.aks.azurerm_kubernetes_cluster.main"]
    assert cluster.attrs["default_node_pool"][0]["vm_size"] == "Standard_D4s_v5"


def test_tf_json():
    r = by_address(build_dir("json_config"))
    t1 = r["aws_instance.trainer[1]"]
    assert t1.attrs["tags"] == {"Name": "ml-ap-southeast-2-trainer-1"}
    assert t1.attrs["root_block_device"] == [{"volume_size": 500}]
    assert t1.region == "ap-southeast-2"
    assert t1.tags == {"team": "json-team", "Name": "ml-ap-southeast-2-trainer-1"}
    assert t1.loc("instance_type").line == 25


def test_edge_cases_finish_with_diagnostics():
    model = build_dir("edge_cases")
    r = by_address(model)
    assert r["aws_s3_bucket.uses_cycle"].attrs == {"bucket": UNKNOWN, "tags": {"name": "fine"}}
    assert r["module.loop.aws_sqs_queue.a"].attrs == {"name": "a"}
    messages = [(loc.path, loc.line, msg.split(":")[0]) for loc, msg in model.diagnostics]
    assert ("main.tf", 2, "circular reference between local.self_ref") in messages
    assert ("main.tf", 53, "module 'itself' is recursive (source . is already being evaluated)") in messages
    assert ("modules/loop_b/main.tf", 1,
            "module 'a' is recursive (source modules/loop_a is already being evaluated)") in messages
    # The doubling strings stop at the string bound (limits.py) before the step budget runs out.
    assert ("main.tf", 19, "value is too large to model: template would build a string of 1097728 characters, "
            "over the 1000000-character bound; treated as unknown") in [
        (loc.path, loc.line, msg) for loc, msg in model.diagnostics]


def test_precedence_of_variable_sources():
    files = {
        "infra/variables.tf": 'variable "a" { default = "default" }\nvariable "b" { default = "default" }\n'
                              'variable "c" { default = "default" }\nvariable "d" { default = "default" }\n'
                              'variable "n" { type = number }\nvariable "l" { type = list(string) }\n'
                              'variable "none" {}\n'
                              'resource "aws_sqs_queue" "q" {\n  name = join("/", [var.a, var.b, var.c, var.d])\n'
                              '  delay_seconds = var.n\n  tags = { l = join(",", var.l) }\n  policy = var.none\n}\n',
        "infra/terraform.tfvars": 'a = "tfvars"\nb = "tfvars"\nc = "tfvars"\nd = "tfvars"\n',
        "infra/b.auto.tfvars": 'b = "auto-b"\nc = "auto-b"\nd = "auto-b"\n',
        "infra/a.auto.tfvars": 'c = "auto-a"\n',
        "envs/prod.tfvars": 'c = "var-file"\nd = "var-file"\n',
    }
    from conftest import kind_of
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.config import Settings
    from mlcost_lint.model.terraform import build_terraform
    parsed = {p: parse_bytes(t.encode(), p, kind_of(p)) for p, t in files.items()}
    var_file = parsed.pop("envs/prod.tfvars")
    model = build_terraform(list(parsed.values()), Settings(), var_files=[var_file],
                            cli_vars={"d": "cli", "n": "5", "l": '["x", "y"]'})
    q = by_address(model)["aws_sqs_queue.q"]
    assert q.attrs["name"] == "tfvars/auto-b/var-file/cli"
    assert q.attrs["delay_seconds"] == 5
    assert q.attrs["tags"] == {"l": "x,y"}
    assert q.attrs["policy"] is UNKNOWN


def test_count_and_for_each_rules():
    model = build_text({
        "main.tf": '''
variable "on" { default = false }
variable "names" { default = [] }
variable "set_off" { default = true }
resource "aws_instance" "flag" {
  count = var.on ? 1 : 0
  instance_type = "p3.2xlarge"
  tags = { i = count.index }
}
resource "aws_instance" "each_default_empty" {
  for_each = toset(var.names)
  instance_type = each.value
}
resource "aws_instance" "off_by_tfvars" {
  count = var.set_off ? 1 : 0
}
resource "aws_instance" "listed" {
  for_each = { a = "g5.xlarge", b = "p5.48xlarge" }
  instance_type = each.value
  tags = { key = each.key }
}
resource "aws_instance" "unknown_count" {
  count = length(data.aws_subnets.x.ids)
  tags  = { i = count.index }
}
''',
        "terraform.tfvars": "set_off = false\n",
    })
    r = by_address(model)
    assert sorted(r) == ['aws_instance.each_default_empty["*"]' if False else "aws_instance.each_default_empty[*]",
                         "aws_instance.flag[0]", 'aws_instance.listed["a"]', 'aws_instance.listed["b"]',
                         "aws_instance.unknown_count[*]"]
    assert r["aws_instance.flag[0]"].attrs["tags"] == {"i": 0}
    assert r["aws_instance.each_default_empty[*]"].attrs["instance_type"] is UNKNOWN
    assert r['aws_instance.listed["b"]'].attrs == {"instance_type": "p5.48xlarge", "tags": {"key": "b"}}
    assert r["aws_instance.unknown_count[*]"].attrs["tags"] == {"i": UNKNOWN}


def test_dynamic_blocks_and_references_to_instances():
    model = build_text({"main.tf": '''
locals {
  rules = { logs = 7, ckpt = 30 }
}
resource "aws_s3_bucket" "b" {
  count  = 2
  bucket = "bucket-${count.index}"
}
resource "aws_s3_bucket_lifecycle_configuration" "l" {
  bucket = aws_s3_bucket.b[1].bucket
  dynamic "rule" {
    for_each = local.rules
    iterator = r
    content {
      id     = r.key
      status = "Enabled"
      expiration {
        days = r.value
      }
    }
  }
  dynamic "rule" {
    for_each = var.more_rules
    content {
      id = rule.key
    }
  }
}
variable "more_rules" {}
resource "aws_sqs_queue" "q" {
  name = join(",", aws_s3_bucket.b[*].bucket)
}
'''})
    r = by_address(model)
    lc = r["aws_s3_bucket_lifecycle_configuration.l"]
    assert lc.attrs["bucket"] == "bucket-1"
    assert lc.attrs["rule"] is UNKNOWN        # the second dynamic block's for_each is unknown
    assert r["aws_sqs_queue.q"].attrs["name"] == "bucket-0,bucket-1"
    assert lc.loc("rule").line == 11


def test_dynamic_block_rows_and_locations():
    model = build_text({"main.tf": '''
resource "aws_s3_bucket_lifecycle_configuration" "l" {
  bucket = "x"
  rule {
    id = "static"
  }
  dynamic "rule" {
    for_each = ["a", "b"]
    content {
      id = rule.value
    }
  }
}
'''})
    lc = by_address(model)["aws_s3_bucket_lifecycle_configuration.l"]
    assert lc.attrs["rule"] == [{"id": "static"}, {"id": "a"}, {"id": "b"}]
    assert lc.loc("rule.0.id").line == 5
    assert lc.loc("rule.2.id").line == 10
    assert lc.loc("rule.id").line == 5


def test_nested_modules_outputs_and_addresses():
    model = build_text({
        "live/main.tf": '''
module "platform" {
  source = "../modules/platform"
  region_tag = "x"
}
resource "aws_sqs_queue" "q" {
  name = module.platform.bucket_name
}
''',
        "modules/platform/main.tf": '''
variable "region_tag" {}
module "store" {
  source = "../store"
  name   = "store-${var.region_tag}"
}
output "bucket_name" { value = module.store.name }
''',
        "modules/store/main.tf": '''
variable "name" {}
resource "aws_s3_bucket" "this" { bucket = var.name }
output "name" { value = aws_s3_bucket.this.bucket }
''',
    })
    r = by_address(model)
    assert set(r) == {"module.platform.module.store.aws_s3_bucket.this", "aws_sqs_queue.q"}
    b = r["module.platform.module.store.aws_s3_bucket.this"]
    assert b.attrs["bucket"] == "store-x"
    assert [c.path for c in b.module_calls] == ["live/main.tf", "modules/platform/main.tf"]
    assert r["aws_sqs_queue.q"].attrs["name"] == "store-x"


def test_unknown_tags_stay_unknown_and_aws_resource_region():
    model = build_text({"main.tf": '''
provider "aws" {
  region = "us-east-1"
  default_tags { tags = { team = "a" } }
}
variable "tags" { type = map(string) }
resource "aws_s3_bucket" "b" {
  bucket = "x"
  tags   = var.tags
}
resource "aws_autoscaling_group" "g" {
  max_size = 1
  min_size = 1
  tag {
    key                 = "team"
    value               = "ml"
    propagate_at_launch = true
  }
}
resource "aws_s3_bucket" "other_region" {
  region = "eu-central-1"
}
'''})
    r = by_address(model)
    assert r["aws_s3_bucket.b"].tags is UNKNOWN
    assert r["aws_autoscaling_group.g"].tags == {"team": "ml"}     # default_tags do not apply to ASGs
    assert r["aws_autoscaling_group.g"].tags_attribute == "tag"
    assert r["aws_s3_bucket.other_region"].region == "eu-central-1"


def test_step_budget_from_settings():
    from mlcost_lint.config import Settings
    model = build_text({"main.tf": '''
locals {
  big = [for a in range(200) : [for b in range(200) : b]]
}
resource "aws_sqs_queue" "q" {
  name = length(local.big)
  tags = { fine = "yes" }
}
'''}, settings=Settings(max_evaluation_steps=20_000))
    q = by_address(model)["aws_sqs_queue.q"]
    assert q.attrs == {"name": UNKNOWN, "tags": {"fine": "yes"}}
    assert [(loc.line, "evaluation steps" in msg) for loc, msg in model.diagnostics] == [(3, True)]


def test_eks_node_group_submodule_defaults_min_size_to_zero():
    """The submodule's own variable default is 0 (the root module's map uses 1)."""
    model = build_text({"main.tf": '''
module "gpu_nodes" {
  source         = "terraform-aws-modules/eks/aws//modules/eks-managed-node-group"
  version        = "~> 20.0"
  name           = "gpu"
  cluster_name   = "training"
  instance_types = ["g5.12xlarge"]
}
'''})
    (group,) = [r for r in model.resources if r.type == "aws_eks_node_group"]
    assert (group.attrs["min_size"], group.attrs["max_size"], group.attrs["desired_size"]) == (0, 3, 1)
