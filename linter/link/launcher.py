"""Container -> launcher and the ranks it starts per pod (``Launch``).

Read from the simple commands a container runs (:mod:`.shell`):

- ``torchrun`` / ``python -m torch.distributed.run|launch``: ``--nproc_per_node``
  (``--nproc-per-node``, ``=`` or space), default 1; ``gpu``/``auto`` start
  one rank per visible GPU; ``cpu`` is not GPU ranks (unknown). ``--nnodes``
  (a range ``1:4`` is unknown; ``--standalone`` is one node).
- ``accelerate launch``: ``--num_processes`` (total over machines, so per
  node = total / ``--num_machines``), else the linked Accelerate config's
  ``num_processes`` / ``num_machines``; ``--multi_gpu`` without a count, or
  no count and no config, is unknown; ``--cpu`` forces CPU.
- ``deepspeed``: ``--num_gpus`` (``--num_nodes``); without it every visible
  GPU gets a rank (``--include``/``--exclude``/``--hostfile`` make it unknown).
- ``tune run`` (torchtune): torchrun options before the recipe, else one
  process. ``composer -n``: like torchrun, default every visible GPU.
- ``axolotl train``, ``mpirun``, ``horovodrun``, ``srun``, ``ray``, ``lightning``:
  ranks unknown.
- bare ``python script.py`` / ``python -m module``: one rank, except (rules.md
  Settled questions) when its linked config is Lightning or NeMo, when it
  runs Ray, or on TPU: unknown. Background (``&``) or looped pythons: unknown.

A count holding ``$(VAR)``/``${VAR}`` is unknown, never guessed.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any, Callable

from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.model.kubernetes import Container, PodTemplate, Workload
from mlcost_lint.model.project import Launch, Project
from mlcost_lint.model.training import Framework, TrainingConfig
from mlcost_lint.link.configs import ConfigIndex, path_parts
from mlcost_lint.link.shell import Program, SimpleCommand, Word, program_of, word_location

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_INT = re.compile(r"^\d+$")

# Options that take a value, per launcher (names normalised: lower case, "_" -> "-").
_TORCHRUN_VALUES = frozenset({
    "--nnodes", "--nproc-per-node", "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf",
    "--max-restarts", "--monitor-interval", "--start-method", "--role", "--node-rank", "--master-addr",
    "--master-port", "--local-addr", "--log-dir", "-r", "--redirects", "-t", "--tee", "--local-ranks-filter",
    "--logs-specs", "--event-log-handler", "--numa-binding", "--signals-to-handle", "--rdzv_timeout",
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
_PYTHON_VALUES = frozenset({"-X", "-W", "-Q"})
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
_UNKNOWN_LAUNCHERS = {"mpirun": "mpirun", "mpiexec": "mpirun", "horovodrun": "horovodrun", "srun": "srun",
                      "ray": "ray", "lightning": "lightning", "fabric": "lightning", "colossalai": "colossalai",
                      "llamafactory-cli": "llamafactory-cli", "nemo": "nemo"}
_NOT_LAUNCHES = frozenset({"sleep", "tail", "echo", "cd", "cat", "ls", "pip", "pip3", "mkdir", "cp", "mv", "rm",
                           "set", "export", "source", ".", "nvidia-smi", "true", "wait", "env", "printenv",
                           "chmod", "chown", "tee", "grep", "sed", "awk", "apt-get", "apt", "curl", "wget",
                           "git", "huggingface-cli", "aws", "gsutil", "gcloud", "az", "test", "[", "trap"})


def norm_flag(text: str) -> str:
    if text.startswith("--"):
        return "--" + text[2:].lower().replace("_", "-")
    return text


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
    distributed: bool = True          # a multi-process launcher (not a bare python)
    config: TrainingConfig | None = None


def _display(flag: Word, value: Word | None) -> str:
    return flag.text if value is None or value is flag else f"{flag.text} {value.text}"


def _torchrun(name: str, first: Word, words: list[Word]) -> Found:
    opts = parse_options(words, lambda n: n in _TORCHRUN_VALUES or n == "--nproc-per-node")
    nodes: Maybe[int] | None = None
    if opts.has("--standalone"):
        nodes = 1
    hit = opts.get("--nnodes")
    if hit is not None:
        text = hit[0] or ""
        nodes = count_of(text) if ":" not in text else (
            count_of(text.split(":")[0]) if text.split(":")[0] == text.split(":")[1] else UNKNOWN)
    got = opts.get("--nproc-per-node")
    if got is None:
        return Found("torchrun", 1, nodes, first, f"{name} (default --nproc_per_node 1)")
    text, word = got
    flag_word = opts.values["--nproc-per-node"][1]
    shown = f"{name} {_display(flag_word, word if word is not flag_word else None)}"
    value = (text or "").strip().lower()
    if value in ("gpu", "auto"):
        return Found("torchrun", UNKNOWN, nodes, word, shown, all_visible_gpus=True)
    count = count_of(text)
    if count is UNKNOWN:
        return Found("torchrun", UNKNOWN, nodes, word, shown,
                     unknown_reason="the count is set at run time" if "$" in (text or "") else "not a GPU count")
    return Found("torchrun", count, nodes, word, shown)


def _accelerate(name: str, first: Word, words: list[Word], resolve: Callable[[Word], TrainingConfig | None]) -> Found:
    def takes(n: str) -> bool:
        return n not in _ACCELERATE_FLAGS
    opts = parse_options(words, takes)
    forces_cpu = opts.values["--cpu"][1] if opts.has("--cpu") else None
    config = None
    config_hit = opts.get("--config-file")
    if config_hit is not None and config_hit[0]:
        config = resolve(config_hit[1])
    machines: Maybe[int] | None = None
    machines_hit = opts.get("--num-machines")
    if machines_hit is not None:
        machines = count_of(machines_hit[0])
    elif config is not None and config.settings.num_machines.value is not None:
        machines = config.settings.num_machines.value
    total_hit = opts.get("--num-processes")
    ranks_location = None
    if total_hit is not None:
        total = count_of(total_hit[0])
        flag_word = opts.values["--num-processes"][1]
        evidence = total_hit[1]
        shown = f"{name} {_display(flag_word, evidence if evidence is not flag_word else None)}"
        if machines_hit is not None:
            shown += f" {_display(opts.values['--num-machines'][1], machines_hit[1] if machines_hit[1] is not opts.values['--num-machines'][1] else None)}"
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
                 unknown_reason="" if ranks is not UNKNOWN else "the count is set at run time")


def _deepspeed(name: str, first: Word, words: list[Word]) -> Found:
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
    flag = opts.values["--num-gpus" if opts.has("--num-gpus") else "--num-accelerators"][1]
    shown = f"{name} {_display(flag, word if word is not flag else None)}"
    count = count_of(text)
    return Found("deepspeed", count, nodes, word, shown,
                 unknown_reason="" if count is not UNKNOWN else "the count is set at run time")


def _tune(first: Word, words: list[Word]) -> Found | None:
    if not words or words[0].text != "run":
        return None
    opts = parse_options(words[1:], lambda n: n in _TORCHRUN_VALUES)
    if opts.has("--nproc-per-node") or opts.has("--nnodes"):
        found = _torchrun("tune run", first, words[1:])
        found.launcher = "tune"
        return found
    return Found("tune", 1, None, first, "tune run (no --nproc_per_node: one process)", distributed=False)


def _composer(first: Word, words: list[Word]) -> Found:
    opts = parse_options(words, lambda n: n in ("-n", "--nproc", "--world-size", "--base-rank", "--node-rank",
                                                "--master-addr", "--master-port", "--stdout", "--stderr"))
    got = opts.get("-n") or opts.get("--nproc")
    if got is None:
        return Found("composer", UNKNOWN, None, first, "composer (no -n: every visible GPU)", all_visible_gpus=True)
    count = count_of(got[0])
    flag = opts.values["-n" if opts.has("-n") else "--nproc"][1]
    return Found("composer", count, None, got[1], f"composer {_display(flag, got[1] if got[1] is not flag else None)}",
                 unknown_reason="" if count is not UNKNOWN else "the count is set at run time")


def _python(first: Word, words: list[Word], resolve: Callable[[Word], TrainingConfig | None]) -> Found | None:
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
            module_word = Word(flag[2:], words[i].source, words[i].in_script)
            i += 1
            break
        i += 2 if flag in _PYTHON_VALUES else 1
    opts = Options({}, words[i:], {})
    name = posixpath.basename(first.text)
    module_hit = (module_word.text, module_word) if module_word is not None else None
    if module_hit is not None:
        module = module_hit[0] or ""
        rest = opts.rest
        launcher = _PYTHON_LAUNCH_MODULES.get(module)
        shown = f"{name} -m {module}"
        if launcher == "torchrun":
            return _torchrun(shown, first, rest)
        if launcher == "accelerate":
            return _accelerate(shown, first, rest, resolve)
        if launcher == "deepspeed":
            return _deepspeed(shown, first, rest)
        if module.startswith(_NOT_TRAINING_MODULES) or not module:
            return None
        if module.split(".")[0] in ("ray", "lightning", "nemo") or "launch" in module or "distributed" in module:
            return Found(module.split(".")[0], UNKNOWN, None, module_hit[1], shown,
                         unknown_reason=f"{module} starts its own processes")
        return Found("python", 1, None, module_hit[1], shown, distributed=False)
    if not opts.rest:
        return None
    script = opts.rest[0]
    if script.has_expansion or not script.text.endswith(".py"):
        return None if not script.text.endswith(".py") else Found(
            "python", 1, None, script, f"{name} {script.text}", distributed=False)
    return Found("python", 1, None, script, f"{name} {script.text}", distributed=False)


def parse_command(command: SimpleCommand, resolve: Callable[[Word], TrainingConfig | None]) -> Found | None:
    words = command.words
    first = words[0]
    name = posixpath.basename(first.text)
    rest = words[1:]
    if name == "torchrun":
        return _torchrun("torchrun", first, rest)
    if name == "accelerate" and rest and rest[0].text == "launch":
        return _accelerate("accelerate launch", first, rest[1:], resolve)
    if name == "deepspeed":
        return _deepspeed("deepspeed", first, rest)
    if name == "tune":
        return _tune(first, rest)
    if name == "composer":
        return _composer(first, rest)
    if name == "axolotl" and rest and rest[0].text in ("train", "fine-tune", "finetune"):
        return Found("axolotl", UNKNOWN, None, first, f"axolotl {rest[0].text}",
                     unknown_reason="axolotl picks its launcher and process count itself")
    if name in _UNKNOWN_LAUNCHERS:
        if name == "ray" and not (rest and rest[0].text in ("start", "job", "submit")):
            return None
        return Found(_UNKNOWN_LAUNCHERS[name], UNKNOWN, None, first, name,
                     unknown_reason=f"{name} decides the process count")
    if _PYTHON.match(name):
        return _python(first, rest, resolve)
    return None


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


def launch_of(workload: Workload, template: PodTemplate, container: Container, program: Program,
              linked: list[TrainingConfig], resolve: Callable[[Word], TrainingConfig | None]) -> Launch | None:
    found: list[tuple[SimpleCommand, Found]] = []
    runs_ray = workload.kind.startswith("Ray")
    for command in program.commands:
        if not command.words or command.name in _NOT_LAUNCHES:
            continue
        hit = parse_command(command, resolve)
        if hit is not None:
            found.append((command, hit))
            runs_ray = runs_ray or hit.launcher == "ray"
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
    if chosen.all_visible_gpus:
        count = container.gpu_count()
        ranks = count if count is not UNKNOWN and count > 0 else UNKNOWN
    nodes = chosen.nodes
    if chosen.config is not None and nodes is None:
        machines = chosen.config.settings.num_machines.value
        nodes = machines if machines is not None else None
    return Launch(
        workload=workload, template=template, container=container, launcher=chosen.launcher,
        ranks_per_node=ranks, nodes=nodes, evidence=word_location(container, chosen.evidence),
        ranks_text=chosen.ranks_text, ranks_location=chosen.ranks_location,
        all_visible_gpus=chosen.all_visible_gpus,
        forces_cpu=word_location(container, chosen.forces_cpu) if chosen.forces_cpu else None,
        unknown_reason=reason if ranks is UNKNOWN else "",
    )


def link_launches(project: Project, index: ConfigIndex) -> None:
    by_container: dict[int, list[TrainingConfig]] = {}
    for link in project.links.configs:
        by_container.setdefault(id(link.container), []).append(link.config)

    def resolver(container_configs: list[TrainingConfig]) -> Callable[[Word], TrainingConfig | None]:
        def resolve(word: Word) -> TrainingConfig | None:
            parts = path_parts(word.text.split("=", 1)[1] if word.text.startswith("--") and "=" in word.text
                               else word.text)
            found = index.resolve(parts)
            candidates: list[Any] = list(found[0]) if found else []
            if not candidates and parts:
                # A mounted ConfigMap config linked to this container, by file name.
                candidates = [c for c in container_configs if c.embedded_key == parts[-1]]
            accel = [c for c in candidates if c.framework is Framework.ACCELERATE]
            return accel[0] if len(accel) == 1 else None
        return resolve

    for workload in project.kubernetes.workloads:
        for template in workload.templates:
            for container in template.containers:
                linked = by_container.get(id(container), [])
                launch = launch_of(workload, template, container, program_of(container), linked, resolver(linked))
                if launch is not None:
                    project.links.launches.append(launch)
