"""MLC301 no-checkpoint-cleanup: exact findings on the positive fixtures, none on the
negatives, and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli
from training_rule_helpers import run

CODE = "MLC301"

EXPECTED = [
    ('MLC301', 'positive/axolotl/qwen-lora.yml', 8, 'axolotl config pushes every checkpoint to the Hugging Face Hub (hub_model_id: acme/qwen-lora): hub_strategy: all_checkpoints keeps one folder per checkpoint in the repository; use hub_strategy: checkpoint (latest only) or every_save'),
    ('MLC301', 'positive/hf_trainer/training_args.json', 1, 'transformers config saves a checkpoint every 500 steps (TrainingArguments default) and never deletes one: save_total_limit is not set; set save_total_limit (e.g. 2)'),
    ('MLC301', 'positive/lightning/config.yaml', 13, 'lightning config saves checkpoints and never deletes one: trainer.callbacks[0].init_args.save_top_k: -1 keeps every checkpoint; set save_top_k to the number of checkpoints to keep (e.g. 3)'),
    ('MLC301', 'positive/nemo/megatron_gpt_config.yaml', 21, 'nemo config saves checkpoints and never deletes one: exp_manager.checkpoint_callback_params.save_top_k: -1 keeps every checkpoint; set save_top_k to the number of checkpoints to keep (e.g. 3)'),
    ('MLC301', 'positive/recipes/zephyr-7b/sft/config_full.yaml', 29, 'transformers config saves a checkpoint every epoch and never deletes one: save_total_limit is not set; set save_total_limit (e.g. 2)'),
]


def test_positive():
    found, _ = run(CODE, "positive")
    assert found == EXPECTED


def test_negative():
    found, _ = run(CODE, "negative")
    assert found == []


def test_cli_json():
    res = run_cli("--format", "json", "--select", CODE, "positive/lightning", cwd=FIXTURES / "rules" / CODE)
    data = json.loads(res.out)
    assert res.code == 1
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [('MLC301', 'positive/lightning/config.yaml', 13)]
