"""MLC302 checkpoint-too-frequent: exact findings on the positive fixtures, none on the
negatives, and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli
from training_rule_helpers import run

CODE = "MLC302"

EXPECTED = [
    ('MLC302', 'positive/axolotl.yml', 9, 'axolotl config saves a checkpoint every 25 steps, below min-checkpoint-interval-steps 100: every save stalls the GPUs; raise save_steps to 100 or more'),
    ('MLC302', 'positive/lightning.yaml', 10, 'lightning config saves a checkpoint every 20 steps (5000 checkpoints of a 100000-step run), below min-checkpoint-interval-steps 100: every save stalls the GPUs; raise trainer.callbacks[0].init_args.every_n_train_steps to 100 or more'),
    ('MLC302', 'positive/pretrain_default_interval.yaml', 4, 'transformers config writes 500 checkpoints over max_steps 250000 (save_steps 500, the TrainingArguments default), more than max-checkpoints-per-run 200; raise the interval to at least 1250 steps'),
    ('MLC302', 'positive/ratio_save_steps.yaml', 6, 'transformers config sets save_steps: 0.001, a share of the run: about 1000 checkpoints per run, more often than min-checkpoint-interval-steps 100 / max-checkpoints-per-run 200 allow; save at most every 100 steps or fewer than 200 times per run'),
    ('MLC302', 'positive/sft_every_10.yaml', 7, 'transformers config saves a checkpoint every 10 steps (500 checkpoints of a 5000-step run), below min-checkpoint-interval-steps 100: every save stalls the GPUs; raise save_steps to 100 or more'),
]


def test_positive():
    found, _ = run(CODE, "positive")
    assert found == EXPECTED


def test_negative():
    found, _ = run(CODE, "negative")
    assert found == []


def test_cli_json():
    res = run_cli("--format", "json", "--select", CODE, "positive/lightning.yaml", cwd=FIXTURES / "rules" / CODE)
    data = json.loads(res.out)
    assert res.code == 1
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [('MLC302', 'positive/lightning.yaml', 10)]
