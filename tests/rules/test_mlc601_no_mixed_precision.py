from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli
from training_rule_helpers import run

CODE = "MLC601"


def test_positive_every_framework():
    found, _ = run(CODE, "positive")
    assert [(p, line) for _, p, line, _ in found] == [
        ("positive/accelerate/default_config.yaml", 8),
        ("positive/deepspeed/ds_fp32.json", 5),
        ("positive/deepspeed_pipeline/ds_config.json", 1),
        ("positive/doc_example/training_args.yaml", 2),
        ("positive/hf_trainer/training_args.yaml", 2),
        ("positive/lightning/config.yaml", 4),
        ("positive/nemo/megatron_bert.yaml", 5),
        ("positive/torchtune/full_finetune.yaml", 11),
        ("positive/trainer_with_ds/train.yaml", 1),
    ]
    messages = {p: m for _, p, _, m in found}
    assert messages["positive/hf_trainer/training_args.yaml"] == (
        "transformers config trains in full fp32 on GPU: "
        "neither bf16 nor fp16 is set (TrainingArguments default fp32); "
        "set bf16: true (fp16: true on T4/V100 and older GPUs)")
    assert messages["positive/doc_example/training_args.yaml"] == messages["positive/hf_trainer/training_args.yaml"]
    assert messages["positive/deepspeed/ds_fp32.json"] == (
        "deepspeed config trains in full fp32 on GPU: "
        "no fp16/bf16 block is enabled (bf16.enabled: false); "
        'set "bf16": {"enabled": true} ("fp16": {"enabled": true} on T4/V100 and older GPUs)')
    # Issue 11 #14: a pipeline-parallel config for deepspeed.initialize, no zero_optimization, no precision block.
    assert messages["positive/deepspeed_pipeline/ds_config.json"] == (
        "deepspeed config trains in full fp32 on GPU: no mixed precision is set; "
        'set "bf16": {"enabled": true} ("fp16": {"enabled": true} on T4/V100 and older GPUs)')
    assert messages["positive/torchtune/full_finetune.yaml"] == (
        "torchtune config trains in full fp32 on GPU: "
        "dtype: fp32; set dtype: bf16")
    assert messages["positive/lightning/config.yaml"] == (
        "lightning config trains in full fp32 on GPU: "
        "trainer.precision: 32; set trainer.precision: bf16-mixed "
        "(trainer.precision: 16-mixed on T4/V100 and older GPUs)")
    assert messages["positive/accelerate/default_config.yaml"] == (
        "accelerate config trains in full fp32 on GPU: "
        "mixed_precision: no; set mixed_precision: bf16 (mixed_precision: fp16 on T4/V100 and older GPUs)")


def test_trainer_with_auto_deepspeed_points_at_the_ds_config():
    _, result = run(CODE, "positive")
    finding = next(f for f in result.findings if f.location.path == "positive/trainer_with_ds/train.yaml")
    assert [(r.location.path, r.location.line, r.message) for r in finding.related] == [
        ("positive/trainer_with_ds/ds_zero3.json", 4,
         "positive/trainer_with_ds/ds_zero3.json takes its precision from this config (auto)")]
    assert finding.address == "transformers:positive/trainer_with_ds/train.yaml"


def test_negatives_cpu_tpu_unknown_partners():
    found, _ = run(CODE, "negative")
    assert found == []


def test_cli_json():
    res = run_cli("--format", "json", "--select", CODE, "positive/torchtune", cwd=FIXTURES / "rules" / CODE)
    data = json.loads(res.out)
    assert res.code == 1
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [
        (CODE, "positive/torchtune/full_finetune.yaml", 11)]


def _linked(container_index: int):
    """Lint the linked fixture, then join the config to one container by
    hand (the link stage's own tests cover how links are found)."""
    from mlcost_lint.config import Settings
    from mlcost_lint.model.project import ConfigLink
    from mlcost_lint.rules.efficiency.mlc601_no_mixed_precision import NoMixedPrecision
    from mlcost_lint.rules.efficiency.mlc602_dataloader_starvation import DataloaderStarvation

    folder = FIXTURES / "rules" / CODE / "linked"
    _, result = run(CODE, "linked")
    project = result.project
    project.links.configs.clear()
    workload = project.kubernetes.workloads[0]
    template = workload.templates[0]
    container = template.containers[container_index]
    config = project.training[0]
    project.links.configs.append(ConfigLink(workload, template, container, config,
                                            container.loc("args"), "argument"))
    settings = Settings(root=folder.parent)
    return (list(NoMixedPrecision().check(project, settings)),
            list(DataloaderStarvation().check(project, settings)))


def test_linked_t4_suggests_fp16_not_bf16():
    fp32, starve = _linked(0)
    assert [(f.location.path, f.location.line, f.message) for f in fp32] == [(
        "linked/training_args.yaml", 1,
        "transformers config trains in full fp32 on GPU "
        "(run by Job/default/bert-finetune on T4): neither bf16 nor fp16 is set "
        "(TrainingArguments default fp32); set fp16: true (T4 has no bf16)")]
    assert [(r.location.path, r.location.line) for r in fp32[0].related] == [("linked/job.yaml", 14)]
    assert [f.location.line for f in starve] == [5]


def test_linked_to_a_container_without_gpu_is_cpu_training():
    fp32, starve = _linked(1)
    assert fp32 == [] and starve == []
