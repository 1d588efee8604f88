"""MLC603 missing-shm-volume: exact findings on the positive fixtures, none on the negatives,
and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC603"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC603', 'positive/pods.yaml', 20, 'PyTorchJob llama-pretrain (Worker) container pytorch has no memory-backed emptyDir at /dev/shm but its pod has 8 GPUs (NCCL shares memory between them): the 64 MiB default makes DataLoader workers and NCCL crash mid-run; mount an emptyDir with medium: Memory at /dev/shm'),
    ('MLC603', 'positive/pods.yaml', 37, 'Job vit-finetune container train has no memory-backed emptyDir at /dev/shm but its training config positive/configs/vit.yaml uses 8 DataLoader workers (dataloader_num_workers): the 64 MiB default makes DataLoader workers and NCCL crash mid-run; mount an emptyDir with medium: Memory at /dev/shm'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive"), CODE) == EXPECTED


def test_negative_silent():
    assert triples(lint_dir(BASE / "negative"), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]
