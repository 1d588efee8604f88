"""Seeing why, and output habits, through the real CLI (issue 15, points 3
and 4): -v/--verbose (what each file was read as; per GPU workload the
links and what ruled each node pool out), -q/--quiet, --show-settings,
the summary on stderr with -o, --statistics with --format json, and
--color with NO_COLOR / FORCE_COLOR."""

from __future__ import annotations

import json
from pathlib import Path

from mlc_testing import run_cli

NODES = """\
resource "aws_eks_node_group" "gpu" {
  cluster_name    = "training"
  node_group_name = "gpu"
  node_role_arn   = "arn:aws:iam::123456789012:role/nodes"
  subnet_ids      = ["subnet-1"]
  instance_types  = ["p4d.24xlarge"]
  labels          = { workload = "training" }
  taint {
    key    = "nvidia.com/gpu"
    value  = "true"
    effect = "NO_SCHEDULE"
  }
  scaling_config {
    min_size     = 0
    desired_size = 0
    max_size     = 4
  }
}

resource "aws_eks_node_group" "cpu" {
  cluster_name    = "training"
  node_group_name = "cpu"
  node_role_arn   = "arn:aws:iam::123456789012:role/nodes"
  subnet_ids      = ["subnet-1"]
  instance_types  = ["m5.xlarge"]
  scaling_config {
    min_size     = 1
    desired_size = 1
    max_size     = 4
  }
}
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      nodeSelector:
        workload: training
%s      restartPolicy: Never
      containers:
        - name: trainer
          image: trainer:1
          command: ["torchrun", "--nproc_per_node=8", "train.py"]
          resources:
            limits:
              nvidia.com/gpu: 8
"""
TOLERATION = "      tolerations:\n        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
MLC204 = ("k8s/job.yaml:5:1: MLC204 [warning] Job train holds 8 GPUs with no run-time bound; a hung run keeps them "
          "until someone notices: set spec.activeDeadlineSeconds (price unknown)")


def _project(tmp_path: Path, toleration: str = "") -> Path:
    (tmp_path / "infra").mkdir()
    (tmp_path / "k8s").mkdir()
    (tmp_path / "infra" / "nodes.tf").write_text(NODES)
    (tmp_path / "k8s" / "job.yaml").write_text(JOB % toleration)
    return tmp_path


def test_verbose_says_why_no_node_pool_matched(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "-v", "--select", "MLC204", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.out.splitlines() == [MLC204, "Found 1 finding (1 warning) in 2 files."]   # stdout unchanged by -v
    assert r.err.splitlines() == [
        "mlcost-lint: file infra/nodes.tf: Terraform",
        "mlcost-lint: file k8s/job.yaml: Kubernetes: Job/train",
        "mlcost-lint: workload Job/default/train (k8s/job.yaml:6), 8 GPUs: launcher torchrun "
        "(torchrun --nproc_per_node=8)",
        "mlcost-lint:   no node pool matched:",
        "mlcost-lint:     aws_eks_node_group.gpu: taint nvidia.com/gpu=true:NoSchedule is not tolerated",
        "mlcost-lint:     aws_eks_node_group.cpu: it does not carry the label workload=training the pod selects",
    ]


def test_verbose_shows_the_links_made(tmp_path: Path):
    _project(tmp_path, TOLERATION)
    r = run_cli(".", "-v", "--select", "MLC204", "--no-cache", cwd=tmp_path)
    assert ("mlcost-lint: workload Job/default/train (k8s/job.yaml:6), 8 GPUs: node pool aws_eks_node_group.gpu "
            "(nodeSelector workload=training); launcher torchrun (torchrun --nproc_per_node=8)") in r.err.splitlines()
    assert "no node pool matched" not in r.err


def test_verbose_with_no_pool_in_the_scan(tmp_path: Path):
    _project(tmp_path)
    r = run_cli("k8s", "-v", "--select", "MLC204", "--no-cache", cwd=tmp_path)
    assert r.err.splitlines()[-1] == ("mlcost-lint:   no node pool matched: the scan has no Terraform node group / "
                                      "pool or Karpenter NodePool")


def test_quiet_prints_findings_only(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "-q", "--select", "MLC204", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out, r.err) == (1, MLC204 + "\n", "")
    r = run_cli(".", "-q", "--format", "full", "--select", "MLC204", "--no-cache", cwd=tmp_path)
    assert r.out.splitlines()[-2:] == [("    = fix: Set activeDeadlineSeconds (runPolicy.activeDeadlineSeconds for "
                                        "Kubeflow) above the expected run time."),
                                       "    = cost: price unknown: cloud unknown"]
    assert "Found" not in r.out
    r = run_cli(".", "-q", "--select", "MLC301", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "")
    r = run_cli(".", "-q", "-v", cwd=tmp_path)
    assert (r.code, r.err) == (2, "mlcost-lint: error: -v/--verbose and -q/--quiet cannot be used together\n")


def test_show_settings_says_where_each_value_came_from(tmp_path: Path):
    _project(tmp_path)
    (tmp_path / ".mlcost-lint.toml").write_text('ignore = ["MLC603"]\nmax-job-backoff-limit = 3\n'
                                                '[policy]\nmax-gpus-per-job = 8\n')
    r = run_cli("--show-settings", "--ignore", "MLC204", "--exclude", "tmp/", "--no-respect-gitignore", cwd=tmp_path)
    assert r.code == 0 and r.err == ""
    lines = r.out.splitlines()
    src = str(tmp_path / ".mlcost-lint.toml")
    assert lines[0] == f"# config file: {src} (relative globs from {tmp_path})"
    rows = {line.split(" = ")[0]: line.split(" = ", 1)[1] for line in lines[1:]}
    assert {k: " ".join(v.split()) for k, v in rows.items() if k in (
        "ignore", "exclude", "respect-gitignore", "max-job-backoff-limit", "select", "policy.max-gpus-per-job",
        "policy.allowed-regions", "required-tags")} == {
        "select": "[] # default",
        "ignore": f'["MLC603", "MLC204"] # {src} + --ignore',
        "exclude": '["tmp/"] # --exclude',
        "respect-gitignore": "false # --no-respect-gitignore",
        "required-tags": "(unset) # default",
        "max-job-backoff-limit": f"3 # {src}",
        "policy.max-gpus-per-job": f"8 # {src}",
        "policy.allowed-regions": "(unset) # default",
    }
    assert not (tmp_path / ".mlcost_lint_cache").exists()      # nothing was linted
    r = run_cli("--show-settings", cwd=tmp_path / "k8s", env={"HOME": str(tmp_path)})
    assert r.out.splitlines()[0] == f"# config file: {src} (relative globs from {tmp_path})"


def test_summary_goes_to_stderr_with_output_file(tmp_path: Path):
    _project(tmp_path)
    for fmt in ("json", "sarif", "text"):
        # Linted: infra and k8s (the reports written beside them are not read back).
        r = run_cli("infra", "k8s", "--format", fmt, "-o", f"out.{fmt}", "--select", "MLC204", "--no-cache",
                    cwd=tmp_path)
        assert (r.code, r.out) == (1, "")
        assert r.err == f"Found 1 finding (1 warning) in 2 files. Report written to out.{fmt}.\n"
    assert (tmp_path / "out.text").read_text() == MLC204 + "\nFound 1 finding (1 warning) in 2 files.\n"
    r = run_cli(".", "--format", "json", "-o", "again.json", "-q", "--select", "MLC204", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out, r.err) == (1, "", "")


def test_statistics_honours_format_json(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--statistics", "--format", "json", "--select", "MLC204,MLC603", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert json.loads(r.out) == [
        {"code": "MLC204", "name": "gpu-job-without-deadline", "level": "warning", "count": 1, "fixable": False,
         "cost": {"always_on_usd_per_month": None, "always_on_findings": 0, "always_on_at_least": False,
                  "held_usd_per_hour": None, "held_findings": 0, "held_at_least": False,
                  "price_unknown_findings": 1}},
        {"code": "MLC603", "name": "missing-shm-volume", "level": "warning", "count": 1, "fixable": False},
    ]
    text = run_cli(".", "--statistics", "--select", "MLC204,MLC603", "--no-cache", cwd=tmp_path).out
    assert text == "1  MLC204  gpu-job-without-deadline\n1  MLC603  missing-shm-volume\n"


def test_color_auto_always_never_and_the_environment(tmp_path: Path):
    _project(tmp_path)
    bold = "\x1b[1mk8s/job.yaml:5:1:\x1b[0m \x1b[33mMLC204\x1b[0m [warning] Job train"
    args = (".", "--select", "MLC204", "--no-cache")

    def first_line(*extra: str, **env: str) -> str:
        # run_cli sets NO_COLOR=1 unless told otherwise; stdout is a pipe (auto: no colour).
        return run_cli(*args, *extra, cwd=tmp_path, env={"NO_COLOR": "", "FORCE_COLOR": "", **env}).out.splitlines()[0]

    assert first_line() == MLC204                                   # auto, not a terminal
    assert first_line(FORCE_COLOR="1").startswith(bold)             # auto + FORCE_COLOR
    assert first_line(FORCE_COLOR="0") == MLC204                    # "0" does not force
    assert first_line(FORCE_COLOR="1", NO_COLOR="1") == MLC204      # NO_COLOR wins over FORCE_COLOR
    assert first_line("--color", "always", NO_COLOR="1").startswith(bold)   # the option wins over both
    assert first_line("--color", "never", FORCE_COLOR="1") == MLC204
    r = run_cli(*args, "--format", "json", "--color", "always", cwd=tmp_path)
    assert "\x1b[" not in r.out                                     # only text and full are coloured
