import pytest

from mlcost_lint.link.launcher import launch_of
from mlcost_lint.link.shell import program_of
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.kubernetes import Container, PodTemplate, Workload
from mlcost_lint.parse.document import Document


def _launch(command, args=(), gpus=8, kind="Job", image="ghcr.io/acme/train:1", linked=(), selector=None):
    doc = Document("x.yaml", 0, {})
    c = Container(doc, (), name="main", image=image, command=list(command), args=list(args),
                  limits={"nvidia.com/gpu": gpus})
    t = PodTemplate(doc, (), containers=[c], node_selector=selector or {})
    w = Workload(doc, (), kind=kind, name="w", templates=[t])
    return launch_of(w, t, c, program_of(c), list(linked), lambda word: None)


@pytest.mark.parametrize("command,expected", [
    (["torchrun", "--nproc_per_node=2", "train.py"], ("torchrun", 2, None, "torchrun --nproc_per_node=2")),
    (["torchrun", "--nproc-per-node", "4", "--nnodes", "2", "t.py"], ("torchrun", 4, 2, "torchrun --nproc-per-node 4")),
    (["torchrun", "--standalone", "t.py"], ("torchrun", 1, 1, "torchrun (default --nproc_per_node 1)")),
    (["torchrun", "--nproc_per_node=gpu", "t.py"], ("torchrun", 8, None, "torchrun --nproc_per_node=gpu")),
    (["torchrun", "--nnodes=1:4", "--nproc_per_node=8", "t.py"], ("torchrun", 8, UNKNOWN, "torchrun --nproc_per_node=8")),
    (["torchrun", "--nproc_per_node=$(NPROC)", "t.py"], ("torchrun", UNKNOWN, None, "torchrun --nproc_per_node=$(NPROC)")),
    (["python", "-m", "torch.distributed.run", "--nproc_per_node", "2", "t.py"],
     ("torchrun", 2, None, "python -m torch.distributed.run --nproc_per_node 2")),
    (["python3", "-m", "torch.distributed.launch", "--nproc_per_node=${N}", "t.py"],
     ("torchrun", UNKNOWN, None, "python3 -m torch.distributed.launch --nproc_per_node=${N}")),
    (["accelerate", "launch", "--num_processes", "8", "--num_machines", "2", "t.py"],
     ("accelerate", 4, 2, "accelerate launch --num_processes 8 --num_machines 2")),
    (["accelerate", "launch", "--multi_gpu", "t.py"], ("accelerate", UNKNOWN, None, "accelerate launch")),
    (["deepspeed", "--num_gpus", "2", "t.py"], ("deepspeed", 2, None, "deepspeed --num_gpus 2")),
    (["deepspeed", "t.py", "--deepspeed", "ds.json"], ("deepspeed", 8, None, "deepspeed (no --num_gpus: every visible GPU)")),
    (["deepspeed", "--include", "localhost:0,1", "t.py"], ("deepspeed", UNKNOWN, None, "deepspeed")),
    (["python", "train.py"], ("python", 1, None, "python train.py")),
    (["python", "-m", "axolotl.cli.train", "x.yml"], ("python", 1, None, "python -m axolotl.cli.train")),
    (["axolotl", "train", "x.yml"], ("axolotl", UNKNOWN, None, "axolotl train")),
    (["tune", "run", "lora_finetune_single_device", "--config", "x.yaml"],
     ("tune", 1, None, "tune run (no --nproc_per_node: one process)")),
    (["tune", "run", "--nproc_per_node", "4", "full_finetune_distributed", "--config", "x.yaml"],
     ("tune", 4, None, "tune run --nproc_per_node 4")),
    # A single-pod Job with no hosts: mpirun starts every rank in this pod.
    (["mpirun", "-np", "4", "python", "t.py"], ("mpirun", 4, 1, "mpirun -np 4")),
    (["python", "-m", "paddle.distributed.launch", "t.py"], ("paddle.distributed.launch".split(".")[0], UNKNOWN, None,
                                                            "python -m paddle.distributed.launch")),
])
def test_launchers(command, expected):
    launch = _launch(command)
    assert (launch.launcher, launch.ranks_per_node, launch.nodes, launch.ranks_text) == expected


def test_bash_c_wrapped_torchrun():
    launch = _launch(["/bin/bash", "-c"], ["pip install -e . && cd /x && torchrun --nproc_per_node 2 t.py"])
    assert (launch.launcher, launch.ranks_per_node) == ("torchrun", 2)


def test_background_pythons_are_unknown():
    launch = _launch(["bash", "-c", "python a.py & python b.py & wait"])
    assert launch.ranks_per_node is UNKNOWN
    assert launch.unknown_reason == "python started in the background or in a loop"


def test_bare_python_exceptions():
    assert _launch(["python", "t.py"], kind="RayJob").ranks_per_node is UNKNOWN
    assert _launch(["python", "t.py"], kind="TFJob").ranks_per_node is UNKNOWN
    assert _launch(["python", "t.py"], image="tensorflow/tensorflow:2.15.0-gpu").ranks_per_node is UNKNOWN
    tpu = _launch(["python", "t.py"], selector={"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice"})
    assert tpu.unknown_reason == "on TPU"


def test_no_command_or_only_waiting_is_no_launch():
    assert _launch([]) is None
    assert _launch(["sleep", "infinity"]) is None
    assert _launch(["python", "-c", "import time; time.sleep(1e9)"]) is None
