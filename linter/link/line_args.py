"""Trainer arguments written on a launch line are training settings.

``torchrun train.py --output_dir /ckpt --save_steps 100 --bf16`` sets
TrainingArguments the way a YAML file does; Hugging Face's HfArgumentParser
and TRL's TrlParser read ``--name value``, ``--name=value`` and
``--name-with-dashes``, and a bool as ``--flag`` or ``--flag true|false``.
The fields read, their kinds and which ones prove Trainer-style training
are the table ``catalogue/trainer_flags.yaml``.

One mechanism for every input with launch lines (Slurm scripts, SkyPilot
``run`` blocks, Kubernetes container commands, Azure ML ``command``, Vertex
container args), because they all join the model as workload containers:

- **A linked Trainer-style config** (Transformers/TRL or Axolotl, named on
  the line: ``--config sft.yaml``, a YAML/JSON positional): the flags on the
  line override the file's values (TrlParser; Axolotl's CLI overrides the
  same way). The config is re-read with the line's values in place, so the
  file's findings that the line fixes do not fire, and a setting the line
  writes is located at its flag. Only when every workload that runs the
  config passes the same flags (otherwise some run uses the file as it is).
- **No linked config**: a training entry point (python, torchrun,
  accelerate launch, deepspeed, srun of those) with at least one flag of
  the table is a Trainer config of its own, located at the line, linked to
  its container (so rules see the GPUs it runs on), and naming the
  ``--deepspeed`` config it passes. The TrainingArguments defaults (save
  every 500 steps, keep every checkpoint) apply only with a ``strong`` flag
  (one only Trainer scripts take, such as ``--per_device_train_batch_size``
  or ``--save_strategy``); the parser is not known (TRL or Transformers),
  so precision and logging defaults stay unknown ("script" dialect) and an
  fp32 finding needs ``--bf16 false``-style evidence on the line.

Only literal values count: a word the script sets at run time (``$VAR``
with no literal assignment) is unknown; an abbreviated flag (argparse
prefix matching: ``--save_total 2``) makes the settings it may mean unknown.
"""

from __future__ import annotations

import functools
import re
from dataclasses import field, replace
from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location
from mlcost_lint.model.kubernetes import Container, PodTemplate, Workload
from mlcost_lint.model.project import ConfigLink, Project
from mlcost_lint.model.training import Framework, TrainingConfig, TrainingSettings
from mlcost_lint.parse.document import Document, KeyPath
from mlcost_lint.link.configs import ConfigIndex, _word_paths
from mlcost_lint.link.shell import Word, basename, program_of, word_location

# Launchers whose program is a training script that may take Trainer flags.
_ENTRY_POINTS = frozenset({"python", "torchrun", "accelerate", "deepspeed"})
# Frameworks whose config a line's Trainer flags override.
_OVERRIDABLE = frozenset({Framework.TRANSFORMERS, Framework.AXOLOTL})
_BOOLS = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}
_LAUNCH_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_MIN_ABBREVIATION = 4        # shorter prefixes (--lo, --bf) are other scripts' options


@dataclass(frozen=True, slots=True)
class FlagSpec:
    kind: str               # "value" | "bool"
    strong: bool
    default_true: bool = False


@functools.lru_cache(maxsize=1)
def trainer_flags() -> dict[str, FlagSpec]:
    from mlcost_lint.catalogue import _load_yaml

    table = _load_yaml("trainer_flags.yaml")["fields"]
    return {name: FlagSpec(spec["kind"], spec.get("evidence") == "strong", bool(spec.get("default_true")))
            for name, spec in table.items()}


@dataclass(slots=True)
class LineArgs:
    """The Trainer flags of one launch line, as a config document would hold them."""

    values: dict[str, Any] = field(default_factory=dict)     # field -> raw value (str, or a bool)
    words: dict[str, Word] = field(default_factory=dict)     # field -> the flag word
    strong: bool = False

    def signature(self) -> tuple:
        return tuple(sorted((k, repr(v)) for k, v in self.values.items()))


def _runtime(text: str) -> str:
    """A value the shell sets at run time, in the ``${...}`` form the config
    readers already take as unknown."""
    return text if text.startswith("${") and text.endswith("}") else "${" + text.replace("}", "") + "}"


def _program_start(words: list[Word]) -> int | None:
    """Index of the first word of the training program's own arguments:
    after the ``.py`` script or the ``-m`` module."""
    for i, w in enumerate(words):
        text = w.text
        if text in ("-m", "--module") and i + 1 < len(words):
            return i + 2
        if text.startswith("-m") and len(text) > 2 and not text.startswith("--") and i > 0:
            return i + 1
        if text.endswith(".py") and not text.startswith("-"):
            return i + 1
    return None


def read_flags(words: list[Word]) -> LineArgs:
    """The table's flags among ``words`` (the program's arguments); the last
    of a repeated flag wins, as argparse does."""
    table = trainer_flags()
    out = LineArgs()
    i = 0
    while i < len(words):
        w = words[i]
        text = w.text
        i += 1
        if not text.startswith("--") or len(text) < 3:
            continue
        name, eq, value = text[2:].partition("=")
        name = name.replace("-", "_")
        negated = False
        if name not in table and name.startswith("no_") and table.get(name[3:], FlagSpec("", False)).default_true:
            name, negated = name[3:], True
        spec = table.get(name)
        if spec is None:
            matches = [k for k in table if k.startswith(name)] if len(name) >= _MIN_ABBREVIATION else []
            for k in matches:       # argparse may take it for one of these: unknown
                out.values[k] = _runtime(text)
                out.words[k] = w
            continue
        out.strong = out.strong or spec.strong
        if negated:
            out.values[name], out.words[name] = False, w
            continue
        if spec.kind == "bool":
            if not eq and i < len(words) and not words[i].text.startswith("-"):
                value, eq = words[i].text, "="
                i += 1
            if not eq:
                out.values[name] = True
            elif w.has_expansion or "$" in value or "`" in value:
                out.values[name] = _runtime(value)
            else:
                flag = _BOOLS.get(value.strip().lower())
                out.values[name] = flag if flag is not None else _runtime(value)
            out.words[name] = w
            continue
        if not eq:
            if i >= len(words) or words[i].text.startswith("--"):
                continue            # no value: argparse refuses the line
            value = words[i].text
            i += 1
        out.values[name] = _runtime(value) if ("$" in value or "`" in value) else value
        out.words[name] = w
    return out


# -- documents -------------------------------------------------------------

@dataclass(slots=True)
class LineDocument(Document):
    """A document whose keys written on a launch line are located there
    (the others where the file has them)."""

    located: dict[KeyPath, Location] = field(default_factory=dict)

    def location(self, key_path: KeyPath = ()) -> Location:
        hit = self.located.get(tuple(key_path))
        return hit if hit is not None else Document.location(self, key_path)


@dataclass(slots=True)
class TrainerLine:
    workload: Workload
    template: PodTemplate
    container: Container
    args: LineArgs
    at: Location              # the launcher word
    shown: str                # "torchrun train.py"
    named: list[TrainingConfig]       # Trainer-style configs named on the line
    others: list[TrainingConfig]      # other configs named on it (DeepSpeed, Accelerate)
    unresolved: bool                  # it names a config file that is not in the scan


def _lines_of(project: Project, workload: Workload, template: PodTemplate, container: Container,
              index: ConfigIndex) -> list[TrainerLine]:
    from mlcost_lint.link.launch_commands import Context, parse_command
    from mlcost_lint.link.launch_steps import container_steps

    out: list[TrainerLine] = []
    steps = container_steps(program_of(container), container, project, workload, template)
    for i, step in enumerate(steps.steps):
        if not step.command.words:
            continue
        expanded = steps.expanded(i)
        try:
            hit = parse_command(expanded, Context(workload, step.scope, lambda _w: None))
        except Exception:       # noqa: BLE001 - an odd command is no launch line
            hit = None
        if hit is None or hit.launcher not in _ENTRY_POINTS:
            continue
        start = _program_start(expanded.words)
        if start is None:
            continue
        args = read_flags(expanded.words[start:])
        named: list[TrainingConfig] = []
        others: list[TrainingConfig] = []
        unresolved = False
        deepspeed_word = args.words.get("deepspeed")
        for word, parts, _how in _word_paths(expanded.words):
            found = index.resolve(parts, workload.document.path)
            if found is None:
                # A --deepspeed path not in the scan is the line config's
                # reference (its precision is then unknown); anything else
                # may be the Trainer config itself.
                unresolved = unresolved or word is not deepspeed_word and \
                    not _value_of(expanded.words, deepspeed_word, word)
                continue
            for config in found[0]:
                (named if config.framework in _OVERRIDABLE else others).append(config)
        if not args.values and not named:
            continue
        out.append(TrainerLine(workload, template, container, args, word_location(container, expanded.words[0]),
                               _shown(expanded.words, start, hit.launcher), named, others, unresolved))
    return out


def _shown(words: list[Word], start: int, launcher: str) -> str:
    """How messages name the line: "torchrun train.py", "srun accelerate
    launch sft.py", "python -m trl.scripts.sft"."""
    name = basename(words[0].text)
    program = {"accelerate": "accelerate launch"}.get(launcher, launcher)
    if start >= 2 and words[start - 2].text in ("-m", "--module"):
        program = f"{program} -m"
    if launcher == "python" and _LAUNCH_PYTHON.match(name):
        program = f"{name}{program[len('python'):]}"
    head = f"srun {program}" if name == "srun" else program
    return f"{head} {words[start - 1].shown}"


def _value_of(words: list[Word], flag: Word | None, word: Word) -> bool:
    """``word`` is the value word after ``flag`` (``--deepspeed ds.json``)."""
    if flag is None:
        return False
    for a, b in zip(words, words[1:]):
        if a is flag and b is word:
            return True
    return False


def _line_data(args: LineArgs, container: Container, base: KeyPath) -> tuple[dict, dict[KeyPath, Location]]:
    located = {base + (k,): word_location(container, w) for k, w in args.words.items()}
    return dict(args.values), located


# -- the two cases -----------------------------------------------------------

def _bare_config(line: TrainerLine) -> TrainingConfig | None:
    from mlcost_lint.model.training import transformers
    from mlcost_lint.model.training._values import ConfigView
    from mlcost_lint.model.training.common import apply_defaults, collect_data_paths

    data, located = _line_data(line.args, line.container, ())
    at = line.at
    document = LineDocument(path=at.path, index=0, data=data, positions={(): (at.line, at.column)},
                            start_line=at.line, end_line=at.line, located=located)
    view = ConfigView(document)
    settings = TrainingSettings()
    transformers.read(view, settings, "script")
    collect_data_paths(view, settings)
    if line.args.strong:
        apply_defaults(settings, Framework.TRANSFORMERS.value, "script")
    elif not settings.device.explicit:
        from mlcost_lint.model.training._values import default_setting

        settings.device = default_setting("gpu")
    flags = ", ".join(f"--{k}" for k in list(line.args.values)[:3])
    return TrainingConfig(
        path=at.path, framework=Framework.TRANSFORMERS,
        detection_reason=f"Trainer arguments on the launch line ({flags})", document=document,
        settings=settings, flavour="script", launch_line=line.shown)


def _merged_config(config: TrainingConfig, line: TrainerLine) -> TrainingConfig | None:
    from mlcost_lint.model.training import read_training_config

    root = config.document.get(config.key_path)
    if not isinstance(root, dict):
        return None
    values, located = _line_data(line.args, line.container, config.key_path)
    merged_root = {**root, **values}
    data = _replace_at(config.document.data, config.key_path, merged_root)
    doc = config.document
    document = LineDocument(path=doc.path, index=doc.index, data=data, positions=doc.positions,
                            start_line=doc.start_line, end_line=doc.end_line, located=located)
    merged = read_training_config(document, config.key_path)
    if merged is None or merged.framework is not config.framework:
        return None
    merged.embedded_in, merged.embedded_key = config.embedded_in, config.embedded_key
    merged.overridden_by = line.shown
    return merged


def _replace_at(data: Any, path: KeyPath, value: Any) -> Any:
    """A copy of ``data`` with the node at ``path`` replaced (the parsed
    document itself is shared with the cache and never changed)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: _replace_at(data[head], rest, value)}
    copy = list(data)
    copy[head] = _replace_at(copy[head], rest, value)
    return copy


def link_line_settings(project: Project, index: ConfigIndex) -> None:
    """Apply launch-line Trainer flags (see the module docstring): override
    linked configs, add line configs with their container links."""
    lines: list[TrainerLine] = []
    for workload in project.kubernetes.workloads:
        for template in workload.templates:
            for container in template.containers:
                lines.extend(_lines_of(project, workload, template, container, index))
    if not lines:
        return
    _override(project, lines)
    trainer_linked = {id(link.container) for link in project.links.configs
                      if link.config.framework in _OVERRIDABLE}
    for line in lines:
        if line.named or line.unresolved or not line.args.values or id(line.container) in trainer_linked:
            continue
        config = _bare_config(line)
        if config is None:
            continue
        project.training.append(config)
        project.links.configs.append(ConfigLink(line.workload, line.template, line.container, config, line.at,
                                                "Trainer arguments on the launch line"))
    project.links.derived.pop("gpu_training", None)


def _override(project: Project, lines: list[TrainerLine]) -> None:
    by_config: dict[int, list[TrainerLine]] = {}
    configs: dict[int, TrainingConfig] = {}
    for line in lines:
        for config in line.named:
            by_config.setdefault(id(config), []).append(line)
            configs[id(config)] = config
    replaced: dict[int, TrainingConfig] = {}
    for key, config_lines in by_config.items():
        config = configs[key]
        if not any(line.args.values for line in config_lines):
            continue
        if len({line.args.signature() for line in config_lines}) != 1:
            continue            # lines that pass different flags: the file's values stay
        runners = {id(link.container) for link in project.links.configs
                   if link.config is config and link.via is None}
        if runners - {id(line.container) for line in config_lines}:
            continue            # a workload runs the file without these flags
        merged = _merged_config(config, config_lines[0])
        if merged is not None:
            replaced[key] = merged
    if not replaced:
        return
    project.training[:] = [replaced.get(id(c), c) for c in project.training]
    links = project.links
    links.configs[:] = [replace(link, config=replaced.get(id(link.config), link.config),
                                via=replaced.get(id(link.via), link.via) if link.via is not None else None)
                        for link in links.configs]
    links.config_refs[:] = [replace(ref, source=replaced.get(id(ref.source), ref.source),
                                    target=replaced.get(id(ref.target), ref.target))
                            for ref in links.config_refs]
