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

The parts: :mod:`.launch_words` (variables and options of shell words),
:mod:`.launch_commands` (what one command launches, per launcher),
:mod:`.launch_mpi` (mpirun options), :mod:`.launch_steps` (the commands a
container runs, mounted scripts read in place); this module combines them
into a container's ``Launch`` (:func:`launch_of`, :func:`link_launches`),
with the RayJob entrypoint and the MPIJob Worker ranks.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.model.kubernetes import Container, PodTemplate, Workload
from mlcost_lint.model.project import Launch, Project
from mlcost_lint.model.training import Framework, TrainingConfig
from mlcost_lint.link.configs import ConfigIndex, path_parts
from mlcost_lint.link.shell import (
    Program, SimpleCommand, Word, program_of, program_of_script, word_location,
)
from mlcost_lint.link.launch_commands import _NOT_LAUNCHES, Context, Found, parse_command
from mlcost_lint.link.launch_steps import ExpandedSteps, Steps, container_steps, steps_of

# RayJob fields that move the entrypoint off the head node (Ray Jobs docs).
_RAY_ENTRYPOINT_RESOURCES = ("entrypointNumCpus", "entrypointNumGpus", "entrypointMemory", "entrypointResources")


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


def _found_in(steps: ExpandedSteps, workload: Workload, resolve: Callable[[Word], TrainingConfig | None],
              skip: Callable[[SimpleCommand], bool] = lambda c: False) -> list[tuple[SimpleCommand, Found]]:
    found: list[tuple[SimpleCommand, Found]] = []
    for i, step in enumerate(steps.steps):
        command = step.command
        if command.name in _NOT_LAUNCHES or skip(command):
            continue
        expanded = steps.expanded(i)
        hit = parse_command(expanded, Context(workload, step.scope, resolve))
        if hit is not None:
            found.append((expanded, hit))
    return found


def launch_of(workload: Workload, template: PodTemplate, container: Container, program: Program,
              linked: list[TrainingConfig], resolve: Callable[[Word], TrainingConfig | None],
              project: Project | None = None, extra: Steps | None = None) -> Launch | None:
    steps = container_steps(program, container, project, workload, template)
    if extra is not None:
        steps = steps.plus(extra)
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
    steps = container_steps(program_of(container), container, project, workload, launcher)
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
