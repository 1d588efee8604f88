"""The CLI through the real entry point: exit codes, formats, stdin, config errors."""

from __future__ import annotations

import json
from pathlib import Path

from mlc_testing import run_cli

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


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pod.yaml").write_text(POD)
    # The organisation's convention turns on the cost-label rule (v2 default set).
    (tmp_path / ".mlcost-lint.toml").write_text('required-tags = ["team", "project", "cost-center"]\n')
    return tmp_path


def test_findings_exit_1_and_text_format(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--select", "MLC102", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    assert r.out.splitlines() == [
        "pod.yaml:3:1: MLC102 [warning] Pod trainer pod template lacks cost labels team, project, cost-center "
        "(required-tags); cost allocators read pod labels: add them to metadata.labels",
        "Found 1 finding (1 warning) in 1 file.",
    ]
    assert r.err == ""


def test_fail_on_and_exit_zero(tmp_path: Path):
    _project(tmp_path)
    assert run_cli(".", "--fail-on", "error", "--no-cache", cwd=tmp_path).code == 0
    assert run_cli(".", "--fail-on", "note", "--no-cache", cwd=tmp_path).code == 1
    assert run_cli(".", "--exit-zero", "--no-cache", cwd=tmp_path).code == 0
    assert run_cli(".", "--ignore", "MLC1", "--no-cache", cwd=tmp_path).code == 0


def test_clean_project_exits_0(tmp_path: Path):
    (tmp_path / "pod.yaml").write_text(POD.replace("  name: trainer\n",
                                                   "  name: trainer\n  labels: {team: a, project: b, CostCenter: c}\n"))
    r = run_cli("pod.yaml", "--no-cache", "--select", "missing-cost-labels", cwd=tmp_path)
    assert (r.code, r.out) == (0, "No findings in 1 file.\nMLC101/MLC102 check the suggested keys team, project, "
                                  "cost-center: set required-tags in .mlcost-lint.toml to use your own.\n")


def test_json_format_and_output_file(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--format", "json", "-o", "out.json", "--no-cache", cwd=tmp_path)
    assert r.code == 1 and r.out == ""
    doc = json.loads((tmp_path / "out.json").read_text())
    f = doc["findings"][0]
    assert (f["code"], f["name"], f["level"], f["path"], f["line"], f["column"], f["address"]) == (
        "MLC102", "missing-cost-labels", "warning", "pod.yaml", 3, 1, "Pod/default/trainer/template")
    assert len(f["fingerprint"]) == 32
    assert doc["summary"] == {"error": 0, "warning": 1, "note": 0, "files": 1}


def test_stdin(tmp_path: Path):
    r = run_cli("-", "--select", "MLC102", "--no-cache", stdin=POD, cwd=tmp_path)
    assert r.code == 1
    assert r.out.startswith("stdin:3:1: MLC102 [warning] Pod trainer")


def test_parse_error_does_not_stop_other_files(tmp_path: Path):
    _project(tmp_path)
    (tmp_path / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n")
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    lines = r.out.splitlines()
    assert lines[0].startswith("broken.yaml:5:1: MLC001 [error] YAML syntax error")
    assert lines[1].startswith("pod.yaml:3:1: MLC102 [warning]")


def test_config_error_is_one_line_exit_2(tmp_path: Path):
    _project(tmp_path)
    (tmp_path / ".mlcost-lint.toml").write_text("required_tags = ['team']\n")
    r = run_cli(".", cwd=tmp_path)
    assert r.code == 2 and r.out == ""
    assert r.err.strip().startswith("mlcost-lint: error: ") and "unknown key 'required_tags'" in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


def test_usage_errors_are_one_line_exit_2(tmp_path: Path):
    for args in (["--format", "xml"], ["--select", "MLC999"], ["--jobs", "0"], ["--bogus"]):
        r = run_cli(*args, ".", cwd=tmp_path)
        assert r.code == 2, args
        assert len(r.err.strip().splitlines()) == 1 and r.err.startswith("mlcost-lint: error: "), (args, r.err)


def test_rules_and_explain():
    r = run_cli("rules")
    assert r.code == 0 and "MLC102  missing-cost-labels" in r.out
    r = run_cli("explain", "missing-cost-labels")
    assert r.code == 0
    assert r.out.startswith("# MLC102 missing-cost-labels\n")
    for section in ("## What it does", "## Why is this expensive", "## Example", "## Fix"):
        assert section in r.out
    assert run_cli("explain", "MLC999").code == 2


def test_version():
    r = run_cli("--version")
    assert r.code == 0 and r.out.startswith("mlcost-lint ")


def test_missing_path_glob_and_var_file_are_usage_errors(tmp_path: Path):
    """A mistyped CI path is exit 2 with one line, never a finding --exit-zero could hide."""
    _project(tmp_path)
    for args, line in ((["nope"], "mlcost-lint: error: path 'nope' does not exist"),
                       (["infra/*.tf", "--exit-zero"], "mlcost-lint: error: path 'infra/*.tf' matched no file (glob)"),
                       ([".", "--var-file", "prod.tfvars"],
                        "mlcost-lint: error: --var-file 'prod.tfvars' does not exist or is not a file")):
        r = run_cli(*args, "--no-cache", cwd=tmp_path)
        assert (r.code, r.out, r.err.splitlines()) == (2, "", [line]), args


def test_unreadable_folder_and_file_are_mlc001_and_the_rest_is_linted(tmp_path: Path, monkeypatch):
    """Tests run as root here, so permissions are simulated where the OS is asked."""
    import os as os_module

    from mlcost_lint.config import Settings
    from mlcost_lint.pipeline import LintOptions, lint

    _project(tmp_path)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "job.yaml").write_text(POD)
    (tmp_path / "secret.yaml").write_text(POD.replace("trainer", "other"))
    real_scandir, real_open = os_module.scandir, Path.open

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    def open_(self, *args, **kwargs):
        if self.name == "secret.yaml":
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    real_os_open = os_module.open

    def os_open(path, flags, *args, **kwargs):     # files are read through os.open (mlcost_lint.safe_io)
        if os_module.path.basename(path) == "secret.yaml":
            raise PermissionError(13, "Permission denied", str(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os_module, "scandir", scandir)
    monkeypatch.setattr(Path, "open", open_)
    monkeypatch.setattr(os_module, "open", os_open)
    monkeypatch.chdir(tmp_path)
    result = lint(["."], Settings(root=tmp_path, required_tags=["team"]), LintOptions(use_cache=False, jobs=1))
    got = sorted((f.code, f.location.path, f.message) for f in result.findings)
    assert ("MLC001", "locked", "cannot read directory: Permission denied") in got
    assert ("MLC001", "secret.yaml", "cannot read file: Permission denied") in got
    assert any(code == "MLC102" and path == "pod.yaml" for code, path, _ in got)
