"""MLC208 spot-eligible-gpu: exact findings on the positive fixtures, none on the negatives,
and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC208"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC208', 'positive/jobs.yaml', 11, 'Job sft-7b runs 4 GPUs per pod on on-demand capacity (nodeSelector eks.amazonaws.com/nodegroup=gpu-a10g -> EKS node group aws_eks_node_group.a10g, on-demand: no spot setting) and checkpoints to durable storage (output_dir: s3://acme-checkpoints/sft/run-17): it can resume after preemption, so spot capacity at 60-90% lower price would fit'),
    ('MLC208', 'positive/jobs.yaml', 29, 'Job sft-1b runs 1 GPU per pod on on-demand capacity (nodeSelector karpenter.sh/capacity-type=on-demand) and checkpoints to durable storage (output_dir: /checkpoints/sft (persistent volume at /checkpoints)): it can resume after preemption, so spot capacity at 60-90% lower price would fit'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive"), CODE) == EXPECTED


def test_negative_silent():
    assert triples(lint_dir(BASE / "negative"), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, cwd=BASE)
    assert result.code == 0, result.err   # notes are below the default --fail-on warning
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]
