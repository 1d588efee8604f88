"""MLC702 policy-violation: exact findings on the positive fixtures, none on
the negatives (unknown values included), and once through the real CLI."""

from __future__ import annotations

import json

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli, triples
from mlcost_lint.config import Policy

POLICY = Policy(allowed_gpu_types=["L4", "A100"], max_gpus_per_job=16,
                allowed_regions=["us-central1", "us-east-1"])

CODE = "MLC702"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC702', 'positive/aws.tf', 1, 'provider aws region eu-west-1 is not in allowed-regions [us-central1, us-east-1]; 2 resources use it: aws_instance.trainer, aws_s3_bucket.ckpt'),
    ('MLC702', 'positive/gcp.tf', 9, 'google_container_node_pool.h100 is in europe-west4 (location), not in allowed-regions [us-central1, us-east-1]; move it to an allowed region'),
    ('MLC702', 'positive/gcp.tf', 12, 'google_container_node_pool.h100 (a3-highgpu-8g) uses H100-80 GPUs, not in allowed-gpu-types [L4, A100]; use an allowed GPU type'),
    ('MLC702', 'positive/gcp.tf', 21, 'google_compute_instance.notebook (nvidia-tesla-t4) uses T4 GPUs, not in allowed-gpu-types [L4, A100]; use an allowed GPU type'),
    ('MLC702', 'positive/gcp.tf', 44, 'google_storage_bucket.datasets is in US (location), not in allowed-regions [us-central1, us-east-1]; move it to an allowed region'),
    ('MLC702', 'positive/k8s/pytorchjob.yaml', 13, 'PyTorchJob llama-70b-sft Master uses H100-80 GPUs, not in allowed-gpu-types [L4, A100]; use an allowed GPU type'),
    ('MLC702', 'positive/k8s/pytorchjob.yaml', 15, 'PyTorchJob llama-70b-sft Master is pinned to region europe-west4 (topology.kubernetes.io/region) not in allowed-regions [us-central1, us-east-1]'),
    ('MLC702', 'positive/k8s/pytorchjob.yaml', 22, 'PyTorchJob llama-70b-sft requests 32 GPUs over all replicas (Master 1 x 8, Worker 3 x 8), above max-gpus-per-job 16; split the job or lower its replicas or GPUs per pod'),
    ('MLC702', 'positive/k8s/pytorchjob.yaml', 28, 'PyTorchJob llama-70b-sft Worker uses H100-80 GPUs, not in allowed-gpu-types [L4, A100]; use an allowed GPU type'),
    ('MLC702', 'positive/k8s/pytorchjob.yaml', 30, 'PyTorchJob llama-70b-sft Worker is pinned to region europe-west4 (topology.kubernetes.io/region) not in allowed-regions [us-central1, us-east-1]'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive", cwd=BASE, policy=POLICY), CODE) == EXPECTED


@pytest.mark.parametrize("folder", ["negative"])
def test_negative_silent(folder):
    assert triples(lint_dir(BASE / folder, cwd=BASE, policy=POLICY), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, "--no-cache", cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]


def test_silent_without_policy():
    assert triples(lint_dir(BASE / "positive", cwd=BASE), CODE) == []


def test_zone_resolves_to_region():
    from mlcost_lint.rules.governance.mlc702_policy_violation import zone_region
    assert zone_region("us-central1-a") == "us-central1"
    assert zone_region("us-east-1a") == "us-east-1"
    assert zone_region("eastus-1") == "eastus"
