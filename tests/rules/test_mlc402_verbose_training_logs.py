"""MLC402 verbose-training-logs: exact findings on the positive fixtures, none on the
negatives, and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli
from training_rule_helpers import run

CODE = "MLC402"

EXPECTED = [
    ('MLC402', 'positive/ds_config.json', 4, 'deepspeed config positive/ds_config.json logs every training step (steps_per_print: 1): one record per step to every logger and log sink; set steps_per_print: 100 (or remove it)'),
    ('MLC402', 'positive/lightning.yaml', 5, 'lightning config positive/lightning.yaml logs every training step (trainer.log_every_n_steps: 1): one record per step to every logger and log sink; set trainer.log_every_n_steps: 50'),
    ('MLC402', 'positive/sft.yaml', 5, 'transformers config positive/sft.yaml logs every training step (logging_steps: 1): a loss gather and device sync plus one record per step to every logger and log sink; set logging_steps: 50'),
    ('MLC402', 'positive/sft.yaml', 6, 'transformers config positive/sft.yaml logs at debug level on every replica (log_level_replica: debug); set log_level_replica: warning (or info)'),
    ('MLC402', 'positive/sft.yaml', 7, 'transformers config positive/sft.yaml reports to every installed tracker (report_to: all); name the trackers you use (e.g. report_to: [wandb])'),
    ('MLC402', 'positive/torchtune/8B_lora.yaml', 17, 'torchtune config positive/torchtune/8B_lora.yaml logs every training step (log_every_n_steps: 1): one record per step to every logger and log sink; set log_every_n_steps: 50'),
]


def test_positive():
    found, _ = run(CODE, "positive")
    assert found == EXPECTED


def test_negative():
    found, _ = run(CODE, "negative")
    assert found == []


def test_cli_json():
    res = run_cli("--format", "json", "--select", CODE, "positive/torchtune", cwd=FIXTURES / "rules" / CODE)
    data = json.loads(res.out)
    assert res.code == 1
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [('MLC402', 'positive/torchtune/8B_lora.yaml', 17)]
