"""Terraform evaluation bounds (issue 16, items 14-16): every function
result is bounded (strings, lists, numbers), work inside functions is
charged before it is done, regexes are time-bounded, unterminated or
blank-filled heredocs are refused in linear time, and 40,000 exclude
patterns are refused (at most 1,000 are compiled, once).

Times were 3 s / 1.5 GB to over 30 s each before (bench/hostile_bounds.py);
each case here must finish in well under a second."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fuzzing import internal_errors, lint_tree
from hostile_helpers import findings_of
from mlc_testing import run_cli

from mlcost_lint.config import Settings
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.terraform.budget import Budget
from mlcost_lint.model.terraform.evaluator import Evaluator, Scope, ValueTooLarge
from mlcost_lint.parse.hcl import HclSyntaxError, parse_expression, parse_hcl

NL = "\\n"
ALIAS_BOMB = 'a: &a [x,x,x,x,x,x,x,x,x,x]\\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 10) + "]\\n" for i in range(8))


def ev(text: str, steps: int = 2_000_000):
    return Evaluator(Budget(steps)).evaluate(parse_expression(text), Scope({}))


@pytest.mark.parametrize(("expr", "what"), [
    ('format("%1500000000s", "x")',
     "format() would build a string of 1500000000 characters, over the 1000000-character bound"),
    ('format("%.999999999f", 1)',
     "format() would build a string of 999999999 characters, over the 1000000-character bound"),
    ('replace("' + "a" * 40 + '!", "/(a|a)*$/", "b")', "replace(): the regular expression ran over 0.25 s"),
    (f'yamldecode("{ALIAS_BOMB}")', "yamldecode() expands to over 1000000 nodes (YAML aliases)"),
    ('join("", [for i in range(600) : "' + "x" * 2000 + '"])',
     "join() would build a string of 1200000 characters, over the 1000000-character bound"),
    ('replace("' + "a" * 1000 + '", "a", "' + "b" * 2000 + '")',
     "replace() would build a string of 2000000 characters, over the 1000000-character bound"),
    ('"%{for i in range(2000)}' + "y" * 600 + '%{endfor}"',
     "template for would build a string of 1000200 characters, over the 1000000-character bound"),
])
def test_function_results_over_a_bound_are_refused_before_they_are_built(expr: str, what: str):
    start = time.monotonic()
    with pytest.raises(ValueTooLarge) as exc:
        Evaluator(Budget(10 ** 9)).eval(parse_expression(expr), Scope({}))
    assert time.monotonic() - start < 1.0
    assert exc.value.what == what


def test_squaring_loops_stop_at_the_number_bound():
    with pytest.raises(ValueTooLarge) as exc:
        ev("1" + "0" * 3000 + " * 1" + "0" * 3000 + " * 1" + "0" * 3000 + " * 1" + "0" * 3000 + " * 1" + "0" * 3000)
    assert exc.value.what.startswith("'*' gives a number of about ") and "over the 14000-bit bound" in exc.value.what
    assert ev("2 * 3 + 4") == 10


@pytest.mark.parametrize(("expr", "expected"), [
    ("length(distinct(range(20000)))", 20000),          # hashed: 2 x 10^8 comparisons before
    ('distinct([1, "1", true, 1, [1], [1], {a = 1}, {a = 1}, null, null])', [1, "1", True, [1], {"a": 1}, None]),
    (f'length(chomp("{NL * 40000}x{NL * 40000}"))', 40001),
    ('chomp("a\\r\\n\\n\\r")', "a"),
    ('replace("a-b--c", "/-+/", "_")', "a_b_c"),
    ('replace("v1.2", "/v(\\\\d+)\\\\.(\\\\d+)/", "$2.$1")', "2.1"),
    ('format("%5s|%-3d|%.2f", "x", 7, 3.14159)', "    x|7  |3.14"),
])
def test_bounded_functions_keep_their_answers(expr: str, expected):
    start = time.monotonic()
    assert ev(expr) == expected
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize(("name", "args"), [
    ("range", [1e308, -1e308, 1e308]),      # (stop - start) / step overflows to -inf
    ("range", [0, 1e308, 1e-308]),
    ("range", [-10 ** 400]),                # int / int past a float: OverflowError (fuzz seed 23)
    ("range", [0, 10 ** 400, 3]),
    ("ceil", [float("nan")]),
    ("floor", [float("inf")]),
    ("abs", [float("-inf")]),
])
def test_non_finite_numbers_are_an_evaluation_error_not_a_crash(name: str, args: list):
    # Found by bench/fuzz.py --targets functions (seed 20261203): these
    # raised OverflowError / ValueError, which try() and the evaluator do
    # not catch, so the whole module's evaluation failed.
    from mlcost_lint.model.terraform.functions import FUNCTIONS
    from mlcost_lint.model.terraform.values import EvalError

    with pytest.raises(EvalError):
        FUNCTIONS[name](*args)


def test_the_cli_reports_each_refused_value_and_keeps_the_rest(tmp_path: Path):
    (tmp_path / "main.tf").write_text(
        'locals {\n  wide = format("%1500000000s", "x")\n  fine = "ok"\n'
        '  back = replace("' + "a" * 40 + '!", "/(a|a)*$/", "b")\n}\n'
        'resource "aws_s3_bucket" "b" {\n  bucket = "b-${local.fine}"\n}\n'
        'resource "aws_s3_bucket" "c" {\n  bucket = "c-${local.wide}"\n}\n')
    start = time.monotonic()
    r = run_cli(".", "--no-cache", "--select", "MLC001", cwd=tmp_path)
    assert time.monotonic() - start < 10
    assert r.out.splitlines()[:2] == [
        "main.tf:2:3: MLC001 [error] value is too large to model: format() would build a string of 1500000000 "
        "characters, over the 1000000-character bound; treated as unknown",
        "main.tf:4:3: MLC001 [error] value is too large to model: replace(): the regular expression ran over "
        "0.25 s; treated as unknown",
    ]
    result = lint_tree(tmp_path, Settings(root=tmp_path))
    buckets = {b.name: b.attrs["bucket"] for b in result.project.terraform.of_type("aws_s3_bucket")}
    assert buckets == {"b": "b-ok", "c": UNKNOWN}
    assert internal_errors(result) == []


# ------------------------------------------------------------ heredocs ---

@pytest.mark.parametrize(("body", "message", "line"), [
    ("locals {\n  x = <<EOT\n" + " \n" * 100_000 + "}\n", "heredoc <<EOT is never closed (no line 'EOT' after it)", 2),
    ("locals {\n  x = <<-EOT\n" + " \n" * 100_000 + "x\n  EOT\n}\n",
     "heredoc <<EOT holds 100000 blank lines in a row (too slow to parse); not read", 3),
])
def test_hostile_heredocs_are_refused_in_linear_time(body: str, message: str, line: int):
    start = time.monotonic()
    with pytest.raises(HclSyntaxError) as exc:
        parse_hcl(body, "main.tf")
    assert time.monotonic() - start < 1.0
    assert (exc.value.message, exc.value.line) == (message, line)


@pytest.mark.parametrize("text", [
    'locals {\n  x = <<EOT\nhello\nEOT\n  y = <<-EOF\n    cat <<INNER\n    INNER\n    EOF\n}\n',
    '# x = <<NOPE\nlocals {\n  x = "a"\n}\n',
    'locals {\n  x = <<EOT\n' + "\n" * 50 + 'EOT\n}\n',
])
def test_ordinary_heredocs_still_parse(text: str):
    body = parse_hcl(text, "main.tf")
    assert body.blocks[0].type == "locals"


# ------------------------------------------------------------- excludes ---

def test_40000_exclude_patterns_are_a_config_error(tmp_path: Path):
    patterns = ", ".join(f'"build{i}/**/*.yaml"' for i in range(40_000))
    (tmp_path / ".mlcost-lint.toml").write_text(f"exclude = [{patterns}]\n")
    start = time.monotonic()
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert time.monotonic() - start < 10
    assert r.code == 2
    assert r.err.startswith(f"mlcost-lint: error: {tmp_path / '.mlcost-lint.toml'}: invalid value for 'exclude': "
                            "expected at most 1000 items, got [")


def test_1000_exclude_patterns_are_compiled_once_and_still_match(tmp_path: Path):
    files = {f"k8s/cm{i}.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n".encode()
             for i in range(100)}
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "job.yaml").write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}\n")
    excludes = [f"build{i}/**/*.yaml" for i in range(997)] + ["k8s/cm1?.yaml", "gen", "k8s/cm2.yaml"]
    start = time.monotonic()
    result = lint_tree(tmp_path, Settings(root=tmp_path, exclude=excludes))
    assert time.monotonic() - start < 10
    read = sorted(pf.path for pf in result.files if pf.path)
    assert "gen/job.yaml" not in read and "k8s/cm2.yaml" not in read and "k8s/cm15.yaml" not in read
    assert len(read) == 100 - 10 - 1
    assert findings_of(result) == []
