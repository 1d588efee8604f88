"""Azure ML CLI v2 YAML: command jobs (and sweep trials / pipeline steps)
are managed jobs that take the capacity of the compute they name; compute
YAML is a node pool. Exact findings on the positive fixtures, none on the
negatives (a CPU cluster, a job with a deadline and a full node, a job whose
compute is not in the scan, a sweep on CPU, a plain YAML with type: command),
through the real CLI too, and content detection."""

from __future__ import annotations

import json

import pytest
import yaml
from mlc_testing import FIXTURES, lint_dir, run_cli, triples

from mlcost_lint.model.azureml import azureml_kind, compute_name, shm_bytes

BASE = FIXTURES / "managed"
CASES = BASE / "azureml"

EXPECTED = [
    ('MLC203', 'azureml/positive/compute-nd96.yml', 6, 'Azure ML compute nd96-cluster keeps 2 x Standard_ND96asr_v4 = 16 A100-40 GPUs running with no job (min_instances = 2); set min_instances: 0 (Azure ML scales out when jobs are queued and back in after idle_time_before_scale_down)'),
    ('MLC208', 'azureml/positive/finetune-ondemand.yml', 7, 'Azure ML command job finetune-ondemand runs 1 x Standard_NC96ads_A100_v4 (4 A100-80 GPUs) on on-demand capacity (compute a100-dedicated has no tier: dedicated) and checkpoints to durable storage (outputs.checkpoints.path = azureml://datastores/workspaceblobstore/paths/finetune/checkpoints): it can resume after preemption, so spot capacity at 60-90% lower price would fit: a compute with tier: low_priority (queue_settings.job_tier: spot on serverless compute)'),
    ('MLC201', 'azureml/positive/sft-lowpri.yml', 5, 'Azure ML command job sft-lowpri trains Qwen/Qwen2.5-0.5B on 1 x A100-80 GPUs of Standard_NC24ads_A100_v4 (80 GiB each; GPU type from Azure ML command job sft-lowpri instance type Standard_NC24ads_A100_v4): the memory estimate (500M params x 16 B/param (full fine-tune, mixed precision, Adam) = 7.5 GiB per GPU, activations not counted) fills 9% of each GPU (under 25%); a GPU with at most half the memory fits, e.g. Standard_NV36adms_A10_v5 (A10, 24 GiB)'),
    ('MLC207', 'azureml/positive/sft-lowpri.yml', 5, 'Azure ML command job sft-lowpri runs on spot capacity (compute a100-lowpri tier: low_priority) but its training config azureml/positive/configs/sft.yaml saves no checkpoints (save_strategy: "no"): a preemption restarts training from the start; save checkpoints to an object store or a persistent volume and resume from them'),
    ('MLC204', 'azureml/positive/train-ddp.yml', 2, 'Azure ML command job cifar-ddp holds 16 GPUs (2 x Standard_ND96asr_v4 (16 A100-40 GPUs)) with no run-time bound (no limits.timeout); a hung run keeps them until someone notices: set limits.timeout above the expected run time'),
    ('MLC201', 'azureml/positive/train-ddp.yml', 14, 'Azure ML command job cifar-ddp requests 8 x nvidia.com/gpu but starts 4 processes (distribution pytorch process_count_per_instance: 4) each running python train.py (azureml/positive/train-ddp.yml:19): 4 GPUs idle; request 4 or start 8 ranks'),
    ('MLC403', 'azureml/positive/train-ddp.yml', 16, 'NCCL_DEBUG=INFO in container main of Azure ML command job cifar-ddp (requests nvidia.com/gpu): NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it'),
    ('MLC603', 'azureml/positive/train-ddp.yml', 22, 'Azure ML command job cifar-ddp sets /dev/shm to 256 MiB (resources.shm_size) but it runs 8 GPUs per instance (NCCL shares memory between them): below 1 GiB DataLoader workers and NCCL crash mid-run; raise resources.shm_size or remove it (the service default is 2 GiB)'),
]


def test_positive_exact():
    assert triples(lint_dir(CASES / "positive", cwd=BASE)) == EXPECTED


def test_negative_silent():
    assert triples(lint_dir(CASES / "negative", cwd=BASE)) == []


def test_cli_json():
    result = run_cli("azureml/positive", "--format", "json", cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    assert [(f["code"], f["path"], f["line"], f["message"]) for f in findings] == EXPECTED


@pytest.mark.parametrize("name, kind", [
    ("positive/compute-nd96.yml", "compute"), ("positive/train-ddp.yml", "command"),
    ("negative/compute-cpu.yml", "compute"), ("negative/unknown-compute.yml", "command"),
    ("negative/sweep-cpu.yml", "sweep"), ("negative/not-azureml.yml", None),
    ("positive/configs/sft.yaml", None),
])
def test_detection_by_content(name, kind):
    assert azureml_kind(yaml.safe_load((CASES / name).read_text())) == kind


@pytest.mark.parametrize("data", [
    {"apiVersion": "batch/v1", "kind": "Job", "spec": {}},
    {"type": "command", "command": "make"},                       # no environment / compute
    {"type": "pipeline", "jobs": ["a", "b"]},                     # jobs not a mapping
    {"type": "amlcompute"},                                       # no size
    {"name": "ci", "on": {"push": None}, "jobs": {"build": {"runs-on": "ubuntu-latest"}}},
    {"$schema": "https://json.schemastore.org/github-workflow.json", "type": "command"},
])
def test_plain_yaml_is_not_azureml(data):
    assert azureml_kind(data) is None


def test_pipeline_steps_and_values():
    data = {"$schema": "https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json", "type": "pipeline",
            "jobs": {"a": {"command": "echo a"}}}
    assert azureml_kind(data) == "pipeline"
    assert compute_name("azureml:gpu-cluster") == "gpu-cluster"
    assert compute_name("< your compute name >") is None
    assert (shm_bytes("2g"), shm_bytes("512m"), shm_bytes(1024)) == (2 * 1024 ** 3, 512 * 1024 ** 2, 1024)


def test_job_joins_terraform_compute_cluster():
    """compute: azureml:<name> finds the azurerm_machine_learning_compute_cluster of that name."""
    from mlcost_lint.config import Settings
    from mlcost_lint.link import capacity_of, link_project
    from mlcost_lint.model.build import build_project
    from mlcost_lint.model.managed import managed_jobs
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind

    case = CASES / "terraform-compute"
    assert triples(lint_dir(case, cwd=BASE)) == [
        ("MLC204", "azureml/terraform-compute/job.yml", 1, "Azure ML command job v100-train holds 4 GPUs "
         "(1 x Standard_NC24s_v3 (4 V100-16 GPUs)) with no run-time bound (no limits.timeout); a hung run keeps "
         "them until someone notices: set limits.timeout above the expected run time"),
    ]
    files = [parse_bytes((case / "main.tf").read_bytes(), "main.tf", FileKind.TERRAFORM),
             parse_bytes((case / "job.yml").read_bytes(), "job.yml", FileKind.YAML)]
    settings = Settings(root=case)
    project = build_project(files, settings)
    link_project(project, settings)
    [(workload, job)] = managed_jobs(project)
    assert (job.instance_type, job.instance_count, job.region, job.spot, job.spot_how) == \
        ("Standard_NC24s_v3", 1, "eastus", True, "compute v100-lowpri vm_priority: LowPriority")
    assert capacity_of(project, workload.templates[0]).kind == "spot"
    [launch] = project.links.launches_of(workload.templates[0].containers[0])
    assert (launch.launcher, launch.ranks_per_node) == ("torchrun", 4)


def test_unbounded_job_priced_on_its_low_priority_compute():
    """MLC204 on a job whose Terraform compute is LowPriority in eastus: every GPU
    of the instance at the spot price there, per hour; no ceiling (no limits.timeout)."""
    result = lint_dir(CASES / "terraform-compute", cwd=BASE)
    [cost] = [f.cost for f in result.findings if f.code == "MLC204"]
    assert (cost.amount_usd, cost.period, cost.run_ceiling_usd, cost.at_least) == (1.59, "hour", None, False)
    assert cost.basis == ("4 GPUs x $0.3978/h = $1.59/hour [Standard_NC24s_v3 median spot $1.5912/h / 4 per "
                          "Standard_NC24s_v3 (eastus); list prices as of 2026-12-03]")
