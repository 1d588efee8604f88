"""What one simple command launches (``Found``): the per-launcher parsers
(torchrun, ``accelerate launch``, deepspeed, ``tune run``, composer, the
Fabric CLI, mpirun, ``python -m``, the inference servers vLLM/SGLang/TGI),
their option tables, and ``parse_command``, which picks the parser by the
program's name. The forms they read are listed in :mod:`.launcher`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.model.kubernetes import Workload
from mlcost_lint.model.training import TrainingConfig
from mlcost_lint.link.shell import SimpleCommand, Word, basename
from mlcost_lint.link.launch_mpi import _MPI_HOSTFILE_ENV, MpiOptions, parse_mpi
from mlcost_lint.link.launch_words import (
    _INT, _PET_INJECTING_KINDS, _PYTHON, Scope, _display, count_of, norm_flag, parse_options,
)

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
# Kinds with one pod template: an mpirun without hosts runs its ranks in that pod.
_SINGLE_POD_KINDS = frozenset({"Pod", "Job", "CronJob", "Deployment", "StatefulSet", "ReplicaSet"})


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
    name = basename(first.text)
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
    name = basename(first.text)
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
