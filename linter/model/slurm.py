"""A Slurm batch script (:class:`mlcost_lint.parse.slurm.SlurmScript`) as a
workload of the project model.

One job is one :class:`Workload` (kind "Slurm job", as messages name it) with one pod template
per node (``replicas`` = ``--nodes``) holding one container: its GPU request
is the GPUs per node, its program is the script (read by the shell splitter,
never run), its env the variables the script exports at top level. The
directives rules name are kept in :class:`BatchJob`.

GPUs per node, in sbatch's terms (sbatch(1)):

- ``--gpus-per-node=[type:]N``;
- ``--gres=gpu[:type][:N]`` (per node; no count is 1; other gres ignored);
- ``--gpus-per-task=[type:]N`` x tasks per node;
- ``--gpus=[type:]N`` (the whole job) / nodes, when it divides.

Tasks per node: ``--ntasks-per-node``, else ``--ntasks`` / ``--nodes``, else
one (sbatch's default: one task per node). Nodes: ``--nodes`` (``2-4`` is
unknown unless both ends agree), else one when no ``--ntasks`` is written.
Anything holding ``$`` or not a number is unknown; nothing is guessed.
"""

from __future__ import annotations

import posixpath
import re

from mlcost_lint.link.shell import split_script
from mlcost_lint.model.batch import BatchJob, Directive
from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.model.kubernetes import Container, EnvVar, PodTemplate, Workload
from mlcost_lint.parse.document import Document
from mlcost_lint.parse.slurm import SbatchOption, SlurmScript

GPU_RESOURCE = "gres/gpu"
_TEMPLATE = ("template",)
_CONTAINER = ("template", "spec", "containers", 0)
_GPU_PATH = _CONTAINER + ("resources", "limits", GPU_RESOURCE)
_COUNT = re.compile(r"^\d{1,9}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OPENERS = frozenset({"if", "for", "while", "until", "case", "select", "{"})
_CLOSERS = frozenset({"fi", "done", "esac", "}"})


def _count(text: str | None) -> Maybe[int]:
    if text is None:
        return UNKNOWN
    text = text.strip()
    return int(text) if _COUNT.match(text) else UNKNOWN


def _typed_count(text: str) -> Maybe[int]:
    """``8``, ``a100:8`` -> 8."""
    return _count(text.rsplit(":", 1)[-1])


def gres_gpus(value: str) -> Maybe[int] | None:
    """GPUs per node in a ``--gres`` value; None when it asks for none."""
    if "$" in value or "`" in value:
        return UNKNOWN
    found: Maybe[int] | None = None
    for entry in value.split(","):
        entry = re.sub(r"\(.*?\)", "", entry.strip())
        parts = entry.split(":")
        name = parts[0].removeprefix("gres/")
        if name != "gpu":
            continue
        if len(parts) == 1:
            count: Maybe[int] = 1
        elif _COUNT.match(parts[-1]):
            count = int(parts[-1])
        elif len(parts) == 2:
            count = 1          # gpu:TYPE
        else:
            count = UNKNOWN
        found = count if found is None else UNKNOWN
    return found


def time_seconds(value: str) -> tuple[Maybe[int], bool]:
    """(seconds, unbounded) of a ``--time`` value: ``minutes``,
    ``minutes:seconds``, ``hours:minutes:seconds``, ``days-hours``,
    ``days-hours:minutes``, ``days-hours:minutes:seconds``. ``UNLIMITED``,
    ``INFINITE`` and 0 mean no limit."""
    text = value.strip()
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return 0, True
    days = 0
    if "-" in text:
        head, _, text = text.partition("-")
        if not _COUNT.match(head):
            return UNKNOWN, False
        days = int(head)
        parts = text.split(":")
        if not all(_COUNT.match(p) for p in parts) or len(parts) > 3:
            return UNKNOWN, False
        hms = [int(p) for p in parts] + [0] * (3 - len(parts))
        seconds = days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2]
    else:
        parts = text.split(":")
        if not all(_COUNT.match(p) for p in parts) or len(parts) > 3:
            return UNKNOWN, False
        nums = [int(p) for p in parts]
        if len(nums) == 1:
            seconds = nums[0] * 60
        elif len(nums) == 2:
            seconds = nums[0] * 60 + nums[1]
        else:
            seconds = nums[0] * 3600 + nums[1] * 60 + nums[2]
    return seconds, seconds == 0


def _nodes(script: SlurmScript) -> Maybe[int]:
    opt = script.last("--nodes")
    if opt is None:
        tasks = script.last("--ntasks")
        # One task cannot span nodes; more may be spread over any number.
        return 1 if tasks is None or _count(tasks.value) == 1 else UNKNOWN
    value = (opt.value or "").strip()
    if "-" in value:
        low, _, high = value.partition("-")
        return _count(low) if low == high else UNKNOWN
    return _count(value)


def _tasks_per_node(script: SlurmScript, nodes: Maybe[int]) -> Maybe[int]:
    opt = script.last("--ntasks-per-node")
    if opt is not None:
        return _count(opt.value)
    total = script.last("--ntasks")
    if total is None:
        return 1
    count = _count(total.value)
    if count is UNKNOWN or nodes is UNKNOWN or nodes == 0 or count % nodes:
        return UNKNOWN
    return count // nodes


def _gpus(script: SlurmScript, nodes: Maybe[int], tasks: Maybe[int]
          ) -> tuple[Maybe[int] | None, SbatchOption | None]:
    opt = script.last("--gpus-per-node")
    if opt is not None:
        return _typed_count(opt.value or ""), opt
    opt = script.last("--gres")
    if opt is not None and opt.value is not None:
        count = gres_gpus(opt.value)
        if count is not None:
            return count, opt
    opt = script.last("--gpus-per-task")
    if opt is not None:
        per_task = _typed_count(opt.value or "")
        if per_task is UNKNOWN or tasks is UNKNOWN:
            return UNKNOWN, opt
        return per_task * tasks, opt
    opt = script.last("--gpus")
    if opt is not None:
        total = _typed_count(opt.value or "")
        if total is UNKNOWN or nodes is UNKNOWN or nodes == 0 or total % nodes:
            return UNKNOWN, opt
        return total // nodes, opt
    return None, None


def exported_vars(text: str, path: str) -> dict[str, EnvVar]:
    """Variables the script exports outside any if/loop/case/function body:
    ``export NAME=value``, ``declare -x NAME=value`` and ``NAME=value`` then
    ``export NAME``, and every assignment between ``set -a`` (``set -o
    allexport``) and ``set +a``. A value holding an expansion is unknown."""
    starts: list[int] = []
    tokens, _ok = split_script(text, starts)
    lines = text.split("\n")
    depth = 0
    assigned: dict[str, tuple[str | None, int]] = {}
    out: dict[str, EnvVar] = {}
    command: list[tuple[str, int]] = []
    allexport = False

    def located(name: str, line: int) -> Location:
        raw = lines[line] if 0 <= line < len(lines) else ""
        m = re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?=[=\s]|$)", raw)
        return Location(path, line + 1, (m.start() + 1) if m else 1)

    def value_of(raw: str) -> str | None:
        return None if ("$" in raw or "`" in raw) else raw

    def end() -> None:
        nonlocal depth, command, allexport
        words = command
        command = []
        while words:
            first = words[0][0]
            if first in _CLOSERS:
                depth = max(depth - 1, 0)
                words = words[1:]
            elif first in ("then", "do", "else", "elif", "in"):
                words = words[1:]
            else:
                break
        if not words:
            return
        first = words[0][0]
        if first in _OPENERS or first == "function" or first.endswith("()") or \
                (len(words) > 1 and words[1][0] in ("()", "(")):
            depth += 1
            if words[-1][0] in _CLOSERS or (first == "{" and any(w == "}" for w, _ in words)):
                depth = max(depth - 1, 0)
            return
        if depth:
            return
        if first == "set":
            allexport = _allexport(words[1:], allexport)
            return
        exporting = first == "export" or (first in ("declare", "typeset") and
                                          any(w.startswith("-") and "x" in w for w, _ in words[1:]))
        if exporting:
            if any(w.startswith("-") and "n" in w for w, _ in words[1:]):
                return      # export -n: un-exports
            for word, line in words[1:]:
                if word.startswith("-"):
                    continue
                name, eq, raw = word.partition("=")
                if not _NAME.match(name):
                    continue
                if eq:
                    value = value_of(raw)
                    assigned[name] = (value, line)
                elif name in assigned:
                    value = assigned[name][0]
                else:
                    continue
                out[name] = EnvVar(name, value if value is not None else UNKNOWN, located(name, line))
            return
        for word, line in words:
            name, eq, raw = word.partition("=")
            if not eq or not _NAME.match(name):
                break
            assigned[name] = (value_of(raw), line)
            if name in out or allexport:
                out[name] = EnvVar(name, assigned[name][0] if assigned[name][0] is not None else UNKNOWN,
                                   located(name, line))

    for token, line in zip(tokens, starts):
        if token is None or token == "&":
            end()
        else:
            command.append((token, line))
    end()
    return out


def _allexport(words: list[tuple[str, int]], current: bool) -> bool:
    """``set`` options: ``-a``/``-o allexport`` turn export-all on, ``+a``/
    ``+o allexport`` off (combined flags such as ``-euxa`` count)."""
    i = 0
    while i < len(words):
        word = words[i][0]
        if word in ("-o", "+o") and i + 1 < len(words):
            if words[i + 1][0] == "allexport":
                current = word == "-o"
            i += 2
            continue
        if len(word) > 1 and word[0] in "-+" and word[1:].isalpha() and "a" in word[1:]:
            current = word[0] == "-"
        elif word == "--" or not word.startswith(("-", "+")):
            break
        i += 1
    return current


def _directive(opt: SbatchOption | None, path: str) -> Directive | None:
    if opt is None:
        return None
    return Directive(f"#SBATCH {opt.written}", Location(path, opt.line, opt.column))


def build_slurm_job(script: SlurmScript, path: str) -> Workload:
    nodes = _nodes(script)
    tasks = _tasks_per_node(script, nodes)
    gpus, gpu_opt = _gpus(script, nodes, tasks)
    first = Location(path, script.first_line, 1)
    time_opt = script.last("--time")
    time_limit: Maybe[int] | None = None
    unbounded = False
    if time_opt is not None:
        time_limit, unbounded = time_seconds(time_opt.value or "") if "$" not in (time_opt.value or "$") \
            else (UNKNOWN, False)
    part = script.last("--partition")
    name_opt = script.last("--job-name")
    name = (name_opt.value or "").strip() if name_opt is not None else ""
    name = name or posixpath.basename(path)
    batch = BatchJob(
        scheduler="slurm", label="Slurm job", name=name, path=path, header=first, directive_prefix="#SBATCH",
        nodes=nodes, tasks_per_node=tasks, gpus_per_node=gpus, gpus=_directive(gpu_opt, path),
        time_limit=time_limit, time=_directive(time_opt, path), time_unbounded=unbounded,
        partition=part.value if part is not None else None, partition_at=_directive(part, path),
    )
    positions = {(): (first.line, 1), _TEMPLATE: (first.line, 1), _TEMPLATE + ("spec",): (first.line, 1),
                 _CONTAINER: (first.line, 1)}
    if gpu_opt is not None:
        positions[_GPU_PATH] = (gpu_opt.line, gpu_opt.column)
    for opt in script.options:
        positions.setdefault(("sbatch", opt.name), (opt.line, opt.column))
    document = Document(path=path, index=0, data={"sbatch": {o.name: o.value for o in script.options}},
                        positions=positions, start_line=first.line, end_line=max(script.header_end, 1))
    text = script.text
    # program_of_script numbers the lines of a multi-line script from origin.line + 1.
    leading = len(text) - len(text.lstrip("\n"))
    origin = Location(path, 0 if "\n" in text.strip("\n") else 1 + leading, 1)
    container = Container(document, _CONTAINER, name="script", env=exported_vars(text, path),
                          script=(text, origin, ("script", 0), 1))
    if gpus is not None:
        container.limits[GPU_RESOURCE] = gpus
    template = PodTemplate(document, _TEMPLATE, spec_path=_TEMPLATE + ("spec",), replicas=nodes,
                           containers=[container])
    return Workload(document, (), kind="Slurm job", api_version="slurm", name=name, templates=[template],
                    batch=batch)
