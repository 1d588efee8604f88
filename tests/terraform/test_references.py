"""CloudResource.references: what each argument's value is taken from, recorded
by the evaluator as values flow (HCL and .tf.json) and read from a plan's
configuration section."""

from __future__ import annotations

from conftest import build_dir, build_text, by_address


def refs(model) -> dict:
    return {r.address: r.references for r in model.resources if r.references}


def test_module_boundary_and_each_value():
    assert refs(build_dir("references/modules")) == {
        "aws_s3_bucket_versioning.checkpoints": {"bucket": ("aws_s3_bucket.checkpoints",)},
        'aws_s3_bucket_versioning.shards["eval"]': {"bucket": ('aws_s3_bucket.shards["eval"]',)},
        'aws_s3_bucket_versioning.shards["train"]': {"bucket": ('aws_s3_bucket.shards["train"]',)},
        # var.bucket_id inside the child: the parent's resource, with the parent's (empty) prefix
        "module.checkpoint_lifecycle.aws_s3_bucket_lifecycle_configuration.this": {
            "bucket": ("aws_s3_bucket.checkpoints",)},
        'module.shard_lifecycle["eval"].aws_s3_bucket_lifecycle_configuration.this': {
            "bucket": ('aws_s3_bucket.shards["eval"]',)},
        'module.shard_lifecycle["train"].aws_s3_bucket_lifecycle_configuration.this': {
            "bucket": ('aws_s3_bucket.shards["train"]',)},
    }


def test_plan_configuration_references_map_to_planned_instances():
    # the same configuration as references/modules, as `terraform show -json` writes it
    assert refs(build_dir("references/plan")) == refs(build_dir("references/modules"))


def test_tf_json_uses_the_same_evaluator():
    assert refs(build_dir("references/json")) == {
        "aws_s3_bucket_versioning.checkpoints": {"bucket": ("aws_s3_bucket.checkpoints",)},
        'aws_s3_bucket_lifecycle_configuration.each["checkpoints"]': {"bucket": ("aws_s3_bucket.checkpoints",)},
        'aws_s3_bucket_lifecycle_configuration.each["raw"]': {"bucket": ("aws_s3_bucket.raw",)},
        # "${aws_s3_bucket.raw.id}-logs" is a new string, not the bucket: no reference
    }


def test_data_source_reference():
    assert refs(build_dir("references/external")) == {
        "aws_s3_bucket_lifecycle_configuration.shared_datasets": {
            "bucket": ("data.aws_s3_bucket.shared_datasets",)},
    }


FLOWS = '''
variable "create" {}
variable "name" {}
locals {
  ids     = { a = aws_s3_bucket.ckpt["a"].id, b = aws_s3_bucket.ckpt["b"].id }
  all_ids = [for b in aws_s3_bucket.ckpt : b.id]
  merged  = merge(local.ids, { c = aws_s3_bucket.single.id })
}
resource "aws_s3_bucket" "ckpt" {
  for_each = toset(["a", "b"])
  bucket   = "ckpt-${each.key}"
}
resource "aws_s3_bucket" "single" {
  bucket = "single"
}
resource "aws_s3_bucket" "maybe" {
  count = var.create ? 1 : 0
}
resource "aws_s3_bucket" "pool" {
  count = 2
}
resource "aws_s3_bucket_versioning" "t" {
  for_each = toset(["a", "b"])
  bucket   = aws_s3_bucket.ckpt[each.key].id
  versioning_configuration {
    status = "Enabled"
  }
}
resource "aws_s3_bucket_versioning" "u" {
  bucket = aws_s3_bucket.ckpt[var.name].id
  versioning_configuration {
    status = local.ids["a"]
  }
}
resource "null_resource" "flows" {
  triggers = {}
  from_local     = local.ids["b"]
  from_merge     = local.merged["c"]
  from_list      = local.all_ids[1]
  whole_list     = local.all_ids
  conditional    = var.create ? aws_s3_bucket.maybe[0].id : "external"
  known_branch   = true ? aws_s3_bucket.single.id : aws_s3_bucket.pool[0].id
  first          = coalesce(var.name, aws_s3_bucket.single.id)
  attempt        = try(aws_s3_bucket.maybe[0].id, aws_s3_bucket.single.id)
  by_lookup      = lookup(local.ids, "a", "none")
  by_element     = element([aws_s3_bucket.pool[0].id, aws_s3_bucket.pool[1].id], 1)
  splat          = aws_s3_bucket.pool[*].arn
  unknown_count  = aws_s3_bucket.maybe[0].arn
  derived        = "${aws_s3_bucket.single.id}-logs"
  formatted      = format("%s", aws_s3_bucket.single.id)
  length_of      = length(local.all_ids)
  compared       = aws_s3_bucket.single.id == "x"
}
'''


def test_reference_flows():
    model = build_text({"live/main.tf": FLOWS})
    got = by_address(model)
    assert got['aws_s3_bucket_versioning.t["a"]'].references == {"bucket": ('aws_s3_bucket.ckpt["a"]',)}
    assert got['aws_s3_bucket_versioning.t["b"]'].references == {"bucket": ('aws_s3_bucket.ckpt["b"]',)}
    # an unknown key: the whole resource; nested block arguments by indexed and plain path
    assert got["aws_s3_bucket_versioning.u"].references == {
        "bucket": ("aws_s3_bucket.ckpt",),
        "versioning_configuration.0.status": ('aws_s3_bucket.ckpt["a"]',),
        "versioning_configuration.status": ('aws_s3_bucket.ckpt["a"]',),
    }
    assert got["null_resource.flows"].references == {
        "from_local": ('aws_s3_bucket.ckpt["b"]',),
        "from_merge": ("aws_s3_bucket.single",),
        "from_list": ('aws_s3_bucket.ckpt["b"]',),
        "whole_list": ('aws_s3_bucket.ckpt["a"]', 'aws_s3_bucket.ckpt["b"]'),
        "conditional": ("aws_s3_bucket.maybe",),        # either branch: the unknown-count resource
        "known_branch": ("aws_s3_bucket.single",),
        "first": ("aws_s3_bucket.single",),
        "attempt": ("aws_s3_bucket.maybe",),
        "by_lookup": ('aws_s3_bucket.ckpt["a"]',),
        "by_element": ("aws_s3_bucket.pool[1]",),
        "splat": ("aws_s3_bucket.pool[0]", "aws_s3_bucket.pool[1]"),
        "unknown_count": ("aws_s3_bucket.maybe",),
    }


def test_module_outputs_and_unknown_instances():
    model = build_text({
        "live/main.tf": '''
variable "n" {}
module "store" {
  source = "../modules/store"
}
module "many" {
  source = "../modules/store"
  count  = var.n
}
resource "aws_s3_bucket_versioning" "a" {
  bucket = module.store.own_id
  versioning_configuration {
    status = "Enabled"
  }
}
resource "aws_s3_bucket_versioning" "b" {
  bucket = module.many[0].own_id
  versioning_configuration {
    status = "Enabled"
  }
}
''',
        "modules/store/main.tf": '''
resource "aws_s3_bucket" "own" {
  bucket_prefix = "own-"
}
output "own_id" {
  value = aws_s3_bucket.own.id
}
''',
    })
    got = refs(model)
    assert got == {
        "aws_s3_bucket_versioning.a": {"bucket": ("module.store.aws_s3_bucket.own",)},
        # one evaluation stands for every instance of a call with unknown count
        "aws_s3_bucket_versioning.b": {"bucket": ("module.many[*].aws_s3_bucket.own",)},
    }
    assert "module.many[*].aws_s3_bucket.own" in by_address(model)


def test_references_do_not_change_values():
    model = build_text({"live/main.tf": FLOWS})
    flows = by_address(model)["null_resource.flows"].attrs
    assert flows["from_local"] is flows["conditional"]   # both UNKNOWN (computed ids)
    assert flows["known_branch"] is flows["first"]
    assert flows["compared"] is flows["derived"]
    assert by_address(model)['aws_s3_bucket_versioning.t["a"]'].attrs["versioning_configuration"] == [
        {"status": "Enabled"}]
