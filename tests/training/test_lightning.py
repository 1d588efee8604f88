"""Lightning CLI YAML."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework

from .helpers import FIXTURES, corpus_file, default, read_file, read_text, written


def test_lightning_cli_explicit():
    cfg = read_file(FIXTURES / "lightning_cli.yaml")
    assert cfg is not None and cfg.framework is Framework.LIGHTNING
    s = cfg.settings
    assert written(s.device) == ("gpu", True, 3, "trainer.accelerator")
    assert written(s.num_machines) == (2, True, 5, "trainer.num_nodes")
    assert written(s.max_steps) == (100000, True, 7, "trainer.max_steps")
    assert written(s.logging_steps) == (1, True, 8, "trainer.log_every_n_steps")
    assert [written(d) for d in s.debug_flags] == [
        ("true", True, 9, "trainer.detect_anomaly"), ("simple", True, 10, "trainer.profiler")]
    assert written(s.checkpoint_limit) == (None, True, 19, "trainer.callbacks[1].init_args.save_top_k")
    assert written(s.save_steps) == (50, True, 20, "trainer.callbacks[1].init_args.every_n_train_steps")
    assert written(s.save_strategy) == ("steps", True, 20, "trainer.callbacks[1].init_args.every_n_train_steps")
    assert written(s.output_dir) == ("gs://acme-lightning/runs/segformer/checkpoints", True, 18,
                                     "trainer.callbacks[1].init_args.dirpath")
    assert written(s.dataloader_num_workers) == (0, True, 31, "data.init_args.num_workers")
    assert written(s.dataloader_pin_memory) == (False, True, 32, "data.init_args.pin_memory")
    assert [(p.value, p.location.line) for p in s.data_paths] == [
        ("gs://acme-lightning/runs/segformer", 11),
        ("gs://acme-lightning/runs/segformer/checkpoints", 18),
        ("gs://acme-geo-data/landcoverai", 33),
    ]
    assert written(s.precision) == default("fp32")


def test_lightning_defaults():
    s = read_file(FIXTURES / "lightning_cli_defaults.yaml").settings
    assert written(s.precision) == default("fp32")
    assert written(s.logging_steps) == default(50)
    assert written(s.checkpointing_enabled) == default(True)
    assert written(s.checkpoint_limit) == default(1)
    assert written(s.save_strategy) == default("epoch")
    assert written(s.device) == default("gpu")
    assert s.dataloader_num_workers.value is UNKNOWN  # a DataModule argument, no framework default


def test_lightning_cpu_precision_and_disabled_checkpointing():
    s = read_file(FIXTURES / "lightning_cpu_barebones.yaml").settings
    assert written(s.device) == ("cpu", True, 2, "trainer.accelerator")
    assert written(s.precision) == ("bf16", True, 3, "trainer.precision")
    assert written(s.checkpointing_enabled) == (False, True, 4, "trainer.enable_checkpointing")


def test_lightning_precision_spellings():
    cases = {"32": "fp32", "'32-true'": "fp32", "16": "fp16", "16-mixed": "fp16", "bf16-mixed": "bf16",
             "bf16-true": "bf16", "transformer-engine": "fp8", "64": UNKNOWN, "'64-true'": UNKNOWN}
    for text, expected in cases.items():
        s = read_text(f"trainer:\n  max_epochs: 1\n  precision: {text}\n  accelerator: tpu\n").settings
        assert written(s.precision) == (expected, True, 3, "trainer.precision"), text
        assert written(s.device) == ("tpu", True, 4, "trainer.accelerator")


def test_lightning_plugins_make_default_precision_unknown():
    s = read_text("trainer:\n  max_epochs: 1\n  plugins:\n    - class_path: x.BitsandbytesPrecision\n").settings
    assert written(s.precision) == (UNKNOWN, True, 3, "trainer.plugins")


def test_lightning_corpus_torchgeo_config():
    path = corpus_file("microsoft__torchgeo/experiments/ssl4eo/landsat/conf/ssl4eo_l_oli_tirs_toa_mocov2_resnet50.yaml")
    s = read_file(path).settings
    assert written(s.logging_steps) == (5, True, 4, "trainer.log_every_n_steps")
    assert written(s.dataloader_num_workers) == (16, True, 29, "data.init_args.num_workers")
