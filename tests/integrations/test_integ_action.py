"""The GitHub Action (action.yml) and the example workflow.

GitHub's runner cannot run here, so the test checks the action's metadata
and runs its lint step's script with bash exactly as the runner would
(inputs in INPUT_* variables, $GITHUB_OUTPUT a file), with the mlcost-lint
of this checkout on PATH, then validates the SARIF it wrote.
"""

from __future__ import annotations

import json
import os
import re
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


# Third-party actions are pinned by commit SHA, with the tag in a comment.
_PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def _pins(path: Path) -> list[tuple[str, str]]:
    """(uses, comment) of every ``uses:`` line."""
    out = []
    for line in path.read_text().splitlines():
        m = re.match(r"\s*(?:-\s*)?uses:\s*(\S+)\s*(#.*)?$", line)
        if m:
            out.append((m.group(1), (m.group(2) or "").strip()))
    return out


def test_action_metadata():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"paths", "format", "fail-on", "config", "args", "sarif-file", "python-version"}
    assert action["inputs"]["sarif-file"]["default"] == "mlcost-lint.sarif"
    assert action["inputs"]["format"]["default"] == "sarif"
    steps = action["runs"]["steps"]
    python, cache, install, lint = steps
    # The job's Python is never changed: setup-python only provides an interpreter for the venv.
    assert python["uses"].startswith("actions/setup-python@") and python["with"]["update-environment"] is False
    assert cache["uses"].startswith("actions/cache@") and cache["with"]["path"] == "~/.cache/pip"
    assert install["env"] == {"ACTION_PATH": "${{ github.action_path }}",
                              "PYTHON": "${{ steps.python.outputs.python-path }}",
                              "VENV": "${{ runner.temp }}/mlcost-lint-venv"}
    assert '"$PYTHON" -m venv "$VENV"' in install["run"]
    assert '"$bin/python" -m pip install' in install["run"] and '"$ACTION_PATH"' in install["run"]
    for step in (install, lint):
        assert "GITHUB_ENV" not in step["run"] and "GITHUB_PATH" not in step["run"]
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    # Inputs are passed through env only, never expanded inside the script.
    assert "${{" not in lint["run"] and "${{" not in install["run"]
    assert set(action["outputs"]) == {"sarif-file", "exit-code"}
    assert [(uses.split("@")[0], comment) for uses, comment in _pins(ROOT / "action.yml")] == [
        ("actions/setup-python", "# v5.6.0"), ("actions/cache", "# v4.2.3")]
    assert all(_PINNED.match(uses) for uses, _ in _pins(ROOT / "action.yml"))


def test_example_workflow_pins_third_party_actions_by_sha():
    pins = _pins(ROOT / "examples" / "github-workflow.yml")
    third_party = [(u, c) for u, c in pins if not u.startswith("mlcost-lint/")]
    assert [u.split("@")[0] for u, _ in third_party] == ["actions/checkout", "github/codeql-action/upload-sarif",
                                                         "actions/checkout"]
    assert all(_PINNED.match(u) and re.match(r"# v\d+\.\d+\.\d+$", c) for u, c in third_party), third_party
    text = (ROOT / "examples" / "github-workflow.yml").read_text()
    assert "private" in text and "GitHub Code Security" in text


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
    # The install step's output: the folder of the venv's python and mlcost-lint.
    env = {**os.environ, "GITHUB_OUTPUT": str(output_file), "NO_COLOR": "1",
           "MLCOST_LINT_BIN": str(Path(sys.executable).parent)}
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
    assert "mlcost-lint: SARIF report written to mlcost-lint.sarif (exit code 1)" in log
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
    assert outputs == {"sarif-file": "", "exit-code": "2"} and code == 2
    assert "mlcost-lint: error: missing.toml: config file not found" in log
    # Says why there is nothing for upload-sarif, as an annotation.
    assert ("::error title=mlcost-lint::no SARIF report was written to out.sarif: mlcost-lint exited with code 2 "
            "before reporting (a usage or configuration error: see the line above). Nothing to upload to code "
            "scanning.") in log.splitlines()


def test_lint_step_multiline_paths_and_quoted_args(tmp_path: Path):
    """paths one per line (a name with a space), args with a quoted value
    holding a space and a shell metacharacter that must not run."""
    project = tmp_path / "repo"
    other = POD.replace("trainer", "other")
    write(project, {"k8s/pod.yaml": POD, "my configs/pod.yaml": other, "sandbox dir/pod.yaml": other,
                    "ignored/pod.yaml": other})
    code, outputs, log = _run_lint_step(
        project, tmp_path, paths="\n  k8s\n my configs  \n\nsandbox dir\n", format="text", fail_on="warning",
        config="", args='--no-cache --extend-exclude "sandbox dir" --ignore \'MLC203;touch pwned\'',
        sarif_file="mlcost-lint.sarif")
    assert "unknown rule code or name 'MLC203;touch pwned'" in log      # one argument, never run
    assert not (project / "pwned").exists()
    assert (code, outputs) == (2, {"sarif-file": "", "exit-code": "2"})
    code, outputs, log = _run_lint_step(
        project, tmp_path, paths="k8s\nmy configs\nsandbox dir", format="text", fail_on="warning", config="",
        args='--no-cache --extend-exclude "sandbox dir" --select "MLC102"', sarif_file="mlcost-lint.sarif")
    assert (code, outputs) == (1, {"sarif-file": "", "exit-code": "1"}), log
    findings = [line.split(":")[0] for line in log.splitlines() if ": MLC102 " in line]
    assert findings == ["k8s/pod.yaml", "my configs/pod.yaml"]    # sandbox dir excluded, ignored/ not named


def test_lint_step_unbalanced_quote_in_args(tmp_path: Path):
    write(tmp_path / "repo", {"pod.yaml": POD})
    code, outputs, log = _run_lint_step(tmp_path / "repo", tmp_path, paths=".", format="sarif", fail_on="warning",
                                        config="", args='--select "MLC102', sarif_file="out.sarif")
    assert (code, outputs) == (2, {"sarif-file": "", "exit-code": "2"})
    assert log.splitlines()[0] == ('::error title=mlcost-lint::cannot split the args input (ValueError: No closing '
                                   'quotation): --select "MLC102')
