"""A rule that raises is an internal error, never a silent loss (rules.md, "The
default set (v2)"): exit 2 whatever --exit-zero/--fail-on say, one line on stderr
with the rule, the file and the reason (--debug: the traceback), a JSON `errors`
entry, a SARIF toolExecutionNotifications entry, and every other finding kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlc_testing import FIXTURES, ROOT, run_cli, triples

VALIDATOR = ROOT.parent / "shared" / "tools" / "validate-sarif"

# The real entry point, with MLC203 replaced by a rule that reports one
# finding and then raises on the object it is checking.
RAISING_MAIN = """
import sys
from mlcost_lint.rules.compute.mlc203_idle_gpu_capacity import IdleGpuCapacity

def check(self, project, settings):
    for resource in project.terraform.resources:
        yield self.finding("reported before the failure", resource.location, resource.address)
        raise RuntimeError("boom on " + resource.address)

IdleGpuCapacity.check = check
from mlcost_lint.cli import main
sys.argv = ["mlcost-lint", *sys.argv[1:]]
main()
"""

TF = """\
resource "aws_eks_node_group" "gpu" {
  cluster_name   = "c"
  instance_types = ["g5.xlarge"]
  scaling_config {
    min_size     = 1
    desired_size = 1
    max_size     = 2
  }
}
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: t
        image: pytorch/pytorch
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "main.tf").write_text(TF)
    (tmp_path / "job.yaml").write_text(JOB)
    return tmp_path


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RAISING_MAIN, *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})


def test_text_exit_2_one_line_and_other_findings_kept(tmp_path: Path):
    _project(tmp_path)
    for extra in ((), ("--exit-zero",), ("--fail-on", "never")):
        r = _run(tmp_path, ".", "--no-cache", *extra)
        assert r.returncode == 2, (extra, r.stderr)
        assert r.stderr.splitlines() == [
            "mlcost-lint: internal error in MLC203 while checking main.tf (other rules still ran): "
            "RuntimeError: boom on aws_eks_node_group.gpu"]
        assert "job.yaml:4:1: MLC204 [warning] Job train holds 1 GPU with no run-time bound" in r.stdout
        assert "main.tf:1:1: MLC203 [warning] reported before the failure" in r.stdout


def test_debug_prints_the_traceback(tmp_path: Path):
    _project(tmp_path)
    r = _run(tmp_path, ".", "--no-cache", "--debug")
    assert r.returncode == 2
    assert "Traceback (most recent call last)" in r.stderr and "RuntimeError: boom on aws_eks_node_group.gpu" in r.stderr.splitlines()[-1]


def test_json_errors_entry(tmp_path: Path):
    _project(tmp_path)
    r = _run(tmp_path, ".", "--no-cache", "--format", "json")
    assert r.returncode == 2
    doc = json.loads(r.stdout)
    assert doc["errors"] == [{"code": "MLC203", "message": "RuntimeError: boom on aws_eks_node_group.gpu",
                              "path": "main.tf"}]
    assert {f["code"] for f in doc["findings"]} >= {"MLC203", "MLC204"}


def test_sarif_tool_execution_notification(tmp_path: Path):
    _project(tmp_path)
    r = _run(tmp_path, ".", "--no-cache", "--format", "sarif", "-o", "out.sarif")
    assert r.returncode == 2
    log = json.loads((tmp_path / "out.sarif").read_text())
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    note = invocation["toolExecutionNotifications"][0]
    assert note["level"] == "error" and note["associatedRule"]["id"] == "MLC203"
    assert "boom on aws_eks_node_group.gpu" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "main.tf"
    if not VALIDATOR.exists():
        pytest.skip("../shared/tools/validate-sarif is not beside the repository")
    v = subprocess.run([sys.executable, str(VALIDATOR), "--no-multitool", str(tmp_path / "out.sarif")],
                       capture_output=True, text=True, timeout=300)
    assert v.returncode == 0 and "0 error(s)" in v.stdout, v.stdout + v.stderr


def test_a_clean_run_says_execution_successful(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--no-cache", "--format", "sarif", cwd=tmp_path)
    assert r.code == 1
    assert json.loads(r.out)["runs"][0]["invocations"] == [{"executionSuccessful": True}]
    assert json.loads(run_cli(".", "--no-cache", "--format", "json", cwd=tmp_path).out)["errors"] == []


def test_unknown_launch_template_no_longer_drops_mlc203(tmp_path: Path):
    """The real trigger: an EKS node group without instance_types whose launch_template is
    unknown (a dynamic block over a variable with no value) made capacity.py test an unknown
    for truth, MLC203 raised, and every MLC203 finding of the scan was lost with exit 0."""
    (tmp_path / "main.tf").write_text((FIXTURES / "rules" / "MLC203" / "unknown_launch_template.tf").read_text())
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.code == 1 and r.err == "", r.err
    assert r.out.splitlines()[0] == (
        "main.tf:32:5: MLC203 [warning] EKS node group aws_eks_node_group.gpu keeps 2 x g5.xlarge = 2 A10G GPUs "
        "running with no job (scaling_config.min_size = 2); set scaling_config.min_size = 0 and desired_size = 0; "
        "a cluster autoscaler or Karpenter must run in the cluster to add nodes when jobs arrive "
        "(at least ~$1,469/month)")    # 2 x g5.xlarge x $1.006/h (cheapest region) x 730 h
