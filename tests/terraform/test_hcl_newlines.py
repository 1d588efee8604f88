"""HCL ignores newlines inside ( ), [ ], ${ } / %{ } and { for ... }:
files that terraform accepts must parse, evaluate and be linted (issue 11 §3.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mlcost_lint.parse.hcl import HclSyntaxError, Literal, Template, parse_hcl

from conftest import build_text, by_address

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "terraform" / "multiline_expressions"
CORPORA = [Path(__file__).resolve().parents[3] / "shared" / name for name in ("corpus", "corpus-v2")]


def test_interpolation_spanning_lines_parses_with_exact_positions():
    body = parse_hcl('x = "gke-${\n  var.regional ? "r" : "z"\n}-pool"\n', "main.tf")
    expr = body.attributes["x"].expr
    assert isinstance(expr, Template)
    assert expr.parts[0] == "gke-" and expr.parts[2] == "-pool"
    cond = expr.parts[1]
    assert (cond.line, cond.column) == (2, 3)
    assert isinstance(cond.true, Literal) and cond.true.value == "r"


def test_object_for_with_colon_and_arrow_on_their_own_lines():
    body = parse_hcl("m = {\n  for p in var.ps\n  : p.name\n  => p\n}\n", "main.tf")
    expr = body.attributes["m"].expr
    assert type(expr).__name__ == "ForExpr"
    assert expr.key.line == 3 and expr.value.line == 4


def test_newlines_still_separate_object_items_inside_brackets():
    body = parse_hcl("c = merge(\n  {a = 1\n   b = 2},\n  var.c\n)\n", "main.tf")
    obj = body.attributes["c"].expr.args[0]
    assert [item.key.value for item in obj.items] == ["a", "b"]


def test_comments_inside_parentheses_are_not_operators():
    # python-hcl2 alone folded the comment into the operator ('// c\n&&')
    body = parse_hcl('v = (\n  var.a != null  // c\n  && var.b != null\n)\n', "main.tf")
    assert body.attributes["v"].expr.expr.op == "&&"


def test_multiline_values_evaluate():
    model = build_text({"main.tf": FIXTURE.joinpath("main.tf").read_text()})
    group = by_address(model)["aws_cloudwatch_log_group.train"]
    assert group.attrs["name"] == "/ml/region-train"


def test_file_with_multiline_expressions_is_linted_not_mlc001(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "mlcost_lint", str(FIXTURE), "--format", "json"],
        capture_output=True, text=True, check=False)
    findings = json.loads(out.stdout)["findings"]
    assert [(f["code"], f["line"], f["message"]) for f in findings] == [(
        "MLC401", 21,
        "aws_cloudwatch_log_group.train has no retention_in_days: its logs never expire and are "
        "billed forever; set retention_in_days (at most 365, max-log-retention-days)")]


@pytest.mark.skipif(not all(p.is_dir() for p in CORPORA), reason="../shared corpora not beside the repository")
def test_every_corpus_tf_file_parses():
    rejected = []
    for root in CORPORA:
        for path in sorted(root.rglob("*.tf")):
            try:
                parse_hcl(path.read_text(errors="replace"), str(path))
            except HclSyntaxError as exc:
                rejected.append(f"{path}:{exc.line}: {exc.message}")
    assert rejected == []
