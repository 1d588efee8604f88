"""Vertex AI custom jobs inside compiled KFP v2 pipeline specs (the
google_cloud_pipeline_components CustomJob launcher): literal
worker_pool_specs from a task constant, a component default or a plain
JSON payload feed the Vertex rules at the line of each value; pipeline
parameters and placeholders are unknown; a plain YAML is not a pipeline."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

from mlcost_lint.config import Policy

BASE = FIXTURES / "managed"
CASES = BASE / "vertex_pipeline"
CODES = {"MLC001", "MLC201", "MLC204", "MLC207", "MLC208", "MLC403", "MLC501", "MLC502", "MLC603", "MLC702"}

COMPONENT = "vertex_pipeline/positive/component-job.json"
WRAPPER = "vertex_pipeline/positive/payload-wrapper.json"
SPOT = "vertex_pipeline/positive/spot-training-pipeline.yaml"
POSITIVE = [
    ("MLC208", COMPONENT, 32, "Vertex AI custom job llm-pretrain/pretrain runs 2 x a3-highgpu-8g (16 H100-80 GPUs) "
     "on on-demand capacity (no scheduling.strategy: on-demand) and checkpoints to durable storage "
     "(baseOutputDirectory.outputUriPrefix = gs://acme-pretrain-us-central1/runs): it can resume after preemption, "
     "so spot capacity at 60-90% lower price would fit: scheduling.strategy: SPOT"),
    ("MLC502", COMPONENT, 32, "Vertex AI custom job llm-pretrain/pretrain trains across nodes (torchrun on 2 nodes) "
     "on a3-highgpu-8g, which supports GPUDirect-TCPX(O) multi-NIC networking, but has no GPUDirect-TCPX(O) setup "
     "in its container (Vertex AI does not set it up: the NCCL plugin and its NCCL_GPUDIRECTTCPX_* / "
     "NCCL_FASTRAK_* variables): NCCL falls back to TCP and every step waits on the network"),
    ("MLC201", WRAPPER, 23, "Vertex AI custom job bert-training/bert-trainer requests 2 x nvidia.com/gpu but starts "
     "python -m trainer.task (vertex_pipeline/positive/payload-wrapper.json:23): 1 GPU idle; request 1 or start "
     "2 ranks"),
    ("MLC207", SPOT, 78, "Vertex AI custom job spot-training/resnet-train runs 1 x a2-highgpu-8g (8 A100-40 GPUs) "
     "on managed spot capacity (scheduling.strategy: SPOT) with no baseOutputDirectory.outputUriPrefix: every "
     "interruption restarts training from the start; set baseOutputDirectory.outputUriPrefix to a gs:// path "
     "(Vertex passes AIP_CHECKPOINT_DIR under it to the container) and save and resume checkpoints there"),
    ("MLC201", SPOT, 93, "Vertex AI custom job spot-training/resnet-train requests 8 x nvidia.com/gpu but starts "
     "python train.py (vertex_pipeline/positive/spot-training-pipeline.yaml:87): 7 GPUs idle; request 1 or start "
     "8 ranks"),
]


def _ours(result):
    return [t for t in triples(result) if t[0] in CODES]


def _jobs(name):
    from mlcost_lint.model.managed import managed_jobs
    from mlcost_lint.config import Settings
    from mlcost_lint.model.build import build_project
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind

    path = CASES / name
    kind = FileKind.JSON if path.suffix == ".json" else FileKind.YAML
    project = build_project([parse_bytes(path.read_bytes(), path.name, kind)], Settings(root=CASES))
    return [job for _w, job in managed_jobs(project)], project


def test_positive_exact():
    assert _ours(lint_dir(CASES / "positive", cwd=BASE)) == POSITIVE


def test_negative_silent():
    """worker_pool_specs from a pipeline parameter and a machine type that is a
    placeholder (unknown); SPOT with a base_output_directory and torchrun with
    8 ranks on 8 GPUs; a pipeline without a CustomJob; a plain YAML using the
    same words."""
    assert _ours(lint_dir(CASES / "negative", cwd=BASE)) == []


def test_model_facts():
    [job], _ = _jobs("positive/component-job.json")
    assert (job.name, job.instance_type, job.instance_count, job.runtime_limit, job.runtime_how,
            job.checkpoint_uri, job.address) == (
        "llm-pretrain/pretrain", "a3-highgpu-8g", 2, 172800, "scheduling.timeout: 172800s",
        "gs://acme-pretrain-us-central1/runs", "vertex-pipeline/component-job.json/pretrain")
    [job], _ = _jobs("positive/spot-training-pipeline.yaml")
    assert (job.spot, job.spot_how, job.spot_at.line, job.runtime_limit, job.checkpoint_uri) == \
        (True, "scheduling.strategy: SPOT", 78, 604800, None)


def test_parameters_and_placeholders_are_unknown():
    from mlcost_lint.model.vertex_pipeline import is_vertex_pipeline

    jobs, project = _jobs("negative/parameterized-pipeline.yaml")
    assert jobs == []
    assert project.not_read["parameterized-pipeline.yaml"] == [
        "a compiled pipeline spec with no custom job whose worker_pool_specs are literal and name accelerators "
        "(pipeline parameters are unknown)"]
    assert not is_vertex_pipeline({"root": "/data", "deploymentSpec": "blue-green"})
    assert not is_vertex_pipeline({"apiVersion": "v1", "kind": "Pod", "root": {"dag": {}},
                                   "deploymentSpec": {"executors": {}}})
    assert is_vertex_pipeline({"pipelineSpec": {"root": {"dag": {}}, "deploymentSpec": {"executors": {}}}})


def test_policy():
    result = lint_dir(CASES / "positive", cwd=BASE, policy=Policy(allowed_gpu_types=["L4"], max_gpus_per_job=8))
    assert [t for t in triples(result) if t[0] == "MLC702"] == [
        ("MLC702", COMPONENT, 32, "Vertex AI custom job llm-pretrain/pretrain requests 16 GPUs over all replicas "
         "(instances 2 x 8), above max-gpus-per-job 8; split the job or lower its replicas or GPUs per pod"),
        ("MLC702", COMPONENT, 32, "Vertex AI custom job llm-pretrain/pretrain uses H100-80 GPUs, not in "
         "allowed-gpu-types [L4]; use an allowed GPU type"),
        ("MLC702", WRAPPER, 23, "Vertex AI custom job bert-training/bert-trainer uses T4 GPUs, not in "
         "allowed-gpu-types [L4]; use an allowed GPU type"),
        ("MLC702", SPOT, 93, "Vertex AI custom job spot-training/resnet-train uses A100-40 GPUs, not in "
         "allowed-gpu-types [L4]; use an allowed GPU type"),
    ]


def test_cli_json_and_verbose():
    result = run_cli("vertex_pipeline/positive", "--format", "json", "--no-cache", "--select",
                     "MLC201,MLC207,MLC208,MLC502", cwd=BASE)
    assert result.code == 1, result.err
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(result.out)["findings"]]
    assert found == POSITIVE
    verbose = run_cli("vertex_pipeline", "-v", "--no-cache", cwd=BASE)
    assert "file vertex_pipeline/negative/spot-checkpointed-pipeline.yaml: Vertex AI custom job " \
           "spot-training/resnet-train" in verbose.err + verbose.out


def test_malformed_specs_are_unknown_not_errors():
    """Wrong types (a list or a map where a name goes, a number where the DAG
    goes, a payload that is not JSON) never raise: what is still known (the
    machine type, or the attached accelerators) gives the job; the same holds for a
    plain CustomJobSpec (the grouping key of its pools)."""
    import copy

    from mlcost_lint.model.vertex import read_vertex
    from mlcost_lint.model.vertex_pipeline import read_vertex_pipeline
    from mlcost_lint.parse.document import Document

    good = json.loads((CASES / "positive" / "component-job.json").read_text())

    def doc(data):
        return Document(path="p.json", index=0, data=data, positions={}, start_line=1, end_line=1)

    bad_type = copy.deepcopy(good)
    pools = bad_type["components"]["comp-pretrain"]["inputDefinitions"]["parameters"]["worker_pool_specs"]
    for pool in pools["defaultValue"]:
        pool["machine_spec"]["accelerator_type"] = ["NVIDIA_H100_80GB"]
    bad_machine = copy.deepcopy(good)
    pools = bad_machine["components"]["comp-pretrain"]["inputDefinitions"]["parameters"]["worker_pool_specs"]
    for pool in pools["defaultValue"]:
        pool["machine_spec"]["machine_type"] = {"x": 1}
    bad_dag = copy.deepcopy(good)
    bad_dag["root"]["dag"]["tasks"] = 7
    bad_payload = json.loads((CASES / "positive" / "payload-wrapper.json").read_text())
    bad_payload["pipelineSpec"]["deploymentSpec"]["executors"]["exec-trainer"]["container"]["args"][3] = "{not json"
    [job] = read_vertex_pipeline(doc(bad_type))
    assert (job.managed.instance_type, job.managed.instance_count) == ("a3-highgpu-8g", 2)
    [job] = read_vertex_pipeline(doc(bad_machine))      # the attached accelerator is still known
    assert (job.managed.instance_type, job.templates[0].gpu_count()) == (None, 8)
    assert [read_vertex_pipeline(doc(d)) for d in (bad_dag, bad_payload)] == [[], []]
    [plain] = read_vertex(doc({"workerPoolSpecs": [{"machineSpec": {"machineType": "a2-highgpu-1g",
                                                                    "acceleratorType": ["NVIDIA_TESLA_A100"]}}]}))
    assert plain.templates[0].gpu_count() == 1


def test_custom_job_in_a_sub_dag():
    """A task inside a condition / exit-handler component's own DAG is read too."""
    from mlcost_lint.model.vertex_pipeline import read_vertex_pipeline
    from mlcost_lint.parse.document import Document

    data = json.loads((CASES / "positive" / "component-job.json").read_text())
    task = data["root"]["dag"]["tasks"].pop("pretrain")
    data["components"]["comp-condition-1"] = {"dag": {"tasks": {"pretrain": task}}}
    data["root"]["dag"]["tasks"]["condition-1"] = {"componentRef": {"name": "comp-condition-1"}}
    [workload] = read_vertex_pipeline(Document(path="p.json", index=0, data=data, positions={}, start_line=1,
                                               end_line=1))
    assert (workload.managed.name, workload.managed.instance_count) == ("llm-pretrain/pretrain", 2)
