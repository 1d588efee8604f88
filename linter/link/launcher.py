"""Container -> launcher and the ranks it starts per pod (``Launch``).

Read from the simple commands a container runs (:mod:`.shell`):

- ``torchrun`` / ``python -m torch.distributed.run|launch`` (``--use_env``
  is a flag): ``--nproc_per_node`` (``--nproc-per-node``, ``=`` or space).
  Without it torchrun reads ``PET_NPROC_PER_NODE`` (argparse ``env``
  action), default 1: a literal in the container env (or ``VAR=x torchrun``)
  is used; a PyTorchJob's operator sets it from ``spec.nprocPerNode``
  (``elasticPolicy.nProcPerNode`` before v1.7; "auto" when unset since
  v1.7), so there the spec decides and an unset one is unknown; a TrainJob
  (Trainer v2) sets it too: unknown. ``gpu``/``auto`` start one rank per
  visible GPU; ``cpu``/``xpu`` are not GPU ranks (unknown). An abbreviated
  ``--nproc`` (argparse prefix matching) is unknown. ``--nnodes`` (a range
  ``1:4`` is unknown; ``--standalone`` is one node).
- ``accelerate launch``: ``--num_processes`` (total over machines, so per
  node = total / ``--num_machines``), else the linked Accelerate config's
  ``num_processes`` / ``num_machines``; a flag overrides the config file;
  ``--multi_gpu`` without a count, or no count and no config, is unknown;
  ``--cpu`` forces CPU.
- ``deepspeed``: ``--num_gpus`` (``--num_nodes``); without it every visible
  GPU gets a rank (``--include``/``--exclude``/``--hostfile`` make it unknown).
- ``tune run`` (torchtune): torchrun options before the recipe, else one
  process.
- ``composer``: ``-n``/``--nproc`` (``-n8``, ``--nproc=8``); without it
  ``LOCAL_WORLD_SIZE`` from the env, else every visible GPU.
- ``lightning run model`` / ``fabric run [model]`` (Fabric CLI): ``--devices``
  N (default "1"), a GPU list or ``-1`` with ``--accelerator cuda|gpu``;
  ``--strategy dp`` is one process; ``auto`` devices or a CPU/TPU/MPS
  accelerator is unknown.
- ``mpirun``/``mpiexec``: in a single-pod workload without ``--host``/
  hostfile options or a hostfile env var, ``-np``/``-n``/``-c`` ranks run
  locally (``-npernode``/``-N``/``-ppn``/``--map-by ppr:N:node`` likewise).
  In an MPIJob the Worker pods get the ranks (:func:`mpi_worker_ranks`):
  the operator's hostfile lists every worker with ``slotsPerWorker`` slots
  (default 1); ``-np`` equal to workers x slots (or no ``-np``, Open MPI)
  puts ``slotsPerWorker`` ranks on each worker.
- KubeRay RayJob ``spec.entrypoint``: run by the Ray job supervisor on the
  head pod unless ``entrypointNumCpus/Gpus/Memory/Resources`` is set (then
  Ray picks the node: not linked); read as the head container's command.
- ``bash|sh script.sh`` / ``./script.sh``: a script mounted from a ConfigMap
  in the scan is read (not run) and its commands count; a script that is not
  in the scan makes the container's rank count unknown.
- ``axolotl train``, ``horovodrun``, ``srun``, ``ray job submit`` (runs
  elsewhere), ``ray start``, ``colossalai``, ``llamafactory-cli``: unknown.
- inference servers (``vllm serve``, ``python -m vllm.entrypoints...``,
  ``python -m sglang.launch_server``, ``text-generation-launcher``): one
  process spread over tensor x pipeline x data parallel GPUs, from the flags
  written on the line (``ServingEngine``); no flag written is unknown.
- bare ``python script.py`` / ``python -m module``: one rank, except (rules.md
  Settled questions) when its linked config is Lightning or NeMo, when it
  runs Ray, or on TPU: unknown. Background (``&``) or looped pythons: unknown.

Counts written as ``$(VAR)`` (Kubernetes expansion) take the container's
literal ``env`` value; ``$VAR``/``${VAR}`` inside a shell script take a
literal set earlier in the script, else the container env, and are unknown
when the script sources files, sets the variable under control flow, or
the value comes from ``valueFrom``. Nothing is ever guessed.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.model.kubernetes import Container, PodTemplate, Workload
from mlcost_lint.model.project import Launch, Project
from mlcost_lint.model.training import Framework, TrainingConfig
from mlcost_lint.link.configs import ConfigIndex, config_maps_named, mounted_files, path_parts
from mlcost_lint.link.shell import (
    Program, SimpleCommand, Word, program_of, program_of_script, word_location,
)

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_INT = re.compile(r"^\d+$")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_K8S_REF = re.compile(r"\$\((" + _NAME + r")\)")
_SHELL_REF = re.compile(r"\$\{(" + _NAME + r")(?::-[^}]*)?\}|\$(" + _NAME + r")")
MAX_SCRIPT_DEPTH = 3

# Options that take a value, per launcher (names normalised: lower case, "_" -> "-").
_TORCHRUN_VALUES = frozenset({
    "--nnodes", "--nproc-per-node", "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf",
    "--max-restarts", "--monitor-interval", "--start-method", "--role", "--node-rank", "--master-addr",
    "--master-port", "--local-addr", "--log-dir", "-r", "--redirects", "-t", "--tee", "--local-ranks-filter",
    "--logs-specs", "--event-log-handler", "--numa-binding", "--signals-to-handle", "--rdzv-timeout",
})
_ACCELERATE_FLAGS = frozenset({
    "--cpu", "--multi-gpu", "--tpu", "--ipex", "--use-deepspeed", "--use-fsdp", "--use-megatron-lm",
    "--use-xpu", "-m", "--module", "--no-python", "--debug", "-q", "--quiet", "--same-network",
    "--dynamo-use-fullgraph", "--dynamo-use-dynamic", "--enable-cpu-affinity", "--tpu-use-cluster",
    "--tpu-use-sudo", "--use-cpu",
})
_DEEPSPEED_VALUES = frozenset({
    "--num-gpus", "--num-nodes", "-H", "--hostfile", "-i", "--include", "-e", "--exclude", "--master-port",
    "--master-addr", "--launcher", "--launcher-args", "--node-rank", "--autotuning", "--min-elastic-nodes",
    "--max-elastic-nodes", "--bind-core-list", "--ssh-port", "--save-pid", "--venv-script", "--comment",
    "--num-accelerators",
})
_COMPOSER_VALUES = frozenset({"-n", "--nproc", "--world-size", "--base-rank", "--node-rank", "--master-addr",
                              "--master-port", "--stdout", "--stderr"})
# Fabric CLI (lightning/fabric/cli.py): every option takes a value.
_FABRIC_VALUES = frozenset({"--accelerator", "--strategy", "--devices", "--num-nodes", "--node-rank",
                            "--main-address", "--main-port", "--precision"})
# mpirun / mpiexec (Open MPI, MPICH/Hydra, Intel MPI): options with one value,
# options with two (``--mca key value``), and the ones that name other hosts.
_MPI_VALUES = frozenset({
    "-np", "--np", "-n", "--n", "-c", "-N", "-npernode", "--npernode", "-npersocket", "--npersocket",
    "-ppn", "-perhost", "-H", "-host", "--host", "-hosts", "-hostfile", "--hostfile", "-machinefile",
    "--machinefile", "-f", "-default-hostfile", "--default-hostfile", "-rf", "--rankfile", "-x", "-bind-to",
    "--bind-to", "-map-by", "--map-by", "-rank-by", "--rank-by", "-wdir", "--wdir", "-wd", "-prefix",
    "--prefix", "-output-filename", "--output-filename", "-path", "--path", "-am", "--am", "-tune", "--tune",
    "-launch-agent", "--launch-agent", "-preload-files", "--preload-files", "-cpus-per-proc", "--cpus-per-proc",
    "-cpus-per-rank", "--cpus-per-rank", "-cpu-set", "--cpu-set", "-timeout", "--timeout", "-app", "--app",
    "-genvlist", "-envlist", "-iface", "-bootstrap", "-bootstrap-exec", "-launcher", "-launcher-exec",
    "-configfile", "-binding", "-tag-output-format", "--personality", "--runtime-options", "-mca-param",
})
_MPI_TWO_VALUES = frozenset({"-mca", "--mca", "-gmca", "--gmca", "-genv", "-env", "--prtemca", "--pmixmca"})
_MPI_HOST_OPTIONS = frozenset({"-H", "-host", "--host", "-hosts", "-hostfile", "--hostfile", "-machinefile",
                               "--machinefile", "-f", "-default-hostfile", "--default-hostfile", "-rf",
                               "--rankfile", "-configfile", "-app", "--app"})
_MPI_NP = ("-np", "--np", "-n", "--n", "-c")
_MPI_PER_NODE = ("-npernode", "--npernode", "-N", "-ppn", "-perhost")
_MPI_HOSTFILE_ENV = re.compile(r"(HOSTFILE|HOST_FILE|MACHINEFILE|OMPI_MCA_orte_default_hostfile)", re.I)
_PYTHON_VALUES = frozenset({"-X", "-W", "-Q"})
# Inference servers: one process drives several GPUs through tensor,
# pipeline or data parallelism, so the GPUs it uses are the product of these
# flags, not a rank count. Written flags only: without them the server may
# read its parallelism from a config file or its environment, so the count
# is unknown rather than the engine's default of 1.
@dataclass(frozen=True, slots=True)
class ServingEngine:
    name: str
    parallel_flags: tuple[tuple[str, ...], ...]   # each inner tuple: spellings of one factor


_VLLM = ServingEngine("vllm", (("--tensor-parallel-size", "-tp"), ("--pipeline-parallel-size", "-pp"),
                               ("--data-parallel-size", "-dp")))
_SGLANG = ServingEngine("sglang", (("--tp-size", "--tp", "--tensor-parallel-size"),
                                   ("--dp-size", "--dp", "--data-parallel-size"),
                                   ("--pp-size", "--pipeline-parallel-size")))
_TGI = ServingEngine("text-generation-launcher", (("--num-shard",),))
_SERVING_MODULES = {
    "vllm.entrypoints.openai.api_server": _VLLM,
    "vllm.entrypoints.api_server": _VLLM,
    "sglang.launch_server": _SGLANG,
}
# (command, first argument or None) -> engine
_SERVING_COMMANDS = {("vllm", "serve"): _VLLM, ("text-generation-launcher", None): _TGI,
                     ("sglang", "serve"): _SGLANG}
# Python modules that are launchers, and ones that are not training.
_PYTHON_LAUNCH_MODULES = {
    "torch.distributed.run": "torchrun",
    "torch.distributed.launch": "torchrun",
    "accelerate.commands.launch": "accelerate",
    "deepspeed.launcher.runner": "deepspeed",
    "deepspeed": "deepspeed",
}
_NOT_TRAINING_MODULES = ("pip", "venv", "ensurepip", "http.server", "json.tool", "site", "pytest", "unittest",
                         "compileall", "zipfile", "tarfile", "huggingface_hub", "torch.utils.collect_env")
_UNKNOWN_LAUNCHERS = {"horovodrun": "horovodrun", "srun": "srun", "ray": "ray", "colossalai": "colossalai",
                      "llamafactory-cli": "llamafactory-cli", "nemo": "nemo"}
_UNKNOWN_REASONS = {
    "srun": "srun takes its task count from Slurm",
    "horovodrun": "horovodrun places ranks over the hosts it is given",
}
_NOT_LAUNCHES = frozenset({"sleep", "tail", "echo", "cd", "cat", "ls", "pip", "pip3", "mkdir", "cp", "mv", "rm",
                           "set", "export", "source", ".", "nvidia-smi", "true", "wait", "env", "printenv",
                           "chmod", "chown", "tee", "grep", "sed", "awk", "apt-get", "apt", "curl", "wget",
                           "git", "huggingface-cli", "aws", "gsutil", "gcloud", "az", "test", "[", "trap",
                           "declare", "typeset", "local", "readonly", "read", "unset"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})
# Kinds whose operator injects PET_NPROC_PER_NODE (torchrun's default) into the pods.
_PET_INJECTING_KINDS = frozenset({"PyTorchJob", "TrainJob"})
# Env vars those operators append to every container (training-operator setPodEnv,
# Trainer v2 torch plugin): a value written in the manifest is overridden.
_OPERATOR_ENV = frozenset({"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"})
# Kinds with one pod template: an mpirun without hosts runs its ranks in that pod.
_SINGLE_POD_KINDS = frozenset({"Pod", "Job", "CronJob", "Deployment", "StatefulSet", "ReplicaSet"})
# RayJob fields that move the entrypoint off the head node (Ray Jobs docs).
_RAY_ENTRYPOINT_RESOURCES = ("entrypointNumCpus", "entrypointNumGpus", "entrypointMemory", "entrypointResources")


def norm_flag(text: str) -> str:
    if text.startswith("--"):
        return "--" + text[2:].lower().replace("_", "-")
    return text


# -- variables ------------------------------------------------------------

@dataclass(slots=True)
class Scope:
    """Where a command's variables come from: the script it is in (its
    assignments before command ``at``), the script that ran that one, and
    at the root the container's ``env``."""

    program: Program
    at: int
    container: Container
    parent: "Scope | None" = None
    prefix: dict[str, str] = field(default_factory=dict)   # ``VAR=x cmd`` (the command's own env)
    operator_env: bool = False       # a PyTorchJob/TrainJob pod: PET_*/WORLD_SIZE/... come from the operator

    def _assigned(self, name: str) -> tuple[bool, str | None]:
        hits = [a for a in self.program.assignments if a.name == name and a.at <= self.at]
        if not hits:
            return False, None
        if self.program.has_control_flow:
            return True, None
        return True, hits[-1].value

    def _sourced_before(self) -> bool:
        return any(c.name in ("source", ".", "eval") for c in self.program.commands[:self.at])

    def shell_var(self, name: str) -> tuple[str | None, str]:
        """A shell variable's literal value and where it comes from, or (None, "")."""
        assigned, value = self._assigned(name)
        if assigned:
            return (value, f"{name}={value} set in the script") if value is not None else (None, "")
        if self._sourced_before():
            return None, ""
        if self.parent is not None:
            return self.parent.shell_var(name)
        return self.env_var(name)

    def env_var(self, name: str) -> tuple[str | None, str]:
        if self.operator_env and (name.startswith("PET_") or name in _OPERATOR_ENV):
            return None, ""      # the operator appends its own value, which wins
        env = self.container.env.get(name)
        if env is None or not isinstance(env.value, str) or "$" in env.value:
            return None, ""
        return env.value, f"{name}={env.value} in the container env"

    def process_env(self, name: str) -> tuple[str | None, str, bool]:
        """What a launcher started by this command reads from its environment:
        (value, how, present). ``present`` is False when nothing sets it."""
        if name in self.prefix:
            value = self.prefix[name]
            if "$" in value or "`" in value:
                return None, "", True
            return value, f"{name}={value} before the command", True
        scope: Scope | None = self
        while scope is not None:
            assigned, _ = scope._assigned(name)
            if assigned or scope._sourced_before():
                return None, "", True
            scope = scope.parent
        env = self.container.env.get(name)
        if env is None:
            return None, "", False
        value, how = self.env_var(name)
        return value, how, True


def expand_word(word: Word, scope: Scope) -> Word:
    """``word`` with ``$(VAR)`` (Kubernetes) and, in scripts, ``$VAR``/``${VAR}``
    replaced by literal values; unchanged when any part is not known."""
    text = word.text
    if "$" not in text or "$$" in text:
        return word
    used: list[str] = []

    def k8s(match: re.Match[str]) -> str:
        value, how = scope.env_var(match.group(1))
        if value is None:
            return match.group(0)
        used.append(how)
        return value

    out = _K8S_REF.sub(k8s, text)
    if word.in_script:
        def shell(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2)
            value, how = scope.shell_var(name)
            if value is None or (value == "" and ":-" in match.group(0)):
                return match.group(0)
            used.append(how)
            return value
        out = _SHELL_REF.sub(shell, out)
    if "$" in out or "`" in out or re.search(r"\s", out) or not used:
        return word
    return replace(word, text=out, written=word.written or word.text, expanded_from="; ".join(dict.fromkeys(used)))


# -- options --------------------------------------------------------------

@dataclass(slots=True)
class Options:
    """Launcher options as (normalised name -> (value word | None, flag word))."""

    values: dict[str, tuple[Word | None, Word]]
    rest: list[Word]            # from the script / recipe on
    value_text: dict[str, str]

    def get(self, name: str) -> tuple[str | None, Word] | None:
        hit = self.values.get(name)
        if hit is None:
            return None
        return self.value_text[name], hit[1] if hit[0] is None else hit[0]

    def has(self, name: str) -> bool:
        return name in self.values

    def flag(self, name: str) -> Word:
        return self.values[name][1]


def parse_options(words: list[Word], takes_value: Callable[[str], bool]) -> Options:
    """Options up to the first positional word (the script)."""
    values: dict[str, tuple[Word | None, Word]] = {}
    texts: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.text == "--":
            i += 1
            break
        if not w.text.startswith("-") or w.text == "-":
            break
        if "=" in w.text and w.text.startswith("--"):
            name, _, value = w.text.partition("=")
            name = norm_flag(name)
            values[name] = (None, w)
            texts[name] = value
            i += 1
            continue
        name = norm_flag(w.text)
        if takes_value(name) and i + 1 < len(words):
            values[name] = (words[i + 1], w)
            texts[name] = words[i + 1].text
            i += 2
            continue
        values[name] = (None, w)
        texts[name] = ""
        i += 1
    return Options(values, words[i:], texts)


def count_of(text: str | None) -> Maybe[int] | None:
    """A rank/node count as written: an int, UNKNOWN for an expansion or a
    non-number, None when absent."""
    if text is None:
        return None
    text = text.strip().strip("'\"")
    if _INT.match(text):
        return int(text)
    return UNKNOWN


# Programs whose every rank drives several GPUs, and the flag that says how
# many (rules.md, "Ranks that drive several GPUs"): the nccl-tests binaries
# (all_reduce_perf, all_gather_perf, ..., their *_perf_mpi builds) take -g N.
_MULTI_GPU_RANK_PROGRAMS = ((re.compile(r"^[a-z0-9_]+_perf(_mpi)?$"), ("-g", "--ngpus")),)


@dataclass(slots=True)
class MpiOptions:
    np: Maybe[int] | None
    per_node: Maybe[int] | None
    by_node: bool                      # --map-by node / -bynode: round robin over hosts
    hosts: Word | None                 # an option that names hosts / a hostfile
    np_word: Word | None
    shown: str = ""                    # the count options as written
    gpus_per_rank: Maybe[int] = 1      # nccl-tests -g N
    gpus_per_rank_text: str = ""       # "all_reduce_perf -g 2"

    def times_gpus(self, ranks: Maybe[int]) -> Maybe[int]:
        """GPUs that ``ranks`` ranks of this program use."""
        if ranks is UNKNOWN or self.gpus_per_rank is UNKNOWN:
            return UNKNOWN
        return ranks * self.gpus_per_rank


def _gpus_per_rank(program: list[Word]) -> tuple[Maybe[int], str]:
    if not program:
        return 1, ""
    name = posixpath.basename(program[0].text)
    for pattern, flags in _MULTI_GPU_RANK_PROGRAMS:
        if not pattern.match(name):
            continue
        for i, w in enumerate(program[1:], start=1):
            flag, eq, value = w.text.partition("=")
            if flag in flags:
                if not eq:
                    value = program[i + 1].text if i + 1 < len(program) else ""
                count = count_of(value)
                return (count if count is not None else UNKNOWN), f"{name} {flag} {value}"
        return 1, ""
    return 1, ""


@dataclass(slots=True)
class Found:
    """What one simple command launches."""

    launcher: str
    ranks: Maybe[int]
    nodes: Maybe[int] | None
    evidence: Word
    ranks_text: str
    all_visible_gpus: bool = False
    forces_cpu: Word | None = None
    unknown_reason: str = ""
    ranks_location: Location | None = None
    ranks_what: str = ""              # what is written at ranks_location (Launch.ranks_what)
    distributed: bool = True          # a multi-process launcher (not a bare python)
    config: TrainingConfig | None = None
    evidence_location: Location | None = None   # when the count is not written on the command line
    mpi: MpiOptions | None = None


def _display(flag: Word, value: Word | None) -> str:
    if value is None or value is flag:
        shown = flag.shown
        return f"{shown} ({flag.expanded_from})" if flag.expanded_from else shown
    shown = f"{flag.shown} {value.shown}"
    return f"{shown} ({value.expanded_from})" if value.expanded_from else shown


def _unknown_count_reason(text: str | None) -> str:
    return "the count is set at run time" if "$" in (text or "") or "`" in (text or "") else "not a GPU count"


@dataclass(slots=True)
class Context:
    """What the launcher parsers need besides the words."""

    workload: Workload
    scope: Scope
    resolve: Callable[[Word], TrainingConfig | None]


# -- launchers ------------------------------------------------------------

def _nproc_value(text: str, found: Callable[..., Found]) -> Found:
    value = text.strip().strip("'\"").lower()
    if value in ("gpu", "auto"):
        return found(UNKNOWN, all_visible_gpus=True)
    count = count_of(text)
    if count is UNKNOWN:
        return found(UNKNOWN, unknown_reason=_unknown_count_reason(text))
    return found(count)


def _torchrun_default(name: str, first: Word, nodes: Maybe[int] | None, ctx: Context) -> Found:
    """torchrun without --nproc_per_node: PET_NPROC_PER_NODE, else 1."""
    def found(ranks: Maybe[int], shown: str, location: Location | None = None, what: str = "",
              **kw: Any) -> Found:
        # The evidence stays the torchrun word; where the count is written is ranks_location.
        return Found("torchrun", ranks, nodes, first, shown,
                     ranks_location=location, ranks_what=what if location is not None else "", **kw)

    value, how, present = ctx.scope.process_env("PET_NPROC_PER_NODE")
    workload = ctx.workload
    if workload.kind == "PyTorchJob":
        spec = workload.spec
        policy = spec.get("elasticPolicy") if isinstance(spec.get("elasticPolicy"), dict) else {}
        for path, written in ((("spec", "nprocPerNode"), spec.get("nprocPerNode")),
                              (("spec", "elasticPolicy", "nProcPerNode"), policy.get("nProcPerNode"))):
            if isinstance(written, (str, int)) and not isinstance(written, bool):
                shown = f"{name} (no --nproc_per_node: PET_NPROC_PER_NODE from {'.'.join(path[1:])}: {written})"
                what = f"{'.'.join(path[1:])} in the PyTorchJob spec (the operator passes it as PET_NPROC_PER_NODE)"
                return _nproc_value(str(written), lambda r, **kw: found(r, shown, workload.loc(*path), what, **kw))
        return found(UNKNOWN, name, unknown_reason="the PyTorchJob operator sets PET_NPROC_PER_NODE "
                                                 "(spec.nprocPerNode, auto when unset)")
    if workload.kind in _PET_INJECTING_KINDS:
        return found(UNKNOWN, name, unknown_reason=f"the {workload.kind} operator sets PET_NPROC_PER_NODE")
    if present:
        if value is None:
            return found(UNKNOWN, name, unknown_reason="PET_NPROC_PER_NODE is set at run time")
        shown = f"{name} (no --nproc_per_node: {how})"
        env = ctx.scope.container.env.get("PET_NPROC_PER_NODE")
        location = env.location if env is not None and "container env" in how else None
        what = "PET_NPROC_PER_NODE in the container env"
        return _nproc_value(value, lambda r, **kw: found(r, shown, location, what, **kw))
    return found(1, f"{name} (default --nproc_per_node 1)")


def _torchrun(name: str, first: Word, words: list[Word], ctx: Context) -> Found:
    opts = parse_options(words, lambda n: n in _TORCHRUN_VALUES)
    nodes: Maybe[int] | None = None
    if opts.has("--standalone"):
        nodes = 1
    hit = opts.get("--nnodes")
    if hit is not None:
        text = hit[0] or ""
        nodes = count_of(text) if ":" not in text else (
            count_of(text.split(":")[0]) if text.split(":")[0] == text.split(":")[1] else UNKNOWN)
    # argparse accepts unambiguous prefixes: "--nproc 4" is --nproc-per-node.
    for option in opts.values:
        if option != "--nproc-per-node" and len(option) > 3 and "--nproc-per-node".startswith(option):
            return Found("torchrun", UNKNOWN, nodes, opts.flag(option), f"{name} {opts.flag(option).shown}",
                         unknown_reason=f"{option} is an abbreviation")
    got = opts.get("--nproc-per-node")
    if got is None:
        return _torchrun_default(name, first, nodes, ctx)
    text, word = got
    flag_word = opts.flag("--nproc-per-node")
    shown = f"{name} {_display(flag_word, word if word is not flag_word else None)}"
    return _nproc_value(text or "", lambda r, **kw: Found("torchrun", r, nodes, word, shown, **kw))


def _accelerate(name: str, first: Word, words: list[Word], ctx: Context) -> Found:
    def takes(n: str) -> bool:
        return n not in _ACCELERATE_FLAGS
    opts = parse_options(words, takes)
    forces_cpu = opts.flag("--cpu") if opts.has("--cpu") else None
    config = None
    config_hit = opts.get("--config-file")
    if config_hit is not None and config_hit[0]:
        config = ctx.resolve(config_hit[1])
    machines: Maybe[int] | None = None
    machines_hit = opts.get("--num-machines")
    if machines_hit is not None:
        machines = count_of(machines_hit[0])
    elif config is not None and config.settings.num_machines.value is not None:
        machines = config.settings.num_machines.value
    total_hit = opts.get("--num-processes")
    ranks_location = None
    if total_hit is not None:
        # A flag overrides the config file's num_processes (accelerate launch).
        total = count_of(total_hit[0])
        flag_word = opts.flag("--num-processes")
        evidence = total_hit[1]
        shown = f"{name} {_display(flag_word, evidence if evidence is not flag_word else None)}"
        if machines_hit is not None:
            m_flag = opts.flag("--num-machines")
            shown += f" {_display(m_flag, machines_hit[1] if machines_hit[1] is not m_flag else None)}"
        elif config is not None and config.settings.num_machines.value is not None:
            shown += f" (num_machines: {machines} in {config_hit[0]})"
    elif config is not None and config.settings.num_processes.value is not None:
        setting = config.settings.num_processes
        total = setting.value
        evidence = config_hit[1]
        ranks_location = setting.location or config.location
        default = "" if setting.explicit else ", the default"
        shown = f"{name} --config_file {config_hit[0]} (num_processes: {total if total is not UNKNOWN else '?'}{default})"
    else:
        reason = "--multi_gpu without --num_processes" if opts.has("--multi-gpu") else \
            "no --num_processes and no Accelerate config in the scan"
        return Found("accelerate", UNKNOWN, machines, first, name, forces_cpu=forces_cpu, unknown_reason=reason,
                     config=config)
    ranks: Maybe[int] = UNKNOWN
    if total is not UNKNOWN and machines is not UNKNOWN:
        m = machines or 1
        if m > 0 and total % m == 0:
            ranks = total // m
    return Found("accelerate", ranks, machines, evidence, shown, forces_cpu=forces_cpu,
                 ranks_location=ranks_location, config=config,
                 ranks_what="num_processes in the Accelerate config" if ranks_location is not None else "",
                 unknown_reason="" if ranks is not UNKNOWN else "the count is set at run time")


def _deepspeed(name: str, first: Word, words: list[Word], ctx: Context) -> Found:
    opts = parse_options(words, lambda n: n in _DEEPSPEED_VALUES)
    nodes = count_of(opts.get("--num-nodes")[0]) if opts.get("--num-nodes") else None
    got = opts.get("--num-gpus") or opts.get("--num-accelerators")
    if got is None:
        if any(opts.has(n) for n in ("-i", "--include", "-e", "--exclude", "-H", "--hostfile")):
            return Found("deepspeed", UNKNOWN, nodes, first, name,
                         unknown_reason="--include/--exclude/--hostfile choose the GPUs")
        return Found("deepspeed", UNKNOWN, nodes, first, f"{name} (no --num_gpus: every visible GPU)",
                     all_visible_gpus=True)
    text, word = got
    flag = opts.flag("--num-gpus" if opts.has("--num-gpus") else "--num-accelerators")
    shown = f"{name} {_display(flag, word if word is not flag else None)}"
    count = count_of(text)
    return Found("deepspeed", count, nodes, word, shown,
                 unknown_reason="" if count is not UNKNOWN else _unknown_count_reason(text))


def _tune(first: Word, words: list[Word], ctx: Context) -> Found | None:
    if not words or words[0].text != "run":
        return None
    opts = parse_options(words[1:], lambda n: n in _TORCHRUN_VALUES)
    if opts.has("--nproc-per-node") or opts.has("--nnodes"):
        found = _torchrun("tune run", first, words[1:], ctx)
        found.launcher = "tune"
        return found
    return Found("tune", 1, None, first, "tune run (no --nproc_per_node: one process)", distributed=False)


def _composer(first: Word, words: list[Word], ctx: Context) -> Found:
    # argparse also takes "-n8" for "-n 8".
    split: list[Word] = []
    for w in words:
        if re.match(r"^-n\d+$", w.text):
            split += [replace(w, text="-n"), replace(w, text=w.text[2:])]
        else:
            split.append(w)
    opts = parse_options(split, lambda n: n in _COMPOSER_VALUES)
    got = opts.get("-n") or opts.get("--nproc")
    if got is None:
        value, how, present = ctx.scope.process_env("LOCAL_WORLD_SIZE")
        if present:
            if value is None:
                return Found("composer", UNKNOWN, None, first, "composer",
                             unknown_reason="LOCAL_WORLD_SIZE is set at run time")
            count = count_of(value)
            env = ctx.scope.container.env.get("LOCAL_WORLD_SIZE")
            location = env.location if env is not None and "container env" in how else None
            return Found("composer", count, None, first, f"composer (no -n: {how})",
                         unknown_reason="" if count is not UNKNOWN else "not a GPU count",
                         ranks_location=location,
                         ranks_what="LOCAL_WORLD_SIZE in the container env" if location is not None else "")
        return Found("composer", UNKNOWN, None, first, "composer (no -n: every visible GPU)", all_visible_gpus=True)
    count = count_of(got[0])
    flag = opts.flag("-n" if opts.has("-n") else "--nproc")
    return Found("composer", count, None, got[1], f"composer {_display(flag, got[1] if got[1] is not flag else None)}",
                 unknown_reason="" if count is not UNKNOWN else _unknown_count_reason(got[0]))


def _fabric(shown_name: str, first: Word, words: list[Word]) -> Found:
    """``lightning run model`` / ``fabric run [model]``: processes per node from
    --devices (click parses options anywhere before ``--``)."""
    values: dict[str, tuple[str, Word]] = {}
    positional: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.text == "--":
            break
        name, eq, value = w.text.partition("=")
        name = norm_flag(name)
        if name in _FABRIC_VALUES:
            if eq:
                values[name] = (value, w)
                i += 1
                continue
            if i + 1 < len(words):
                values[name] = (words[i + 1].text, words[i + 1])
                i += 2
                continue
        if not w.text.startswith("-"):
            positional.append(w)
        i += 1
    nodes = count_of(values["--num-nodes"][0]) if "--num-nodes" in values else None
    accelerator = values.get("--accelerator", (None, first))[0]
    strategy = values.get("--strategy", (None, first))[0]
    devices_text, devices_word = values.get("--devices", (None, first))
    shown = shown_name + "".join(f" {values[n][1].shown if values[n][1].text.startswith('--') else n + ' ' + values[n][1].shown}"
                                 for n in ("--accelerator", "--strategy", "--devices") if n in values)

    def found(ranks: Maybe[int], evidence: Word, text: str, **kw: Any) -> Found:
        return Found("lightning", ranks, nodes, evidence, text, **kw)

    if strategy == "dp":
        return found(1, values["--strategy"][1], shown)
    if accelerator is not None and accelerator not in ("cuda", "gpu", "auto"):
        return found(UNKNOWN, values["--accelerator"][1], shown,
                     unknown_reason=f"--accelerator {accelerator} does not start GPU ranks")
    if devices_text is None:
        return found(1, first, f"{shown_name} (default --devices 1)")
    text = devices_text.strip().strip("'\"")
    if _INT.match(text) and int(text) > 0:
        return found(int(text), devices_word, shown)
    gpu_explicit = accelerator in ("cuda", "gpu")
    if text == "-1" and gpu_explicit:
        return found(UNKNOWN, devices_word, shown, all_visible_gpus=True)
    ids = [p.strip() for p in text.strip("[]").split(",") if p.strip()]
    if gpu_explicit and len(ids) > 1 and all(_INT.match(p) for p in ids):
        return found(len(set(ids)), devices_word, shown)
    return found(UNKNOWN, devices_word, shown, unknown_reason=_unknown_count_reason(text)
                 if "$" in text else f"--devices {text} depends on the Lightning version and accelerator")


def parse_mpi(words: list[Word]) -> MpiOptions | None:
    """mpirun/mpiexec options before the program; None when they cannot be
    told apart from the program's own (an unknown option that may take a value)."""
    np: Maybe[int] | None = None
    np_word: Word | None = None
    per_node: Maybe[int] | None = None
    by_node = False
    hosts: Word | None = None
    shown: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        text = w.text
        if not text.startswith("-") or text == "-":
            break
        name, eq, inline = text.partition("=")
        if not name.startswith("--"):
            name, eq, inline = text, "", ""
        if name in _MPI_TWO_VALUES:
            i += 3
            continue
        if name in _MPI_VALUES:
            value_word = w if eq else (words[i + 1] if i + 1 < len(words) else None)
            value = inline if eq else (value_word.text if value_word is not None else None)
            if name in _MPI_NP or name in _MPI_PER_NODE or name in ("-map-by", "--map-by"):
                shown.append(_display(w, None if eq or value_word is None else value_word))
            if name in _MPI_NP:
                np, np_word = count_of(value), value_word
            elif name in _MPI_PER_NODE:
                per_node = count_of(value)
            elif name in _MPI_HOST_OPTIONS:
                hosts = w
            elif name in ("-map-by", "--map-by") and value is not None:
                ppr = re.match(r"^ppr:(\d+):node", value)
                if ppr:
                    per_node = int(ppr.group(1))
                elif value.split(":")[0] == "node":
                    by_node = True
                elif "$" in value:
                    per_node = UNKNOWN
            i += 1 if eq else 2
            continue
        if name in ("-bynode", "--bynode"):
            by_node = True
        i += 1
    # An unknown option that takes a value would end the options early: a count
    # flag after the "program" and before any python means we cannot tell.
    for w in words[i:]:
        if _PYTHON.match(posixpath.basename(w.text)) or w.text.endswith(".py"):
            break
        if w.text in _MPI_NP or w.text in _MPI_PER_NODE:
            return None
    per_rank, per_rank_text = _gpus_per_rank(words[i:])
    return MpiOptions(np, per_node, by_node, hosts, np_word, " ".join(shown), per_rank, per_rank_text)


def _mpirun(name: str, first: Word, words: list[Word], ctx: Context) -> Found:
    mpi = parse_mpi(words)
    if mpi is None:
        return Found("mpirun", UNKNOWN, None, first, name, unknown_reason="mpirun options cannot be parsed")
    shown = f"{name} {mpi.shown}".rstrip()
    if mpi.gpus_per_rank_text:
        shown += f" {mpi.gpus_per_rank_text}"
    evidence = mpi.np_word or first

    def unknown(reason: str) -> Found:
        return Found("mpirun", UNKNOWN, None, evidence, shown, unknown_reason=reason, mpi=mpi)

    if mpi.hosts is not None:
        return unknown(f"{mpi.hosts.text} places the ranks on other pods")
    hostfile_env = [n for n in ctx.scope.container.env if _MPI_HOSTFILE_ENV.search(n)]
    workload = ctx.workload
    single_pod = workload.kind in _SINGLE_POD_KINDS and len(workload.templates) == 1 \
        and not workload.api_version.startswith("batch.volcano.sh")
    if not single_pod or hostfile_env:
        return unknown("mpirun places the ranks on the hosts of its hostfile")
    # No hosts: every rank runs in this pod.
    if mpi.np is not None:
        if mpi.np is not UNKNOWN and mpi.per_node not in (None, UNKNOWN) and mpi.np > mpi.per_node:
            return unknown("-np above the per-node count")
        if mpi.np is UNKNOWN or mpi.gpus_per_rank is UNKNOWN:
            return unknown("the count is set at run time")
        return Found("mpirun", mpi.times_gpus(mpi.np), 1, evidence, shown, mpi=mpi)
    if mpi.per_node not in (None, UNKNOWN):
        return Found("mpirun", mpi.times_gpus(mpi.per_node), 1, first, shown, mpi=mpi)
    return unknown("mpirun without -np starts one rank per core")


def _python(first: Word, words: list[Word], ctx: Context) -> Found | None:
    # Interpreter options end at -m MODULE / -c CMD / the script: what follows is the program's.
    i = 0
    module_word: Word | None = None
    while i < len(words) and words[i].text.startswith("-") and words[i].text != "-":
        flag = words[i].text
        if flag == "-c" or (flag.startswith("-") and not flag.startswith("--") and flag.endswith("c")
                            and flag[1:].isalpha()):
            return None
        if flag == "-m" or (not flag.startswith("--") and flag.endswith("m") and flag[1:].isalpha()):
            module_word = words[i + 1] if i + 1 < len(words) else None
            i += 2
            break
        if flag.startswith("-m") and len(flag) > 2:
            module_word = replace(words[i], text=flag[2:])
            i += 1
            break
        i += 2 if flag in _PYTHON_VALUES else 1
    rest = words[i:]
    name = posixpath.basename(first.text)
    if module_word is not None:
        module = module_word.text or ""
        launcher = _PYTHON_LAUNCH_MODULES.get(module)
        shown = f"{name} -m {module}"
        if module in _SERVING_MODULES:
            return _serving(_SERVING_MODULES[module], module_word, rest, shown)
        if launcher == "torchrun":
            return _torchrun(shown, first, rest, ctx)
        if launcher == "accelerate":
            return _accelerate(shown, first, rest, ctx)
        if launcher == "deepspeed":
            return _deepspeed(shown, first, rest, ctx)
        if module.startswith(_NOT_TRAINING_MODULES) or not module:
            return None
        if module.split(".")[0] in ("ray", "lightning", "nemo") or "launch" in module or "distributed" in module:
            return Found(module.split(".")[0], UNKNOWN, None, module_word, shown,
                         unknown_reason=f"{module} starts its own processes")
        return Found("python", 1, None, module_word, shown, distributed=False)
    if not rest:
        return None
    script = rest[0]
    if not script.text.endswith(".py"):
        return None
    return Found("python", 1, None, script, f"{name} {script.shown}", distributed=False)


def _serving(engine: ServingEngine, first: Word, words: list[Word], shown_name: str) -> Found:
    """GPUs an inference server spreads itself over: the product of its
    parallelism flags as written anywhere on the line (the model name may
    come first)."""
    ranks: Maybe[int] = 1
    written: list[str] = []
    evidence: Word | None = None
    for spellings in engine.parallel_flags:
        for i, w in enumerate(words):
            name, eq, value = w.text.partition("=") if w.text.startswith("--") else (w.text, "", "")
            name = norm_flag(name)
            if name not in spellings:
                continue
            if not eq:
                value = words[i + 1].text if i + 1 < len(words) else ""
            count = count_of(value)
            evidence = evidence or w
            written.append(w.shown if eq or i + 1 >= len(words) else f"{w.shown} {words[i + 1].shown}")
            ranks = UNKNOWN if count is UNKNOWN or count is None or ranks is UNKNOWN else ranks * count
            break
    if evidence is None:
        return Found(engine.name, UNKNOWN, None, first, shown_name,
                     unknown_reason=f"{engine.name} sets its GPU count from flags not written here")
    return Found(engine.name, ranks, None, evidence, f"{shown_name} {' '.join(written)}",
                 ranks_what=f"the GPUs {engine.name} spreads one server over")


def parse_command(command: SimpleCommand, ctx: Context) -> Found | None:
    words = command.words
    first = words[0]
    name = posixpath.basename(first.text)
    rest = words[1:]
    if name == "torchrun":
        return _torchrun("torchrun", first, rest, ctx)
    sub = rest[0].text if rest else None
    engine = _SERVING_COMMANDS.get((name, sub)) or _SERVING_COMMANDS.get((name, None))
    if engine is not None:
        return _serving(engine, first, rest, f"{name} {sub}" if (name, sub) in _SERVING_COMMANDS else name)
    if name == "accelerate" and rest and rest[0].text == "launch":
        return _accelerate("accelerate launch", first, rest[1:], ctx)
    if name == "deepspeed":
        return _deepspeed("deepspeed", first, rest, ctx)
    if name == "tune":
        return _tune(first, rest, ctx)
    if name == "composer":
        return _composer(first, rest, ctx)
    if name in ("lightning", "fabric") and rest and rest[0].text == "run":
        sub = rest[1:]
        if name == "lightning" and not (sub and sub[0].text == "model"):
            return None          # lightning run app: not a training launch
        if sub and sub[0].text == "model":
            sub = sub[1:]
        return _fabric(f"{name} run{' model' if rest[1:2] and rest[1].text == 'model' else ''}", first, sub)
    if name in ("mpirun", "mpiexec", "orterun", "mpiexec.hydra", "prterun"):
        return _mpirun(name, first, rest, ctx)
    if name == "axolotl" and rest and rest[0].text in ("train", "fine-tune", "finetune"):
        return Found("axolotl", UNKNOWN, None, first, f"axolotl {rest[0].text}",
                     unknown_reason="axolotl picks its launcher and process count itself")
    if name == "srun" and ctx.workload.batch is not None:
        from mlcost_lint.link.slurm import srun_found

        return srun_found(command, ctx, parse_command, Found)
    if name in _UNKNOWN_LAUNCHERS:
        if name == "ray":
            if rest[:2] and rest[0].text == "job" and len(rest) > 1 and rest[1].text == "submit":
                return Found("ray", UNKNOWN, None, first, "ray job submit",
                             unknown_reason="ray job submit runs the entrypoint on the Ray cluster")
            if not (rest and rest[0].text in ("start", "job", "submit")):
                return None
        return Found(_UNKNOWN_LAUNCHERS[name], UNKNOWN, None, first, name,
                     unknown_reason=_UNKNOWN_REASONS.get(name, f"{name} decides the process count"))
    if _PYTHON.match(name):
        return _python(first, rest, ctx)
    return None


# -- scripts --------------------------------------------------------------

@dataclass(slots=True)
class Step:
    """One simple command with the scope its variables resolve in."""

    command: SimpleCommand
    scope: Scope


def _script_path(command: SimpleCommand) -> Word | None:
    """The script a command runs: ``bash [opts] X``, ``sh X``, ``./x.sh``, ``/p/x.sh``."""
    words = command.words
    name = command.name
    if name in _SHELLS:
        i = 1
        while i < len(words) and words[i].text.startswith(("-", "+")):
            i += 2 if words[i].text in ("-o", "+o", "--rcfile", "--init-file") else 1
        return words[i] if i < len(words) else None
    first = words[0].text
    if first.endswith(".sh") or first.startswith(("./", "../")):
        return words[0]
    return None


def _working_dir(container: Container) -> str | None:
    wd = container.document.get(container.key_path + ("workingDir",))
    return wd if isinstance(wd, str) and wd.startswith("/") else None


def _mounted_script(path: str, project: Project, workload: Workload, template: PodTemplate,
                    container: Container) -> tuple[str, Location, str] | None:
    """(text, location, "ConfigMap name key k") of a script mounted at ``path``."""
    path = posixpath.normpath(path)
    for mounted in mounted_files(template, container):
        cms = [cm for cm in config_maps_named(project, mounted.config_map)
               if (cm.namespace is None or workload.namespace is None or cm.namespace == workload.namespace)]
        if len(cms) != 1:
            continue
        cm = cms[0]
        if mounted.key == "*":
            key = posixpath.relpath(path, mounted.path) if path.startswith(mounted.path.rstrip("/") + "/") else None
        else:
            key = mounted.key if path == posixpath.normpath(mounted.path) else None
        if key is not None and isinstance(cm.data.get(key), str):
            return cm.data[key], cm.loc("data", key), f"ConfigMap {cm.name} key {key}"
    return None


@dataclass(slots=True)
class Steps:
    steps: list[Step] = field(default_factory=list)
    unread_scripts: list[Word] = field(default_factory=list)


def steps_of(program: Program, container: Container, project: Project | None, workload: Workload,
             template: PodTemplate, parent: Scope | None = None, depth: int = 0, out: Steps | None = None) -> Steps:
    """The commands a container runs, with mounted scripts read in place."""
    out = out if out is not None else Steps()
    for at, command in enumerate(program.commands):
        if not command.words:
            continue
        scope = Scope(program, at, container, parent, dict(command.assignments),
                      workload.kind in _PET_INJECTING_KINDS)
        script = _script_path(command)
        if script is not None:
            written = expand_word(script, scope)
            path = written.text
            if not path.startswith("/"):
                wd = _working_dir(container)
                path = posixpath.join(wd, path) if wd and "$" not in path else ""
            hit = _mounted_script(path, project, workload, template, container) \
                if project is not None and path and "$" not in path else None
            if hit is not None and depth < MAX_SCRIPT_DEPTH:
                text, location, _ = hit
                steps_of(program_of_script(text, location), container, project, workload, template,
                         scope, depth + 1, out)
            else:
                out.unread_scripts.append(script)
            continue
        out.steps.append(Step(command, scope))
    return out


# -- combining ------------------------------------------------------------

# Frameworks whose one process drives every visible device (TensorFlow
# MirroredStrategy, JAX, Paddle, MXNet, MindSpore): a bare python there is not one GPU.
_ONE_PROCESS_ALL_DEVICES_KINDS = frozenset({"TFJob", "JAXJob", "PaddleJob", "MXJob", "XGBoostJob"})
_ONE_PROCESS_ALL_DEVICES_IMAGES = re.compile(r"(tensorflow|jax|paddle|mxnet|mindspore)", re.I)


def _one_process_all_devices(workload: Workload, container: Container) -> bool:
    return workload.kind in _ONE_PROCESS_ALL_DEVICES_KINDS or bool(
        container.image and _ONE_PROCESS_ALL_DEVICES_IMAGES.search(container.image))


def _on_tpu(template: PodTemplate, container: Container) -> bool:
    if any(name.startswith("google.com/tpu") for name in container.accelerators()):
        return True
    return any(str(k).startswith("cloud.google.com/gke-tpu") for k in template.node_selector)


def _combine(found: list[tuple[SimpleCommand, Found]], container: Container) -> Found | None:
    distributed = [f for _, f in found if f.distributed]
    if distributed:
        chosen = distributed[-1]
        for other in distributed[:-1]:
            same = other.ranks == chosen.ranks if (other.ranks is not UNKNOWN and chosen.ranks is not UNKNOWN) \
                else other.all_visible_gpus and chosen.all_visible_gpus
            if not same:
                return Found(chosen.launcher, UNKNOWN, chosen.nodes, chosen.evidence, chosen.ranks_text,
                             unknown_reason="several launchers with different rank counts")
        return chosen
    if not found:
        return None
    chosen = found[-1][1]
    if any(cmd.background or cmd.in_loop for cmd, _ in found):
        return Found(chosen.launcher, UNKNOWN, None, chosen.evidence, chosen.ranks_text,
                     unknown_reason="python started in the background or in a loop", distributed=False)
    return chosen


def _found_in(steps: Steps, workload: Workload, resolve: Callable[[Word], TrainingConfig | None],
              skip: Callable[[SimpleCommand], bool] = lambda c: False) -> list[tuple[SimpleCommand, Found]]:
    found: list[tuple[SimpleCommand, Found]] = []
    for step in steps.steps:
        command = step.command
        if command.name in _NOT_LAUNCHES or skip(command):
            continue
        expanded = SimpleCommand([expand_word(w, step.scope) for w in command.words], command.assignments,
                                 command.background, command.in_loop)
        hit = parse_command(expanded, Context(workload, step.scope, resolve))
        if hit is not None:
            found.append((expanded, hit))
    return found


def launch_of(workload: Workload, template: PodTemplate, container: Container, program: Program,
              linked: list[TrainingConfig], resolve: Callable[[Word], TrainingConfig | None],
              project: Project | None = None, extra: Steps | None = None) -> Launch | None:
    steps = steps_of(program, container, project, workload, template)
    if extra is not None:
        steps.steps += extra.steps
        steps.unread_scripts += extra.unread_scripts
    # "ray start" only starts the Ray node; a RayJob entrypoint (extra) is the launch.
    skip = (lambda c: c.name == "ray" and len(c.words) > 1 and c.words[1].text == "start") if extra else \
        (lambda c: False)
    found = _found_in(steps, workload, resolve, skip)
    runs_ray = workload.kind.startswith("Ray") or any(f.launcher == "ray" for _, f in found)
    chosen = _combine(found, container)
    if chosen is None:
        return None
    ranks = chosen.ranks
    reason = chosen.unknown_reason
    if chosen.launcher in ("python", "tune") and not chosen.distributed and ranks is not UNKNOWN:
        frameworks = {c.framework for c in linked}
        if frameworks & {Framework.LIGHTNING, Framework.NEMO}:
            ranks, reason = UNKNOWN, "Lightning/NeMo start one process per device themselves"
        elif runs_ray:
            ranks, reason = UNKNOWN, "Ray schedules the processes"
        elif _on_tpu(template, container):
            ranks, reason = UNKNOWN, "on TPU"
        elif _one_process_all_devices(workload, container):
            ranks, reason = UNKNOWN, "TensorFlow/JAX/Paddle/MXNet/MindSpore use every visible device from one process"
    if (workload.batch is not None or getattr(workload.managed, "gpus_written", None) is not None) \
            and chosen.launcher == "python" and not chosen.distributed \
            and ranks is not UNKNOWN:
        from mlcost_lint.link.slurm import other_program

        other = other_program(steps, chosen)
        if other is not None:
            ranks, reason = UNKNOWN, f"the script also runs {other}, which may be what uses the GPUs"
    if chosen.all_visible_gpus:
        count = container.gpu_count()
        ranks = count if count is not UNKNOWN and count > 0 else UNKNOWN
    if steps.unread_scripts and ranks is not UNKNOWN:
        script = steps.unread_scripts[0]
        ranks, reason = UNKNOWN, f"it also runs {script.shown}, which is not in the scan"
    nodes = chosen.nodes
    if chosen.config is not None and nodes is None:
        machines = chosen.config.settings.num_machines.value
        nodes = machines if machines is not None else None
    return Launch(
        workload=workload, template=template, container=container, launcher=chosen.launcher,
        ranks_per_node=ranks, nodes=nodes,
        evidence=chosen.evidence_location or word_location(container, chosen.evidence),
        ranks_text=chosen.ranks_text, ranks_location=chosen.ranks_location, ranks_what=chosen.ranks_what,
        all_visible_gpus=chosen.all_visible_gpus,
        forces_cpu=word_location(container, chosen.forces_cpu) if chosen.forces_cpu else None,
        unknown_reason=reason if ranks is UNKNOWN else "",
    )


# -- RayJob entrypoint ----------------------------------------------------

def ray_entrypoint_steps(workload: Workload, template: PodTemplate, container: Container,
                         project: Project | None) -> Steps | None:
    """The RayJob entrypoint's commands when they run in ``container`` (the
    head pod's Ray container, no entrypoint resources set)."""
    if workload.kind != "RayJob" or template.role != "head" or not template.containers \
            or template.containers[0] is not container:
        return None
    entrypoint = workload.spec.get("entrypoint")
    if not isinstance(entrypoint, str) or not entrypoint.strip():
        return None
    if any(workload.spec.get(k) is not None for k in _RAY_ENTRYPOINT_RESOURCES):
        return None
    program = program_of_script(entrypoint, workload.loc("spec", "entrypoint"))
    return steps_of(program, container, project, workload, template)


# -- MPIJob workers -------------------------------------------------------

@dataclass(slots=True)
class MpiWorkers:
    ranks: Maybe[int]
    text: str
    reason: str
    evidence: Location
    workers: Maybe[int] | None


def mpi_worker_ranks(workload: Workload, project: Project | None,
                     resolve: Callable[[Word], TrainingConfig | None]) -> MpiWorkers | None:
    """Ranks per MPIJob Worker pod from the Launcher's mpirun and the
    operator's hostfile (``slotsPerWorker`` slots per worker, default 1)."""
    if workload.kind != "MPIJob":
        return None
    by_role = {t.role.lower(): t for t in workload.templates}
    launcher, worker = by_role.get("launcher"), by_role.get("worker")
    if launcher is None or worker is None or not launcher.containers:
        return None
    container = launcher.containers[0]
    steps = steps_of(program_of(container), container, project, workload, launcher)
    runs = [(c, f) for c, f in _found_in(steps, workload, resolve) if f.launcher in ("mpirun", "horovodrun")]
    if not runs:
        return None
    spec = workload.spec
    slots_written = spec.get("slotsPerWorker", 1)
    slots: Maybe[int] = slots_written if isinstance(slots_written, int) and not isinstance(slots_written, bool) \
        and slots_written > 0 else UNKNOWN
    workers = worker.replicas if worker.replicas is not None else UNKNOWN
    evidence = workload.loc("spec", "slotsPerWorker") if "slotsPerWorker" in spec else workload.loc("spec")
    slots_text = f"slotsPerWorker: {slots_written}" if "slotsPerWorker" in spec else "slotsPerWorker 1 (default)"

    def unknown(reason: str, where: Location = evidence, text: str = "mpirun") -> MpiWorkers:
        return MpiWorkers(UNKNOWN, text, reason, where, workers)

    if len(runs) != 1 or runs[0][1].launcher != "mpirun" or runs[0][1].mpi is None:
        return unknown("the launcher does not run one mpirun" if len(runs) != 1
                       else f"{runs[0][1].launcher} on the launcher places the ranks")
    found = runs[0][1]
    mpi = found.mpi
    where = found.evidence_location or word_location(container, found.evidence)
    shown = f"{found.ranks_text} on {workers if workers is not UNKNOWN else '?'} workers x {slots_text}"
    if mpi.hosts is not None:
        return unknown(f"{mpi.hosts.text} chooses the hosts", where, shown)
    if spec.get("runLauncherAsWorker") is True:
        return unknown("runLauncherAsWorker puts ranks on the launcher too", where, shown)
    if slots is UNKNOWN or workers is UNKNOWN or mpi.np is UNKNOWN or mpi.per_node is UNKNOWN \
            or mpi.gpus_per_rank is UNKNOWN:
        return unknown("the count is set at run time", where, shown)
    implementation = spec.get("mpiImplementation", "OpenMPI")
    total = workers * slots
    per = mpi.per_node
    if per is not None:
        if per > slots:
            return unknown("more ranks per node than slots", where, shown)
        if mpi.np is None or mpi.np == workers * per:
            return MpiWorkers(mpi.times_gpus(per), shown, "", where, workers)
        return unknown("-np does not fill every worker", where, shown)
    if mpi.np is None:
        if implementation == "OpenMPI":
            # Open MPI starts one process per hostfile slot when -np is absent.
            return MpiWorkers(mpi.times_gpus(slots), f"{found.ranks_text} (no -np: every slot) on {workers} workers x {slots_text}",
                              "", where, workers)
        return unknown(f"{implementation} without -n", where, shown)
    if mpi.np == total:
        return MpiWorkers(mpi.times_gpus(slots), shown, "", where, workers)
    if mpi.by_node and workers > 0 and mpi.np % workers == 0 and mpi.np // workers <= slots:
        return MpiWorkers(mpi.times_gpus(mpi.np // workers), shown, "", where, workers)
    return unknown("-np is not workers x slots: ranks per worker depend on the mapping", where, shown)


def _mpi_worker_launch(workload: Workload, template: PodTemplate, container: Container,
                       mpi: MpiWorkers, own: Launch | None) -> Launch:
    ranks, reason = mpi.ranks, mpi.reason
    if own is not None:
        ranks, reason = UNKNOWN, f"the worker also runs {own.ranks_text or own.launcher}"
    # nodes stays None: the Worker replicas already say how many pods there are
    # (MLC502 words an MPIJob by its GPU pods, not by a launcher's node count).
    return Launch(workload=workload, template=template, container=container, launcher="mpirun",
                  ranks_per_node=ranks, nodes=None, evidence=mpi.evidence, ranks_text=mpi.text,
                  unknown_reason=reason if ranks is UNKNOWN else "")


def link_launches(project: Project, index: ConfigIndex) -> None:
    by_container: dict[int, list[TrainingConfig]] = {}
    for link in project.links.configs:
        by_container.setdefault(id(link.container), []).append(link.config)

    def resolver(container_configs: list[TrainingConfig], near: str) -> Callable[[Word], TrainingConfig | None]:
        def resolve(word: Word) -> TrainingConfig | None:
            parts = path_parts(word.text.split("=", 1)[1] if word.text.startswith("--") and "=" in word.text
                               else word.text)
            found = index.resolve(parts, near)
            candidates: list[Any] = list(found[0]) if found else []
            if not candidates and parts:
                # A mounted ConfigMap config linked to this container, by file name.
                candidates = [c for c in container_configs if c.embedded_key == parts[-1]]
            accel = [c for c in candidates if c.framework is Framework.ACCELERATE]
            return accel[0] if len(accel) == 1 else None
        return resolve

    for workload in project.kubernetes.workloads:
        near = workload.document.path
        mpi = mpi_worker_ranks(workload, project, resolver([], near))
        for template in workload.templates:
            for container in template.containers:
                linked = by_container.get(id(container), [])
                extra = ray_entrypoint_steps(workload, template, container, project)
                launch = launch_of(workload, template, container, program_of(container), linked, resolver(linked, near),
                                   project, extra)
                if mpi is not None and template.role.lower() == "worker" and template.containers \
                        and template.containers[0] is container:
                    launch = _mpi_worker_launch(workload, template, container, mpi, launch)
                if launch is not None:
                    project.links.launches.append(launch)
