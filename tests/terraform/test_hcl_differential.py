"""The recursive-descent HCL parser (hcl_descent.py) against the reference,
python-hcl2's Lark parse converted by hcl_reference.py (issue 17, item 3).

1. Every .tf / .tfvars of fixtures/, ../shared/corpus, ../shared/corpus-v2
   and a generated bench repository: an equal HclBody (positions included)
   where the reference accepts; the same error position where it rejects.
2. The CLI's JSON output is identical with either parser.
3. Syntax errors stay MLC001 with python-hcl2's position.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mlc_testing import FIXTURES, ROOT, run_cli
from mlcost_lint.parse import hcl as H
from mlcost_lint.parse.hcl import HclSyntaxError, check_heredocs_closed
from mlcost_lint.parse.hcl_descent import parse_expression_descent, parse_hcl_descent
from mlcost_lint.parse.hcl_reference import parse_expression_reference, parse_hcl_reference

SHARED = ROOT.parent / "shared"

# Files the reference rejects and the new parser reads, with the reason
# (valid HCL that python-hcl2 8.1.4 rejects). None today in these trees.
REFERENCE_REJECTS_VALID: dict[str, str] = {}


def _outcome(parse, text: str):
    try:
        return "ok", parse(text, "t.tf")
    except HclSyntaxError as exc:
        return "error", (exc.line, exc.column)


def _tf_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".tf", ".tfvars") and p.is_file())


def _differential(files: list[Path], base: Path) -> dict[str, int]:
    counts = {"equal": 0, "both reject": 0, "listed": 0}
    problems = []
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        try:
            check_heredocs_closed(text)    # both parsers' callers run it first
        except HclSyntaxError:
            counts["both reject"] += 1
            continue
        ref = _outcome(parse_hcl_reference, text)
        new = _outcome(parse_hcl_descent, text)
        name = str(path.relative_to(base))
        if ref[0] == "ok" and new[0] == "ok":
            if ref[1] == new[1]:
                counts["equal"] += 1
            else:
                problems.append(f"{name}: different trees")
        elif ref[0] == "error" and new[0] == "error":
            if ref[1][0] == new[1][0]:
                counts["both reject"] += 1
            else:
                problems.append(f"{name}: reference rejects at {ref[1]}, new parser at {new[1]}")
        elif ref[0] == "error" and name in REFERENCE_REJECTS_VALID:
            counts["listed"] += 1
        else:
            problems.append(f"{name}: reference {ref[0]} {ref[1] if ref[0] == 'error' else ''}, new parser {new[0]}")
    assert problems == []
    return counts


def test_differential_fixtures():
    counts = _differential(_tf_files(FIXTURES), FIXTURES)
    assert counts["equal"] >= 40


@pytest.mark.parametrize("name", ["corpus", "corpus-v2"])
def test_differential_shared_corpora(name: str):
    root = SHARED / name
    if not root.is_dir():
        pytest.skip(f"../shared/{name} is not beside this clone")
    files = _tf_files(root)
    counts = _differential(files, root)
    assert sum(counts.values()) == len(files)
    assert counts["equal"] >= (0 if name == "corpus" else 700)


def test_differential_generated_bench_repo(tmp_path: Path):
    subprocess.run([sys.executable, str(ROOT / "bench" / "generate.py"), str(tmp_path / "repo"), "--files", "300"],
                   check=True, capture_output=True)
    files = _tf_files(tmp_path / "repo")
    assert len(files) > 50
    counts = _differential(files, tmp_path / "repo")
    assert counts["equal"] == len(files)


def test_mutated_files_fail_at_the_same_position():
    """Broken variants of the fixtures (a character deleted or inserted, the
    text cut, a line dropped): both parsers reject at the same line and
    column, or both accept with equal trees."""
    rng = random.Random(17)
    files = [p for p in _tf_files(FIXTURES) if p.stat().st_size > 0]
    texts = [p.read_text() for p in files]
    compared = 0
    for _ in range(600):
        text = rng.choice(texts)
        i = rng.randrange(len(text))
        op = rng.randrange(4)
        if op == 0:
            text = text[:i] + text[i + 1:]
        elif op == 1:
            text = text[:i] + rng.choice('{}[]()"=,.:?$%~\n#*-<>!') + text[i:]
        elif op == 2:
            text = text[:i]
        else:
            j = text.find("\n", i)
            text = text[:i] + text[j + 1:] if j > 0 else text
        try:
            check_heredocs_closed(text)
        except HclSyntaxError:
            continue
        ref, new = _outcome(parse_hcl_reference, text), _outcome(parse_hcl_descent, text)
        assert ref == new, text
        compared += 1
    assert compared > 500


# -- the CLI, with either parser ------------------------------------------------

def _json(path: Path, reference: bool) -> str:
    env = {"_MLCOST_LINT_HCL_REFERENCE": "1"} if reference else {"_MLCOST_LINT_HCL_REFERENCE": "0"}
    result = run_cli(str(path), "--format", "json", "--no-cache", cwd=ROOT, env=env, timeout=300)
    assert result.code in (0, 1), result.err
    return result.out


@pytest.mark.parametrize("repo", [
    "fixtures/demo",
    "../shared/corpus-v2/terraform-aws-modules__terraform-aws-cloudwatch",
    "../shared/corpus-v2/NVIDIA__nvidia-terraform-modules",
])
def test_cli_output_identical_with_the_reference_parser(repo: str):
    path = (ROOT / repo).resolve()
    if not path.is_dir():
        pytest.skip(f"{repo} is not beside this clone")
    new = _json(path, reference=False)
    assert json.loads(new)["summary"]["files"] > 0
    assert new == _json(path, reference=True)


@pytest.mark.parametrize("text, line, column, message", [
    ('resource "aws_instance" "x" {\n  count = 1\n', 3, 1, "unexpected end of file"),            # unclosed brace
    ('resource "aws_instance" "x" {\n  count 1\n}\n', 2, 9, "unexpected '1'"),                    # missing =
    ('locals {\n  a = 1\n  ) b = 2\n}\n', 3, 3, "unexpected ')'"),                                 # stray token
    ('locals {\n  ) b = 2\n}\n', 2, 3, "unexpected ') b = 2'"),                                  # stray token
    ('locals {\n  a = [1, 2 3]\n}\n', 2, 13, "unexpected '3'"),                                   # missing comma
    ('locals {\n  a = "abc\n}\n', 2, 8, "unexpected end of file"),                                # unterminated string
    ('locals {\n  a = "x-${var.b"\n}\n', 2, 17, "unexpected '\"'"),                              # unclosed ${
    ('locals {\n  a = <<EOT\n  x\n}\n', 2, 7, "heredoc <<EOT is never closed (no line 'EOT' after it)"),
])
def test_syntax_errors_through_the_cli(tmp_path: Path, text: str, line: int, column: int, message: str):
    (tmp_path / "main.tf").write_text(text)
    for reference in (False, True):
        doc = json.loads(_json(tmp_path, reference))
        found = [(f["code"], f["line"], f["column"], f["message"]) for f in doc["findings"]]
        assert found == [("MLC001", line, column, message)], ("reference" if reference else "descent")


# -- where the new parser reads valid HCL python-hcl2 rejects -------------------

def test_unicode_identifiers_are_read():
    body = parse_hcl_descent('locals {\n  größe = 1\n  b = local.größe\n}\n', "u.tf")
    attrs = body.blocks[0].attributes
    assert attrs["größe"] == H.Attribute("größe", H.Literal(1, 2, 11), 2, 3, 2)
    assert attrs["b"].expr == H.Traversal("local", (H.GetAttr("größe"),), 3, 7)
    with pytest.raises(HclSyntaxError):
        parse_hcl_reference('locals {\n  größe = 1\n}\n', "u.tf")


def test_strip_markers_on_interpolations():
    expr = parse_expression_descent('"a ${~ var.x ~} b"', 1, 1)
    assert expr == H.Template(["a", H.Traversal("var", (H.GetAttr("x"),), 1, 8), "b"], 1, 1)
    with pytest.raises(HclSyntaxError):
        parse_expression_reference('"a ${~ var.x ~} b"', 1, 1)


def test_positions_of_expressions_match_the_reference():
    for text, line, col in [("var.a + 1", 7, 10), ("\n\n  f(x)[0].y", 3, 5), ('{ a = "${b}" }', 1, 40),
                            ("[for k, v in m : v if k != \"x\"]", 2, 2), ("-1.5e3", 1, 1), ("a ? b : c", 4, 4)]:
        assert parse_expression_descent(text, line, col) == parse_expression_reference(text, line, col)


def test_deep_nesting_and_long_chains_are_syntax_errors():
    for text in ["x = " + "[" * 5000 + "]" * 5000, "x = " + "1 + " * 5000 + "1", 'x = ' + '"${' * 3000 + "1" + '}"' * 3000,
                 "b {\n" * 3000 + "}\n" * 3000]:
        with pytest.raises(HclSyntaxError) as info:
            parse_hcl_descent(text, "deep.tf")
        assert (info.value.line, info.value.column, info.value.message) == (1, 1, "nesting too deep")


def test_the_tool_uses_the_descent_parser():
    assert H.USE_REFERENCE is False
    before = list(H.FALLBACKS)
    body = H.parse_hcl('a = 1\n', "x.tf")
    assert body == parse_hcl_descent('a = 1\n', "x.tf")
    assert H.FALLBACKS == before
