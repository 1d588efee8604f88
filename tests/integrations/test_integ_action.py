"""The GitHub Action (action.yml) and the example workflow.

GitHub's runner cannot run here, so the test checks the action's metadata
and runs its lint step's script with bash exactly as the runner would
(inputs in INPUT_* variables, $GITHUB_OUTPUT a file), with the mlcost-lint
of this checkout on PATH, then validates the SARIF it wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from mlc_testing import sarif_schema_errors

from .projects import POD, terraform_project, write

ROOT = Path(__file__).resolve().parents[2]


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _lint_step(action: dict) -> dict:
    return next(s for s in action["runs"]["steps"] if s.get("id") == "lint")


def test_action_metadata():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"paths", "format", "fail-on", "config", "args", "sarif-file", "python-version"}
    assert action["inputs"]["sarif-file"]["default"] == "mlcost-lint.sarif"
    assert action["inputs"]["format"]["default"] == "sarif"
    steps = action["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    install = steps[1]
    assert install["env"] == {"ACTION_PATH": "${{ github.action_path }}"}
    assert 'pip install' in install["run"] and '"$ACTION_PATH"' in install["run"]
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    lint = _lint_step(action)
    # Inputs are passed through env only, never expanded inside the script.
    assert "${{" not in lint["run"]
    assert set(action["outputs"]) == {"sarif-file", "exit-code"}


def test_example_workflow_uploads_sarif_with_category():
    wf = yaml.safe_load((ROOT / "examples" / "github-workflow.yml").read_text())
    job = wf["jobs"]["mlcost-lint"]
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    lint = next(s for s in steps if s.get("id") == "mlcost")
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert lint["with"]["format"] == "sarif"
    assert upload["with"]["category"] == "mlcost-lint"
    assert "steps.mlcost.outputs.sarif-file" in upload["with"]["sarif_file"]
    assert upload["if"] == "success() || failure()"


def _run_lint_step(workdir: Path, tmp_path: Path, **inputs: str) -> tuple[int, dict, str]:
    script = _lint_step(_action())["run"]
    output_file = tmp_path / "github_output"
    output_file.write_text("")
    env = {**os.environ, "GITHUB_OUTPUT": str(output_file), "NO_COLOR": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    # As the runner: bash --noprofile --norc -eo pipefail
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=300)
    outputs = dict(line.split("=", 1) for line in output_file.read_text().splitlines())
    return proc.returncode, outputs, proc.stdout + proc.stderr


def test_lint_step_writes_sarif_and_sets_outputs(tmp_path: Path):
    project = tmp_path / "repo"
    write(project, {"k8s/pod.yaml": POD})
    terraform_project(project)
    code, outputs, log = _run_lint_step(project, tmp_path, paths="k8s infra", format="sarif", fail_on="warning",
                                        config="", args="--no-cache --select MLC102,MLC203", sarif_file="mlcost-lint.sarif")
    assert code == 1, log
    assert outputs == {"sarif-file": "mlcost-lint.sarif", "exit-code": "1"}
    assert "mlcost-lint: SARIF report written to mlcost-lint.sarif" in log
    doc = json.loads((project / "mlcost-lint.sarif").read_text())
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["MLC203", "MLC102"]
    assert sarif_schema_errors(doc) == []


def test_lint_step_fail_on_never_and_github_format(tmp_path: Path):
    write(tmp_path / "repo", {"pod.yaml": POD})
    code, outputs, log = _run_lint_step(tmp_path / "repo", tmp_path, paths="", format="github", fail_on="never",
                                        config="", args="--no-cache", sarif_file="mlcost-lint.sarif")
    assert (code, outputs) == (0, {"sarif-file": "", "exit-code": "0"})
    assert "::warning file=pod.yaml,line=3,col=1,title=MLC102 missing-cost-labels::" in log
    assert not (tmp_path / "repo" / "mlcost-lint.sarif").exists()


def test_lint_step_config_error_is_exit_2(tmp_path: Path):
    write(tmp_path / "repo", {"pod.yaml": POD})
    code, outputs, log = _run_lint_step(tmp_path / "repo", tmp_path, paths=".", format="sarif", fail_on="warning",
                                        config="missing.toml", args="", sarif_file="out.sarif")
    assert (code, outputs["exit-code"]) == (2, "2")
    assert "mlcost-lint: error: missing.toml: config file not found" in log
