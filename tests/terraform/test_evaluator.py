"""Expressions evaluated the way Terraform would; UNKNOWN where it cannot be known."""

import pytest

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform.budget import Budget
from mlcost_lint.model.terraform.evaluator import Evaluator, Scope
from mlcost_lint.model.terraform.values import ResourceValue
from mlcost_lint.parse.hcl import parse_expression

ROOTS = {
    "var": {"region": "us-east-1", "n": 3, "m": {"a": 1, "b": 2}, "l": ["x", "y", "x"],
            "unknown_map": UNKNOWN, "flag": True, "s": "7", "nested": [[1, [2]], 3]},
    "local": {"tags": {"team": "ml"}},
    "aws_s3_bucket": {"ckpt": ResourceValue({"bucket": "acme"}),
                      "many": [ResourceValue({"bucket": "b0"}), ResourceValue({"bucket": "b1"})]},
}


def ev(text):
    return Evaluator(Budget(100_000)).evaluate(parse_expression(text), Scope(ROOTS))


@pytest.mark.parametrize("text, expected", [
    ('"${var.region}-ckpt"', "us-east-1-ckpt"),
    ('"${var.n}"', 3),                       # a lone interpolation keeps its type
    ("var.n * 2 + 1", 7),
    ("var.s + 1", 8),                        # string to number conversion
    ("10 / 4", 2.5),
    ("7 % 4", 3),
    ("var.n > 2 && !false", True),
    ('var.n == "3"', False),                 # types must match for ==
    ("var.flag ? \"a\" : \"b\"", "b" if False else "a"),
    ("var.m[\"b\"]", 2),
    ("var.l[1]", "y"),
    ("var.l.0", "x"),
    ("aws_s3_bucket.ckpt.bucket", "acme"),
    ("aws_s3_bucket.many[*].bucket", ["b0", "b1"]),
    ("aws_s3_bucket.many.*.bucket", ["b0", "b1"]),
    ("[for k, v in var.m : \"${k}=${v}\" if v > 1]", ["b=2"]),
    ("{for k, v in var.m : v => k}", {"1": "a", "2": "b"}),
    ("{for s in var.l : s => s...}", {"x": ["x", "x"], "y": ["y"]}),
    ("merge(local.tags, {project = \"p\"})", {"team": "ml", "project": "p"}),
    ("merge({a = 1}, {a = 2})", {"a": 2}),
    ("concat([1], [2, 3])", [1, 2, 3]),
    ("lookup(var.m, \"z\", 9)", 9),
    ("try(var.m.z, \"fallback\")", "fallback"),
    ("can(var.m.z)", False),
    ("can(var.m.a)", True),
    ("coalesce(null, \"\", \"x\")", "x"),
    ("coalescelist([], [1])", [1]),
    ("format(\"%s-%03d\", \"n\", 7)", "n-007"),
    ("join(\",\", var.l)", "x,y,x"),
    ("split(\",\", \"a,b\")", ["a", "b"]),
    ("lower(\"AbC\")", "abc"),
    ("upper(\"abc\")", "ABC"),
    ("replace(\"a-b-c\", \"-\", \"_\")", "a_b_c"),
    ("replace(\"a1b22\", \"/[0-9]+/\", \"#\")", "a#b#"),
    ("toset(var.l)", ["x", "y"]),
    ("tolist([1])", [1]),
    ("tomap({a = 1})", {"a": 1}),
    ("keys(var.m)", ["a", "b"]),
    ("values(var.m)", [1, 2]),
    ("length(var.l)", 3),
    ("contains(var.l, \"y\")", True),
    ("element(var.l, 4)", "y"),
    ("flatten(var.nested)", [1, 2, 3]),
    ("distinct(var.l)", ["x", "y"]),
    ("jsonencode({b = 1, a = [true]})", '{"a":[true],"b":1}'),
    ("jsondecode(\"{\\\"a\\\": 1.0}\")", {"a": 1}),
    ("min(3, 1, 2)", 1),
    ("max(var.l...)" if False else "max([4, 9]...)", 9),
    ("trimspace(\"  x \")", "x"),
    ("substr(\"abcdef\", 1, 3)", "bcd"),
    ("startswith(\"p4d\", \"p4\")", True),
    ("endswith(\"p4d\", \"d\")", True),
    ("range(3)", [0, 1, 2]),
    ("\"%{ if var.flag }on%{ else }off%{ endif }\"", "on"),
    ("\"%{ for x in [1, 2] }<${x}>%{ endfor }\"", "<1><2>"),
])
def test_known_values(text, expected):
    assert ev(text) == expected


@pytest.mark.parametrize("text", [
    "var.missing_root_thing",            # undeclared variable -> error -> unknown
    "data.aws_ami.gpu.id",               # data sources
    "aws_s3_bucket.ckpt.arn",            # computed attribute
    "merge({a = 1}, var.unknown_map)",   # keys could be overridden
    "var.unknown_map[\"a\"]",
    "\"x-${var.unknown_map}\"",
    "var.unknown_map == {}",
    "timestamp()",                       # not modelled
    "file(\"x.json\")",
    "var.m[\"nope\"]",                   # an error outside try()
    "try(var.unknown_map.a, \"d\")",     # unknown first argument: unknown, as in Terraform
    "[for k, v in var.unknown_map : k]",
    "var.unknown_map ? 1 : 2",
    "1 / 0",
])
def test_unknown_values(text):
    assert ev(text) is UNKNOWN


def test_unknown_only_where_it_reaches():
    assert ev('{a = var.unknown_map, b = 1}') == {"a": UNKNOWN, "b": 1}
    assert ev("length([var.unknown_map, 1])") == 2
    assert ev("false && var.unknown_map") is False
    assert ev("true || var.unknown_map") is True


def test_budget_stops_exponential_values():
    budget = Budget(5_000)
    expr = parse_expression("[for a in range(100) : [for b in range(100) : [for c in range(100) : c]]]")
    evaluator = Evaluator(budget)
    from mlcost_lint.model.terraform.evaluator import BudgetExceeded
    with pytest.raises(BudgetExceeded):
        evaluator.evaluate(expr, Scope(ROOTS))
    assert budget.steps <= 5_000 + 200
