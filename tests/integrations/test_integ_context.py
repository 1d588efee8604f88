"""Explicit files (as pre-commit passes them) are linted with the whole
project as context, and only findings located in those files are reported."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from mlc_testing import run_cli

from .projects import POD, terraform_project, write

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: clf
  labels: {team: ml, project: clf, cost-center: cc-1}
spec:
  backoffLimit: 2
  activeDeadlineSeconds: 86400
  template:
    metadata:
      labels: {team: ml, project: clf, cost-center: cc-1}
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: trainer
          command: ["python", "train.py", "/workspace/configs/train.yaml"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""
CONFIG = """\
output_dir: /checkpoints/clf
per_device_train_batch_size: 32
learning_rate: 3.0e-05
bf16: true
save_strategy: epoch
save_total_limit: 2
logging_steps: 50
dataloader_num_workers: 4
"""


def _codes(out: str) -> list[tuple[str, str, int]]:
    return [(f["code"], f["path"], f["line"]) for f in json.loads(out)["findings"]]


def _git(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_changed_terraform_file_sees_variables_tfvars_and_provider_tags(tmp_path: Path):
    terraform_project(tmp_path)
    _git(tmp_path)
    r = run_cli("infra/nodes.tf", "--format", "json", "--select", "MLC101,MLC203", "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == [("MLC101", "infra/nodes.tf", 1), ("MLC203", "infra/nodes.tf", 9)]
    msgs = [f["message"] for f in json.loads(r.out)["findings"]]
    assert msgs[0].startswith("aws_eks_node_group.gpu lacks cost tag cost-center ")   # team/project from default_tags
    assert json.loads(r.out)["summary"]["files"] == 1
    # Without context the node group's size is unknown and the provider tags unseen.
    r = run_cli("infra/nodes.tf", "--format", "json", "--select", "MLC101,MLC203", "--no-project-context",
                "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == [("MLC101", "infra/nodes.tf", 1)]
    assert "lacks cost tags team, project, cost-center" in json.loads(r.out)["findings"][0]["message"]


def test_changed_job_is_checked_against_its_unchanged_config(tmp_path: Path):
    write(tmp_path, {"k8s/job.yaml": JOB, "configs/train.yaml": CONFIG, "k8s/other.yaml": POD})
    _git(tmp_path)
    r = run_cli("k8s/job.yaml", "--format", "json", "--no-cache", cwd=tmp_path)
    # MLC603 fires on the job only because the linked config uses DataLoader
    # workers; nothing from the other files (k8s/other.yaml's MLC102) is reported.
    assert _codes(r.out) == [("MLC603", "k8s/job.yaml", 20)], r.out
    finding = json.loads(r.out)["findings"][0]
    assert [(x["path"], x["line"]) for x in finding["related"]] == [("configs/train.yaml", 8), ("k8s/job.yaml", 17)]
    r = run_cli("k8s/job.yaml", "--format", "json", "--no-project-context", "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == []


def test_findings_located_in_other_files_are_not_reported(tmp_path: Path):
    write(tmp_path, {"k8s/job.yaml": JOB, "configs/train.yaml": CONFIG})
    _git(tmp_path)
    # Only the config changed: the job's MLC603 (which names the config as
    # related) is located in the job, so it is left to the full CI run.
    r = run_cli("configs/train.yaml", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == []
    r = run_cli("configs/train.yaml", "k8s/job.yaml", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == [("MLC603", "k8s/job.yaml", 20)]


def test_project_root_from_config_file_and_option(tmp_path: Path):
    terraform_project(tmp_path / "repo")
    (tmp_path / "repo" / ".mlcost-lint.toml").write_text('select = ["MLC203"]\n')
    # No git: the config file's folder is the root.
    r = run_cli("repo/infra/nodes.tf", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == [("MLC203", "repo/infra/nodes.tf", 9)]
    (tmp_path / "repo" / ".mlcost-lint.toml").unlink()
    r = run_cli("repo/infra/nodes.tf", "--select", "MLC203", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == []            # no config, no git: just the file
    r = run_cli("repo/infra/nodes.tf", "--select", "MLC203", "--project-root", "repo/infra", "--format", "json",
                "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == [("MLC203", "repo/infra/nodes.tf", 9)]


def test_folders_are_linted_as_before(tmp_path: Path):
    write(tmp_path, {"a/pod.yaml": POD, "b/pod.yaml": POD})
    _git(tmp_path)
    r = run_cli("a", "--format", "json", "--select", "MLC102", "--no-cache", cwd=tmp_path)
    assert _codes(r.out) == [("MLC102", "a/pod.yaml", 3)]
