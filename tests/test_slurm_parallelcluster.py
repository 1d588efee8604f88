"""AWS ParallelCluster v3 configs as node pools (MLC203), and Slurm jobs
linked to their queues by --partition (issue 13)."""

from __future__ import annotations

from pathlib import Path

from mlc_testing import FIXTURES, cli_json_findings, lint_dir, triples
from mlcost_lint.model.parallelcluster import CLUSTER_TYPE, RESOURCE_TYPE, is_parallelcluster

BASE = FIXTURES / "rules" / "MLC203" / "parallelcluster"
MLC502 = FIXTURES / "rules" / "MLC502"

EXPECTED = [
    ("MLC203", "positive/cluster-config.yaml", 25,
     "ParallelCluster compute resource SlurmQueues[gpu].p4d keeps 2 x p4d.24xlarge = 16 A100-40 GPUs running with "
     "no job (MinCount = 2); set MinCount: 0 (Slurm power-saving starts nodes when jobs are queued and stops them "
     "after ScaledownIdletime)"),
    ("MLC203", "positive/cluster-config.yaml", 32,
     "ParallelCluster compute resource SlurmQueues[gpu].g5 keeps 1 x g5.12xlarge = 4 A10G GPUs running with no "
     "job (MinCount = 1); set MinCount: 0 (Slurm power-saving starts nodes when jobs are queued and stops them "
     "after ScaledownIdletime)"),
]


def test_detection():
    assert is_parallelcluster({"Scheduling": {"Scheduler": "slurm", "SlurmQueues": []}})
    assert not is_parallelcluster({"Scheduling": {"Scheduler": "awsbatch", "AwsBatchQueues": []}})
    assert not is_parallelcluster({"Scheduling": {"Scheduler": "slurm"}})
    assert not is_parallelcluster(["Scheduling"])


def test_compute_resources_are_node_pools():
    result = lint_dir(BASE / "negative", cwd=BASE)
    pools = [(r.name, r.get("InstanceType"), r.get("MinCount"), r.get("CapacityType"), r.loc("MinCount").line)
             for r in result.project.terraform.resources if r.type == RESOURCE_TYPE]
    clusters = [(r.name, r.location.line) for r in result.project.terraform.resources if r.type == CLUSTER_TYPE]
    assert clusters == [("cluster-config.yaml", 1)]
    assert pools == [
        ("train/p5", "p5.48xlarge", None, None, 11),
        ("train/p4d-zero", "p4d.24xlarge", 0, None, 18),
        ("reserved/p5-block", "p5.48xlarge", 2, "CAPACITY_BLOCK", 27),
        ("odcr/p4d-odcr", "p4d.24xlarge", 1, None, 33),
        ("cpu/c6i", "c6i.32xlarge", 2, None, 41),
    ]


def test_mlc203_positive_exact_and_negative_silent():
    assert triples(lint_dir(BASE / "positive", cwd=BASE), "MLC203") == EXPECTED
    assert triples(lint_dir(BASE / "negative", cwd=BASE), "MLC203") == []


def test_mlc203_cli():
    res, found = cli_json_findings("positive", "MLC203", BASE)
    assert res.code == 1, res.err
    assert found == EXPECTED


def test_no_other_rule_reads_the_config():
    """The pseudo resource types are no Terraform types: log, storage and
    network rules stay silent on them; MLC101 reads the cluster's Tags."""
    result = lint_dir(BASE / "positive", cwd=BASE, required_tags=["team"])
    assert sorted({f.code for f in result.findings}) == ["MLC101", "MLC203"]


def test_partition_links_the_job_to_its_queue():
    case = MLC502 / "positive" / "slurm_parallelcluster"
    result = lint_dir(case, cwd=MLC502)
    links = [(link.workload.name, link.how, link.evidence.line) for link in result.project.links.pools]
    assert links == [("pretrain", "#SBATCH --partition=h100 = ParallelCluster queue h100 (SlurmQueues[h100].p5)", 3)]
    placed = {p.workload.name: (p.gpu.name if p.gpu else None, p.spot, p.region)
              for p in result.project.links.placements}
    # eval asks for the "mixed" queue (g5 and g6): which type is unknown.
    assert placed == {"eval": (None, None, None), "pretrain": ("p5.48xlarge", True, "eu-west-1")}


def test_same_queue_name_in_two_clusters_links_nothing(tmp_path: Path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pcluster.yaml").write_text(
            (MLC502 / "positive" / "slurm_parallelcluster" / "pcluster.yaml").read_text())
    (tmp_path / "pretrain.sbatch").write_text(
        (MLC502 / "positive" / "slurm_parallelcluster" / "pretrain.sbatch").read_text())
    result = lint_dir(tmp_path, cwd=tmp_path)
    assert result.project.links.pools == []
    assert triples(result, "MLC502") == []


MLC101 = FIXTURES / "rules" / "MLC101" / "parallelcluster"
TAGS = ["team", "project", "cost-center"]


def test_mlc101_cluster_tags():
    """Cluster Tags go on every resource, a queue's on its nodes: a key
    counts when every queue's nodes get it. One finding per config, at the
    cluster's Tags (the config's first line when there are none)."""
    found = triples(lint_dir(MLC101 / "positive", cwd=MLC101, required_tags=TAGS), "MLC101")
    assert found == [
        ("MLC101", "positive/queue-tags.yaml", 2,
         "ParallelCluster config queue-tags.yaml lacks cost tags project, cost-center (required-tags); its spend "
         "cannot be attributed; add them to Tags (as - Key: k / Value: v items; ParallelCluster tags every "
         "resource it creates with them)"),
        ("MLC101", "positive/untagged.yaml", 1,
         "ParallelCluster config untagged.yaml lacks cost tags team, project, cost-center (required-tags); its "
         "spend cannot be attributed; add them to Tags (as - Key: k / Value: v items; ParallelCluster tags every "
         "resource it creates with them)"),
    ]
    assert triples(lint_dir(MLC101 / "negative", cwd=MLC101, required_tags=TAGS), "MLC101") == []
    # Off unless tags are configured.
    assert triples(lint_dir(MLC101 / "positive", cwd=MLC101), "MLC101") == []
