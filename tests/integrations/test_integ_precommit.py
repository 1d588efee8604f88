"""The pre-commit hook with the real pre-commit framework: a throwaway git
repository uses this checkout as its hook repository; a bad file blocks
the commit, a fixed one passes, a suppression works, and a changed job is
checked against its unchanged training config.

The hook environment is installed once per session (pip from the package
index, about 30-60 s); the test is skipped with a reason when pre-commit
is not installed or the environment cannot be built (no index reachable).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .projects import ORG_CONFIG, POD

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
FIX_PACKAGE = '"mlcost_lint.fix"'

GOOD_POD = POD.replace("metadata:\n  name: trainer\n",
                       "metadata:\n  name: trainer\n  labels: {team: ml, project: llm, cost-center: cc-1}\n")
SUPPRESSED_POD = POD.replace("metadata:\n", "# mlcost-lint: ignore[MLC102] labelled by the admission webhook\n"
                                            "metadata:\n")
JOB = (Path(__file__).parent / "data" / "fix" / "clf_job.yaml").read_text()


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    # stderr into stdout: git prints the hook's report on stderr.
    return subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=900)


def _git(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return _run(["git", "-c", "user.email=test@example.com", "-c", "user.name=test", *args], cwd, env)


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if not Path(PRE_COMMIT).exists():
        pytest.skip("pre-commit is not installed (pip install 'mlcost-lint[test]')")
    base = tmp_path_factory.mktemp("precommit")
    env = {**os.environ, "PRE_COMMIT_HOME": str(base / "home"), "NO_COLOR": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("GIT_DIR", None)
    # The hook repository: this working tree as pre-commit would clone it.
    hook_repo = base / "hook-repo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            dest = hook_repo / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    pyproject = hook_repo / "pyproject.toml"
    text = pyproject.read_text()
    if FIX_PACKAGE not in text:   # until the package list names mlcost_lint.fix
        pyproject.write_text(text.replace('    "mlcost_lint.report",\n',
                                          f'    "mlcost_lint.report",\n    {FIX_PACKAGE},\n'))
    _git(hook_repo, "init", "-q", env=env)
    _git(hook_repo, "add", "-A", env=env)
    assert _git(hook_repo, "commit", "-q", "-m", "snapshot", env=env).returncode == 0
    rev = _git(hook_repo, "rev-parse", "HEAD", env=env).stdout.strip()
    return {"env": env, "hook_repo": hook_repo, "rev": rev, "base": base}


def _project(hook_env: dict, name: str) -> Path:
    env = hook_env["env"]
    project = hook_env["base"] / name
    project.mkdir()
    _git(project, "init", "-q", env=env)
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {hook_env['hook_repo']}\n"
        f"    rev: {hook_env['rev']}\n"
        "    hooks:\n"
        "      - id: mlcost-lint\n")
    (project / ".mlcost-lint.toml").write_text(ORG_CONFIG)
    _git(project, "add", ".pre-commit-config.yaml", ".mlcost-lint.toml", env=env)
    _git(project, "commit", "-q", "--no-verify", "-m", "pre-commit config", env=env)
    r = _run([PRE_COMMIT, "install"], project, env)
    assert r.returncode == 0, r.stdout
    r = _run([PRE_COMMIT, "install-hooks"], project, env)
    if r.returncode != 0:
        pytest.skip(f"could not build the hook environment (package index unreachable?): {r.stdout[-300:]}")
    return project


def _commit(project: Path, env: dict, *paths: str) -> subprocess.CompletedProcess:
    _git(project, "add", *paths, env=env)
    return _git(project, "commit", "-m", "change", env=env)


def _head_files(project: Path, env: dict) -> list[str]:
    return _git(project, "ls-tree", "-r", "--name-only", "HEAD", env=env).stdout.split()


def test_bad_file_blocks_commit_fixed_passes_suppression_works(hook_env: dict):
    env = hook_env["env"]
    project = _project(hook_env, "commits")
    (project / "k8s").mkdir()
    (project / "k8s" / "pod.yaml").write_text(POD)
    r = _commit(project, env, "k8s/pod.yaml")
    assert r.returncode == 1
    assert "mlcost-lint" in r.stdout and "Failed" in r.stdout
    assert ("k8s/pod.yaml:3:1: MLC102 [warning] Pod trainer pod template lacks cost labels team, project, "
            "cost-center (required-tags); cost allocators read pod labels: add them to metadata.labels") in r.stdout
    assert "k8s/pod.yaml" not in _head_files(project, env)

    (project / "k8s" / "pod.yaml").write_text(GOOD_POD)
    r = _commit(project, env, "k8s/pod.yaml")
    assert r.returncode == 0, r.stdout
    assert "mlcost-lint" in r.stdout and "Passed" in r.stdout
    assert "k8s/pod.yaml" in _head_files(project, env)

    (project / "k8s" / "other.yaml").write_text(SUPPRESSED_POD.replace("trainer", "other"))
    r = _commit(project, env, "k8s/other.yaml")
    assert r.returncode == 0, r.stdout
    assert "k8s/other.yaml" in _head_files(project, env)


def test_changed_job_is_checked_against_committed_config(hook_env: dict):
    env = hook_env["env"]
    project = _project(hook_env, "links")
    (project / "configs").mkdir()
    (project / "k8s").mkdir()
    (project / "configs" / "train.yaml").write_text(
        "output_dir: /checkpoints/clf\nbf16: true\nsave_strategy: epoch\nsave_total_limit: 2\n"
        "logging_steps: 50\ndataloader_num_workers: 4\n")
    _git(project, "add", "configs/train.yaml", env=env)
    _git(project, "commit", "-q", "--no-verify", "-m", "config", env=env)
    job = JOB.replace("spec:\n  template:\n", "spec:\n  activeDeadlineSeconds: 86400\n  template:\n"
                      "    metadata:\n      labels: {team: ml, project: clf, cost-center: cc-1}\n")
    (project / "k8s" / "job.yaml").write_text(job)
    r = _run([PRE_COMMIT, "try-repo", str(hook_env["hook_repo"]), "mlcost-lint", "--files", "k8s/job.yaml"],
             project, env)
    assert r.returncode == 1, r.stdout
    lines = [line for line in r.stdout.splitlines() if ": MLC" in line]
    assert len(lines) == 1 and lines[0].startswith("k8s/job.yaml:") and " MLC603 " in lines[0], r.stdout
    assert "its training config configs/train.yaml uses 4 DataLoader workers" in lines[0]


def test_hook_types_cover_terraform_yaml_json_and_shell():
    """The hook's types_or, as pre-commit's own file identification
    (identify) tags each kind of file we read, Slurm/launch scripts included."""
    import yaml

    identify = pytest.importorskip("identify.identify")
    hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    types = set(hook["types_or"])
    assert types == {"terraform", "yaml", "json", "shell"}
    for name in ("main.tf", "prod.tfvars", "main.tf.json", "plan.json", "job.yaml", "job.yml", "ds_config.json",
                 "train.sh", "submit.sh"):
        assert identify.tags_from_filename(name) & types, name


def test_files_that_are_not_ours_pass_silently(hook_env: dict):
    env = hook_env["env"]
    project = _project(hook_env, "not-ours")
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / ".github" / "workflows" / "ci.yml").write_text(
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n")
    (project / "package.json").write_text('{"name": "web", "scripts": {"test": "jest"}}\n')
    (project / "train.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node=8 train.py\n")
    # A file of ours with findings, committed earlier: read only as context, and not here.
    (project / "pod.yaml").write_text(POD)
    _git(project, "add", "pod.yaml", env=env)
    _git(project, "commit", "-q", "--no-verify", "-m", "pod", env=env)
    r = _run([PRE_COMMIT, "run", "mlcost-lint", "--verbose", "--files", ".github/workflows/ci.yml",
              "package.json", "train.sh"], project, env)
    assert r.returncode == 0, r.stdout
    assert "Passed" in r.stdout
    hook_output = r.stdout.split("- duration:", 1)[1].splitlines()[1:]
    assert [line for line in hook_output if line.strip()] == [], r.stdout
