"""``srun`` inside a Slurm batch script: the ranks it starts on each node.

srun starts one copy of its command per task; in a batch job it inherits
the job's tasks (sbatch's default is one task per node), and its own
``--ntasks-per-node`` / ``-n`` with ``-N`` override them. So ranks per node
= tasks per node x the ranks each copy starts: ``srun torchrun
--nproc_per_node=4`` with one task per node is 4; ``srun python train.py``
with ``--ntasks-per-node=8`` is 8. What srun runs through a shell (``srun
bash -c '...'``) or a script not in the scan is unknown; a command that is
no launcher (``srun hostname``) is not a launch. Outside a batch job (a
container that calls srun) the count stays unknown, as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from mlcost_lint.model.core import UNKNOWN, Maybe
from mlcost_lint.link.shell import SimpleCommand, Word, basename
from mlcost_lint.parse.slurm import _VALUE_OPTIONS, SHORT_OPTIONS

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})
# srun's own options that take a value (besides the ones it shares with sbatch).
_SRUN_VALUES = _VALUE_OPTIONS | frozenset({
    "--mpi", "--cpu-bind", "--mem-bind", "--jobid", "--het-group", "--container-image", "--container-mounts",
    "--container-workdir", "--container-name", "--container-env", "--kill-on-bad-exit", "--task-prolog",
    "--task-epilog", "--prolog", "--epilog", "--slurmd-debug", "--bcast", "--compress", "--multi-prog",
    "--send-libs", "--accel-bind", "--cpus-per-task", "--relative", "--restart-on-reboot", "--step-id",
})
# Short srun options that are flags (sbatch's table says which others take a value).
_SRUN_SHORT_FLAGS = frozenset({"-l", "-u", "-k", "-K", "-X", "-Z", "-E", "-H", "-O", "-Q", "-s", "-v", "-h",
                               "-V", "-I"})


def _split(words: list[Word]) -> tuple[dict[str, str | None], list[Word]]:
    """srun's options (long names) and the command it runs."""
    options: dict[str, str | None] = {}
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if eq:
                options[name] = value
            elif name in _SRUN_VALUES and i + 1 < len(words):
                options[name] = words[i + 1].text
                i += 1
            else:
                options[name] = None
        else:
            short = text[:2]
            if short in _SRUN_SHORT_FLAGS:
                options[short] = None
            else:
                long_name = SHORT_OPTIONS.get(short, (short, True))[0]
                if len(text) > 2:
                    options[long_name] = text[2:].removeprefix("=")
                elif i + 1 < len(words):
                    options[long_name] = words[i + 1].text
                    i += 1
        i += 1
    return options, words[i:]


def _count(text: str | None) -> Maybe[int]:
    text = (text or "").strip()
    return int(text) if text.isdigit() and len(text) <= 9 else UNKNOWN


def _tasks_per_node(options: dict[str, str | None], job: Any) -> Maybe[int]:
    if "--ntasks-per-node" in options:
        return _count(options["--ntasks-per-node"])
    if "--ntasks" in options:
        total = _count(options["--ntasks"])
        nodes = _count(options["--nodes"]) if "--nodes" in options else job.nodes
        if total is UNKNOWN or nodes is UNKNOWN or not nodes or total % nodes:
            return UNKNOWN
        return total // nodes
    return job.tasks_per_node


def srun_found(command: SimpleCommand, ctx: Any, parse: Callable[[SimpleCommand, Any], Any],
               found_type: type) -> Any:
    """What ``srun ...`` starts per node in a batch job (a launcher ``Found``),
    or None when it runs no launcher."""
    first = command.words[0]
    job = ctx.workload.batch
    options, inner = _split(command.words[1:])
    if not inner:
        return None
    name = basename(inner[0].text)
    if name in _SHELLS or inner[0].text.endswith(".sh") or inner[0].text.startswith(("./", "../")):
        return found_type("srun", UNKNOWN, None, first, f"srun {inner[0].shown}",
                          unknown_reason="srun runs a shell command or script that is not read")
    hit = parse(SimpleCommand(inner, command.assignments, command.background, command.in_loop), ctx)
    if hit is None:
        return None
    tasks = _tasks_per_node(options, job)
    prefix = f"srun ({tasks} task{'s' if tasks != 1 else ''} per node)" if tasks is not UNKNOWN else "srun"
    shown = f"{prefix} {hit.ranks_text}"
    if tasks is UNKNOWN:
        return replace(hit, ranks=UNKNOWN, ranks_text=shown, unknown_reason="srun's tasks per node are unknown")
    if hit.all_visible_gpus or hit.ranks is UNKNOWN:
        return replace(hit, ranks_text=shown, distributed=True)
    return replace(hit, ranks=hit.ranks * tasks, ranks_text=shown, distributed=True)


# Commands in a batch script that start no GPU program (setup, logging, file
# handling, cluster queries), besides the ones the launcher already skips.
_SCRIPT_UTILITIES = frozenset({
    "module", "ml", "conda", "mamba", "micromamba", "activate", "deactivate", "ulimit", "shift", "exit",
    "return", "false", "printf", "date", "hostname", "scontrol", "squeue", "sacct", "sinfo", "find", "basename",
    "dirname", "head", "cut", "sort", "uniq", "wc", "touch", "ln", "pwd", "whoami", "id", "realpath", "readlink",
    "mktemp", "xargs", "tr", "jq", "yq", "python-config", "nproc", "free", "df", "du", "uname", "lscpu",
    "ibstat", "ibv_devinfo", "rsync", "tar", "zip", "unzip", "gzip", "eval", "exec", "time", "let", "[[",
    "seq", "which", "type", "hash", "alias", "cmp", "diff", "stat", "kill", "pkill", "nvcc", "ninja", "make",
    "pushd", "popd", "sbatch", "scancel",
})
# Words the splitter leaves at the start of a command inside control flow.
_KEYWORDS = frozenset({"else", "elif", "fi", "then", "do", "done", "esac", "in", "function", "{", "}", "!", ";;"})


def other_program(steps: Any, chosen: Any) -> str | None:
    """In a batch script whose launch is a bare ``python`` (one rank), the
    first other program the script runs that the launcher cannot read
    (``lighteval vllm ...``): it may be what uses the GPUs, so the rank
    count is not the python's. None when the script runs nothing else."""
    from mlcost_lint.link.launch_commands import _NOT_LAUNCHES
    from mlcost_lint.link.launch_words import _PYTHON

    for step in steps.steps:
        name = step.command.name
        if name in _NOT_LAUNCHES or name in _SCRIPT_UTILITIES or name in _KEYWORDS or _PYTHON.match(name) \
                or "=" in name or name.endswith(")") or name.startswith(("$", "-")):
            continue
        if name == "srun":
            continue     # an srun the launcher read; one it did not read made the count unknown already
        return name
    return None


def _queues(project: Any, resource_type: str) -> dict[str, list]:
    """The ParallelCluster compute resources by queue name, in resource
    order: built once for every Slurm job, not a scan of every resource per
    job (jobs times resources, which grew with the square of the tree)."""
    resources = project.terraform.resources

    def build() -> dict[str, list]:
        out: dict[str, list] = {}
        for res in resources:
            if res.type == resource_type:
                out.setdefault(res.name.split("/", 1)[0], []).append(res)
        return out

    return project.links.stamped("slurm_queues", (id(resources), len(resources)), build)


def partition_link(project: Any, workload: Any) -> Any:
    """A Slurm job's ``--partition`` joined to the ParallelCluster queue of
    that name in the scan: the queue's compute resource is the job's node
    pool when the queue has one (or all of its compute resources share one
    instance type). A list of partitions, an unknown name, a queue of mixed
    types or queues of that name in several cluster configs link nothing."""
    from mlcost_lint.link.pools import LinkResult
    from mlcost_lint.model.node_pools import node_pools
    from mlcost_lint.model.parallelcluster import RESOURCE_TYPE

    job = workload.batch
    none = LinkResult(None, "", None)
    name = (job.partition or "").strip()
    if not name or "," in name or "$" in name or job.partition_at is None:
        return none
    pools = [p for res in _queues(project, RESOURCE_TYPE).get(name, ()) for p in node_pools(res)]
    if not pools:
        return none
    types = {tuple(p.instance_types) if isinstance(p.instance_types, list) else None for p in pools}
    if len(types) != 1 or None in types:
        return none
    if len({p.resource.location.path for p in pools}) != 1:
        return none         # queues of that name in several cluster configs: which cluster is unknown
    pool = pools[0]
    pool.node_types = list(pool.instance_types)     # Slurm schedules the job onto exactly these types
    how = f"{job.partition_at.written} = ParallelCluster queue {name} ({pool.resource.address})"
    return LinkResult(pool, how, job.partition_at.location)
