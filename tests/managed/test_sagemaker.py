"""SageMaker training jobs in Terraform (aws_sagemaker_training_job): a
training job in the model, so MLC207/MLC208/MLC403/MLC501/MLC702/MLC101
fire on it with exact code, line and message, and MLC204 stays silent
(the API's default max_runtime_in_seconds of one day is a bound)."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

from mlcost_lint.config import Policy

BASE = FIXTURES / "managed"
CASES = BASE / "sagemaker"
MANAGED_CODES = {"MLC101", "MLC201", "MLC204", "MLC207", "MLC208", "MLC403", "MLC501", "MLC502", "MLC603", "MLC702"}

SPOT = "sagemaker/spot_no_checkpoint/main.tf"
EXPECTED = {
    "spot_no_checkpoint": [
        ("MLC207", SPOT, 26, "SageMaker training job aws_sagemaker_training_job.llm_sft runs 2 x ml.p4d.24xlarge "
         "(16 A100-40 GPUs) on managed spot capacity (enable_managed_spot_training = true) with no "
         "checkpoint_config.s3_uri: every interruption restarts training from the start; set "
         "checkpoint_config.s3_uri (SageMaker syncs /opt/ml/checkpoints there and restores it on restart) and "
         "resume from the latest checkpoint"),
        ("MLC403", SPOT, 34, "NCCL_DEBUG=INFO in container main of SageMaker training job "
         "aws_sagemaker_training_job.llm_sft (requests nvidia.com/gpu): NCCL logs every communicator and channel "
         "setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it"),
    ],
    "on_demand_checkpointed": [
        ("MLC208", "sagemaker/on_demand_checkpointed/main.tf", 19, "SageMaker training job "
         "aws_sagemaker_training_job.finetune runs 1 x ml.g5.12xlarge (4 A10G GPUs) on on-demand capacity "
         "(enable_managed_spot_training not set: on-demand) and checkpoints to durable storage "
         "(checkpoint_config.s3_uri = s3://acme-ml-us-west-2/checkpoints/bert/): it can resume after preemption, "
         "so spot capacity at 60-90% lower price would fit: enable_managed_spot_training = true (with "
         "stopping_condition.max_wait_time_in_seconds)"),
    ],
    "cross_region": [
        ("MLC501", "sagemaker/cross_region/main.tf", 33, "SageMaker training job aws_sagemaker_training_job.pretrain "
         "in us-east-1 (provider of aws_sagemaker_training_job.pretrain) reads s3://acme-corpus-eu/tokenized/, whose "
         "bucket is in eu-west-1 (aws_s3_bucket.corpus): every byte crosses regions; use a bucket in us-east-1 or "
         "run the job in eu-west-1"),
        ("MLC501", "sagemaker/cross_region/main.tf", 61, "SageMaker training job aws_sagemaker_training_job.pretrain "
         "in us-east-1 (provider of aws_sagemaker_training_job.pretrain) writes checkpoints to "
         "s3://acme-corpus-eu/checkpoints/, whose bucket is in eu-west-1 (aws_s3_bucket.corpus): every byte crosses "
         "regions; use a bucket in us-east-1 or run the job in eu-west-1"),
    ],
    # spot with checkpoint_config, on-demand without checkpoints, a CPU type,
    # spot from a variable, same-region data, NCCL_DEBUG=WARN, no stopping_condition.
    "negative": [],
}


def _managed(result):
    return [t for t in triples(result) if t[0] in MANAGED_CODES]


def test_each_case_exact():
    for case, expected in EXPECTED.items():
        assert _managed(lint_dir(CASES / case, cwd=BASE)) == expected, case


def test_policy_and_tags():
    result = lint_dir(CASES / "spot_no_checkpoint", cwd=BASE, required_tags=["team", "cost-center"],
                      policy=Policy(allowed_gpu_types=["H100"], max_gpus_per_job=8, allowed_regions=["eu-west-1"]))
    got = [t for t in triples(result) if t[0] in ("MLC101", "MLC702")]
    assert got == [
        ("MLC702", SPOT, 3, "provider aws region us-east-1 is not in allowed-regions [eu-west-1]; 1 resource uses "
         "it: aws_sagemaker_training_job.llm_sft"),
        ("MLC702", SPOT, 21, "SageMaker training job aws_sagemaker_training_job.llm_sft requests 16 GPUs over all "
         "replicas (instances 2 x 8), above max-gpus-per-job 8; split the job or lower its replicas or GPUs per "
         "pod"),
        ("MLC702", SPOT, 21, "aws_sagemaker_training_job.llm_sft (ml.p4d.24xlarge) uses A100-40 GPUs, not in "
         "allowed-gpu-types [H100]; use an allowed GPU type"),
        ("MLC101", SPOT, 38, "aws_sagemaker_training_job.llm_sft lacks cost tag cost-center (required-tags); its "
         "spend cannot be attributed; add it to tags or the provider's default_tags"),
    ]


def test_policy_allows_it():
    result = lint_dir(CASES / "spot_no_checkpoint", cwd=BASE,
                      policy=Policy(allowed_gpu_types=["A100"], max_gpus_per_job=16, allowed_regions=["us-east-1"]))
    assert [t for t in triples(result) if t[0] == "MLC702"] == []


def test_model_facts_for_pricing():
    """Instance type, count, region and spot stay in the model for the price table."""
    from mlcost_lint.config import Settings
    from mlcost_lint.model.build import build_project
    from mlcost_lint.model.managed import managed_jobs
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind

    path = CASES / "cross_region" / "main.tf"
    project = build_project([parse_bytes(path.read_bytes(), "main.tf", FileKind.TERRAFORM)], Settings(root=BASE))
    [(workload, job)] = managed_jobs(project)
    assert (job.instance_type, job.accelerator.name, job.instance_count, job.region, job.spot) == \
        ("ml.p5.48xlarge", "p5.48xlarge", 4, "us-east-1", True)
    assert (job.runtime_limit, job.runtime_how) == \
        (86400, "no stopping_condition: the SageMaker default of 1 day applies")
    assert workload.templates[0].gpu_count() == 8 and workload.templates[0].replicas == 4


def test_cli_json():
    result = run_cli("sagemaker/spot_no_checkpoint", "--format", "json", "--select", "MLC207,MLC403", cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    assert [(f["code"], f["path"], f["line"], f["message"]) for f in findings] == EXPECTED["spot_no_checkpoint"]


def test_cli_negative_exit_zero():
    result = run_cli("sagemaker/negative", "--select", "MLC2,MLC4,MLC5,MLC6", cwd=BASE)
    assert result.code == 0, result.out + result.err


def test_plan_json_same_findings_as_configuration():
    """`terraform show -json` of spot_no_checkpoint: the same findings (code and
    message, tags and policy included), at the plan's own lines."""
    config = dict(required_tags=["team", "cost-center"],
                  policy=Policy(allowed_gpu_types=["H100"], max_gpus_per_job=8, allowed_regions=["eu-west-1"]))
    hcl = lint_dir(CASES / "spot_no_checkpoint", cwd=BASE, **config)
    plan = lint_dir(BASE / "sagemaker_plan", cwd=BASE, **config)
    assert sorted((c, m) for c, _p, _l, m in triples(plan)) == sorted((c, m) for c, _p, _l, m in triples(hcl))
    assert [(c, p, line) for c, p, line, _m in triples(plan) if c in ("MLC207", "MLC403")] == [
        ("MLC207", "sagemaker_plan/tfplan.json", 35), ("MLC403", "sagemaker_plan/tfplan.json", 43)]


def test_ml_instance_priced_at_the_ec2_price_at_least():
    """MLC208 on ml.g5.12xlarge: priced from the g5.12xlarge row, marked "at least"
    and saying why; the run ceiling is the job's stopping_condition (1-day default)."""
    result = lint_dir(CASES / "on_demand_checkpointed", cwd=BASE)
    [cost] = [f.cost for f in result.findings if f.code == "MLC208"]
    assert (cost.amount_usd, cost.period, cost.run_ceiling_usd, cost.at_least) == (3.73, "hour", 89.61, True)
    assert cost.basis == ("4 GPUs x $0.933425/h = $3.73/hour; a run is bounded at 24 h: at most $89.61 "
                          "[g5.12xlarge on-demand minus median spot $3.7337/h / 4 per g5.12xlarge (us-west-2); "
                          "SageMaker bills above the EC2 price used here; list prices as of 2026-12-03]")
    assert cost.short() == "at least ~$3.73/hour, up to $89.61/run"
