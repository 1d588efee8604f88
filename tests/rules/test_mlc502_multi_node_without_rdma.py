"""MLC502 multi-node-without-rdma: every fixture case, exact code, path, line and message; negatives silent;
once through the real CLI."""

from __future__ import annotations

import pytest

from mlc_testing import FIXTURES, cli_json_findings, fixture_case_names, lint_dir, triples

CODE = "MLC502"
BASE = FIXTURES / "rules" / CODE

EXPECTED = {
    'positive/slurm_parallelcluster': [
        ('MLC502', 'positive/slurm_parallelcluster/pretrain.sbatch', 3, 'Slurm job pretrain trains across nodes (torchrun on 2 nodes) on p5.48xlarge (#SBATCH --partition=h100, line 3), which supports EFA, but ParallelCluster SlurmQueues[h100].p5 does not set Efa.Enabled: true: NCCL falls back to TCP and every step waits on the network; set Efa.Enabled: true on the compute resource'),
    ],
    'negative/slurm_parallelcluster': [],
    'positive/eks_pool_without_efa': [
        ('MLC502', 'positive/eks_pool_without_efa/k8s/jobset.yaml', 28, 'JobSet gpt-pretrain (workers) trains across nodes (torchrun on 2 nodes) on p4d.24xlarge, which supports EFA, but has no vpc.amazonaws.com/efa request and module.eks.eks_managed_node_groups["p4d"] does not enable EFA (enable_efa_support / launch template interface_type = "efa"): NCCL falls back to TCP and every step waits on the network'),
    ],
    'positive/mpijob_azure_nd': [
        ('MLC502', 'positive/mpijob_azure_nd/k8s/mpijob.yaml', 27, 'MPIJob nccl-allreduce (Worker) trains across nodes (2 GPU pods) on Standard_ND96asr_v4, which supports InfiniBand, but has no rdma/* device request: NCCL falls back to TCP and every step waits on the network'),
    ],
    'positive/pytorchjob_p5': [
        ('MLC502', 'positive/pytorchjob_p5/k8s/pytorchjob.yaml', 19, 'PyTorchJob llama-pretrain (Master) trains across nodes (4 GPU pods) on p5.48xlarge, which supports EFA, but has no vpc.amazonaws.com/efa request: NCCL falls back to TCP and every step waits on the network'),
    ],
    'negative/accelerator_only_selector': [
    ],
    'negative/efa_enabled_pool': [
    ],
    'negative/efa_requested': [
    ],
    'negative/not_multi_nic_shape': [
    ],
    'negative/single_node': [
    ],
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_fixture(case):
    result = lint_dir(BASE / case, cwd=BASE)
    assert triples(result, CODE) == EXPECTED[case]
    assert result.project.links.errors == []


def test_every_fixture_case_is_listed():
    assert fixture_case_names(BASE) == sorted(EXPECTED)


def test_cli_json():
    case = next(c for c in sorted(EXPECTED) if c.startswith("positive/"))
    res, got = cli_json_findings(case, CODE, BASE)
    assert res.code == 1, res.err
    assert got == EXPECTED[case]
