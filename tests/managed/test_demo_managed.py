"""The second demo (fixtures/demo-managed): one SageMaker job, one Azure ML
job + compute, one Vertex AI custom job; its findings through the CLI, exactly."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli

EXPECTED = [
    ("MLC203", "demo-managed/azureml/compute.yml", 6,
     "Azure ML compute nd96-cluster keeps 2 x Standard_ND96asr_v4 = 16 A100-40 GPUs running with no job "
     "(min_instances = 2); set min_instances: 0 (Azure ML scales out when jobs are queued and back in after "
     "idle_time_before_scale_down)", "~$39,708/month"),
    ("MLC204", "demo-managed/azureml/train.yml", 1,
     "Azure ML command job cifar-ddp holds 8 GPUs (1 x Standard_ND96asr_v4 (8 A100-40 GPUs)) with no run-time "
     "bound (no limits.timeout); a hung run keeps them until someone notices: set limits.timeout above the "
     "expected run time", "~$27.20/hour"),
    ("MLC201", "demo-managed/azureml/train.yml", 5,
     "Azure ML command job cifar-ddp requests 8 x nvidia.com/gpu but starts 4 processes (distribution pytorch "
     "process_count_per_instance: 4) each running python train.py (demo-managed/azureml/train.yml:11): 4 GPUs "
     "idle; request 4 or start 8 ranks", "~$13.60/hour"),
    ("MLC207", "demo-managed/sagemaker/main.tf", 25,
     "SageMaker training job aws_sagemaker_training_job.llm_sft runs 2 x ml.p4d.24xlarge (16 A100-40 GPUs) on "
     "managed spot capacity (enable_managed_spot_training = true) with no checkpoint_config.s3_uri: every "
     "interruption restarts training from the start; set checkpoint_config.s3_uri (SageMaker syncs "
     "/opt/ml/checkpoints there and restores it on restart) and resume from the latest checkpoint", None),
    ("MLC403", "demo-managed/sagemaker/main.tf", 33,
     "NCCL_DEBUG=INFO in container main of SageMaker training job aws_sagemaker_training_job.llm_sft (requests "
     "nvidia.com/gpu): NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN "
     "or remove it", None),
    ("MLC208", "demo-managed/vertex/pretrain.yaml", 4,
     "Vertex AI custom job pretrain.yaml runs 2 x a3-highgpu-8g (16 H100-80 GPUs) on on-demand capacity (no "
     "scheduling.strategy: on-demand) and checkpoints to durable storage (baseOutputDirectory.outputUriPrefix = "
     "gs://acme-pretrain-us-central1/run-7): it can resume after preemption, so spot capacity at 60-90% lower "
     "price would fit: scheduling.strategy: SPOT", "at least ~$45.73/hour, up to $2,195.20/run"),
    ("MLC502", "demo-managed/vertex/pretrain.yaml", 4,
     "Vertex AI custom job pretrain.yaml trains across nodes (torchrun on 2 nodes) on a3-highgpu-8g, which "
     "supports GPUDirect-TCPX(O) multi-NIC networking, but has no GPUDirect-TCPX(O) setup in its container "
     "(Vertex AI does not set it up: the NCCL plugin and its NCCL_GPUDIRECTTCPX_* / NCCL_FASTRAK_* variables): "
     "NCCL falls back to TCP and every step waits on the network", None),
]


def test_demo_managed_text():
    result = run_cli("demo-managed", cwd=FIXTURES)
    assert result.code == 1, result.err
    lines = [line for line in result.out.splitlines() if line.startswith("demo-managed/")]
    want = []
    for code, path, line, message, cost in EXPECTED:
        level = "note" if code == "MLC208" else "warning"
        column = {"MLC201": 1, "MLC203": 1, "MLC204": 1, "MLC207": 3, "MLC403": 5}.get(code, 7)
        want.append(f"{path}:{line}:{column}: {code} [{level}] {message}" + (f" ({cost})" if cost else ""))
    assert lines == want
    assert "Found 7 findings (6 warnings, 1 note) in 4 files." in result.out
    assert "Estimated cost: ~$39,708/month always-on (1 finding); at least ~$86.53/hour held while jobs run " \
           "(3 findings)." in result.out


def test_demo_managed_json():
    result = run_cli("demo-managed", "--format", "json", cwd=FIXTURES)
    assert result.code == 1, result.err
    findings = json.loads(result.out)["findings"]
    assert [(f["code"], f["path"], f["line"], f["message"]) for f in findings] == [e[:4] for e in EXPECTED]
