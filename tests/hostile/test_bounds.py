"""Resource bounds: file size, nesting depth and Terraform evaluation steps
are configurable in the config file and end as MLC001 with a clear message."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fuzzing import internal_errors, lint_tree
from hostile_helpers import findings_of
from mlc_testing import run_cli

from mlcost_lint.config import load_settings

CONFIGMAP = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
# 200 x 200 products: 40,000 values, far over a 1,000-step budget, instant under the default.
SQUARE = b"""locals {
  a = [for i in range(200) : i]
  b = [for x in local.a : [for y in local.a : x * y]]
}
resource "aws_s3_bucket" "b" {
  bucket = "b-${length(local.b)}"
  tags   = { team = "a", project = "b", "cost-center" = "c" }
}
"""
DOUBLING = b"locals {\n  l0 = [1, 1]\n" + b"".join(
    b"  l%d = concat(local.l%d, local.l%d)\n" % (i, i - 1, i - 1) for i in range(1, 64)) + b"}\n" + \
    b'resource "aws_s3_bucket" "d" {\n  bucket = "d-${length(local.l63)}"\n}\n'


def _project(tmp_path: Path, config: str, files: dict[str, bytes]) -> tuple[Path, object]:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".mlcost-lint.toml").write_text(config)
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root, load_settings(None, root)


def test_max_file_size_from_the_config_file(tmp_path: Path):
    big = CONFIGMAP + b"data:\n  k: " + b"x" * 600_000 + b"\n"
    root, settings = _project(tmp_path, "max-file-size-mb = 0.5\n", {"big.yaml": big, "small.yaml": CONFIGMAP})
    result = lint_tree(root, settings)
    assert findings_of(result) == [
        ("MLC001", "big.yaml", 1, 1, "file is 0.6 MB, over the 0.5 MB limit (max-file-size-mb); not parsed")]
    assert [cm.name for cm in result.project.kubernetes.config_maps] == ["cm"]


def test_max_nesting_depth_from_the_config_file(tmp_path: Path):
    nested = CONFIGMAP + b"data:\n  x: " + b"[" * 30 + b"]" * 30 + b"\n"
    json_nested = b'{"apiVersion": "v1", "kind": "ConfigMap", "data": ' + b'{"a": ' * 30 + b"1" + b"}" * 31
    root, settings = _project(tmp_path, "max-nesting-depth = 20\n", {"deep.yaml": nested, "deep.json": json_nested})
    assert settings.max_nesting_depth == 20
    result = lint_tree(root, settings)
    assert findings_of(result) == [
        ("MLC001", "deep.json", 1, 1, "nesting deeper than 20 levels (max-nesting-depth)"),
        ("MLC001", "deep.yaml", 6, 25, "nesting deeper than 20 levels (max-nesting-depth)"),
    ]


def test_max_evaluation_steps_from_the_config_file(tmp_path: Path):
    root, settings = _project(tmp_path, "max-evaluation-steps = 1000\n", {"main.tf": SQUARE})
    result = lint_tree(root, settings)
    assert [f for f in findings_of(result) if f[0] == "MLC001"] == [
        ("MLC001", "main.tf", 3, 3,
         "Terraform evaluation stopped after 1000 steps (max-evaluation-steps); remaining values are unknown")]
    # The resource is still modelled; the value that ran out is unknown, never a guess.
    bucket = result.project.terraform.of_type("aws_s3_bucket")[0]
    assert repr(bucket.attrs["bucket"]) == "UNKNOWN"


def test_default_evaluation_budget_stops_exponential_terraform(tmp_path: Path):
    """2^64 elements by doubling: each value gets a twentieth of the budget."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "main.tf").write_bytes(DOUBLING)
    start = time.monotonic()
    result = lint_tree(root)
    assert time.monotonic() - start < 20
    assert internal_errors(result) == []
    errors = [f for f in findings_of(result) if f[0] == "MLC001"]
    assert errors and all("evaluation steps" in f[4] for f in errors), errors
    assert repr(result.project.terraform.of_type("aws_s3_bucket")[0].attrs["bucket"]) == "UNKNOWN"


@pytest.mark.parametrize(("line", "message"), [
    ("max-file-size-mb = 0", "invalid value for 'max-file-size-mb': expected a number > 0, got 0"),
    ("max-nesting-depth = -3", "invalid value for 'max-nesting-depth': expected a number >= 1, got -3"),
    ("max-evaluation-steps = \"many\"", "invalid value for 'max-evaluation-steps': expected integer, got \"many\""),
])
def test_bad_bound_values_are_exit_2_with_the_key(line: str, message: str, tmp_path: Path):
    (tmp_path / ".mlcost-lint.toml").write_text(line + "\n")
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.code == 2
    assert r.err == f"mlcost-lint: error: {tmp_path / '.mlcost-lint.toml'}: {message}\n"


def test_bounds_through_the_real_cli(tmp_path: Path):
    root, _ = _project(tmp_path, "max-file-size-mb = 0.5\nmax-nesting-depth = 20\nmax-evaluation-steps = 1000\n", {
        "big.yaml": CONFIGMAP + b"data:\n  k: " + b"x" * 600_000 + b"\n",
        "deep.yaml": CONFIGMAP + b"data:\n  x: " + b"[" * 30 + b"]" * 30 + b"\n",
        "main.tf": SQUARE,
    })
    r = run_cli(".", "--no-cache", "--select", "MLC001", cwd=root)
    assert r.code == 1 and "Traceback" not in r.err
    assert r.out.splitlines()[:3] == [
        "big.yaml:1:1: MLC001 [error] file is 0.6 MB, over the 0.5 MB limit (max-file-size-mb); not parsed",
        "deep.yaml:6:25: MLC001 [error] nesting deeper than 20 levels (max-nesting-depth)",
        "main.tf:3:3: MLC001 [error] Terraform evaluation stopped after 1000 steps (max-evaluation-steps); "
        "remaining values are unknown",
    ]


# ------------------------------------------------- hostile config files ---

@pytest.mark.parametrize(("name", "content", "message"), [
    (".mlcost-lint.toml", b"select = " + b"[" * 5000 + b"]" * 5000 + b"\n", "invalid TOML: nested too deeply"),
    (".mlcost-lint.toml", b"\xff\xfeselect = []\n", "invalid TOML: not valid UTF-8 at byte 0"),
    ("pyproject.toml", b"\x00\x00", "invalid TOML: Invalid statement (at line 1, column 1)"),
    (".mlcost-lint.toml", b"select = " + b"[" * 200 + b"]" * 200 + b"\n",
     "invalid value for 'select.0': expected string, got [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[..."),
])
def test_hostile_config_files_are_a_one_line_config_error(name: str, content: bytes, message: str, tmp_path: Path):
    from mlcost_lint.config import ConfigError

    (tmp_path / name).write_bytes(content)
    with pytest.raises(ConfigError) as err:
        load_settings(None, tmp_path)
    assert str(err.value) == f"{tmp_path / name}: {message}"


@pytest.mark.parametrize("content", [b"tool = 1\n", b"tool = [1, 2]\n", b"[tool]\nother = 1\n"])
def test_pyproject_whose_tool_is_not_ours_is_ignored(content: bytes, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_bytes(content)
    assert load_settings(None, tmp_path).source is None
    assert load_settings(tmp_path / "pyproject.toml", tmp_path).max_nesting_depth == 500


def test_max_nesting_depth_applies_to_hcl(tmp_path: Path):
    nested = b"locals {\n  x = " + b"[" * 30 + b"1" + b"]" * 30 + b"\n}\n"
    root, settings = _project(tmp_path, "max-nesting-depth = 20\n", {"main.tf": nested})
    found = [f for f in findings_of(lint_tree(root, settings)) if f[0] == "MLC001"]
    assert [f[2:] for f in found] == [(2, 26, "nesting deeper than 20 levels (max-nesting-depth)")]


def test_hcl_nesting_skips_strings_and_comments():
    from mlcost_lint.parse import hcl_nesting

    text = 'a = "[[[[[[" # {{{{{{\n/* (((((( */ b = [[1]] // ]]]]\nc = "\\"[[[["\n'
    assert hcl_nesting(text, 2) is None
    assert hcl_nesting(text, 1) == (2, 19)


def test_hcl_nesting_decides_as_the_character_walk():
    """The regex depth check says "too deep" exactly when the character walk
    (kept for the position) finds a bracket past the limit: random texts of
    the characters that matter (quotes, escapes, line breaks, the three
    comment forms, brackets) and every fixture .tf file."""
    import random

    from mlcost_lint.parse import _hcl_nesting_position, hcl_nesting

    rnd = random.Random(17)
    alphabet = '"\\\n#/*{}[]()a '
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40))) for _ in range(20000)]
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    texts += [p.read_text(errors="replace") for p in sorted(fixtures.rglob("*.tf"))]
    assert len(texts) > 20000
    deep = 0
    for text in texts:
        for limit in (0, 1, 2, 4, 8):
            expected = _hcl_nesting_position(text, limit)
            assert hcl_nesting(text, limit) == expected, (text, limit)
            deep += expected is not None
    assert deep > 1000   # both answers are exercised
