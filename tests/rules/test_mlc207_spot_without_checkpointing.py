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


# A Slurm job on a ParallelCluster SPOT queue (its --partition) whose launch
# line writes --output_dir only to the node's disk; no training config linked.
SLURM_EXPECTED = [
    ('MLC207', 'slurm/positive/sft-spot.sbatch', 3, 'Slurm job sft-spot runs on spot capacity (#SBATCH --partition=spot-gpu = ParallelCluster queue spot-gpu (SlurmQueues[spot-gpu].g5) -> ParallelCluster compute resource SlurmQueues[spot-gpu].g5, spot: CapacityType = SPOT) but its launch line writes checkpoints only to --output_dir /tmp/sft-ckpt (node-local disk): a preemption restarts training from the start; write them to the cluster\'s shared file system or an object store and resume from them'),
    ('MLC207', 'slurm/positive/sweep-nosave.sbatch', 3, "Slurm job sweep-nosave runs on spot capacity (#SBATCH --partition=spot-gpu = ParallelCluster queue spot-gpu (SlurmQueues[spot-gpu].g5) -> ParallelCluster compute resource SlurmQueues[spot-gpu].g5, spot: CapacityType = SPOT) but its launch line saves no checkpoints (--save_strategy no): a preemption restarts training from the start; save checkpoints to the cluster's shared file system or an object store and resume from them"),
]


def test_slurm_launch_line_on_a_spot_queue():
    assert triples(lint_dir(BASE / "slurm" / "positive", cwd=BASE), CODE) == SLURM_EXPECTED
    # a shared file system (/fsx), an on-demand queue, a directory from a variable: silent
    assert triples(lint_dir(BASE / "slurm" / "negative", cwd=BASE), CODE) == []
    result = run_cli("slurm/positive", "--format", "json", "--select", CODE, "--no-cache", cwd=BASE)
    assert [(f["code"], f["path"], f["line"]) for f in json.loads(result.out)["findings"]] == \
        [(c, p, line) for c, p, line, _ in SLURM_EXPECTED]
