"""Workload -> training config links, and config -> config references.

A container names a config by a path that is usually absolute inside the
image (``/workspace/configs/sft.yaml``) while the scan knows it by a path
relative to the working directory (``train/configs/sft.yaml``). They are
joined by their trailing path components: the config sharing the longest
suffix wins; a tie goes to the one config nearest the referencing file
(the longest leading run of folders shared with it: a monorepo's copies of
one platform each link within their own folder), and is otherwise
ambiguous (no link); a match on the bare file name only links when exactly
one config in the scan has that name.

Other ways in: ``--config_file``/``--deepspeed``/``--config``/Hydra
``--config-path`` + ``--config-name`` arguments, positional YAML arguments,
``KEY=path`` words, env values, and ConfigMaps holding a training config
mounted into the container (volume ``configMap`` name -> mountPath + key,
``items`` and ``subPath`` honoured).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import field
from typing import Any, Iterator

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.absent import Absent, is_absent, record_miss
from mlcost_lint.model.core import Location
from mlcost_lint.model.kubernetes import ConfigMap, Container, PodTemplate, Workload
from mlcost_lint.model.project import ConfigLink, ConfigRef, Project
from mlcost_lint.model.training import TrainingConfig
from mlcost_lint.link.nearest import nearest
from mlcost_lint.link.shell import Word, container_words, program_of, word_location

CONFIG_EXTENSIONS = (".yaml", ".yml", ".json")
# Flags whose value is a config file (also matched as --flag=value).
CONFIG_FLAGS = frozenset({
    "--config_file", "--config-file", "--deepspeed", "--deepspeed_config", "--deepspeed_config_file",
    "--config", "-c", "--cfg", "--recipe", "--configs", "--training_config", "--train_config",
    "--args", "--yaml",
})
HYDRA_PATH_FLAGS = frozenset({"--config-path", "--config_path", "-cp"})
HYDRA_NAME_FLAGS = frozenset({"--config-name", "--config_name", "-cn"})
_EXPANSION_TAIL = re.compile(r"^.*(?:\$\([^)]*\)|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)")


def path_parts(text: str) -> tuple[str, ...] | None:
    """Components of a config path as written, or None when it names no
    config file. A leading expansion (``${CFG_DIR}/sft.yaml``) is dropped: the
    tail after it is still certain."""
    text = text.strip().strip("'\"")
    # Checked first (most words end otherwise) and once: nothing below changes
    # how the path ends (an expansion cannot hold the extension's dot).
    if not text.lower().endswith(CONFIG_EXTENSIONS):
        return None
    if text.startswith("file://"):
        text = text[len("file://"):]
    if "://" in text:
        return None
    if "$" in text or "`" in text:
        tail = _EXPANSION_TAIL.sub("", text)
        if not tail.startswith("/") or "$" in tail or "`" in tail:
            return None
        text = tail
    parts = tuple(p for p in posixpath.normpath(text).split("/") if p not in ("", "."))
    if not parts or ".." in parts[-1:]:
        return None
    return parts


@dataclass(slots=True)
class ConfigIndex:
    """File-backed training configs by path components, for suffix matching.
    ``by_suffix``: every trailing run of components (``("sft.yaml",)``,
    ``("configs", "sft.yaml")``, ...) -> the config paths ending in it, so a
    lookup costs the length of the path, not the number of configs sharing
    its file name (the same ``accelerate.yaml`` in every project)."""

    by_path: dict[tuple[str, ...], list[TrainingConfig]] = field(default_factory=dict)
    by_basename: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    by_suffix: dict[tuple[str, ...], list[tuple[str, ...]]] = field(default_factory=dict)
    # The configs of files this run did not read (model.absent), by name only.
    absent: Absent | None = None
    # The configs to index, until the first lookup: a pre-commit hook on a
    # config with no workload in its slice looks nothing up, and indexing the
    # 4,000 configs of bench/'s 8,000-file tree by name was 0.01-0.02 s.
    pending: list[TrainingConfig] | None = None

    @classmethod
    def build(cls, configs: list[TrainingConfig], absent: Absent | None = None) -> "ConfigIndex":
        return cls(absent=absent, pending=[*configs, *(absent.configs if absent is not None else ())])

    def _fill(self) -> None:
        pending, self.pending = self.pending, None
        for config in pending:
            if config.embedded_in:
                continue
            parts = tuple(p for p in config.path.replace("\\", "/").split("/") if p not in ("", "."))
            if not parts:
                continue
            known = parts in self.by_path
            self.by_path.setdefault(parts, []).append(config)
            if not known:
                self.by_basename.setdefault(parts[-1], []).append(parts)
                for k in range(1, len(parts) + 1):
                    self.by_suffix.setdefault(parts[-k:], []).append(parts)

    def resolve(self, parts: tuple[str, ...] | None, near: str | None = None
                ) -> tuple[list[TrainingConfig], str] | None:
        """The configs a path names, and how ("path suffix configs/sft.yaml",
        "file name sft.yaml (unique in the scan)"). ``near``: the display
        path of the file that names it, to break a tie between configs
        sharing the suffix. None when nothing or several files match
        equally well."""
        if not parts:
            return None
        if self.pending is not None:
            self._fill()
        candidates = self.by_basename.get(parts[-1])
        if not candidates:
            return None
        # The longest trailing run of ``parts`` some config path ends in: the
        # configs ending in it share exactly that many components with
        # ``parts`` (more would make a longer run).
        best = 1
        while best < len(parts) and parts[-best - 1:] in self.by_suffix:
            best += 1
        winners = self.by_suffix[parts[-best:]]
        how = f"path suffix {'/'.join(parts[-best:])}" if best > 1 else f"file name {parts[-1]} (unique in the scan)"
        if len(winners) != 1 and best > 1 and near:
            closest = nearest(winners, "/".join, near)
            if closest is not None:
                return self.read(closest), f"{how}, the one nearest {near}"
        if len(winners) != 1:
            return None
        if best == 1 and len(candidates) != 1:
            return None
        return self.read(winners[0]), how

    def read(self, parts: tuple[str, ...]) -> list[TrainingConfig]:
        """The configs at ``parts``; none when one of them is in a file this
        run did not read (recorded as a miss: the run then reads them all)."""
        if self.pending is not None:
            self._fill()
        found = self.by_path.get(parts, [])
        if any(is_absent(c) for c in found):
            record_miss(self.absent, "config " + "/".join(parts), [c.path for c in found if is_absent(c)])
            return []
        return found


def _flag_name(text: str) -> str:
    return text.split("=", 1)[0]


def _word_paths(words: list[Word]) -> Iterator[tuple[Word, tuple[str, ...], str]]:
    """(word, path parts, how) for every word that names a config file."""
    previous: str | None = None
    hydra_path: tuple[Word, str] | None = None
    hydra_name: tuple[Word, str] | None = None
    for w in words:
        text = w.text
        if previous in HYDRA_PATH_FLAGS:
            hydra_path = (w, text)
        elif previous in HYDRA_NAME_FLAGS:
            hydra_name = (w, text)
        elif text.startswith("-") and "=" in text:
            name, _, value = text.partition("=")
            if name in HYDRA_PATH_FLAGS:
                hydra_path = (w, value)
            elif name in HYDRA_NAME_FLAGS:
                hydra_name = (w, value)
            else:
                parts = path_parts(value)
                if parts:
                    yield w, parts, f"argument {name}"
        elif "=" in text and not text.startswith("-"):
            name, _, value = text.partition("=")
            parts = path_parts(value)
            if parts:
                yield w, parts, f"argument {name}="
        else:
            parts = path_parts(text)
            if parts:
                how = f"argument {previous}" if previous in CONFIG_FLAGS else "positional argument"
                yield w, parts, how
        previous = text if text.startswith("-") and "=" not in text else None
    if hydra_name is not None:
        name_word, name = hydra_name
        if not name.lower().endswith(CONFIG_EXTENSIONS):
            name += ".yaml"
        base = hydra_path[1] if hydra_path else ""
        parts = path_parts(posixpath.join(base, name) if base else name)
        if parts:
            yield name_word, parts, "Hydra --config-path/--config-name"


@dataclass(slots=True)
class MountedFile:
    """A ConfigMap key as a file inside a container."""

    path: str
    config_map: str
    key: str
    mount_index: int


def mounted_files(template: PodTemplate, container: Container) -> list[MountedFile]:
    volumes: dict[str, list[tuple[str, dict[str, str] | None]]] = {}
    for vol in template.volumes:
        name = vol.get("name")
        if not isinstance(name, str):
            continue
        sources: list[Any] = []
        if isinstance(vol.get("configMap"), dict):
            sources.append(vol["configMap"])
        projected = vol.get("projected")
        if isinstance(projected, dict) and isinstance(projected.get("sources"), list):
            sources += [s["configMap"] for s in projected["sources"]
                        if isinstance(s, dict) and isinstance(s.get("configMap"), dict)]
        for src in sources:
            cm_name = src.get("name")
            if not isinstance(cm_name, str):
                continue
            items = src.get("items")
            mapping = None
            if isinstance(items, list):
                mapping = {str(i["key"]): str(i.get("path") or i["key"]) for i in items
                           if isinstance(i, dict) and isinstance(i.get("key"), str)}
            volumes.setdefault(name, []).append((cm_name, mapping))
    out: list[MountedFile] = []
    raw_mounts = container.document.get(container.key_path + ("volumeMounts",))
    if not isinstance(raw_mounts, list):
        return out
    for i, mount in enumerate(raw_mounts):
        if not isinstance(mount, dict) or not isinstance(mount.get("mountPath"), str):
            continue
        mount_path = mount["mountPath"].rstrip("/") or "/"
        sub_path = mount.get("subPath") if isinstance(mount.get("subPath"), str) else None
        for cm_name, mapping in volumes.get(str(mount.get("name")), []):
            keys = mapping or {}
            if mapping is None:
                # Every key of the ConfigMap appears under its own name.
                out.append(MountedFile(mount_path, cm_name, "*", i) if sub_path is None
                           else MountedFile(mount_path, cm_name, sub_path, i))
                continue
            for key, rel in keys.items():
                if sub_path is None:
                    out.append(MountedFile(posixpath.join(mount_path, rel), cm_name, key, i))
                elif rel == sub_path:
                    out.append(MountedFile(mount_path, cm_name, key, i))
    return out


def _same_namespace(a: str | None, b: str | None) -> bool:
    # A manifest without a namespace is applied into one with `-n`: either side
    # unset counts as the same namespace.
    return a is None or b is None or a == b


def config_maps_named(project: Project, name: str) -> list[ConfigMap]:
    """The ConfigMaps called ``name``, in scan order, from an index built once
    per ConfigMap list (a scan of every ConfigMap per mounted volume made the
    link stage quadratic)."""
    config_maps = project.kubernetes.config_maps
    absent = project.absent.config_maps if project.absent is not None else ()

    def by_name() -> dict[str, list[ConfigMap]]:
        out: dict[str, list[ConfigMap]] = {}
        for cm in (*config_maps, *absent):
            out.setdefault(cm.name, []).append(cm)
        return out

    return project.links.stamped(_CONFIG_MAPS_KEY, (id(config_maps), len(config_maps)), by_name).get(name, [])


_CONFIG_MAPS_KEY = "link.config_maps_by_name"


def _embedded(project: Project) -> dict[tuple[str, str], list[TrainingConfig]]:
    out: dict[tuple[str, str], list[TrainingConfig]] = {}
    for config in project.training:
        if config.embedded_in and config.embedded_key is not None:
            out.setdefault((config.embedded_in, config.embedded_key), []).append(config)
    return out


def _add(links: list[ConfigLink], seen: set[tuple[int, int]], link: ConfigLink) -> None:
    key = (id(link.container), id(link.config))
    if key not in seen:
        seen.add(key)
        links.append(link)


def link_configs(project: Project, index: ConfigIndex) -> None:
    """Fill ``project.links.configs`` (direct links) and ``config_refs``, then
    add the configs reached through references as links ``via`` the first."""
    embedded = _embedded(project)
    links: list[ConfigLink] = []
    seen: set[tuple[int, int]] = set()
    for workload in project.kubernetes.workloads:
        for template in workload.templates:
            for container in template.containers:
                _link_container(project, workload, template, container, index, embedded, links, seen)
    project.links.configs.extend(links)
    project.links.config_refs.extend(config_references(project, index))
    _follow_references(project, seen)


def _link_container(project: Project, workload: Workload, template: PodTemplate, container: Container,
                    index: ConfigIndex, embedded: dict[tuple[str, str], list[TrainingConfig]],
                    links: list[ConfigLink], seen: set[tuple[int, int]]) -> None:
    words: list[Word] = []
    for command in program_of(container).commands:
        words.extend(command.words)
    if not words:
        words = container_words(container)
    named_paths: dict[str, Word] = {}
    near = workload.document.path
    for word, parts, how in _word_paths(words):
        named_paths["/".join(parts)] = word
        found = index.resolve(parts, near)
        if found is None:
            continue
        configs, match = found
        for config in configs:
            _add(links, seen, ConfigLink(workload, template, container, config,
                                         word_location(container, word), f"{how} ({match})"))
    for name, env in container.env.items():
        value = env.value
        if not isinstance(value, str):
            continue
        parts = path_parts(value)
        if parts:
            named_paths["/".join(parts)] = Word(value, ("env", 0))
            found = index.resolve(parts, near)
            if found is not None:
                configs, match = found
                for config in configs:
                    _add(links, seen, ConfigLink(workload, template, container, config, env.location,
                                                 f"env {name} ({match})"))
    # Mounted ConfigMaps holding a training config.
    for mounted in mounted_files(template, container):
        cms = [cm for cm in config_maps_named(project, mounted.config_map)
               if _same_namespace(cm.namespace, workload.namespace)]
        # Copies of one platform repeat a ConfigMap's name: the one in the
        # workload's own copy is meant (link/nearest.py); otherwise no link.
        cm = cms[0] if len(cms) == 1 else nearest(cms, lambda c: c.document.path, near)
        if cm is None:
            continue
        if is_absent(cm):
            record_miss(project.absent, cm.address, [cm.path])
            continue
        keys = list(cm.data) if mounted.key == "*" else [mounted.key]
        for key in keys:
            for config in embedded.get((cm.address, key), []):
                if config.path != cm.document.path:
                    continue    # the same address in another copy
                in_container = posixpath.join(mounted.path, key) if mounted.key == "*" else mounted.path
                named = named_paths.get(in_container.lstrip("/"))
                where = f"mounted ConfigMap {cm.name} key {key} at {in_container}"
                if named is not None and named.source[0] != "env":
                    _add(links, seen, ConfigLink(workload, template, container, config,
                                                 word_location(container, named), f"{where}, named in the command"))
                else:
                    _add(links, seen, ConfigLink(workload, template, container, config,
                                                 container.loc("volumeMounts", mounted.mount_index), where))


def config_references(project: Project, index: ConfigIndex) -> list[ConfigRef]:
    """Config -> config references (``deepspeed: ds_z3.json``): relative to
    the referencing file first, then by path suffix; inside a ConfigMap, to
    another key of the same ConfigMap by file name."""
    refs: list[ConfigRef] = []
    embedded = _embedded(project)
    for config in project.training:
        for ref in config.settings.referenced_configs:
            value = ref.value
            if not isinstance(value, str):
                continue
            parts = path_parts(value)
            if not parts:
                continue
            targets: list[TrainingConfig] = []
            how = ""
            if config.embedded_in:
                targets = embedded.get((config.embedded_in, parts[-1]), [])
                how = f"key {parts[-1]} of the same ConfigMap"
            if not targets and not value.startswith("/") and not config.embedded_in:
                local = tuple(p for p in posixpath.normpath(
                    posixpath.join(posixpath.dirname(config.path), value)).split("/") if p not in ("", "."))
                targets = index.read(local)
                how = "path relative to the config"
            if not targets:
                found = index.resolve(parts, config.path)
                if found is not None:
                    targets, how = found
            location = ref.location or config.location
            for target in targets:
                if target is not config:
                    refs.append(ConfigRef(config, target, location, f"{ref.key or 'reference'} ({how})"))
    return refs


def _follow_references(project: Project, seen: set[tuple[int, int]]) -> None:
    by_source: dict[int, list[ConfigRef]] = {}
    for ref in project.links.config_refs:
        by_source.setdefault(id(ref.source), []).append(ref)
    frontier = list(project.links.configs)
    for _depth in range(3):
        added: list[ConfigLink] = []
        for link in frontier:
            for ref in by_source.get(id(link.config), []):
                new = ConfigLink(link.workload, link.template, link.container, ref.target, ref.evidence,
                                 f"{ref.how}, referenced by {link.config.path}", via=link.config)
                before = len(added)
                _add(added, seen, new)
                if len(added) == before:
                    continue
        project.links.configs.extend(added)
        frontier = added
        if not frontier:
            break


def configs_for_container(project: Project, container: Container) -> list[ConfigLink]:
    return project.links.configs_of_container(container)


def location_text(loc: Location) -> str:
    return f"{loc.path}:{loc.line}"
