"""Accelerate config YAML."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework

from .helpers import FIXTURES, corpus_file, default, read_file, read_text, written


def test_accelerate_fsdp_fp32_debug():
    cfg = read_file(FIXTURES / "accelerate_fsdp_debug.yaml")
    assert cfg is not None and cfg.framework is Framework.ACCELERATE
    s = cfg.settings
    assert written(s.precision) == ("fp32", True, 14, "mixed_precision")  # mixed_precision: 'no'
    assert written(s.device) == ("gpu", True, 3, "distributed_type")
    assert written(s.fsdp) == (True, True, 3, "distributed_type")
    assert written(s.zero_stage) == (0, True, 3, "distributed_type")
    assert written(s.num_processes) == (16, True, 16, "num_processes")
    assert written(s.num_machines) == (2, True, 15, "num_machines")
    # v2: Accelerate debug mode is not a debug flag of MLC403 (rules.md, Settled questions).
    assert s.debug_flags == []


def test_accelerate_deepspeed_file_is_referenced():
    s = read_file(FIXTURES / "accelerate_deepspeed_file.yaml").settings
    assert [written(r) for r in s.referenced_configs] == [
        ("configs/ds_zero3.json", True, 3, "deepspeed_config.deepspeed_config_file")]
    assert written(s.zero_stage) == (UNKNOWN, True, 3, "deepspeed_config.deepspeed_config_file")
    assert written(s.fsdp) == (False, True, 5, "distributed_type")
    # mixed_precision absent: the script or the environment decides.
    assert s.precision.value is UNKNOWN and not s.precision.explicit


def test_accelerate_cpu_and_defaults():
    s = read_file(FIXTURES / "accelerate_cpu.yaml").settings
    assert written(s.device) == ("cpu", True, 2, "use_cpu")
    assert written(s.num_processes) == default(1)   # distributed_type NO
    assert written(s.num_machines) == default(1)


def test_accelerate_tpu_and_inline_zero_stage():
    s = read_text("distributed_type: XLA\nmixed_precision: bf16\n").settings
    assert written(s.device) == ("tpu", True, 1, "distributed_type")
    assert written(s.precision) == ("bf16", True, 2, "mixed_precision")
    assert s.num_processes.value is UNKNOWN


def test_accelerate_corpus_inline_zero_stage():
    s = read_file(corpus_file("huggingface__trl/examples/accelerate_configs/deepspeed_zero2.yaml")).settings
    assert written(s.zero_stage) == (2, True, 8, "deepspeed_config.zero_stage")
    assert written(s.precision) == ("bf16", True, 13, "mixed_precision")
    assert s.debug_flags == []  # debug: false


def test_accelerate_legacy_fp16_and_other_accelerators():
    s = read_text("compute_environment: LOCAL_MACHINE\nfp16: true\n").settings
    assert written(s.precision) == ("fp16", True, 2, "fp16")
    s = read_text("distributed_type: MULTI_HPU\nmixed_precision: fp8\n").settings
    assert written(s.device) == (UNKNOWN, True, 1, "distributed_type")
    assert written(s.precision) == ("fp8", True, 2, "mixed_precision")
