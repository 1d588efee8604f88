"""Bad or hostile Terraform never raises, hangs or grows without bound."""

import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mlcost_lint.config import Settings
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform import build_terraform
from mlcost_lint.parse import parse_bytes
from mlcost_lint.parse.document import FileKind
from mlcost_lint.parse.hcl import HclSyntaxError, parse_hcl

from conftest import build_text, by_address


def test_doubling_lists_and_nested_sharing_stop_quickly():
    lines = ["locals {", "  l0 = [1, 2, 3, 4]"]
    for i in range(1, 60):
        lines.append(f"  l{i} = [local.l{i-1}, local.l{i-1}]")   # shared structure, 2^59 leaves
    lines.append("  j = jsonencode(local.l59)")
    lines.append("  f = length(flatten(local.l59))")
    lines.append("}")
    lines.append('resource "aws_sqs_queue" "q" {\n  name = local.j\n  tags = { n = local.f, ok = "y" }\n  policy = local.l59\n}')
    start = time.perf_counter()
    model = build_text({"main.tf": "\n".join(lines) + "\n"})
    assert time.perf_counter() - start < 20
    q = by_address(model)["aws_sqs_queue.q"]
    assert q.attrs["name"] is UNKNOWN
    assert q.attrs["tags"] == {"n": UNKNOWN, "ok": "y"}
    from mlcost_lint.model.terraform.evaluator import bounded
    assert bounded(q.attrs["policy"])        # values handed to rules stay small
    assert any("over 200000 elements" in msg for _, msg in model.diagnostics)


def test_long_chain_of_locals_is_linear():
    n = 3000
    body = ["locals {", "  v0 = 1"] + [f"  v{i} = local.v{i-1} + 1" for i in range(1, n)] + ["}"]
    body.append(f'resource "aws_sqs_queue" "q" {{\n  delay_seconds = local.v{n-1}\n}}')
    model = build_text({"main.tf": "\n".join(body) + "\n"})
    assert by_address(model)["aws_sqs_queue.q"].attrs["delay_seconds"] == n


def test_mutual_module_recursion_and_missing_child():
    model = build_text({
        "main.tf": 'module "a" {\n  source = "./a"\n}\nmodule "gone" {\n  source = "./not-scanned"\n}\n'
                   'resource "aws_sqs_queue" "q" {\n  name = module.gone.x\n}\n',
        "a/main.tf": 'module "b" {\n  source = "../b"\n}\n',
        "b/main.tf": 'module "a" {\n  source = "../a"\n}\n',
    })
    assert by_address(model)["aws_sqs_queue.q"].attrs["name"] is UNKNOWN
    assert len(model.diagnostics) == 1


def test_files_with_parse_errors_are_skipped():
    bad = parse_bytes(b'resource "x" {', "bad.tf", FileKind.TERRAFORM)
    good = parse_bytes(b'resource "aws_sqs_queue" "q" {\n  name = "n"\n}\n', "good.tf", FileKind.TERRAFORM)
    model = build_terraform([bad, good], Settings())
    assert [r.address for r in model.resources] == ["aws_sqs_queue.q"]


HCL_PIECES = st.sampled_from([
    'resource "aws_instance" "x" {', "}", "count = ", "for_each = ", "var.a", "local.b", "module.m.o",
    "[for k, v in var.m : v]", "{", "merge(", ")", ",", '"${', "}", "\n", "locals {", "b = local.b",
    'module "m" {\n source = "./"\n}', "dynamic \"d\" {\n for_each = var.x\n content {}\n}", "1 / 0",
    "try(", "null", "-", "?", ":", "...", "[*]", ".id", "<<EOT\nx\nEOT\n", "= ", "x",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HCL_PIECES, max_size=40))
def test_random_hcl_never_raises(pieces):
    text = " ".join(pieces)
    try:
        parse_hcl(text, "fuzz.tf")
    except HclSyntaxError:
        return
    f = parse_bytes(text.encode(), "fuzz.tf", FileKind.TERRAFORM)
    build_terraform([f], Settings(max_evaluation_steps=50_000))


@pytest.mark.parametrize("data", [
    {"format_version": "1.2", "planned_values": {"root_module": {"resources": [None, 1, {"type": 5}]}}},
    {"format_version": "1.2", "planned_values": {"root_module": {"child_modules": [{"resources": "x"}]}},
     "configuration": {"provider_config": {"aws": {"expressions": {"default_tags": [{"tags": {"references": []}}]}}}}},
])
def test_malformed_plans(data):
    import json
    f = parse_bytes(json.dumps(data).encode(), "p.json", FileKind.JSON)
    build_terraform([f], Settings())


def test_the_evaluation_state_is_freed_without_the_collector():
    """The model and link stages run with the cyclic collector paused and
    then freeze what is left (gc_pause.gc_paused), so anything the
    evaluation state keeps in a reference cycle (every module source and its
    HCL trees) would stay to the end of the run: it must go by reference
    counting alone when build_terraform returns."""
    import gc

    from mlcost_lint.model.terraform.builder import Build
    from mlcost_lint.model.terraform.declarations import ModuleSource

    gc.collect()
    gc.disable()
    try:
        model = build_text({
            "main.tf": 'module "a" {\n  source = "./a"\n}\n',
            "a/main.tf": 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n',
        })
        left = [o for o in gc.get_objects() if isinstance(o, (Build, ModuleSource))]
    finally:
        gc.enable()
    assert [r.address for r in model.resources] == ["module.a.aws_s3_bucket.b"]
    assert left == []
