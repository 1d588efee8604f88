"""Names of the training configs and ConfigMaps in files a run did not read.

A reporting run may read a slice of the project (mlcost_lint.project_slice).
Config paths are still resolved against every config of the project: the
longest matching suffix, "the only file of that name in the scan" and the
nearest copy are decisions about all of them. The files left out are
present here by their names only, so the link stage and the rules'
reference lookups decide as the whole run would. A decision that picks one
of them needs its content: it is recorded in :attr:`Absent.missed`, and
the run then reads the whole project instead.

Terraform resources no link or workload-side check reads are left out the
same way (:class:`AbsentResource`): reading one beyond its type and name is
such a miss.
"""

from __future__ import annotations

from dataclasses import field

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.pickling import pickled_by_fields


@dataclass(frozen=True, slots=True)
class AbsentDocument:
    path: str


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class AbsentConfig:
    """A file-backed or embedded training config that was not read."""

    path: str
    framework: str
    embedded_in: str | None
    embedded_key: str | None
    references: tuple[str, ...]      # the config paths it names (TrainingSettings.referenced_configs)
    launch_line: str = ""

    @property
    def document(self) -> AbsentDocument:
        return AbsentDocument(self.path)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class AbsentConfigMap:
    name: str
    namespace: str | None
    keys: tuple[str, ...]
    path: str

    @property
    def document(self) -> AbsentDocument:
        return AbsentDocument(self.path)

    @property
    def address(self) -> str:
        # imported here: the project index holds these, and loading it needs no Kubernetes model
        from mlcost_lint.model.kubernetes import config_map_address

        return config_map_address(self.name, self.namespace)


class AbsentResourceError(Exception):
    """A cloud resource left out of a sliced run was read beyond its name."""


@dataclass(frozen=True, slots=True)
class AbsentResource:
    """Terraform resources a sliced run left out of the model (ones no link
    or workload-side check reads: project_slice.TerraformSummary), one
    stand-in per type, mode and origin. Those answer as the resources'
    would, so code that picks resources by type passes over them; anything
    else is a miss, recorded in ``log`` and raised, and the run then reads
    the whole project."""

    type: str
    mode: str
    origin: str
    log: list | None = None

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        if self.log is not None:
            self.log.append(f"a {self.type} resource ({name})")
        raise AbsentResourceError(f"{name} of a {self.type} resource left out of this slice of the project")


@dataclass(slots=True)
class Absent:
    configs: list[AbsentConfig] = field(default_factory=list)
    config_maps: list[AbsentConfigMap] = field(default_factory=list)
    # What a decision found in a file that was not read ("config path x.yaml").
    missed: list[str] = field(default_factory=list)
    # The files those decisions needed, when every miss named its files: a
    # slice widened by them (slice_choice.widened) may decide as the whole
    # run does; None once a miss named none.
    needed: set[str] | None = field(default_factory=set)


def is_absent(item: object) -> bool:
    return isinstance(item, (AbsentConfig, AbsentConfigMap, AbsentResource))


def record_miss(absent: Absent | None, what: str, paths: tuple[str, ...] | list[str] = ()) -> None:
    """``paths``: the files the decision needed (the stand-ins' files)."""
    if absent is not None:
        absent.missed.append(what)
        if not paths:
            absent.needed = None
        elif absent.needed is not None:
            absent.needed.update(paths)


__all__ = ["Absent", "AbsentConfig", "AbsentConfigMap", "AbsentResource", "AbsentResourceError", "is_absent",
           "record_miss"]
