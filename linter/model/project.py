"""The whole project as rules see it: every model object plus the links."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlcost_lint.model.cloud import CloudResource, TerraformModel
from mlcost_lint.model.core import Location, Maybe
from mlcost_lint.model.kubernetes import Container, KubernetesModel, PodTemplate, Workload
from mlcost_lint.model.training import TrainingConfig
from mlcost_lint.parse.document import ParsedFile


@dataclass(slots=True)
class ConfigLink:
    """A container names a training config in the scan (argument or mounted ConfigMap)."""

    workload: Workload
    template: PodTemplate
    container: Container
    config: TrainingConfig
    evidence: Location          # the argument / volume that names it
    how: str                    # "argument --config_file", "mounted ConfigMap", ...


@dataclass(slots=True)
class PoolLink:
    """A pod template is scheduled onto a Terraform node group / pool."""

    workload: Workload
    template: PodTemplate
    pool: CloudResource
    evidence: Location
    how: str                    # "nodeSelector eks.amazonaws.com/nodegroup=gpu", ...


@dataclass(slots=True)
class Launch:
    """What a container's command starts: the launcher and its rank count."""

    workload: Workload
    template: PodTemplate
    container: Container
    launcher: str               # "torchrun", "accelerate", "deepspeed", "python", ...
    ranks_per_node: Maybe[int]  # processes it starts on this pod
    nodes: Maybe[int] | None
    evidence: Location


@dataclass(slots=True)
class DataPathLink:
    """An object-store URI in a training config or a container joined to a bucket."""

    uri: str
    evidence: Location
    bucket_name: str
    bucket: CloudResource | None       # the bucket resource in the scan, when there is one
    used_by: Workload | TrainingConfig


@dataclass(slots=True)
class Links:
    configs: list[ConfigLink] = field(default_factory=list)
    pools: list[PoolLink] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    data_paths: list[DataPathLink] = field(default_factory=list)

    def configs_of(self, workload: Workload) -> list[ConfigLink]:
        return [c for c in self.configs if c.workload is workload]

    def workloads_of(self, config: TrainingConfig) -> list[ConfigLink]:
        return [c for c in self.configs if c.config is config]

    def pools_of(self, template: PodTemplate) -> list[PoolLink]:
        return [p for p in self.pools if p.template is template]


@dataclass(slots=True)
class Project:
    files: list[ParsedFile] = field(default_factory=list)
    terraform: TerraformModel = field(default_factory=TerraformModel)
    kubernetes: KubernetesModel = field(default_factory=KubernetesModel)
    training: list[TrainingConfig] = field(default_factory=list)
    links: Links = field(default_factory=Links)
