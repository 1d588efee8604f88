"""DeepSpeed JSON configs."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework

from .helpers import FIXTURES, default, read_file, read_text, written


def test_deepspeed_explicit_profilers_and_fp32():
    cfg = read_file(FIXTURES / "ds_zero3_profiled.json")
    assert cfg is not None and cfg.framework is Framework.DEEPSPEED
    s = cfg.settings
    assert written(s.precision) == ("fp32", True, 6, "bf16.enabled")
    assert written(s.zero_stage) == (3, True, 9, "zero_optimization.stage")
    assert written(s.logging_steps) == (1, True, 16, "steps_per_print")
    assert [written(d) for d in s.debug_flags] == [
        ("true", True, 20, "flops_profiler.enabled"),
        ("true", True, 18, "wall_clock_breakdown"),
        ("true", True, 27, "comms_logger.enabled"),
    ]
    assert written(s.device) == default("gpu")


def test_deepspeed_auto_values_are_unknown():
    s = read_file(FIXTURES / "ds_auto.json").settings
    assert written(s.precision) == (UNKNOWN, True, 3, "bf16.enabled")
    assert written(s.zero_stage) == (UNKNOWN, True, 4, "zero_optimization.stage")


def test_deepspeed_defaults():
    cfg = read_file(FIXTURES / "ds_minimal.json")
    assert cfg is not None and cfg.framework is Framework.DEEPSPEED
    s = cfg.settings
    assert written(s.precision) == default("fp32")
    assert written(s.zero_stage) == default(0)
    # steps_per_print: 10 in older DeepSpeed, None in current: not modelled.
    assert s.logging_steps.value is UNKNOWN
    assert s.debug_flags == []


def test_deepspeed_enabled_blocks():
    assert written(read_text('{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}}',
                             "ds.json").settings.precision) == ("bf16", True, 1, "bf16.enabled")
    text = '{\n "train_micro_batch_size_per_gpu": 1,\n "fp16": {"enabled": true},\n "zero_optimization": {}\n}'
    s = read_text(text, "ds.json").settings
    assert written(s.precision) == ("fp16", True, 3, "fp16.enabled")
    assert written(s.zero_stage) == (0, True, 4, "zero_optimization")
    # A block without "enabled" is off.
    s = read_text('{"train_micro_batch_size_per_gpu": 1, "fp16": {"loss_scale": 0}}', "ds.json").settings
    assert written(s.precision) == ("fp32", True, 1, "fp16")


def test_profilers_off_are_not_flags():
    text = '{"train_micro_batch_size_per_gpu": 1, "wall_clock_breakdown": false, ' \
           '"flops_profiler": {"enabled": false}, "comms_logger": {"enabled": false}}'
    assert read_text(text, "ds.json").settings.debug_flags == []
