"""Node pools beyond EKS managed groups / GKE / AKS: self-managed EKS node
groups (aws_autoscaling_group, also the terraform-aws-modules synthetic
ones) and Karpenter NodePools."""

from pathlib import Path

import pytest

from mlcost_lint.link import capacity_of, gpu_of, node_type_of
from mlcost_lint.model.capacity import ON_DEMAND, RESERVED, SPOT
from mlcost_lint.model.core import UNKNOWN as UNKNOWN_KIND

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "link"


def _project(name: str):
    import os

    from mlcost_lint.config import Settings
    from mlcost_lint.pipeline import LintOptions, lint

    old = os.getcwd()
    os.chdir(FIXTURES)
    try:
        result = lint([name], Settings(root=FIXTURES), LintOptions(use_cache=False, jobs=1))
    finally:
        os.chdir(old)
    assert result.project.links.errors == []
    return result.project


def _placements(project):
    out = {}
    for w in project.kubernetes.workloads:
        t = w.templates[0]
        links = project.links.pools_of(t)
        cap = capacity_of(project, t)
        gpu = gpu_of(project, t)
        out[w.name] = ([(l.pool.address, l.how, l.evidence.line) for l in links], cap.kind,
                       getattr(gpu, "name", None))
    return out


@pytest.fixture(scope="module")
def self_managed():
    return _project("self_managed")


def test_self_managed_groups_link_by_instance_type(self_managed):
    got = _placements(self_managed)
    assert got["pretrain-p4d"] == (
        [('module.eks.self_managed_node_groups["p4d"]',
          "nodeSelector node.kubernetes.io/instance-type=p4d.24xlarge (the only node group/pool of that type)", 11)],
        SPOT, "p4d.24xlarge")
    # Raw ASG: the override's type links; spot or not is in the launch template (not read).
    assert got["finetune-a10g"] == (
        [("aws_autoscaling_group.a10g",
          "nodeSelector node.kubernetes.io/instance-type=g5.12xlarge (the only node group/pool of that type)", 30)],
        UNKNOWN_KIND, "g5.12xlarge")


def test_self_managed_nodes_have_no_node_group_label(self_managed):
    # eks.amazonaws.com/nodegroup is set on managed node groups only.
    links, kind, gpu = _placements(self_managed)["managed-group-only"]
    assert links == [] and gpu == "p4d.24xlarge"


def test_self_managed_spot_reason(self_managed):
    t = next(w for w in self_managed.kubernetes.workloads if w.name == "pretrain-p4d").templates[0]
    cap = capacity_of(self_managed, t)
    assert (cap.spot, cap.reserved, cap.reason) == (
        True, False, 'instance_market_options.market_type = spot on module.eks.self_managed_node_groups["p4d"]')
    assert cap.how.endswith('-> autoscaling group module.eks.self_managed_node_groups["p4d"], '
                            "spot: instance_market_options.market_type = spot")
    assert node_type_of(self_managed, t).name == "p4d.24xlarge"
