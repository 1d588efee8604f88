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


@pytest.fixture(scope="module")
def karpenter():
    return _project("karpenter")


def test_karpenter_nodepool_links_by_name_with_capacity_and_gpu(karpenter):
    got = _placements(karpenter)
    assert got["sft-spot"] == ([("NodePool/gpu-spot", "nodeSelector karpenter.sh/nodepool=gpu-spot", 11)],
                               SPOT, "g5.12xlarge")
    # Reserved capacity; the GPU from karpenter.k8s.aws/instance-family (p4d: A100 40 GB).
    assert got["pretrain-reserved"] == (
        [("NodePool/a100-reserved", "nodeSelector karpenter.sh/nodepool=a100-reserved", 53)], RESERVED, "A100-40")
    # capacity-type In [spot, on-demand]: either may run, so unknown; GPU from instance-gpu-name.
    assert got["eval-l4"] == ([("NodePool/l4-default", "nodeSelector karpenter.sh/nodepool=l4-default", 71)],
                              UNKNOWN_KIND, "L4")


def test_karpenter_taints_must_be_tolerated(karpenter):
    assert _placements(karpenter)["untolerated"] == ([], UNKNOWN_KIND, None)


def test_karpenter_capacity_evidence(karpenter):
    t = next(w for w in karpenter.kubernetes.workloads if w.name == "sft-spot").templates[0]
    cap = capacity_of(karpenter, t)
    assert cap.how == ("nodeSelector karpenter.sh/nodepool=gpu-spot -> Karpenter NodePool NodePool/gpu-spot, "
                       "spot: capacity_type = spot")
    assert [(r.location.path, r.location.line, r.message) for r in cap.related] == [
        ("karpenter/nodepools.yaml", 19, "Karpenter NodePool NodePool/gpu-spot (spot)")]


def test_karpenter_absent_capacity_type_is_on_demand(tmp_path):
    from link_helpers import job, project_of

    nodepool = """
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: gpu
    spec:
      template:
        spec:
          requirements:
            - key: node.kubernetes.io/instance-type
              operator: In
              values: ["g6.xlarge"]
    """
    p = project_of(tmp_path, {"k8s/np.yaml": nodepool, "k8s/job.yaml": job(
        ["python", "t.py"], gpus=1, extra_spec="nodeSelector:\n  karpenter.sh/nodepool: gpu\n")})
    t = p.kubernetes.workloads[0].templates[0]
    assert (capacity_of(p, t).kind, gpu_of(p, t).name) == (ON_DEMAND, "g6.xlarge")
