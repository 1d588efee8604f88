"""MLC204 gpu-job-without-deadline: exact findings on the positive fixtures, none on the negatives,
and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC204"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC204', 'positive/batch_crds.yaml', 5, 'RayJob ray-train holds 2 GPUs (gpu) with no run-time bound; a hung run keeps them until someone notices: set spec.activeDeadlineSeconds'),
    ('MLC204', 'positive/batch_crds.yaml', 46, "Volcano Job mpi-bert holds 8 GPUs (mpiworker) with no run-time bound; a hung run keeps them until someone notices: set activeDeadlineSeconds in the task's pod template spec"),
    ('MLC204', 'positive/batch_crds.yaml', 62, 'JobSet pretrain holds 32 GPUs (workers) with no run-time bound; a hung run keeps them until someone notices: set activeDeadlineSeconds on the child Job (replicatedJobs[].template.spec)'),
    ('MLC204', 'positive/jobs.yaml', 6, 'Job finetune-7b holds 4 GPUs with no run-time bound; a hung run keeps them until someone notices: set spec.activeDeadlineSeconds'),
    ('MLC204', 'positive/jobs.yaml', 28, 'CronJob nightly-eval holds 1 GPU with no run-time bound; a hung run keeps it until someone notices: set spec.jobTemplate.spec.activeDeadlineSeconds'),
    ('MLC204', 'positive/kubeflow.yaml', 7, 'PyTorchJob llama-sft holds 32 GPUs (Master, Worker) with no run-time bound; a hung run keeps them until someone notices: set spec.runPolicy.activeDeadlineSeconds'),
    ('MLC204', 'positive/kubeflow.yaml', 37, 'TrainJob qwen-lora holds 4 GPUs (trainer) with no run-time bound; a hung run keeps them until someone notices: set spec.activeDeadlineSeconds'),
    ('MLC204', 'positive/ray_multihost.yaml', 8, 'RayJob maxtext-pretrain holds 16 TPU chips (v5e-slices) with no run-time bound; a hung run keeps them until someone notices: set spec.activeDeadlineSeconds'),
    ('MLC204', 'positive/unknown_count.yaml', 6, 'Job nccl-allreduce holds an unknown number of GPUs with no run-time bound; a hung run keeps them until someone notices: set spec.activeDeadlineSeconds'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive"), CODE) == EXPECTED


def test_negative_silent():
    assert triples(lint_dir(BASE / "negative"), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]


def test_multi_host_ray_group_counts_pods():
    """KubeRay numOfHosts: a replica of a multi-host group is numOfHosts pods
    (found on the kuberay TPU multi-host sample: 1 replica x 2 hosts)."""
    result = lint_dir(BASE / "positive")
    job = next(w for w in result.project.kubernetes.workloads if w.name == "maxtext-pretrain")
    group = next(t for t in job.templates if t.role == "v5e-slices")
    assert (group.replicas, group.min_replicas, group.hosts_per_replica) == (4, 2, 2)


def test_kueue_and_dws_bounds_count():
    """Kueue max-exec-time label and the DWS maxRunDurationSeconds annotation are run-time bounds."""
    result = lint_dir(BASE / "negative" / "kueue_bounds.yaml", cwd=BASE)
    assert [w.name for w in result.project.kubernetes.workloads] == ["finetune-kueue", "finetune-dws"]
    assert triples(result, CODE) == []


def test_unknown_count_fires_only_the_rules_that_need_no_number():
    """rules.md: an unknown count is not an unknown kind (MLC204 fires; MLC201/MLC603 need the number)."""
    result = lint_dir(BASE / "positive" / "unknown_count.yaml", cwd=BASE)
    assert {f.code for f in result.findings} == {"MLC204"}
