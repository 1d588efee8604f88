"""MLC602 dataloader-starvation: exact findings on the positive fixtures, none on the
negatives, and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, run_cli
from training_rule_helpers import run

CODE = "MLC602"

EXPECTED = [
    ('MLC602', 'positive/lightning.yaml', 11, 'lightning config starves the GPU: data.init_args.num_workers: 0 loads every batch in the training process; set data.init_args.num_workers to 4 or more (up to the CPU cores per GPU)'),
    ('MLC602', 'positive/nemo_asr.yaml', 7, 'nemo config starves the GPU: model.train_ds.num_workers: 0 loads every batch in the training process; set model.train_ds.num_workers to 4 or more (up to the CPU cores per GPU)'),
    ('MLC602', 'positive/vit_finetune.yaml', 5, 'transformers config starves the GPU: dataloader_num_workers: 0 loads every batch in the training process; dataloader_pin_memory: false makes every host-to-GPU copy synchronous; set dataloader_num_workers to 4 or more (up to the CPU cores per GPU) and remove dataloader_pin_memory: false'),
]


def test_positive():
    found, _ = run(CODE, "positive")
    assert found == EXPECTED


def test_negative():
    found, _ = run(CODE, "negative")
    assert found == []


def test_cli_json():
    res = run_cli("--format", "json", "--select", CODE, "positive/nemo_asr.yaml", cwd=FIXTURES / "rules" / CODE)
    data = json.loads(res.out)
    assert res.code == 1
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [('MLC602', 'positive/nemo_asr.yaml', 7)]
