"""MLC403 debug-flags-in-training: exact findings on the positive fixtures, none on the
negatives, and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli
from training_rule_helpers import run

CODE = "MLC403"

EXPECTED = [
    ('MLC403', 'positive/ds_config.json', 5, 'deepspeed config leaves wall_clock_breakdown on (true): DeepSpeed synchronises the GPU to time forward/backward/step; set wall_clock_breakdown: false'),
    ('MLC403', 'positive/ds_config.json', 7, 'deepspeed config leaves flops_profiler.enabled on (true): the DeepSpeed flops profiler instruments the model; set flops_profiler.enabled: false'),
    ('MLC403', 'positive/k8s/pytorchjob.yaml', 18, 'NCCL_DEBUG=INFO in container pytorch of PyTorchJob llama-sft Worker (requests nvidia.com/gpu): NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it'),
    ('MLC403', 'positive/k8s/pytorchjob.yaml', 20, 'NCCL_DEBUG_SUBSYS=ALL in container pytorch of PyTorchJob llama-sft Worker (requests nvidia.com/gpu): NCCL debug output for every subsystem; remove it'),
    ('MLC403', 'positive/k8s/pytorchjob.yaml', 22, 'CUDA_LAUNCH_BLOCKING=1 in container pytorch of PyTorchJob llama-sft Worker (requests nvidia.com/gpu): every CUDA kernel launch waits for the kernel to finish; remove it'),
    ('MLC403', 'positive/k8s/pytorchjob.yaml', 24, 'TORCH_DISTRIBUTED_DEBUG=DETAIL in container pytorch of PyTorchJob llama-sft Worker (requests nvidia.com/gpu): torch.distributed adds checks and logging to collectives (DETAIL: a consistency check per collective); remove it (or set OFF)'),
    ('MLC403', 'positive/k8s/pytorchjob.yaml', 26, 'TORCH_CPP_LOG_LEVEL=INFO in container pytorch of PyTorchJob llama-sft Worker (requests nvidia.com/gpu): PyTorch C++ info logging on every rank; set WARNING or remove it'),
    ('MLC403', 'positive/lightning.yaml', 5, 'lightning config leaves trainer.detect_anomaly on (true): autograd anomaly detection re-checks every backward op; remove detect_anomaly (or set false)'),
    ('MLC403', 'positive/lightning.yaml', 6, 'lightning config leaves trainer.profiler on (advanced): the profiler records every step; remove the profiler'),
    ('MLC403', 'positive/torchtune.yaml', 11, 'torchtune config leaves profiler.enabled on (true): the torch profiler records steps; set profiler.enabled: false'),
    ('MLC403', 'positive/trl_cli.yaml', 7, 'transformers config sets NCCL_DEBUG=TRACE in env: NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it'),
]


def test_positive():
    found, _ = run(CODE, "positive")
    assert found == EXPECTED


def test_negative():
    found, _ = run(CODE, "negative")
    assert found == []


def test_cli_json():
    res = run_cli("--format", "json", "--select", CODE, "positive/k8s", cwd=FIXTURES / "rules" / CODE)
    data = json.loads(res.out)
    assert res.code == 1
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [('MLC403', 'positive/k8s/pytorchjob.yaml', 18), ('MLC403', 'positive/k8s/pytorchjob.yaml', 20), ('MLC403', 'positive/k8s/pytorchjob.yaml', 22), ('MLC403', 'positive/k8s/pytorchjob.yaml', 24), ('MLC403', 'positive/k8s/pytorchjob.yaml', 26)]


def test_master_and_worker_running_one_config_are_one_related_location(tmp_path):
    # Both replicas of a PyTorchJob run train.yaml, which names ds.json: two
    # links to ds.json through the same line of train.yaml, one place to show
    # (SARIF relatedLocations listed it once per replica).
    (tmp_path / "ds.json").write_text('{\n  "train_batch_size": 8,\n  "wall_clock_breakdown": true\n}\n')
    (tmp_path / "train.yaml").write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\nbf16: true\ndeepspeed: ds.json\n")
    replica = """      replicas: {n}
      template:
        spec:
          containers:
            - name: pytorch
              image: nvcr.io/nvidia/pytorch:24.05-py3
              command: ["trl", "sft", "--config", "train.yaml"]
              resources:
                limits:
                  nvidia.com/gpu: 8
"""
    (tmp_path / "job.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: sft\nspec:\n  pytorchReplicaSpecs:\n"
        "    Master:\n" + replica.format(n=1) + "    Worker:\n" + replica.format(n=3))
    res = run_cli("--format", "json", "--select", CODE, ".", cwd=tmp_path)
    data = json.loads(res.out)
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [("MLC403", "ds.json", 3)]
    assert [(r["path"], r["line"], r["message"]) for r in data["findings"][0]["related"]] == [
        ("train.yaml", 3, "PyTorchJob/default/sft runs this config (deepspeed (path relative to the config), "
                          "referenced by train.yaml)")]
