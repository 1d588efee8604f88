from link_helpers import job, project_of

from mlcost_lint.link import capacity_of, compute_region_of, gpu_of, node_type_of, spot_of
from mlcost_lint.config import Settings

EKS = """
provider "aws" {
  region = "us-east-1"
}

resource "aws_eks_node_group" "gpu" {
  cluster_name    = "c"
  node_group_name = "gpu"
  node_role_arn   = "arn"
  subnet_ids      = ["s"]
  instance_types  = ["p4d.24xlarge"]
  capacity_type   = "SPOT"
  taint {
    key    = "nvidia.com/gpu"
    value  = "true"
    effect = "NO_SCHEDULE"
  }
  scaling_config {
    min_size     = 0
    max_size     = 2
    desired_size = 0
  }
}

resource "aws_eks_node_group" "cpu" {
  cluster_name    = "c"
  node_group_name = "cpu"
  node_role_arn   = "arn"
  subnet_ids      = ["s"]
  instance_types  = ["m6i.2xlarge"]
  scaling_config {
    min_size     = 1
    max_size     = 2
    desired_size = 1
  }
}
"""
TOLERATE = """
tolerations:
  - key: nvidia.com/gpu
    operator: Equal
    value: "true"
    effect: NoSchedule
"""


def _template(project):
    return project.kubernetes.workloads[0].templates[0]


def test_node_selector_links_pool_and_placement(tmp_path):
    p = project_of(tmp_path, {"tf/eks.tf": EKS, "k8s/job.yaml": job(
        ["torchrun", "--nproc_per_node=8", "t.py"], extra_spec="nodeSelector:\n  eks.amazonaws.com/nodegroup: gpu\n" + TOLERATE)})
    t = _template(p)
    [link] = p.links.pools
    assert (link.pool.address, link.how, link.evidence.line) == (
        "aws_eks_node_group.gpu", "nodeSelector eks.amazonaws.com/nodegroup=gpu", 9)
    assert gpu_of(p, t).name == "p4d.24xlarge" and node_type_of(p, t).name == "p4d.24xlarge"
    assert spot_of(p, t) is True
    assert capacity_of(p, t).reason == "capacity_type = SPOT on aws_eks_node_group.gpu"
    assert compute_region_of(p, t, Settings())[:2] == ("us-east-1", "aws_eks_node_group.gpu")


def test_capacity_is_answered_once_per_template_while_the_links_stay(tmp_path):
    """capacity_of remembers its answer per template (rules ask it per rule);
    a change to the pool links or placements is a new answer."""
    p = project_of(tmp_path, {"tf/eks.tf": EKS, "k8s/job.yaml": job(
        ["torchrun", "--nproc_per_node=8", "t.py"], extra_spec="nodeSelector:\n  eks.amazonaws.com/nodegroup: gpu\n" + TOLERATE)})
    t = _template(p)
    first = capacity_of(p, t)
    assert capacity_of(p, t) is first and first.kind == "spot"
    p.links.pools.clear()
    again = capacity_of(p, t)
    assert again is not first and again.pools == []


def test_untolerated_taint_does_not_link(tmp_path):
    p = project_of(tmp_path, {"tf/eks.tf": EKS, "k8s/job.yaml": job(
        ["python", "t.py"], extra_spec="nodeSelector:\n  eks.amazonaws.com/nodegroup: gpu\n")})
    assert p.links.pools == []
    assert spot_of(p, _template(p)) is None


def test_toleration_of_the_only_gpu_pool_links(tmp_path):
    p = project_of(tmp_path, {"tf/eks.tf": EKS, "k8s/job.yaml": job(["python", "t.py"], extra_spec=TOLERATE)})
    [link] = p.links.pools
    assert link.how == "toleration nvidia.com/gpu matches the taint of the only GPU pool that has it"


def test_labels_only_placement(tmp_path):
    p = project_of(tmp_path, {"k8s/job.yaml": job(["python", "t.py"], gpus=1, extra_spec=(
        "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n  cloud.google.com/gke-spot: \"true\"\n"
        "  topology.kubernetes.io/zone: us-central1-a\n"))})
    t = _template(p)
    assert (gpu_of(p, t).cloud, gpu_of(p, t).gpu.name) == ("gcp", "L4")
    assert node_type_of(p, t) is None           # an accelerator label is not a machine type
    assert spot_of(p, t) is True
    assert compute_region_of(p, t, Settings())[:2] == ("us-central1", "nodeSelector topology.kubernetes.io/zone=us-central1-a")


def test_reserved_capacity_is_not_spot(tmp_path):
    p = project_of(tmp_path, {"k8s/job.yaml": job(["python", "t.py"], extra_spec=(
        "nodeSelector:\n  karpenter.sh/capacity-type: reserved\n"))})
    cap = capacity_of(p, _template(p))
    assert (cap.spot, cap.reserved, cap.reason) == (False, True, "nodeSelector karpenter.sh/capacity-type=reserved")


def test_unknown_capacity_and_region(tmp_path):
    p = project_of(tmp_path, {"k8s/job.yaml": job(["python", "t.py"])})
    t = _template(p)
    assert spot_of(p, t) is None and gpu_of(p, t) is None
    assert compute_region_of(p, t, Settings()) is None
    assert compute_region_of(p, t, Settings(default_region="eu-west-1"))[:2] == ("eu-west-1", "default-region in the config")


def test_data_path_forms(tmp_path):
    p = project_of(tmp_path, {"k8s/job.yaml": job(
        ["python", "t.py", "--data=gs://ds-bucket/x", "--out", "abfss://ckpt@acmeml.dfs.core.windows.net/run",
         "https://ds.s3.eu-west-1.amazonaws.com/a", "s3://${BUCKET}/x", "az://container/p"])},
        bucket_regions={"ds-bucket": "EU"})
    got = [(d.scheme, d.bucket_name, d.account, d.bucket_region, d.region_source, d.writes) for d in p.links.data_paths]
    assert got == [
        ("gs", "ds-bucket", None, "EU", "bucket-regions in the config", False),
        ("azure", "acmeml", "acmeml", None, "", True),
        ("s3", "ds", None, "eu-west-1", "regional endpoint in the URI", False),
        ("azure", "container", None, None, "", False),
    ]


GKE = """
provider "google" {
  project = "p"
  region  = "us-central1"
}

resource "google_container_node_pool" "l4" {
  name     = "l4-spot"
  cluster  = "training"
  location = "us-central1"
  node_config {
    machine_type = "g2-standard-8"
    spot         = true
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
    }
    taint {
      key    = "nvidia.com/gpu"
      value  = "present"
      effect = "NO_SCHEDULE"
    }
  }
  autoscaling {
    min_node_count = 0
    max_node_count = 4
  }
}
"""


def test_gke_adds_the_gpu_toleration_itself(tmp_path):
    """ExtendedResourceToleration: a pod requesting nvidia.com/gpu tolerates the nvidia.com/gpu taint on GKE
    without writing it, so the job still links to the pool (issue 11 #12)."""
    p = project_of(tmp_path, {"tf/gke.tf": GKE, "k8s/job.yaml": job(
        ["python", "t.py"], extra_spec="nodeSelector:\n  cloud.google.com/gke-nodepool: l4-spot\n")})
    [link] = p.links.pools
    assert link.pool.address == "google_container_node_pool.l4"
    assert spot_of(p, _template(p)) is True


def test_the_implicit_toleration_is_gke_only(tmp_path):
    p = project_of(tmp_path, {"tf/eks.tf": EKS, "k8s/job.yaml": job(
        ["python", "t.py"], extra_spec="nodeSelector:\n  eks.amazonaws.com/nodegroup: gpu\n")})
    assert p.links.pools == []
