"""MLC207 spot-without-checkpointing: exact findings on the positive fixtures, none on the negatives,
and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC207"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC207', 'positive/jobs.yaml', 11, 'Job sft-nosave runs on spot capacity (nodeSelector karpenter.sh/capacity-type=spot) but its training config positive/configs/sft-nosave.yaml saves no checkpoints (save_strategy: "no"): a preemption restarts training from the start; save checkpoints to an object store or a persistent volume and resume from them'),
    ('MLC207', 'positive/jobs.yaml', 35, 'Job sft-tmp runs on spot capacity (nodeSelector eks.amazonaws.com/nodegroup=gpu-spot -> EKS node group aws_eks_node_group.spot, spot: capacity_type = SPOT) but its training config positive/configs/sft-tmp.yaml writes checkpoints only to ephemeral storage (output_dir: /tmp/sft-out (non-persistent volume at /tmp)): a preemption restarts training from the start; save checkpoints to an object store or a persistent volume and resume from them'),
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
