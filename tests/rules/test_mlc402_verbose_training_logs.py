"""MLC402 verbose-training-logs: exact findings on the positive fixtures, none on the
negatives, and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli
from training_rule_helpers import run

CODE = "MLC402"

EXPECTED = [
    ('MLC402', 'positive/sft.yaml', 6, 'transformers config logs at debug level on every replica (log_level_replica: debug); set log_level_replica: warning (or info)'),
    ('MLC402', 'positive/sft.yaml', 7, 'transformers config reports to every installed tracker (report_to: all); name the trackers you use (e.g. report_to: [wandb])'),
]


def test_positive():
    found, _ = run(CODE, "positive")
    assert found == EXPECTED


def test_negative():
    found, _ = run(CODE, "negative")
    assert found == []


def test_cli_json():
    res = run_cli("--format", "json", "--select", CODE, "positive/sft.yaml", cwd=FIXTURES / "rules" / CODE)
    data = json.loads(res.out)
    assert res.code == 1
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [
        ('MLC402', 'positive/sft.yaml', 6), ('MLC402', 'positive/sft.yaml', 7)]


def test_per_step_logging_is_not_reported():
    """v2: logging_steps: 1 / log_every_n_steps: 1 / steps_per_print: 1 are house style, not waste."""
    res = run_cli("--format", "json", "--select", CODE, "negative", cwd=FIXTURES / "rules" / CODE)
    assert res.code == 0, res.err
    assert json.loads(res.out)["findings"] == []
