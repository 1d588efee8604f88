"""Where a training config runs, and which other configs share its run.

Shared by the training-config rules (MLC301/302, MLC402/403, MLC601/602):

- :func:`device_of` answers "does this config train on a GPU?" from the
  config's own device setting and the workloads that run it
  (``project.links.workloads_of``). A config that no workload in the scan
  runs is GPU training unless it says CPU or TPU (rules.md, Settled
  questions). A linked config follows its workloads: an accelerator request
  on the container that names it decides; a container that requests no
  accelerator gets none from the device plugin, so it trains on CPU unless
  its node selector pins a GPU node (then the GPU leak through the image's
  ``NVIDIA_VISIBLE_DEVICES`` makes it unknown).
- :func:`partners` lists the configs that decide a run together with this
  one: the DeepSpeed/Accelerate configs it names (``deepspeed: ds.json``),
  the configs that name it, and the configs mounted or passed to the same
  container. MLC601 uses them: a Trainer's ``bf16`` fills a DeepSpeed
  ``"auto"``, an Accelerate config's ``mixed_precision`` overrides a Trainer
  that leaves ``bf16``/``fp16`` off.
"""

from __future__ import annotations

import posixpath
from dataclasses import field
from typing import TYPE_CHECKING, Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.link.nearest import nearest
from mlcost_lint.model.absent import is_absent, record_miss
from mlcost_lint.model.core import UNKNOWN, Related, is_known
from mlcost_lint.model.scheduling import pinned_gpu

if TYPE_CHECKING:
    from mlcost_lint.catalogue import GpuModel
    from mlcost_lint.model.kubernetes import Container, PodTemplate
    from mlcost_lint.model.project import ConfigLink, Project
    from mlcost_lint.model.training import Setting, TrainingConfig

GPU = "gpu"
TPU = "tpu"
CPU = "cpu"
OTHER = "other"   # Trainium/Inferentia, Gaudi: accelerators with their own precision rules
ELSEWHERE = "elsewhere"   # the config does not hold its Trainer arguments: only links can tell

# Accelerator resource name (prefix) -> device class.
_RESOURCE_DEVICE: tuple[tuple[str, str], ...] = (
    ("nvidia.com/gpu", GPU),
    ("nvidia.com/mig-", GPU),
    ("amd.com/gpu", GPU),
    ("gpu.intel.com/", GPU),
    ("google.com/tpu", TPU),
    ("aws.amazon.com/neuron", OTHER),
    ("habana.ai/gaudi", OTHER),
    ("gres/gpu", GPU),          # Slurm --gres=gpu / --gpus-per-node
)
# When several links disagree, the costliest reading that is certain wins.
_PRIORITY = (GPU, TPU, OTHER)


@dataclass(slots=True)
class Device:
    """Where a config trains. ``kind`` is GPU/TPU/CPU/OTHER or UNKNOWN;
    ``links`` are the workload links that put it there (empty when it is
    not linked); ``gpu`` the GPU model when a linked pod pins one."""

    kind: Any
    links: list["ConfigLink"] = field(default_factory=list)
    gpu: "GpuModel | None" = None
    via: "TrainingConfig | None" = None   # the config whose links decided (a referencer)

    @property
    def is_gpu(self) -> bool:
        return self.kind == GPU

    @property
    def is_accelerated(self) -> bool:
        """GPU, TPU or another accelerator (known); not CPU, not unknown."""
        return self.kind in (GPU, TPU, OTHER)

    def related(self) -> list[Related]:
        # Once per place and workload: the Master and Worker containers of a
        # PyTorchJob are two links to the same config through the same line.
        out: dict[Related, None] = {}
        for link in self.links:
            out.setdefault(Related(link.evidence, f"{link.workload.address} runs this config ({link.how})"))
        return list(out)

    def where(self) -> str:
        """A phrase for messages: why we think it trains on this device."""
        if self.links:
            link = self.links[0]
            gpu = f" on {self.gpu.name}" if self.gpu is not None else ""
            return f"run by {link.workload.address}{gpu}"
        return ""


def container_device(template: "PodTemplate", container: "Container") -> tuple[Any, "GpuModel | None"]:
    """The device class one container trains on, and its GPU model when the
    pod pins one with node-selector labels."""
    accelerators = container.accelerators()
    kinds: set[str] = set()
    for name, count in accelerators.items():
        # An unknown count is not an unknown kind: the container still gets
        # accelerators of this kind (rules.md, Settled questions).
        if count is not UNKNOWN and count <= 0:
            continue
        kinds.add(next((kind for prefix, kind in _RESOURCE_DEVICE
                        if name == prefix or name.startswith(prefix)), OTHER))
    gpu = pinned_gpu(template.node_selector)
    if not kinds:
        # No request: the device plugin gives the container no accelerator.
        # Pinned to a GPU node it may still see them (images that set
        # NVIDIA_VISIBLE_DEVICES=all): not certain either way.
        return (UNKNOWN if gpu is not None else CPU), None
    for kind in _PRIORITY:
        if kind in kinds:
            return kind, (gpu if kind == GPU and gpu is not None and not gpu.is_tpu else None)
    return UNKNOWN, None


# Frameworks whose device is a Trainer argument under ``trainer:``. A
# LightningCLI file without that block holds only model/data arguments; the
# Trainer comes from another --config file or the command line.
_TRAINER_BLOCK_FRAMEWORKS = ("lightning", "nemo")


def _own_device(config: "TrainingConfig") -> Any:
    device: Setting[Any] = config.settings.device
    if config.framework.value in _TRAINER_BLOCK_FRAMEWORKS and not device.explicit \
            and not isinstance(config.document.get(config.key_path + ("trainer",)), dict):
        return ELSEWHERE
    if device.explicit:
        return device.value
    return device.value if is_known(device.value) else GPU


def _from_links(links: list["ConfigLink"]) -> Device:
    if not links:
        return Device(UNKNOWN)
    by_kind: dict[Any, list[tuple[ConfigLink, Any]]] = {}
    for link in links:
        kind, gpu = container_device(link.template, link.container)
        by_kind.setdefault(kind, []).append((link, gpu))
    for kind in _PRIORITY:
        if kind in by_kind:
            chosen = by_kind[kind]
            gpus = {g.name: g for _, g in chosen if g is not None}
            # One GPU model only when every GPU link pins the same one.
            gpu = next(iter(gpus.values())) if len(gpus) == 1 and all(g is not None for _, g in chosen) else None
            return Device(kind, [l for l, _ in chosen], gpu)
    if UNKNOWN in by_kind:
        return Device(UNKNOWN, [l for l, _ in by_kind[UNKNOWN]])
    return Device(CPU, [l for l, _ in by_kind.get(CPU, [])])


def device_of(project: "Project", config: "TrainingConfig") -> Device:
    """Where ``config`` trains (see the module docstring)."""
    own = _own_device(config)
    if own in (CPU, TPU) or own is UNKNOWN:
        return Device(own)
    if own == ELSEWHERE:
        links = _workload_links(project, config)
        return _from_links(links) if links else Device(UNKNOWN)
    links = _workload_links(project, config)
    if links:
        found = _from_links(links)
        if own == OTHER and found.kind == GPU:
            return Device(UNKNOWN, found.links)
        return found
    # Not run directly: a config that names this one may be (a Trainer
    # config passed to the container names its DeepSpeed config).
    for referrer in referrers_of(project, config):
        referrer_links = _workload_links(project, referrer)
        if referrer_links:
            found = _from_links(referrer_links)
            found.via = referrer
            return found
    return Device(own)


# ------------------------------------------------------------ partners ---

def _norm(path: str) -> str:
    text = path.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return posixpath.normpath(text) if text else text


@dataclass(slots=True)
class _ConfigIndex:
    """Everything :func:`resolve_reference`, :func:`referrers_of`,
    :func:`partners` and :func:`device_of` look up, built once per project
    (the per-call scans were cubic in the number of configs). Lists keep
    ``project.training`` / ``project.links.configs`` order so every answer
    is the one the scans gave; configs are told apart by identity."""

    norm_path: dict[int, str] = field(default_factory=dict)              # id(config) -> normalised path
    by_path: dict[str, list["TrainingConfig"]] = field(default_factory=dict)   # files only
    # Every trailing run of path components ("c.yaml", "b/c.yaml", "a/b/c.yaml")
    # -> the files whose path ends so: a path-suffix reference is one lookup.
    # (A list per basename, filtered by endswith per reference, was quadratic
    # in the files sharing a basename: accelerate.yaml in every project.)
    by_suffix: dict[str, list["TrainingConfig"]] = field(default_factory=dict)
    files: list[tuple[str, "TrainingConfig"]] = field(default_factory=list)
    by_key: dict[Any, list["TrainingConfig"]] = field(default_factory=dict)    # ConfigMap data key
    links_of_config: dict[int, list["ConfigLink"]] = field(default_factory=dict)
    links_of_workload: dict[int, list["ConfigLink"]] = field(default_factory=dict)
    references: dict[int, tuple[list["TrainingConfig"], list[str]]] = field(default_factory=dict)
    referrers: dict[int, list["TrainingConfig"]] | None = None


def trailing_runs(path: str) -> list[str]:
    """Every ``s`` with ``path == s or path.endswith("/" + s)``:
    "a/b/c.yaml" -> ["a/b/c.yaml", "b/c.yaml", "c.yaml"]."""
    parts = path.split("/")
    return ["/".join(parts[i:]) for i in range(len(parts))]


def _stamp(project: "Project") -> tuple[int, int, int, int]:
    # Rules see a finished project; the stamp only guards against a caller
    # that swaps or grows the lists between calls (tests building projects).
    return (id(project.training), len(project.training),
            id(project.links.configs), len(project.links.configs))


def _index(project: "Project") -> _ConfigIndex:
    return project.links.stamped("gpu_training", _stamp(project), lambda: _build_index(project))


def _build_index(project: "Project") -> _ConfigIndex:
    index = _ConfigIndex()
    # Configs of files a sliced run did not read count by name (model.absent).
    for config in (*project.training, *_absent_configs(project)):
        if config.launch_line:
            continue        # Trainer arguments on a launch line: no file to name
        if config.embedded_in is None:
            path = _norm(config.path)
            index.norm_path[id(config)] = path
            index.by_path.setdefault(path, []).append(config)
            for run in trailing_runs(path):
                index.by_suffix.setdefault(run, []).append(config)
            index.files.append((path, config))
        else:
            try:
                index.by_key.setdefault(config.embedded_key, []).append(config)
            except TypeError:   # an unhashable key never equals a basename
                pass
    for link in project.links.configs:
        index.links_of_config.setdefault(id(link.config), []).append(link)
        index.links_of_workload.setdefault(id(link.workload), []).append(link)
    return index


def _workload_links(project: "Project", config: "TrainingConfig") -> list["ConfigLink"]:
    """``project.links.workloads_of(config)`` from the index."""
    return list(_index(project).links_of_config.get(id(config), ()))


def _absent_configs(project: "Project") -> list:
    return project.absent.configs if project.absent is not None else []


def resolve_reference(project: "Project", config: "TrainingConfig", ref: str) -> "TrainingConfig | None":
    """The scanned config a path written in ``config`` names, or None when
    it is not in the scan (or more than one file could be meant). The path
    is resolved from the config's folder first, then as a path relative to
    wherever the job starts (matched as a path suffix). A config of a file
    the run did not read is a miss (model.absent) when ``config`` was read."""
    target = _resolve(project, config, ref)
    if target is not None and is_absent(target):
        if not is_absent(config):
            record_miss(project.absent, f"config {target.path} named in {config.path}", [target.path])
        return None
    if target is not None and not is_absent(config):
        project.joined_by_checks.add((config.document.path, target.document.path))
    return target


def _resolve(project: "Project", config: "TrainingConfig", ref: str) -> "TrainingConfig | None":
    target = _norm(ref)
    if not target or target == ".":
        return None
    index = _index(project)
    base = posixpath.basename(target)
    if config.embedded_in is None:
        here = _norm(posixpath.join(posixpath.dirname(config.path), target))
        exact = [c for c in index.by_path.get(here, ()) if c is not config]
        if len(exact) == 1:
            return exact[0]
    suffix = target.lstrip("/")
    if suffix and not suffix.endswith("/"):
        # A path equal to the suffix or ending in "/" + suffix: the suffix is
        # one of its trailing runs of components.
        by_suffix = [c for c in index.by_suffix.get(suffix, ()) if c is not config]
    else:
        by_suffix = [c for path, c in index.files if c is not config
                     and (path == suffix or path.endswith("/" + suffix))]
    if len(by_suffix) == 1:
        return by_suffix[0]
    if len(by_suffix) > 1:
        # Copies of one platform repeat the path: the copy holding this
        # config is meant (as the link stage decides, link/nearest.py).
        return nearest(by_suffix, _config_path, config.path)
    # A mounted ConfigMap key: /etc/train/ds_config.json -> data key ds_config.json.
    embedded = [c for c in index.by_key.get(base, ()) if c is not config]
    same_map = [c for c in embedded if c.embedded_in == config.embedded_in and c.path == config.path]
    if len(same_map) == 1:
        return same_map[0]
    if len(embedded) == 1:
        return embedded[0]
    return nearest(embedded, _config_path, config.path) if embedded else None


def _config_path(config: "TrainingConfig") -> str:
    return config.path


def _references(project: "Project", config: "TrainingConfig") -> tuple[list["TrainingConfig"], list[str]]:
    index = _index(project)
    cached = index.references.get(id(config))
    if cached is not None:
        return cached
    found: list[TrainingConfig] = []
    seen: set[int] = set()
    missing: list[str] = []
    values = config.references if is_absent(config) else [ref.value for ref in config.settings.referenced_configs]
    for value in values:
        if not isinstance(value, str):
            continue
        target = resolve_reference(project, config, value)
        if target is None:
            missing.append(value)
        elif id(target) not in seen:
            seen.add(id(target))
            found.append(target)
    index.references[id(config)] = (found, missing)
    return found, missing


def references_of(project: "Project", config: "TrainingConfig") -> tuple[list["TrainingConfig"], list[str]]:
    """(configs ``config`` names that are in the scan, paths it names that are not)."""
    found, missing = _references(project, config)
    return list(found), list(missing)


def referrers_of(project: "Project", config: "TrainingConfig") -> list["TrainingConfig"]:
    """The configs that name ``config``, in scan order."""
    index = _index(project)
    if index.referrers is None:
        referrers: dict[int, list[TrainingConfig]] = {}
        for other in (*project.training, *_absent_configs(project)):
            for target in _references(project, other)[0]:
                if target is not other:
                    referrers.setdefault(id(target), []).append(other)
        index.referrers = referrers
    found = index.referrers.get(id(config), ())
    if any(is_absent(other) for other in found):
        record_miss(project.absent, f"a config naming {config.path}",
                    [other.path for other in found if is_absent(other)])
        return [other for other in found if not is_absent(other)]
    return list(found)


def partners(project: "Project", config: "TrainingConfig") -> tuple[list["TrainingConfig"], list[str]]:
    """(configs that shape the same run, referenced paths not in the scan)."""
    index = _index(project)
    named, missing = references_of(project, config)
    out: list[TrainingConfig] = list(named)
    seen = {id(c) for c in out}
    for other in referrers_of(project, config):
        if id(other) not in seen:
            seen.add(id(other))
            out.append(other)
    for link in index.links_of_config.get(id(config), ()):
        for sibling in index.links_of_workload.get(id(link.workload), ()):
            if sibling.container is link.container and sibling.config is not config \
                    and id(sibling.config) not in seen:
                seen.add(id(sibling.config))
                out.append(sibling.config)
    return out, missing


def raw_value(config: "TrainingConfig", setting: "Setting[Any]") -> Any:
    """The value as written for a setting whose key is a plain dotted path
    (``bf16.enabled``), or None when it cannot be found."""
    if not setting.key:
        return None
    path: tuple[Any, ...] = tuple(setting.key.split("."))
    return config.document.get(config.key_path + path)


def config_label(config: "TrainingConfig") -> str:
    """How a message names another config than the one it is located in:
    its ConfigMap key or its path."""
    if config.embedded_in:
        return f"{config.embedded_in} key {config.embedded_key}"
    return config.path


def config_subject(config: "TrainingConfig", framework: object = None) -> str:
    """How a message about a config names it: "axolotl config", plus the
    ConfigMap key when it is embedded. Never the file path: the finding's
    location already says it (rules.md: a message does not repeat its path)."""
    name = getattr(framework or config.framework, "value", framework or config.framework)
    if config.launch_line:
        return f"launch line {config.launch_line} (Trainer arguments)"
    if config.overridden_by:
        return f"{name} config (with the flags of launch line {config.overridden_by})"
    if config.embedded_in:
        return f"{name} config in {config.embedded_in} key {config.embedded_key}"
    return f"{name} config"
