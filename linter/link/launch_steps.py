"""The steps of a container's program: its simple commands, each with the
scope its variables resolve in (``Step``, ``steps_of``), with a script it
runs (``bash x.sh``, ``./x.sh``) read in place when a ConfigMap in the scan
mounts it, and listed as unread otherwise.
"""

from __future__ import annotations

import posixpath
from dataclasses import field

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location
from mlcost_lint.model.absent import is_absent, record_miss
from mlcost_lint.model.kubernetes import Container, PodTemplate, Workload
from mlcost_lint.model.project import Project
from mlcost_lint.link.configs import config_maps_named, mounted_files
from mlcost_lint.link.shell import _SHELLS, Program, SimpleCommand, Word, program_of_script
from mlcost_lint.link.launch_words import _PET_INJECTING_KINDS, Scope, expand_word

MAX_SCRIPT_DEPTH = 3


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
        if is_absent(cm):
            record_miss(project.absent, cm.address, [cm.path])
            continue
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


class ExpandedSteps:
    """A container's steps and unread scripts (steps_of) and each step's
    command with its words expanded in its scope (expand_word), expanded
    when first asked for."""

    __slots__ = ("steps", "unread_scripts", "_expanded")

    def __init__(self, steps: list[Step], unread_scripts: list[Word],
                 expanded: list[SimpleCommand | None] | None = None) -> None:
        self.steps = steps
        self.unread_scripts = unread_scripts
        self._expanded = expanded if expanded is not None else [None] * len(steps)

    @classmethod
    def of(cls, steps: Steps) -> "ExpandedSteps":
        return cls(steps.steps, steps.unread_scripts)

    def expanded(self, i: int) -> SimpleCommand:
        command = self._expanded[i]
        if command is None:
            step = self.steps[i]
            written = step.command
            command = self._expanded[i] = SimpleCommand([expand_word(w, step.scope) for w in written.words],
                                                        written.assignments, written.background, written.in_loop)
        return command

    def plus(self, extra: Steps) -> "ExpandedSteps":
        """These steps, then ``extra``'s (a new object: this one may be shared)."""
        return ExpandedSteps(self.steps + extra.steps, self.unread_scripts + extra.unread_scripts,
                             self._expanded + [None] * len(extra.steps))


def container_steps(program: Program, container: Container, project: Project | None, workload: Workload,
                    template: PodTemplate) -> ExpandedSteps:
    """steps_of(program, ...) with its expansions, made once per container
    and program in a link run (kept in ``project.links``): the launches and
    the launch-line settings both read every container's (on the real
    corpus 667 containers, 25,000 words expanded in each pass). Nothing the
    steps are made of changes while links are made: the program is the
    container's frozen one, the scripts come from ConfigMaps."""
    if project is None:
        return ExpandedSteps.of(steps_of(program, container, project, workload, template))
    made: dict[int, tuple] = project.links.stamped("container steps", (), dict)
    hit = made.get(id(container))
    if hit is not None and hit[0] is container and hit[1] is program and hit[2] is workload and hit[3] is template:
        return hit[4]
    steps = ExpandedSteps.of(steps_of(program, container, project, workload, template))
    made[id(container)] = (container, program, workload, template, steps)
    return steps
