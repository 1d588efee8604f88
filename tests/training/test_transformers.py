"""Transformers TrainingArguments / TRL / alignment-handbook configs."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework

from .helpers import FIXTURES, default, read_file, read_text, written


def test_trl_recipe_explicit_settings_and_lines():
    cfg = read_file(FIXTURES / "trl_sft_recipe.yaml")
    assert cfg is not None and cfg.framework is Framework.TRANSFORMERS
    assert cfg.flavour == "trl"
    s = cfg.settings
    assert written(s.precision) == ("bf16", True, 12, "bf16")
    assert written(s.save_strategy) == ("steps", True, 30, "save_strategy")
    assert written(s.save_steps) == (50, True, 31, "save_steps")
    assert written(s.checkpointing_enabled) == (True, True, 30, "save_strategy")
    assert written(s.hub_strategy) == ("every_save", True, 18, "hub_strategy")
    assert written(s.log_level) == ("info", True, 20, "log_level")
    assert written(s.logging_steps) == (1, True, 21, "logging_steps")
    assert written(s.report_to) == (["wandb"], True, 28, "report_to")
    assert written(s.model_id) == ("Qwen/Qwen2.5-1.5B-Instruct", True, 2, "model_name_or_path")
    assert written(s.output_dir) == ("s3://acme-ml-checkpoints/qwen-sft", True, 25, "output_dir")
    assert [written(p) for p in s.data_paths] == [
        ("s3://acme-ml-checkpoints/qwen-sft", True, 25, "output_dir")]
    # Transformers defaults TRL inherits.
    assert written(s.checkpoint_limit) == default(None)
    assert written(s.dataloader_num_workers) == default(0)
    assert written(s.dataloader_pin_memory) == default(True)
    assert written(s.log_level_replica) == default("warning")
    assert written(s.device) == default("gpu")


def test_model_arguments_alone_are_no_trl_evidence():
    """Issue 11 #13: model_name_or_path is taken by the Transformers example scripts too. Without a
    TRL-only key the parser is not known: not TRL, and the defaults that differ stay unknown."""
    cfg = read_text("model_name_or_path: gpt2\nper_device_train_batch_size: 4\nlearning_rate: 1.0e-5\n")
    assert cfg is not None and cfg.flavour == "script"
    assert cfg.settings.precision.value is UNKNOWN and not cfg.settings.precision.explicit
    assert written(cfg.settings.save_steps) == default(500)
    plain = read_text("output_dir: /ckpt\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n")
    assert plain.flavour == "" and written(plain.settings.precision) == default("fp32")


def test_trl_flavour_leaves_version_dependent_defaults_unknown():
    cfg = read_text("model_name_or_path: gpt2\nper_device_train_batch_size: 4\nlearning_rate: 1.0e-5\n"
                    "dataset_text_field: text\n")
    assert cfg is not None and cfg.flavour == "trl"
    # TRL >= 0.x defaults bf16 on and logging_steps 10; older TRL did not.
    assert cfg.settings.precision.value is UNKNOWN and not cfg.settings.precision.explicit
    assert cfg.settings.logging_steps.value is UNKNOWN
    assert written(cfg.settings.save_steps) == default(500)


def test_plain_trainer_arguments_defaults():
    cfg = read_file(FIXTURES / "trainer_args_defaults.yaml")
    assert cfg is not None and cfg.framework is Framework.TRANSFORMERS and cfg.flavour == ""
    s = cfg.settings
    assert written(s.precision) == default("fp32")
    assert written(s.save_strategy) == default("steps")
    assert written(s.save_steps) == default(500)
    assert written(s.checkpoint_limit) == default(None)
    assert written(s.checkpointing_enabled) == default(True)
    assert written(s.logging_steps) == default(500)
    assert written(s.log_level) == default("passive")
    assert written(s.hub_strategy) == default("every_save")
    assert written(s.dataloader_num_workers) == default(0)
    assert written(s.dataloader_pin_memory) == default(True)
    assert written(s.zero_stage) == default(0)
    assert written(s.fsdp) == default(False)
    assert written(s.output_dir) == ("/mnt/checkpoints/bert-imdb", True, 1, "output_dir")
    assert s.report_to.value is UNKNOWN  # "all" in v4, "none" in v5: not modelled
    assert s.max_steps.value is UNKNOWN
    assert s.debug_flags == [] and s.data_paths == [] and s.referenced_configs == []


def test_trainer_arguments_explicit_json():
    cfg = read_file(FIXTURES / "trainer_args_explicit.json")
    assert cfg is not None and cfg.framework is Framework.TRANSFORMERS and cfg.flavour == ""
    s = cfg.settings
    assert written(s.precision) == ("fp16", True, 6, "fp16")
    assert written(s.max_steps) == (20000, True, 5, "max_steps")
    assert written(s.save_steps) == (10, True, 8, "save_steps")
    assert written(s.checkpoint_limit) == (3, True, 9, "save_total_limit")
    assert written(s.logging_steps) == (1, True, 10, "logging_steps")
    assert written(s.log_level) == ("debug", True, 11, "log_level")
    assert written(s.log_level_replica) == ("debug", True, 12, "log_level_replica")
    assert written(s.report_to) == ("all", True, 13, "report_to")
    assert written(s.dataloader_num_workers) == (0, True, 14, "dataloader_num_workers")
    assert written(s.dataloader_pin_memory) == (False, True, 15, "dataloader_pin_memory")
    assert written(s.hub_strategy) == ("all_checkpoints", True, 16, "hub_strategy")
    assert written(s.device) == ("cpu", True, 17, "use_cpu")
    assert [written(r) for r in s.referenced_configs] == [("configs/ds_zero2.json", True, 18, "deepspeed")]
    assert written(s.zero_stage) == (UNKNOWN, True, 18, "deepspeed")
    assert [written(d) for d in s.debug_flags] == [("underflow_overflow", True, 19, "debug")]


def test_save_total_limit_zero_or_null_keeps_all():
    base = "per_device_train_batch_size: 4\nsave_strategy: epoch\n"
    for text in ("save_total_limit: 0\n", "save_total_limit: null\n", "save_total_limit: -1\n"):
        cfg = read_text(base + text)
        assert written(cfg.settings.checkpoint_limit) == (None, True, 3, "save_total_limit")


def test_save_strategy_no_disables_checkpointing():
    cfg = read_text("per_device_train_batch_size: 4\nsave_strategy: 'no'\n")
    assert written(cfg.settings.checkpointing_enabled) == (False, True, 2, "save_strategy")
    assert written(cfg.settings.save_strategy) == ("no", True, 2, "save_strategy")


def test_both_precision_flags_false_is_explicit_fp32():
    cfg = read_text("per_device_train_batch_size: 4\nbf16: false\nfp16: false\n")
    assert written(cfg.settings.precision) == ("fp32", True, 2, "bf16")


def test_no_cuda_and_ratio_intervals():
    cfg = read_text("per_device_train_batch_size: 4\nno_cuda: true\nsave_steps: 0.1\nlogging_steps: 0.01\n")
    assert written(cfg.settings.device) == ("cpu", True, 2, "no_cuda")
    # A float below 1 is a ratio of the run length: unknown statically.
    assert written(cfg.settings.save_steps) == (UNKNOWN, True, 3, "save_steps")
    assert written(cfg.settings.logging_steps) == (UNKNOWN, True, 4, "logging_steps")


def test_inline_deepspeed_and_fsdp():
    text = ("per_device_train_batch_size: 4\nfsdp: full_shard auto_wrap\n"
            "deepspeed:\n  zero_optimization:\n    stage: 2\n")
    s = read_text(text).settings
    assert written(s.fsdp) == (True, True, 2, "fsdp")
    assert written(s.zero_stage) == (2, True, 5, "deepspeed.zero_optimization.stage")
    assert s.referenced_configs == []


def test_interpolations_are_unknown():
    text = "per_device_train_batch_size: 4\nsave_steps: ${oc.env:SAVE_STEPS}\nbf16: ${bf16}\n"
    s = read_text(text).settings
    assert written(s.save_steps) == (UNKNOWN, True, 2, "save_steps")
    assert written(s.precision) == (UNKNOWN, True, 3, "bf16")


def test_peft_and_quantised_loading():
    text = "model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 1\n" \
           "use_peft: true\nload_in_4bit: true\n"
    s = read_text(text).settings
    assert written(s.lora) == (True, True, 3, "use_peft")
    assert written(s.load_bits) == (4, True, 4, "load_in_4bit")


def test_trl_flavour_precision_when_written():
    base = "model_name_or_path: gpt2\nper_device_train_batch_size: 4\npacking: true\n"
    assert written(read_text(base + "bf16: false\n").settings.precision) == ("fp32", True, 4, "bf16")
    # fp16 off but bf16 unwritten: TRL turns bf16 on (current) or not (old).
    fp16_off = read_text(base + "fp16: false\n").settings.precision
    assert fp16_off.value is UNKNOWN and not fp16_off.explicit
    # Plain TrainingArguments: one switch written off, the other off by default.
    assert written(read_text("per_device_train_batch_size: 4\nfp16: false\n").settings.precision) == (
        "fp32", True, 2, "fp16")
