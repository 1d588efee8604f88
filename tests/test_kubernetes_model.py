"""Pod templates of every workload kind are found where each kind keeps them."""

from __future__ import annotations

import pytest

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.kubernetes import KubernetesModel
from mlcost_lint.model.kubernetes_build import add_document
from mlcost_lint.parse.yamljson import parse_yaml


def build(text: str) -> KubernetesModel:
    model = KubernetesModel()
    for doc in parse_yaml(text, "m.yaml"):
        add_document(model, doc)
    return model


CASES = {
    "pytorchjob": ("""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: m, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]
    Worker:
      replicas: 3
      template:
        spec:
          containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]
""", [("Master", 1, 2), ("Worker", 3, 4)]),
    "cronjob": ("""
apiVersion: batch/v1
kind: CronJob
metadata: {name: c}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: c, image: x}]
""", [("", 1, 0)]),
    "volcano": ("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v}
spec:
  tasks:
    - name: worker
      replicas: 4
      template:
        spec:
          containers: [{name: w, image: x, resources: {requests: {nvidia.com/gpu: 1}}}]
""", [("worker", 4, 1)]),
    "volcano-cronjob": ("""
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata: {name: vc}
spec:
  schedule: "*/30 * * * *"
  jobTemplate:
    spec:
      tasks:
        - name: trainer
          replicas: 2
          template:
            spec:
              containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
""", [("trainer", 2, 8)]),
    "raycluster": ("""
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: h, image: x}]
  workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      minReplicas: 1
      template:
        spec:
          containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
""", [("head", 1, 0), ("gpu", 2, 1)]),
    "jobset": ("""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 4
          template:
            spec:
              containers: [{name: w, image: x, resources: {limits: {google.com/tpu: 4}}}]
""", [("workers", 8, 4)]),
    "trainjob": ("""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: t}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    command: [torchrun, train.py]
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
""", [("trainer", 2, 8)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_templates_per_kind(name: str):
    text, expected = CASES[name]
    model = build(text)
    assert len(model.workloads) == 1
    w = model.workloads[0]
    assert [(t.role, t.replicas, t.gpu_count()) for t in w.templates] == expected


def test_list_kind_configmaps_and_env():
    model = build("""
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: train-config}
    data:
      sft.yaml: |
        learning_rate: 1e-5
  - apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers:
        - name: c
          image: x
          command: ["bash", "-c"]
          args: ["torchrun --nproc_per_node=$(NPROC) train.py"]
          env:
            - {name: NCCL_DEBUG, value: INFO}
            - {name: TOKEN, valueFrom: {secretKeyRef: {name: s, key: t}}}
          resources: {limits: {nvidia.com/gpu: many}}
  - apiVersion: v1
    kind: Service
    metadata: {name: s}
""")
    assert [cm.name for cm in model.config_maps] == ["train-config"]
    assert model.config_maps[0].data == {"sft.yaml": "learning_rate: 1e-5\n"}
    pod = model.workloads[0]
    c = pod.templates[0].containers[0]
    assert c.argv == ["bash", "-c", "torchrun --nproc_per_node=$(NPROC) train.py"]
    assert c.env["NCCL_DEBUG"].value == "INFO" and c.env["NCCL_DEBUG"].location.line == 21
    assert c.env["TOKEN"].value is UNKNOWN
    assert c.gpu_count() is UNKNOWN
    assert model.other_kinds == {"Service": 1}
    assert pod.address == "Pod/default/p" and pod.location.line == 11


def test_wrong_shapes_do_not_raise():
    model = build("""
apiVersion: apps/v1
kind: Deployment
metadata: [not, a, map]
spec:
  replicas: lots
  template:
    metadata: {labels: [x]}
    spec:
      containers: [null, 3, {name: c, command: echo, env: {a: b}, resources: [1]}]
      tolerations: {key: x}
      volumes: [{name: shm, emptyDir: {medium: Memory}}, "junk"]
""")
    w = model.workloads[0]
    t = w.templates[0]
    assert w.name == "<unnamed>" and t.replicas is UNKNOWN and t.labels == {}
    assert [c.command for c in t.containers] == [["echo"]]
    assert t.tolerations == [] and len(t.volumes) == 1


def test_containers_are_frozen_when_the_model_is_built(tmp_path):
    """accelerators() is remembered once the model stage is done (readers
    such as the SkyPilot and Slurm ones fill limits while it runs): every
    container of a built project answers as a fresh computation would, and
    a returned dict is the caller's own."""
    from mlcost_lint.config import Settings
    from mlcost_lint.model.build import build_project
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind

    (tmp_path / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers:\n"
        "        - name: a\n          image: x\n          resources:\n            limits: {nvidia.com/gpu: 4}\n"
        "        - name: b\n          image: x\n          resources:\n            requests: {amd.com/gpu: two}\n")
    (tmp_path / "sky.yaml").write_text("resources:\n  accelerators: A100:8\nrun: python train.py\n")
    parsed = [parse_bytes((tmp_path / n).read_bytes(), n, FileKind.YAML) for n in ("job.yaml", "sky.yaml")]
    project = build_project(parsed, Settings(root=tmp_path))
    containers = [c for w in project.kubernetes.workloads for t in w.templates for c in t.containers]
    assert [c.frozen_accelerators for c in containers] == [{"nvidia.com/gpu": 4}, {"amd.com/gpu": UNKNOWN},
                                                           {"nvidia.com/gpu": 8}]
    for c in containers:
        frozen = c.accelerators()
        c.frozen = False
        assert frozen == c.accelerators()
        c.freeze()
    first = containers[0].accelerators()
    first["nvidia.com/gpu"] = 0
    assert containers[0].accelerators() == {"nvidia.com/gpu": 4}
    # the shell program is built once per frozen container, as a fresh build would
    from mlcost_lint.link.shell import program_of

    sky = containers[2]
    program = program_of(sky)
    assert program_of(sky) is program
    assert [[w.text for w in c.words] for c in program.commands] == [["python", "train.py"]]
    sky.frozen = False
    assert program_of(sky) is not program
    assert [[w.text for w in c.words] for c in program_of(sky).commands] == [["python", "train.py"]]
