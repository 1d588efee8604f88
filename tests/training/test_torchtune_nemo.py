"""torchtune recipes and NeMo/Hydra configs."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework

from .helpers import FIXTURES, corpus_file, default, read_file, written


def test_torchtune_lora_explicit():
    cfg = read_file(FIXTURES / "torchtune_lora.yaml")
    assert cfg is not None and cfg.framework is Framework.TORCHTUNE
    s = cfg.settings
    assert written(s.model_id) == ("torchtune.models.llama3_1.lora_llama3_1_8b", True, 5, "model._component_")
    assert written(s.lora) == (True, True, 5, "model._component_")
    assert written(s.device) == ("gpu", True, 36, "device")
    assert written(s.precision) == ("fp32", True, 37, "dtype")
    assert written(s.logging_steps) == (1, True, 43, "log_every_n_steps")
    assert written(s.output_dir) == ("/tmp/torchtune/llama3_1_8B/lora", True, 2, "output_dir")
    assert [written(d) for d in s.debug_flags] == [("true", True, 47, "profiler.enabled")]
    assert [written(p) for p in s.data_paths] == [
        ("s3://acme-datasets/alpaca-cleaned", True, 24, "dataset.source")]
    assert written(s.save_strategy) == default("epoch")


def test_torchtune_defaults_and_interpolated_dtype():
    s = read_file(FIXTURES / "torchtune_full_defaults.yaml").settings
    assert written(s.precision) == (UNKNOWN, True, 15, "dtype")  # dtype: ${precision}
    assert written(s.device) == ("cpu", True, 14, "device")
    assert written(s.logging_steps) == default(1)   # recipes: cfg.get("log_every_n_steps", 1)
    assert written(s.lora) == (False, True, 3, "model._component_")
    assert s.debug_flags == []


def test_torchtune_qlora_corpus_recipe():
    s = read_file(corpus_file("pytorch__torchtune/recipes/configs/llama3_1/8B_qlora_single_device.yaml")).settings
    assert written(s.precision) == ("bf16", True, 89, "dtype")
    assert written(s.load_bits) == (4, True, 22, "model._component_")
    assert written(s.lora) == (True, True, 22, "model._component_")


def test_nemo_explicit():
    cfg = read_file(FIXTURES / "nemo_gpt_pretrain.yaml")
    assert cfg is not None and cfg.framework is Framework.NEMO and cfg.flavour == ""
    s = cfg.settings
    assert written(s.precision) == ("fp32", True, 8, "trainer.precision")
    assert written(s.logging_steps) == (1, True, 14, "trainer.log_every_n_steps")
    assert written(s.max_steps) == (300000, True, 13, "trainer.max_steps")
    assert written(s.checkpointing_enabled) == (True, True, 23, "exp_manager.create_checkpoint_callback")
    assert written(s.checkpoint_limit) == (None, True, 26, "exp_manager.checkpoint_callback_params.save_top_k")
    assert written(s.save_steps) == (20, True, 28, "exp_manager.checkpoint_callback_params.every_n_train_steps")
    assert written(s.output_dir) == ("s3://acme-nemo/experiments", True, 19, "exp_manager.exp_dir")
    assert written(s.dataloader_num_workers) == (0, True, 37, "model.data.num_workers")
    assert written(s.num_machines) == (4, True, 6, "trainer.num_nodes")
    assert [p.value for p in s.data_paths] == ["s3://acme-nemo/experiments", "s3://acme-nemo/data/wiki_text_document"]


def test_nemo_hydra_composed_has_no_defaults():
    cfg = read_file(FIXTURES / "nemo_hydra_composed.yaml")
    assert cfg is not None and cfg.framework is Framework.NEMO and cfg.flavour == "hydra"
    s = cfg.settings
    assert written(s.precision) == (UNKNOWN, True, 7, "trainer.precision")
    assert s.logging_steps.value is UNKNOWN and not s.logging_steps.explicit
    assert written(s.max_steps) == (1000, True, 8, "trainer.max_steps")
