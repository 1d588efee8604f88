"""MLC205 gpu-not-released: exact findings on the positive fixtures, none on the negatives,
and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC205"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC205', 'positive/k8s.yaml', 15, 'Deployment dev-box container shell holds 1 GPU while its command only waits (sleep infinity): they are billed around the clock; run the work as a Job or scale the workload to zero when unused'),
    ('MLC205', 'positive/k8s.yaml', 27, 'Pod debug-a100 container debug holds 2 GPUs while its command only waits (tail -f /dev/null): they are billed around the clock; run the work as a Job or scale the workload to zero when unused'),
    ('MLC205', 'positive/k8s.yaml', 35, 'RayJob ray-finetune has no shutdownAfterJobFinishes: its Ray cluster (4 GPUs) keeps running after the job ends; set shutdownAfterJobFinishes: true'),
    ('MLC205', 'positive/k8s.yaml', 64, 'PyTorchJob llama-sft sets cleanPodPolicy: None: pods still running when the job finishes are kept and hold their GPUs; use cleanPodPolicy: Running'),
    ('MLC205', 'positive/notebooks.tf', 1, 'SageMaker notebook instance aws_sagemaker_notebook_instance.research has 1 A10G GPU and no idle shutdown: it bills while nobody uses it; attach a lifecycle configuration (lifecycle_config_name) that stops the instance when idle'),
    ('MLC205', 'positive/notebooks.tf', 17, 'Vertex AI Workbench instance google_workbench_instance.research has 1 T4 GPU and no idle shutdown: it bills while nobody uses it; set gce_setup.metadata idle-timeout-seconds (e.g. "10800")'),
    ('MLC205', 'positive/notebooks.tf', 23, 'Azure ML compute instance azurerm_machine_learning_compute_instance.research has 1 T4 GPU and no idle shutdown: it bills while nobody uses it; the azurerm provider cannot set idle shutdown: create the instance with azapi_resource and properties.idleTimeBeforeShutdown, or assign the built-in idle-shutdown Azure Policy'),
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


def test_only_waits_shapes():
    from mlcost_lint.rules.compute.mlc205_gpu_not_released import only_waits

    assert only_waits(["sleep", "infinity"]) == "sleep infinity"
    assert only_waits(["bash", "-c", "exec sleep infinity"]) == "sleep infinity"
    assert only_waits(["/bin/sh", "-c", "while true; do sleep 30; done"]) == "while true; do sleep 30; done"
    assert only_waits(["sh", "-c", "pip install -r req.txt && sleep infinity"]) is None
    assert only_waits(["python", "train.py"]) is None
    assert only_waits(["sleep", "60"]) is None


def test_notebook_facts_are_one_table():
    """MLC201(d) and MLC205 read notebook types, labels and size/GPU attributes from one table."""
    from mlcost_lint.rules.compute import mlc201_oversized_gpu, mlc205_gpu_not_released, notebooks

    assert mlc201_oversized_gpu.NOTEBOOKS is notebooks.NOTEBOOKS
    assert mlc205_gpu_not_released.NOTEBOOKS is notebooks.NOTEBOOKS
    assert {t: k.label for t, k in notebooks.NOTEBOOKS.items()} == {
        "aws_sagemaker_notebook_instance": "SageMaker notebook instance",
        "google_workbench_instance": "Vertex AI Workbench instance",
        "google_notebooks_instance": "Vertex AI Workbench (user-managed) instance",
        "azurerm_machine_learning_compute_instance": "Azure ML compute instance",
    }
    # MLC205 judges idle shutdown only where the table says how it is set.
    assert [t for t, k in notebooks.NOTEBOOKS.items() if k.idle is None] == ["google_notebooks_instance"]
