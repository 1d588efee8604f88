"""SageMaker hyper_parameters as a training config of the job: MLC201(c)
and MLC202 from the model they name (rules.md "Memory estimate"), priced
like the other SageMaker findings; maps that name no model and no Trainer
key are not configs, and the training-config rules that would need the
script's own defaults (MLC301, MLC302, MLC601, MLC602) never run on them."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

BASE = FIXTURES / "managed"
CASES = BASE / "sagemaker"
SMALL = "sagemaker/hyper_small_model/main.tf"
OOM = "sagemaker/hyper_oom/main.tf"

MLC201_SMALL = (
    "MLC201", SMALL, 30,
    "SageMaker training job aws_sagemaker_training_job.text_classification trains distilbert-base-uncased on 8 x "
    "A100-40 GPUs of p4d.24xlarge (40 GiB each; GPU type from SageMaker training job "
    "aws_sagemaker_training_job.text_classification instance type ml.p4d.24xlarge): the memory estimate (66M "
    "params x 16 B/param (full fine-tune, mixed precision, Adam) = 1.0 GiB per GPU, activations not counted) "
    "fills 2% of each GPU (under 25%); a GPU with at most half the memory fits, e.g. p3.16xlarge (V100-16, "
    "16 GiB)")
MLC202_OOM = (
    "MLC202", OOM, 30,
    "SageMaker training job aws_sagemaker_training_job.llama_full_ft trains meta-llama/Llama-3.1-70B on A100-40 "
    "GPUs of p4d.24xlarge (40 GiB per GPU; GPU type from SageMaker training job "
    "aws_sagemaker_training_job.llama_full_ft instance type ml.p4d.24xlarge) but the memory floor is 70.0B params "
    "x 16 B/param (full fine-tune, mixed precision, Adam) / 8 ranks (FSDP) = 130.4 GiB per GPU, activations not "
    "counted: it will run out of memory; shard with ZeRO-3/FSDP, use LoRA, or choose a larger GPU")
TRAINING_RULES = ("MLC201", "MLC202", "MLC207", "MLC208", "MLC301", "MLC302", "MLC402", "MLC403", "MLC601",
                  "MLC602", "MLC603")


def _training(result):
    return [t for t in triples(result) if t[0] in TRAINING_RULES]


def _project(case):
    from mlcost_lint.config import Settings
    from mlcost_lint.link import link_project
    from mlcost_lint.model.build import build_project
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind

    path = CASES / case / "main.tf"
    settings = Settings(root=BASE)
    project = build_project([parse_bytes(path.read_bytes(), "main.tf", FileKind.TERRAFORM)], settings)
    link_project(project, settings)
    return project


def test_small_model_on_a100s_is_mlc201c_with_the_model_line_related():
    result = lint_dir(CASES / "hyper_small_model", cwd=BASE)
    assert _training(result) == [MLC201_SMALL]
    [finding] = [f for f in result.findings if f.code == "MLC201"]
    assert [(r.location.line, r.message) for r in finding.related] == [(17, "model distilbert-base-uncased")]
    cost = finding.cost
    assert (cost.amount_usd, cost.period, cost.run_ceiling_usd, cost.at_least) == (8.29, "hour", 199.02, True)
    assert "SageMaker bills above the EC2 price used here" in cost.basis


def test_full_fine_tune_that_states_every_feature_is_mlc202():
    assert _training(lint_dir(CASES / "hyper_oom", cwd=BASE)) == [MLC202_OOM]


def test_negative_maps_give_no_training_finding():
    # XGBoost parameters, a 70B model whose flags leave LoRA/sharding to the
    # script, a CPU instance, an unsizeable model with Trainer flags that
    # would fire MLC301/MLC302/MLC601/MLC602 in a YAML config, variables.
    assert _training(lint_dir(CASES / "hyper_negative", cwd=BASE)) == []


def test_which_maps_are_configs_and_what_they_hold():
    from mlcost_lint.model.managed import managed_jobs
    from mlcost_lint.model.sagemaker_hyper import SCRIPT_FLAGS

    jobs = {job.name.split(".")[-1]: job for _w, job in managed_jobs(_project("hyper_negative"))}
    assert {name: job.config is not None for name, job in jobs.items()} == {
        "xgboost": False, "qlora_by_script": True, "cpu_bert": True, "custom_model": True,
        "model_from_variable": False, "map_from_variable": False}
    config = jobs["custom_model"].config
    assert (config.flavour, config.settings.model_id.value, config.location.line) == \
        (SCRIPT_FLAGS, "acme/ticket-router", 95)
    # Only the memory and device settings are read: no save/logging/dataloader settings.
    assert not config.settings.save_steps.explicit and not config.settings.dataloader_num_workers.explicit
    assert config.detection_reason == ("hyper_parameters of SageMaker training job aws_sagemaker_training_job."
                                       "custom_model (passed to the entry point as flags): model_name_or_path, "
                                       "per_device_train_batch_size, save_strategy")


def test_unstated_features_keep_the_estimate_from_predicting_oom():
    from mlcost_lint.rules.compute.gpu_memory import memory_inputs

    project = _project("hyper_negative")
    workload = next(w for w in project.kubernetes.workloads if w.name.endswith("qlora_by_script"))
    inputs = memory_inputs(project, workload.templates[0].containers[0])
    assert (inputs.model_id, inputs.lora, inputs.open_features) == \
        ("meta-llama/Llama-3.1-70B", False, ("LoRA", "sharding"))
    oom = _project("hyper_oom")
    inputs = memory_inputs(oom, oom.kubernetes.workloads[0].templates[0].containers[0])
    assert (inputs.fsdp, inputs.precisions, inputs.open_features) == (True, (True,), ())


def test_json_encoded_values_are_decoded():
    from mlcost_lint.model.core import UNKNOWN
    from mlcost_lint.model.sagemaker_hyper import decoded

    assert [decoded(v) for v in ('"gpt2"', "gpt2", "true", '"a"b"', 3, UNKNOWN, ["x"])] == \
        ["gpt2", "gpt2", "true", '"a"b"', 3, UNKNOWN, UNKNOWN]


def test_verbose_names_the_link():
    result = run_cli("sagemaker/hyper_small_model", "-v", "--no-cache", cwd=BASE)
    assert "training config sagemaker/hyper_small_model/main.tf (hyper_parameters (passed to the entry point as " \
           "flags))" in result.out + result.err


def test_cli_json():
    result = run_cli("sagemaker/hyper_small_model", "sagemaker/hyper_oom", "sagemaker/hyper_negative",
                     "--format", "json", "--select", ",".join(TRAINING_RULES), "--no-cache", cwd=BASE)
    assert result.code == 1, result.err
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(result.out)["findings"]]
    assert found == [MLC202_OOM, MLC201_SMALL]
    costs = {f["code"]: f.get("cost") for f in json.loads(result.out)["findings"]}
    assert costs["MLC201"]["amount_usd"] == 8.29 and costs["MLC202"] is None


def test_plan_json_hyper_parameters(tmp_path):
    """The same map in `terraform show -json` output (the plan fixture with
    hyper_parameters added to its planned values) links the same config."""
    plan = json.loads((BASE / "sagemaker_plan" / "tfplan.json").read_text())
    [values] = [r["values"] for r in plan["planned_values"]["root_module"]["resources"]
                if r["type"] == "aws_sagemaker_training_job"]
    values["hyper_parameters"] = {"model_name_or_path": '"distilbert-base-uncased"', "fp16": "true"}
    (tmp_path / "tfplan.json").write_text(json.dumps(plan, indent=2))
    result = lint_dir(tmp_path, cwd=tmp_path)
    [finding] = [f for f in result.findings if f.code in ("MLC201", "MLC202")]
    assert (finding.code, finding.location.line) == ("MLC201", 30)
    assert finding.message.startswith(
        "SageMaker training job aws_sagemaker_training_job.llm_sft trains distilbert-base-uncased on 8 x A100-40 GPUs "
        "of p4d.24xlarge (40 GiB each; GPU type from SageMaker training job aws_sagemaker_training_job.llm_sft "
        "instance type ml.p4d.24xlarge): the memory estimate (66M params")


def test_use_cpu_flag_is_mlc201b():
    result = run_cli("sagemaker/hyper_use_cpu", "--format", "json", "--select", "MLC201", "--no-cache", cwd=BASE)
    assert result.code == 1, result.err
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(result.out)["findings"]]
    assert found == [(
        "MLC201", "sagemaker/hyper_use_cpu/main.tf", 25,
        "SageMaker training job aws_sagemaker_training_job.debug_run requests 1 x nvidia.com/gpu but runs on CPU "
        "(use_cpu in the linked config, sagemaker/hyper_use_cpu/main.tf:17): the GPU stays idle; remove the GPU "
        "request or the CPU setting")]
