"""Axolotl YAML configs."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework

from .helpers import FIXTURES, default, read_file, read_text, written


def test_axolotl_explicit_settings():
    cfg = read_file(FIXTURES / "axolotl_lora.yml")
    assert cfg is not None and cfg.framework is Framework.AXOLOTL
    s = cfg.settings
    assert written(s.model_id) == ("meta-llama/Llama-3.1-8B", True, 1, "base_model")
    assert written(s.load_bits) == (8, True, 5, "load_in_8bit")
    assert written(s.lora) == (True, True, 20, "adapter")
    assert written(s.precision) == ("bf16", True, 33, "bf16")  # bf16: auto counts as on
    assert written(s.logging_steps) == (1, True, 37, "logging_steps")
    assert written(s.save_steps) == (20, True, 42, "save_steps")
    assert written(s.save_strategy) == ("steps", True, 42, "save_steps")
    # Axolotl turns a falsy save_total_limit into 4.
    assert written(s.checkpoint_limit) == (4, True, 43, "save_total_limit")
    assert written(s.output_dir) == ("./outputs/lora-out", True, 15, "output_dir")
    assert [written(r) for r in s.referenced_configs] == [
        ("deepspeed_configs/zero2.json", True, 44, "deepspeed")]
    assert written(s.zero_stage) == (UNKNOWN, True, 44, "deepspeed")
    assert [written(p) for p in s.data_paths] == [
        ("s3://acme-training-data/alpaca/train.jsonl", True, 9, "datasets[0].path")]


def test_axolotl_defaults():
    cfg = read_file(FIXTURES / "axolotl_defaults.yml")
    assert cfg is not None and cfg.framework is Framework.AXOLOTL
    s = cfg.settings
    assert written(s.precision) == default("bf16")
    assert written(s.save_strategy) == default("epoch")
    assert written(s.checkpoint_limit) == default(4)
    assert written(s.checkpointing_enabled) == default(True)
    assert written(s.output_dir) == default("./model-out")
    assert written(s.lora) == default(False)
    assert written(s.load_bits) == default(16)
    assert written(s.dataloader_num_workers) == default(0)
    assert written(s.dataloader_pin_memory) == default(True)
    assert written(s.zero_stage) == default(0)
    assert written(s.fsdp) == default(False)
    assert written(s.device) == default("gpu")
    # Computed from the run length at run time.
    assert s.logging_steps.value is UNKNOWN and s.save_steps.value is UNKNOWN


def test_axolotl_precision_variants():
    base = "base_model: gpt2\nsequence_len: 512\n"
    assert written(read_text(base + "bf16: true\n").settings.precision) == ("bf16", True, 3, "bf16")
    assert written(read_text(base + "bf16: false\nfp16: true\n").settings.precision) == ("fp16", True, 4, "fp16")
    assert written(read_text(base + "bf16: false\nfp16: false\n").settings.precision) == (
        "fp32", True, 3, "bf16")
    assert written(read_text(base + "fp8: true\nbf16: auto\n").settings.precision) == ("fp8", True, 3, "fp8")
    # fp16 written false, bf16 unwritten -> bf16 stays "auto" (the default).
    assert written(read_text(base + "fp16: false\n").settings.precision) == default("bf16")


def test_axolotl_qlora_and_saves_per_epoch():
    text = "base_model: gpt2\nadapter: qlora\nsaves_per_epoch: 4\nfsdp_config:\n  fsdp_version: 2\n"
    s = read_text(text).settings
    assert written(s.lora) == (True, True, 2, "adapter")
    assert written(s.load_bits) == (4, True, 2, "adapter")
    assert written(s.save_strategy) == ("steps", True, 3, "saves_per_epoch")
    assert written(s.save_steps) == (UNKNOWN, True, 3, "saves_per_epoch")
    assert written(s.fsdp) == (True, True, 4, "fsdp_config")


def test_axolotl_save_strategy_no():
    s = read_text("base_model: gpt2\nsequence_len: 512\nsave_strategy: 'no'\n").settings
    assert written(s.checkpointing_enabled) == (False, True, 3, "save_strategy")
    assert written(s.save_total_limit if hasattr(s, "save_total_limit") else s.checkpoint_limit) == default(4)
