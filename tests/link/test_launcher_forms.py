"""Launcher forms added after the first cut: env-resolved counts, torchrun's
PET_NPROC_PER_NODE default, Fabric CLI, composer, mpirun, scripts."""

import pytest

from mlcost_lint.link.launcher import launch_of
from mlcost_lint.link.shell import program_of
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.kubernetes import Container, EnvVar, PodTemplate, Workload
from mlcost_lint.parse.document import Document


def _launch(command, args=(), gpus=8, kind="Job", env=None, spec=None, image="ghcr.io/acme/train:1"):
    doc = Document("x.yaml", 0, {})
    env_vars = {k: EnvVar(k, v, Location("x.yaml", 30 + i)) for i, (k, v) in enumerate((env or {}).items())}
    c = Container(doc, (), name="main", image=image, command=list(command), args=list(args),
                  limits={"nvidia.com/gpu": gpus}, env=env_vars)
    t = PodTemplate(doc, (), containers=[c])
    w = Workload(doc, (), kind=kind, name="w", templates=[t], spec=spec or {})
    return launch_of(w, t, c, program_of(c), [], lambda word: None)


def _summary(launch):
    return launch.launcher, launch.ranks_per_node, launch.ranks_text, launch.unknown_reason


@pytest.mark.parametrize("command,env,expected", [
    # Kubernetes $(VAR) expansion from a literal env value.
    (["torchrun", "--nproc_per_node=$(NPROC_PER_NODE)", "t.py"], {"NPROC_PER_NODE": "2"},
     ("torchrun", 2, "torchrun --nproc_per_node=$(NPROC_PER_NODE) (NPROC_PER_NODE=2 in the container env)", "")),
    (["torchrun", "--nproc_per_node", "$(NPROC)", "t.py"], {"NPROC": "8"},
     ("torchrun", 8, "torchrun --nproc_per_node $(NPROC) (NPROC=8 in the container env)", "")),
    # valueFrom / a value that itself references a variable / not defined: unknown.
    (["torchrun", "--nproc_per_node=$(NPROC)", "t.py"], {"NPROC": UNKNOWN},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$(NPROC)", "the count is set at run time")),
    (["torchrun", "--nproc_per_node=$(NPROC)", "t.py"], {"NPROC": "$(GPUS)"},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$(NPROC)", "the count is set at run time")),
    (["torchrun", "--nproc_per_node=$(NPROC)", "t.py"], {},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$(NPROC)", "the count is set at run time")),
    # $$(VAR) is Kubernetes' escape for a literal $(VAR): a shell substitution.
    (["bash", "-c", "torchrun --nproc_per_node=$$(NPROC) t.py"], {"NPROC": "2"},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$$(NPROC)", "the count is set at run time")),
    # Shell $VAR in a script: the container env when the script does not set it.
    (["bash", "-c", "torchrun --nproc_per_node=${NPROC} t.py"], {"NPROC": "4"},
     ("torchrun", 4, "torchrun --nproc_per_node=${NPROC} (NPROC=4 in the container env)", "")),
    (["bash", "-c", "N=2; torchrun --nproc_per_node $N t.py"], {},
     ("torchrun", 2, "torchrun --nproc_per_node $N (N=2 set in the script)", "")),
    # The script sets it from a command, sources a file first, or sets it in an if: unknown.
    (["bash", "-c", "NPROC=$(nvidia-smi -L | wc -l); torchrun --nproc_per_node=$NPROC t.py"], {"NPROC": "1"},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$NPROC", "the count is set at run time")),
    (["bash", "-c", "source /env.sh && torchrun --nproc_per_node=$NPROC t.py"], {"NPROC": "1"},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$NPROC", "the count is set at run time")),
    (["bash", "-c", "if [ -n \"$X\" ]; then NPROC=1; fi; torchrun --nproc_per_node=$NPROC t.py"], {"NPROC": "8"},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$NPROC", "the count is set at run time")),
    # Outside a shell $VAR is not expanded at all.
    (["torchrun", "--nproc_per_node=$NPROC", "t.py"], {"NPROC": "2"},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$NPROC", "the count is set at run time")),
    # A value with spaces would be split: not a single count.
    (["bash", "-c", "torchrun --nproc_per_node=$N t.py"], {"N": "2 --nnodes 2"},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$N", "the count is set at run time")),
])
def test_counts_from_env(command, env, expected):
    assert _summary(_launch(command, env=env)) == expected


@pytest.mark.parametrize("command,env,kind,spec,expected", [
    # torchrun reads PET_NPROC_PER_NODE when --nproc_per_node is absent.
    (["torchrun", "t.py"], {"PET_NPROC_PER_NODE": "2"}, "Job", {},
     ("torchrun", 2, "torchrun (no --nproc_per_node: PET_NPROC_PER_NODE=2 in the container env)", "")),
    (["bash", "-c", "PET_NPROC_PER_NODE=4 torchrun t.py"], {}, "Job", {},
     ("torchrun", 4, "torchrun (no --nproc_per_node: PET_NPROC_PER_NODE=4 before the command)", "")),
    (["torchrun", "t.py"], {"PET_NPROC_PER_NODE": "gpu"}, "Job", {},
     ("torchrun", 8, "torchrun (no --nproc_per_node: PET_NPROC_PER_NODE=gpu in the container env)", "")),
    (["torchrun", "t.py"], {"PET_NPROC_PER_NODE": UNKNOWN}, "Job", {},
     ("torchrun", UNKNOWN, "torchrun", "PET_NPROC_PER_NODE is set at run time")),
    (["bash", "-c", "export PET_NPROC_PER_NODE=$(nproc); torchrun t.py"], {}, "Job", {},
     ("torchrun", UNKNOWN, "torchrun", "PET_NPROC_PER_NODE is set at run time")),
    # The flag wins over the env.
    (["torchrun", "--nproc_per_node=2", "t.py"], {"PET_NPROC_PER_NODE": "8"}, "Job", {},
     ("torchrun", 2, "torchrun --nproc_per_node=2", "")),
    # PyTorchJob: the operator sets PET_NPROC_PER_NODE from spec.nprocPerNode (auto when unset).
    (["torchrun", "t.py"], {}, "PyTorchJob", {"nprocPerNode": "2"},
     ("torchrun", 2, "torchrun (no --nproc_per_node: PET_NPROC_PER_NODE from nprocPerNode: 2)", "")),
    (["torchrun", "t.py"], {}, "PyTorchJob", {"nprocPerNode": "auto"},
     ("torchrun", 8, "torchrun (no --nproc_per_node: PET_NPROC_PER_NODE from nprocPerNode: auto)", "")),
    (["torchrun", "t.py"], {}, "PyTorchJob", {"elasticPolicy": {"nProcPerNode": 4}},
     ("torchrun", 4, "torchrun (no --nproc_per_node: PET_NPROC_PER_NODE from elasticPolicy.nProcPerNode: 4)", "")),
    (["torchrun", "t.py"], {"PET_NPROC_PER_NODE": "1"}, "PyTorchJob", {},
     ("torchrun", UNKNOWN, "torchrun",
      "the PyTorchJob operator sets PET_NPROC_PER_NODE (spec.nprocPerNode, auto when unset)")),
    (["torchrun", "t.py"], {}, "TrainJob", {},
     ("torchrun", UNKNOWN, "torchrun", "the TrainJob operator sets PET_NPROC_PER_NODE")),
    # torch.distributed.launch: --use_env is a flag, the default is 1.
    (["python", "-m", "torch.distributed.launch", "--use_env", "--nproc_per_node=4", "t.py"], {}, "Job", {},
     ("torchrun", 4, "python -m torch.distributed.launch --nproc_per_node=4", "")),
    (["python", "-m", "torch.distributed.launch", "--use_env", "t.py"], {}, "Job", {},
     ("torchrun", 1, "python -m torch.distributed.launch (default --nproc_per_node 1)", "")),
    # argparse prefix matching: "--nproc 2" is --nproc-per-node; not guessed.
    (["torchrun", "--nproc", "2", "t.py"], {}, "Job", {},
     ("torchrun", UNKNOWN, "torchrun --nproc", "--nproc is an abbreviation")),
    (["torchrun", "--nproc_per_node=xpu", "t.py"], {}, "Job", {},
     ("torchrun", UNKNOWN, "torchrun --nproc_per_node=xpu", "not a GPU count")),
])
def test_torchrun_default_and_operators(command, env, kind, spec, expected):
    assert _summary(_launch(command, env=env, kind=kind, spec=spec)) == expected


@pytest.mark.parametrize("command,env,expected", [
    (["composer", "-n", "2", "train.py"], {}, ("composer", 2, "composer -n 2", "")),
    (["composer", "-n2", "train.py"], {}, ("composer", 2, "composer -n 2", "")),
    (["composer", "--nproc=4", "train.py"], {}, ("composer", 4, "composer --nproc=4", "")),
    (["composer", "train.py"], {}, ("composer", 8, "composer (no -n: every visible GPU)", "")),
    (["composer", "train.py"], {"LOCAL_WORLD_SIZE": "2"},
     ("composer", 2, "composer (no -n: LOCAL_WORLD_SIZE=2 in the container env)", "")),
    (["composer", "train.py"], {"LOCAL_WORLD_SIZE": UNKNOWN},
     ("composer", UNKNOWN, "composer", "LOCAL_WORLD_SIZE is set at run time")),
    (["composer", "-n", "$(N)", "train.py"], {}, ("composer", UNKNOWN, "composer -n $(N)", "the count is set at run time")),
])
def test_composer(command, env, expected):
    assert _summary(_launch(command, env=env)) == expected


@pytest.mark.parametrize("command,expected", [
    (["lightning", "run", "model", "--devices", "2", "train.py"],
     ("lightning", 2, "lightning run model --devices 2", "")),
    (["fabric", "run", "--accelerator=cuda", "--devices=4", "train.py"],
     ("lightning", 4, "fabric run --accelerator=cuda --devices=4", "")),
    # click parses options after the script too.
    (["fabric", "run", "train.py", "--devices", "2"], ("lightning", 2, "fabric run --devices 2", "")),
    (["fabric", "run", "model", "train.py"], ("lightning", 1, "fabric run model (default --devices 1)", "")),
    (["fabric", "run", "--accelerator", "cuda", "--devices", "0,1,2", "train.py"],
     ("lightning", 3, "fabric run --accelerator cuda --devices 0,1,2", "")),
    (["fabric", "run", "--accelerator", "gpu", "--devices", "-1", "train.py"],
     ("lightning", 8, "fabric run --accelerator gpu --devices -1", "")),
    (["fabric", "run", "--strategy", "dp", "--devices", "4", "train.py"],
     ("lightning", 1, "fabric run --strategy dp --devices 4", "")),
    (["fabric", "run", "--devices", "auto", "train.py"],
     ("lightning", UNKNOWN, "fabric run --devices auto",
      "--devices auto depends on the Lightning version and accelerator")),
    (["fabric", "run", "--accelerator", "cpu", "--devices", "4", "train.py"],
     ("lightning", UNKNOWN, "fabric run --accelerator cpu --devices 4", "--accelerator cpu does not start GPU ranks")),
    # Arguments after "--" belong to the script.
    (["fabric", "run", "train.py", "--", "--devices", "2"], ("lightning", 1, "fabric run (default --devices 1)", "")),
])
def test_fabric_cli(command, expected):
    assert _summary(_launch(command)) == expected


def test_lightning_run_app_is_not_a_launch():
    assert _launch(["lightning", "run", "app", "app.py"]) is None


@pytest.mark.parametrize("command,kind,env,expected", [
    (["mpirun", "--allow-run-as-root", "-np", "2", "-x", "NCCL_DEBUG", "--mca", "btl", "^openib", "python", "t.py"],
     "Job", {}, ("mpirun", 2, "mpirun -np 2", "")),
    (["mpiexec", "-n", "8", "python", "t.py"], "Job", {}, ("mpirun", 8, "mpiexec -n 8", "")),
    (["mpirun", "--map-by", "ppr:4:node", "python", "t.py"], "Job", {},
     ("mpirun", 4, "mpirun --map-by ppr:4:node", "")),
    (["mpirun", "-np", "4", "-H", "a:2,b:2", "python", "t.py"], "Job", {},
     ("mpirun", UNKNOWN, "mpirun -np 4", "-H places the ranks on other pods")),
    (["mpirun", "-np", "4", "python", "t.py"], "Job", {"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile"},
     ("mpirun", UNKNOWN, "mpirun -np 4", "mpirun places the ranks on the hosts of its hostfile")),
    (["mpirun", "-np", "4", "python", "t.py"], "TFJob", {},
     ("mpirun", UNKNOWN, "mpirun -np 4", "mpirun places the ranks on the hosts of its hostfile")),
    (["mpirun", "python", "t.py"], "Job", {},
     ("mpirun", UNKNOWN, "mpirun", "mpirun without -np starts one rank per core")),
    # An unknown option could take a value: a count flag after it cannot be trusted.
    (["mpirun", "--some-new-option", "x", "-np", "2", "python", "t.py"], "Job", {},
     ("mpirun", UNKNOWN, "mpirun", "mpirun options cannot be parsed")),
])
def test_mpirun_in_one_pod(command, kind, env, expected):
    assert _summary(_launch(command, kind=kind, env=env)) == expected


@pytest.mark.parametrize("command,expected", [
    (["srun", "--ntasks-per-node=8", "python", "t.py"], ("srun", UNKNOWN, "srun", "srun takes its task count from Slurm")),
    (["ray", "job", "submit", "--address", "http://head:8265", "--", "python", "t.py"],
     ("ray", UNKNOWN, "ray job submit", "ray job submit runs the entrypoint on the Ray cluster")),
])
def test_unknown_launchers(command, expected):
    assert _summary(_launch(command)) == expected


def test_accelerate_flag_counts_without_config():
    launch = _launch(["accelerate", "launch", "--num_processes=$(N)", "--num_machines", "1", "t.py"], env={"N": "2"})
    assert _summary(launch) == ("accelerate", 2, "accelerate launch --num_processes=$(N) (N=2 in the container env) "
                                                 "--num_machines 1", "")


def test_unread_script_makes_the_count_unknown():
    launch = _launch(["bash", "-c", "python prepare.py && bash scripts/train.sh"])
    assert _summary(launch) == ("python", UNKNOWN, "python prepare.py",
                                "it also runs scripts/train.sh, which is not in the scan")
    launch = _launch(["bash", "-c", "./run.sh; torchrun --nproc_per_node 2 t.py"])
    assert launch.unknown_reason == "it also runs ./run.sh, which is not in the scan"


def test_operator_env_is_not_the_manifest_value():
    # The training operator appends PET_* to a PyTorchJob's containers; that value wins.
    launch = _launch(["torchrun", "--nproc_per_node=$(PET_NPROC_PER_NODE)", "t.py"], kind="PyTorchJob",
                     env={"PET_NPROC_PER_NODE": "2"})
    assert _summary(launch) == ("torchrun", UNKNOWN, "torchrun --nproc_per_node=$(PET_NPROC_PER_NODE)",
                                "the count is set at run time")


def test_mpirun_in_a_volcano_job_is_not_local():
    doc = Document("x.yaml", 0, {})
    c = Container(doc, (), name="m", command=["mpirun", "-np", "2", "python", "t.py"], limits={"nvidia.com/gpu": 4})
    t = PodTemplate(doc, (), containers=[c])
    w = Workload(doc, (), kind="Job", api_version="batch.volcano.sh/v1alpha1", name="v", templates=[t])
    launch = launch_of(w, t, c, program_of(c), [], lambda word: None)
    assert _summary(launch) == ("mpirun", UNKNOWN, "mpirun -np 2", "mpirun places the ranks on the hosts of its hostfile")
