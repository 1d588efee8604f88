"""Vertex AI custom jobs (the CustomJobSpec `gcloud ai custom-jobs create
--config` takes, and the REST body with `jobSpec`): managed jobs in the
model, so MLC201(a), MLC207, MLC208, MLC502 and MLC702 fire with exact code,
line and message, MLC204 stays silent (the 7-day default timeout is a
bound), and their findings are priced from the machine spec."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

from mlcost_lint.config import Policy

BASE = FIXTURES / "managed"
CASES = BASE / "vertex"
CODES = {"MLC001", "MLC201", "MLC204", "MLC207", "MLC208", "MLC403", "MLC501", "MLC502", "MLC603", "MLC702"}

A3 = "vertex/positive/a3-multinode.yaml"
BERT = "vertex/positive/ondemand-checkpointed.json"
SPOT = "vertex/positive/spot-no-output.yaml"
POSITIVE = [
    ("MLC208", A3, 4, "Vertex AI custom job a3-multinode.yaml runs 2 x a3-highgpu-8g (16 H100-80 GPUs) on on-demand "
     "capacity (no scheduling.strategy: on-demand) and checkpoints to durable storage "
     "(baseOutputDirectory.outputUriPrefix = gs://acme-pretrain/run-7): it can resume after preemption, so spot "
     "capacity at 60-90% lower price would fit: scheduling.strategy: SPOT"),
    ("MLC502", A3, 4, "Vertex AI custom job a3-multinode.yaml trains across nodes (torchrun on 2 nodes) on "
     "a3-highgpu-8g, which supports GPUDirect-TCPX(O) multi-NIC networking, but has no GPUDirect-TCPX(O) setup in "
     "its container (Vertex AI does not set it up: the NCCL plugin and its NCCL_GPUDIRECTTCPX_* / NCCL_FASTRAK_* "
     "variables): NCCL falls back to TCP and every step waits on the network"),
    ("MLC201", BERT, 7, "Vertex AI custom job bert-finetune requests 2 x nvidia.com/gpu but starts python -m "
     "trainer.task (vertex/positive/ondemand-checkpointed.json:15): 1 GPU idle; request 1 or start 2 ranks"),
    ("MLC208", BERT, 7, "Vertex AI custom job bert-finetune runs 1 x n1-standard-16 (2 T4 GPUs) on on-demand "
     "capacity (no scheduling.strategy: on-demand) and checkpoints to durable storage "
     "(baseOutputDirectory.outputUriPrefix = gs://acme-ml-us-central1/runs/bert): it can resume after preemption, "
     "so spot capacity at 60-90% lower price would fit: scheduling.strategy: SPOT"),
    ("MLC201", SPOT, 4, "Vertex AI custom job spot-no-output.yaml requests 8 x nvidia.com/gpu but starts python "
     "train.py (vertex/positive/spot-no-output.yaml:10): 7 GPUs idle; request 1 or start 8 ranks"),
    ("MLC207", SPOT, 17, "Vertex AI custom job spot-no-output.yaml runs 1 x a2-highgpu-8g (8 A100-40 GPUs) on "
     "managed spot capacity (scheduling.strategy: SPOT) with no baseOutputDirectory.outputUriPrefix: every "
     "interruption restarts training from the start; set baseOutputDirectory.outputUriPrefix to a gs:// path "
     "(Vertex passes AIP_CHECKPOINT_DIR under it to the container) and save and resume checkpoints there"),
]


def _ours(result):
    return [t for t in triples(result) if t[0] in CODES]


def test_positive_exact():
    assert _ours(lint_dir(CASES / "positive", cwd=BASE)) == POSITIVE


def test_negative_silent():
    """SPOT with baseOutputDirectory; SPOT writing through /gcs/ (FUSE); FLEX_START
    (not preemptible, already discounted: no MLC208); multi-node A3 whose container
    sets NCCL_GPUDIRECTTCPX_* (MLC502 silent); no scheduling.timeout (7-day default:
    no MLC204); accelerate with as many processes as GPUs; a plain YAML."""
    assert _ours(lint_dir(CASES / "negative", cwd=BASE)) == []


def test_costs_from_machine_spec():
    result = lint_dir(CASES / "positive", cwd=BASE)
    got = {(f.code, f.location.path): f.cost for f in result.findings if f.cost is not None}
    a3 = got[("MLC208", A3)]
    assert (a3.amount_usd, a3.period, a3.run_ceiling_usd, a3.at_least) == (45.73, "hour", 7683.2, True)
    assert a3.basis.startswith("16 GPUs x $2.858335/h = $45.73/hour; a run is bounded at 168 h: at most $7,683.20 "
                               "[a3-highgpu-8g on-demand minus median spot $22.86668/h / 8 per a3-highgpu-8g")
    t4 = got[("MLC201", BERT)]      # N1 + attached T4s: the accelerator rows, host not priced
    assert (t4.amount_usd, t4.run_ceiling_usd) == (0.35, 4.2)
    assert "accelerator only, host n1-standard-16 is not in the price table" in t4.basis
    spot = got[("MLC201", SPOT)]    # the idle GPUs of a SPOT job at the spot price, bounded by timeout 86400s
    assert (spot.amount_usd, spot.run_ceiling_usd) == (9.04, 217.01)
    assert "a2-highgpu-8g median spot" in spot.basis


def test_policy():
    result = lint_dir(CASES / "positive", cwd=BASE,
                      policy=Policy(allowed_gpu_types=["A100", "T4"], max_gpus_per_job=8))
    assert [t for t in triples(result) if t[0] == "MLC702"] == [
        ("MLC702", A3, 4, "Vertex AI custom job a3-multinode.yaml requests 16 GPUs over all replicas (instances 2 x "
         "8), above max-gpus-per-job 8; split the job or lower its replicas or GPUs per pod"),
        ("MLC702", A3, 4, "Vertex AI custom job a3-multinode.yaml uses H100-80 GPUs, not in allowed-gpu-types "
         "[A100, T4]; use an allowed GPU type"),
    ]


def test_model_facts():
    from mlcost_lint.config import Settings
    from mlcost_lint.model.build import build_project
    from mlcost_lint.model.managed import managed_jobs
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind

    path = CASES / "positive" / "a3-multinode.yaml"
    project = build_project([parse_bytes(path.read_bytes(), "a3.yaml", FileKind.YAML)], Settings(root=BASE))
    [(workload, job)] = managed_jobs(project)      # pools 0 and 1 share a machine spec; the CPU pool 2 is left out
    assert (job.instance_type, job.instance_count, job.spot, job.runtime_limit, job.checkpoint_uri) == \
        ("a3-highgpu-8g", 2, False, 604800, "gs://acme-pretrain/run-7")
    assert job.runtime_how == "no scheduling.timeout: the Vertex default of 7 days applies"
    assert workload.templates[0].gpu_count() == 8 and workload.templates[0].replicas == 2


def test_detection_by_content():
    from mlcost_lint.model.vertex import duration_seconds, gce_accelerator, is_vertex_job

    pool = {"machineSpec": {"machineType": "a2-highgpu-1g"}}
    assert is_vertex_job({"workerPoolSpecs": [pool]})
    assert is_vertex_job({"workerPoolSpecs": pool})
    assert is_vertex_job({"displayName": "x", "jobSpec": {"workerPoolSpecs": [pool]}})
    assert not is_vertex_job({"workerPoolSpecs": "see docs", "machineSpec": pool["machineSpec"]})
    assert not is_vertex_job({"workerPoolSpecs": [{"replicaCount": 1}]})
    assert not is_vertex_job({"apiVersion": "v1", "kind": "ConfigMap", "workerPoolSpecs": [pool]})
    assert not is_vertex_job({"model": "llama", "output_dir": "gs://b/x"})
    assert (duration_seconds("86400s"), duration_seconds("1.5s"), duration_seconds(60)) == (86400, 1, 60)
    assert gce_accelerator("NVIDIA_H100_80GB") == "nvidia-h100-80gb"
    assert gce_accelerator("ACCELERATOR_TYPE_UNSPECIFIED") is None


def test_cli_json_and_verbose():
    result = run_cli("vertex/positive", "--format", "json", "--select", "MLC207,MLC502", cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    assert [(f["code"], f["path"], f["line"], f["message"]) for f in data["findings"]] == \
        [t for t in POSITIVE if t[0] in ("MLC207", "MLC502")]
    verbose = run_cli("vertex/negative", "-v", "--select", "MLC2,MLC5", cwd=BASE)
    assert verbose.code == 0, verbose.out + verbose.err
    assert "file vertex/negative/flex-start.yaml: Vertex AI custom job" in verbose.err
    assert "file vertex/negative/not-vertex.yaml: not ours" in verbose.err
