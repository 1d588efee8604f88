"""SkyPilot task YAML: detected by content, read as a job (accelerators per
node, num_nodes, use_spot, infra/region, bucket file_mounts, the run block as
launcher lines). Exact findings on the positive fixtures, none on the
negatives (bucket-mounted checkpoints on spot, a Kubernetes infra, candidate
GPUs with different counts, a Kubernetes object, a resources block alone),
through the real CLI too; -v says why a SkyPilot-like YAML was not read;
hostile inputs."""

from __future__ import annotations

import json

import pytest
import yaml
from mlc_testing import FIXTURES, lint_dir, run_cli, triples

from mlcost_lint.config import Policy
from mlcost_lint.model.skypilot import accelerators, skypilot_task

BASE = FIXTURES / "managed"
CASES = BASE / "skypilot"

EXPECTED = [
    ('MLC201', 'skypilot/positive/candidates.yaml', 2, 'SkyPilot task skypilot/positive/candidates.yaml requests 8 GPUs per node (accelerators: {A100:8, H100:8}, line 2) but starts accelerate launch --num_processes 2 (skypilot/positive/candidates.yaml:4): 6 GPUs per node idle; request 2 or start 8 ranks per node'),
    ('MLC208', 'skypilot/positive/finetune-ondemand.yaml', 3, "SkyPilot task qwen-sft-gcp runs 8 GPUs per node on on-demand capacity (no use_spot: on-demand (SkyPilot's default)) and checkpoints to durable storage (output_dir: /checkpoints/qwen-sft (bucket mount at /checkpoints)): it can resume after preemption, so spot capacity at 60-90% lower price would fit"),
    ('MLC201', 'skypilot/positive/finetune-spot.yaml', 5, 'SkyPilot task qwen-sft requests 8 GPUs per node (accelerators: H100:8, line 5) but starts torchrun --nproc_per_node=4 (skypilot/positive/finetune-spot.yaml:22): 4 GPUs per node idle; request 4 or start 8 ranks per node'),
    ('MLC207', 'skypilot/positive/finetune-spot.yaml', 6, "SkyPilot task qwen-sft runs on spot capacity (use_spot: true) but its training config skypilot/positive/configs/sft-local.yaml writes checkpoints only to ephemeral storage (output_dir: /tmp/qwen-sft (the instance's local disk)): a preemption restarts training from the start; save checkpoints to an object store or a persistent volume and resume from them"),
    ('MLC403', 'skypilot/positive/finetune-spot.yaml', 12, 'NCCL_DEBUG=INFO set in SkyPilot task qwen-sft (8 GPUs per node: accelerators: H100:8 on line 5): NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it'),
    ('MLC207', 'skypilot/positive/pretrain-run-line.yaml', 4, "SkyPilot task gpt-pretrain (8 GPUs per node: accelerators: A100:8 on line 3) runs on spot capacity (use_spot: true) but its run line writes checkpoints only to --output_dir /home/ubuntu/ckpt (the instance's local disk): a preemption restarts training from the start; mount a bucket at the output directory (file_mounts with source: s3://... or gs://..., mode: MOUNT) and resume from it"),
    ('MLC403', 'skypilot/positive/pretrain-run-line.yaml', 8, 'CUDA_LAUNCH_BLOCKING=1 set in SkyPilot task gpt-pretrain (8 GPUs per node: accelerators: A100:8 on line 3): every CUDA kernel launch waits for the kernel to finish; remove it'),
    ('MLC207', 'skypilot/positive/sweep-nosave.yaml', 4, 'SkyPilot task lr-sweep (4 GPUs per node: accelerators: H100:4 on line 3) runs on spot capacity (use_spot: true) but its run line saves no checkpoints (--save_strategy no): a preemption restarts training from the start; save checkpoints to a bucket mounted at the output directory and resume from them'),
]

POLICY = Policy(allowed_gpu_types=["H100"], max_gpus_per_job=8, allowed_regions=["us-east-1"])
REGIONS = {"acme-eu-datasets": "europe-west4", "acme-checkpoints": "europe-west4"}
EXPECTED_POLICY = [
    ('MLC702', 'skypilot/positive/finetune-ondemand.yaml', 3, 'SkyPilot task qwen-sft-gcp (accelerators: A100-80GB:8) uses A100-80 GPUs, not in allowed-gpu-types [H100]; use an allowed GPU type'),
    ('MLC702', 'skypilot/positive/finetune-ondemand.yaml', 4, 'SkyPilot task qwen-sft-gcp runs in region us-central1 (infra: gcp/us-central1), not in allowed-regions [us-east-1]; move it to an allowed region'),
    ('MLC501', 'skypilot/positive/finetune-ondemand.yaml', 8, 'SkyPilot task qwen-sft-gcp in us-central1 (infra: gcp/us-central1) writes checkpoints to gs://acme-checkpoints, whose bucket is in europe-west4 (bucket-regions in the config): every byte crosses regions; use a bucket in us-central1 or run the job in europe-west4'),
    ('MLC501', 'skypilot/positive/finetune-ondemand.yaml', 10, 'SkyPilot task qwen-sft-gcp in us-central1 (infra: gcp/us-central1) reads gs://acme-eu-datasets/tokenized, whose bucket is in europe-west4 (bucket-regions in the config): every byte crosses regions; use a bucket in us-central1 or run the job in europe-west4'),
    ('MLC702', 'skypilot/positive/finetune-spot.yaml', 5, 'SkyPilot task qwen-sft requests 16 GPUs over all nodes (nodes 2 x 8), above max-gpus-per-job 8; split the job or lower its nodes or GPUs per node'),
    ('MLC702', 'skypilot/positive/pretrain-run-line.yaml', 3, 'SkyPilot task gpt-pretrain (accelerators: A100:8) uses A100-40 GPUs, not in allowed-gpu-types [H100]; use an allowed GPU type'),
    ('MLC702', 'skypilot/positive/pretrain-run-line.yaml', 6, 'SkyPilot task gpt-pretrain runs in region us-west-2 (region: us-west-2), not in allowed-regions [us-east-1]; move it to an allowed region'),
]


def test_positive_exact():
    assert triples(lint_dir(CASES / "positive", cwd=BASE)) == EXPECTED


def test_negative_silent():
    assert triples(lint_dir(CASES / "negative", cwd=BASE, policy=POLICY, bucket_regions=REGIONS)) == []


def test_region_and_policy():
    got = triples(lint_dir(CASES / "positive", cwd=BASE, policy=POLICY, bucket_regions=REGIONS))
    assert [t for t in got if t[0] in ("MLC501", "MLC702")] == EXPECTED_POLICY


def test_cli_json_and_prices():
    result = run_cli("skypilot/positive", "--format", "json", "--no-cache", cwd=BASE)
    assert result.code == 1, result.err
    findings = json.loads(result.out)["findings"]
    assert [(f["code"], f["path"], f["line"], f["message"]) for f in findings] == EXPECTED
    spot = next(f for f in findings if f["code"] == "MLC201" and f["path"].endswith("finetune-spot.yaml"))
    # 4 idle H100 on each of 2 nodes, at the spot price (use_spot: true), instance type unknown: at least.
    assert spot["cost"]["at_least"] is True and spot["cost"]["period"] == "hour"
    assert spot["cost"]["basis"].startswith("8 GPUs x ")


def test_cli_verbose_says_why_not_read():
    result = run_cli("skypilot/negative", "-v", "--no-cache", cwd=BASE)
    assert result.code == 0, result.err
    assert ("mlcost-lint: file skypilot/negative/resources-only.yaml: not read: has a SkyPilot-like resources "
            "block but no run, setup, num_nodes or file_mounts: not read as a SkyPilot task") in result.err
    assert "mlcost-lint: file skypilot/negative/spot-bucket.yaml: SkyPilot task spot-with-bucket" in result.err


def test_cli_verbose_shell_file_not_slurm(tmp_path):
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython train.py\n#SBATCH --gres=gpu:8\n")
    result = run_cli(".", "-v", "--no-cache", cwd=tmp_path)
    assert result.code == 0, result.err
    assert ("mlcost-lint: file run.sh: skipped: no #SBATCH lines before the first command: not a Slurm batch "
            "script") in result.err


@pytest.mark.parametrize("name, ok", [
    ("positive/finetune-spot.yaml", True), ("positive/candidates.yaml", True),
    ("negative/resources-only.yaml", False), ("negative/not-a-task.yaml", False),
    ("positive/configs/sft-local.yaml", False),
])
def test_detection_by_content(name, ok):
    assert skypilot_task(yaml.safe_load((CASES / name).read_text()))[0] is ok


def test_ambiguous_keys_say_why():
    ok, why = skypilot_task({"resources": {"accelerators": "A100:8"}, "run": "python x.py", "model": "x"})
    assert (ok, why) == (False, "has SkyPilot resources and run but also keys a SkyPilot task does not have "
                                "(model): not read as a SkyPilot task")
    assert skypilot_task({"resources": {"cpu": 2}, "run": "x"}) == (False, "")
    assert skypilot_task({"resources": {"accelerators": "A100:8"}, "run": ["a"]})[0] is False


@pytest.mark.parametrize("value, model, count", [
    ("A100:8", "A100-40", 8), ({"H100": 8}, "H100-80", 8), ("L4", "L4", 1), ({"A100:8": None}, "A100-40", 8),
    ({"A100:8": None, "H100:8": None}, None, 8), (["A100:8", "H100:4"], None, None), ("A100:0.5", "A100-40", None),
    ("$GPU:8", None, 8), ("tpu-v5litepod-8", "TPU-v5e", 8), (7, None, None),
])
def test_accelerators(value, model, count):
    got_model, got_count, _shown = accelerators(value)
    assert (got_model.name if got_model else None) == model
    assert (got_count if isinstance(got_count, int) else None) == count


TASK = ("resources:\n  accelerators: H100:8\n  use_spot: true\n  infra: aws\nrun: |\n  cd ~/sky_workdir\n"
        "  torchrun --nproc_per_node=2 train.py\n")
IDLE = ("SkyPilot task task.yaml requests 8 GPUs per node (accelerators: H100:8, line 2) but starts torchrun "
        "--nproc_per_node=2 (task.yaml:7): 6 GPUs per node idle; request 2 or start 8 ranks per node")


@pytest.mark.parametrize("data", [TASK.encode(), TASK.replace("\n", "\r\n").encode(), TASK.rstrip("\n").encode()],
                         ids=["lf", "crlf", "no-trailing-newline"])
def test_hostile_line_endings(tmp_path, data):
    (tmp_path / "task.yaml").write_bytes(data)
    got = triples(lint_dir(tmp_path / "task.yaml", cwd=tmp_path))
    assert got == [("MLC201", "task.yaml", 2, IDLE)]


def test_hostile_binary_and_huge(tmp_path):
    (tmp_path / "bin.yaml").write_bytes(b"resources:\n  accelerators: A100:8\x00\nrun: x\n")
    big = TASK + "".join(f"  echo step {i}\n" for i in range(20000))
    (tmp_path / "big.yaml").write_text(big)
    result = run_cli(".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert result.code == 1, result.err
    got = [(f["code"], f["path"], f["line"]) for f in json.loads(result.out)["findings"]]
    assert got == [("MLC201", "big.yaml", 2)]


def test_suppression_in_yaml_comment(tmp_path):
    (tmp_path / "task.yaml").write_text(TASK.replace("H100:8\n", "H100:8  # mlcost-lint: ignore[MLC201]\n", 1))
    assert triples(lint_dir(tmp_path / "task.yaml", cwd=tmp_path)) == []


def test_one_line_run_block_is_located_on_its_line(tmp_path):
    (tmp_path / "task.yaml").write_text("resources:\n  accelerators: L4:4\nrun: |\n  python train.py\n")
    got = triples(lint_dir(tmp_path / "task.yaml", cwd=tmp_path))
    assert got == [("MLC201", "task.yaml", 2, "SkyPilot task task.yaml requests 4 GPUs per node (accelerators: "
                    "L4:4, line 2) but starts python train.py (task.yaml:4): 3 GPUs per node idle; request 1 or "
                    "start 4 ranks per node")]


DEMO_SKY = [
    ('MLC201', 'sky/sft-spot.yaml', 5, 'SkyPilot task llama-sft-spot requests 8 GPUs per node (accelerators: H100:8, line 5) but starts torchrun --nproc_per_node=4 (sky/sft-spot.yaml:17): 4 GPUs per node idle; request 4 or start 8 ranks per node'),
    ('MLC207', 'sky/sft-spot.yaml', 6, "SkyPilot task llama-sft-spot (8 GPUs per node: accelerators: H100:8 on line 5) runs on spot capacity (use_spot: true) but its run line writes checkpoints only to --output_dir /home/ubuntu/ckpt (the instance's local disk): a preemption restarts training from the start; mount a bucket at the output directory (file_mounts with source: s3://... or gs://..., mode: MOUNT) and resume from it"),
    ('MLC403', 'sky/sft-spot.yaml', 10, 'NCCL_DEBUG=INFO set in SkyPilot task llama-sft-spot (8 GPUs per node: accelerators: H100:8 on line 5): NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it'),
]


def test_demo_skypilot_part():
    """The demo's SkyPilot task through the real CLI with the demo's config
    (its policy allows us-east-1 and 8 GPUs per job: no MLC702)."""
    res = run_cli(".", "--format", "json", "--no-cache", cwd=FIXTURES / "demo")
    assert res.code == 1, res.err
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(res.out)["findings"]
             if f["path"].startswith("sky/")]
    assert found == DEMO_SKY
