"""Odd shapes never make the GPU capacity/lifecycle rules raise (MLC203-208, MLC603)."""

from __future__ import annotations

from mlc_testing import lint_dir

CODES = ("MLC203", "MLC204", "MLC205", "MLC206", "MLC207", "MLC208", "MLC603")

ODD_YAML = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: odd}
spec:
  schedule: [1, 2]
  concurrencyPolicy: {a: b}
  jobTemplate:
    spec:
      backoffLimit: "lots"
      activeDeadlineSeconds: true
      template:
        spec:
          activeDeadlineSeconds: [1]
          volumes: "none"
          nodeSelector: {karpenter.sh/capacity-type: [spot]}
          affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.sh/capacity-type, operator: In, values: spot}]}]}}}
          tolerations: [{key: 5}, "x"]
          containers:
            - name: c
              command: {sh: 1}
              resources: {limits: {nvidia.com/gpu: 2}}
              volumeMounts: [{name: 1, mountPath: 2}]
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: odd-ray}
spec:
  workerGroupSpecs:
    - groupName: g
      minReplicas: "two"
      template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}
    - "not a group"
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: odd-kf}
spec:
  runPolicy: "none"
  pytorchReplicaSpecs:
    Worker: {restartPolicy: [OnFailure], template: {spec: {containers: [{name: p, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
"""

ODD_TF = """\
variable "x" {}

resource "aws_eks_node_group" "odd" {
  cluster_name   = "c"
  instance_types = var.x
  scaling_config {
    min_size     = "two"
    max_size     = 2
    desired_size = 1
  }
}

resource "google_container_node_pool" "odd" {
  name = "odd"
  autoscaling {
    min_node_count = var.x
  }
  node_config {
    machine_type = "n1-standard-8"
    guest_accelerator {
      type  = var.x
      count = var.x
    }
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "odd" {
  name                 = "odd"
  vm_size              = "Standard_NC24ads_A100_v4"
  auto_scaling_enabled = var.x
  min_count            = 2
}

resource "google_workbench_instance" "odd" {
  name = "odd"
  gce_setup {
    machine_type = "g2-standard-8"
    metadata     = var.x
  }
}
"""


def test_odd_shapes_do_not_raise_or_fire(tmp_path):
    (tmp_path / "odd.yaml").write_text(ODD_YAML)
    (tmp_path / "odd.tf").write_text(ODD_TF)
    result = lint_dir(tmp_path, select=list(CODES))
    assert [f for f in result.rule_failures if f.code in CODES] == []
    fired = sorted((f.code, f.location.line) for f in result.findings if f.code in CODES)
    # Only certain facts fire: the CronJob pod has 2 GPUs and nothing at /dev/shm. Every
    # deadline, backoff, minimum and capacity above is unknown, so nothing else does.
    assert fired == [("MLC204", 38), ("MLC603", 21)]   # + the PyTorchJob: no deadline at all
