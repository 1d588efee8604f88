"""The whole project as rules see it: every model object plus the links."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.absent import Absent
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
    # Set when the link goes through another config (a Trainer config's
    # ``deepspeed: ds_z3.json``): the config that names this one.
    via: TrainingConfig | None = None


@dataclass(slots=True)
class PoolLink:
    """A pod template is scheduled onto a Terraform node group / pool."""

    workload: Workload
    template: PodTemplate
    pool: CloudResource
    evidence: Location
    how: str                    # "nodeSelector eks.amazonaws.com/nodegroup=gpu", ...
    block: str = ""             # the pool block inside ``pool`` ("node_pool.1", "default_node_pool")
    detail: Any = None          # mlcost_lint.link.pools.Pool: labels, taints, types as scheduling sees them


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
    # How the rank count was decided, for messages: "torchrun --nproc_per_node=2",
    # "accelerate launch --config_file accel.yaml (num_processes: 4)", ...
    ranks_text: str = ""
    # Where the rank count is written when that is not on the command line
    # (an Accelerate config's num_processes, a PyTorchJob's nprocPerNode, an
    # env var the launcher reads), else None.
    ranks_location: Location | None = None
    # What is written at ranks_location, for messages: "num_processes in the
    # Accelerate config", "nprocPerNode in the PyTorchJob spec",
    # "PET_NPROC_PER_NODE in the container env", ... ("" when ranks_location is None).
    ranks_what: str = ""
    # The launcher starts one rank per visible GPU (torchrun --nproc_per_node=gpu,
    # deepspeed without --num_gpus): ranks_per_node is then the pod's request.
    all_visible_gpus: bool = False
    # A launcher flag that forces CPU (accelerate launch --cpu, --use_cpu): where.
    forces_cpu: Location | None = None
    # Why ranks_per_node is UNKNOWN, when it is.
    unknown_reason: str = ""


@dataclass(slots=True)
class DataPathLink:
    """An object-store URI in a training config or a container joined to a bucket."""

    uri: str
    evidence: Location
    bucket_name: str
    bucket: CloudResource | None       # the bucket resource in the scan, when there is one
    used_by: Workload | TrainingConfig
    scheme: str = ""                   # "s3" | "gs" | "azure"
    account: str | None = None         # Azure storage account, when the URI names it
    # Where the bucket is: a region or a GCS multi-region (``US``), None when unknown,
    # and what said so ("aws_s3_bucket.data", "endpoint in URI", "bucket-regions").
    bucket_region: str | None = None
    region_source: str = ""
    region_location: Location | None = None
    # The pod template / container whose args or env hold the URI (None for configs).
    template: PodTemplate | None = None
    container: Container | None = None
    writes: bool = False               # an output/checkpoint directory, not an input


@dataclass(slots=True)
class ConfigRef:
    """A training config names another config in the scan (a Trainer config's
    ``deepspeed: ds_z3.json``, an Accelerate config's deepspeed_config_file)."""

    source: TrainingConfig
    target: TrainingConfig
    evidence: Location
    how: str


@dataclass(slots=True)
class Placement:
    """Where one pod template runs, as far as the scan tells: the accelerator
    (from the linked pool's instance type or the selector labels), the node
    type (only from an instance/machine type), capacity type and region."""

    workload: Workload
    template: PodTemplate
    gpu: Any = None                    # catalogue Accelerator | GpuModel | None
    gpu_how: str = ""
    node_type: Any = None              # catalogue Accelerator (an instance/machine type) | None
    node_type_how: str = ""
    spot: bool | None = None
    reserved: bool = False
    spot_reason: str = ""
    spot_location: Location | None = None
    region: str | None = None
    region_how: str = ""
    region_location: Location | None = None


def _by_id(items: list[Any], attr: str) -> dict[int, list[Any]]:
    """``items`` grouped by ``id()`` of their ``attr``, in list order."""
    out: dict[int, list[Any]] = {}
    for item in items:
        out.setdefault(id(getattr(item, attr)), []).append(item)
    return out


@dataclass(slots=True)
class Links:
    configs: list[ConfigLink] = field(default_factory=list)
    pools: list[PoolLink] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    data_paths: list[DataPathLink] = field(default_factory=list)
    config_refs: list[ConfigRef] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)   # linkers that failed on odd input
    # Lookup indexes for the *_of helpers: (list name, attribute) -> (stamp of
    # the list when built, links grouped by id() of that attribute). Rules ask
    # per object, and a scan of the whole list per question made the rules
    # quadratic in the project size. Rebuilt whenever the list changed (the
    # stamp is its identity, length and first/last items), and every answer is
    # filtered by identity, so a stale or reused id() can never leak a link.
    _indexes: dict[tuple[str, str], tuple[tuple[int, int, int, int], dict[int, list[Any]]]] = field(
        default_factory=dict, repr=False, compare=False)
    # Indexes and answers derived from the finished links, by owner name
    # ("gpu_training"): (stamp, value) entries kept by :meth:`stamped`.
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def stamped(self, owner: str, stamp: tuple, build: Callable[[], Any]) -> Any:
        """``owner``'s derived value, built again by ``build`` whenever
        ``stamp`` (the identity and size of what it is derived from) differs
        from the one it was built for."""
        entry = self.derived.get(owner)
        if entry is None or entry[0] != stamp:
            entry = self.derived[owner] = (stamp, build())
        return entry[1]

    def _lookup(self, name: str, attr: str, obj: Any) -> list[Any]:
        items: list[Any] = getattr(self, name)
        stamp = (id(items), len(items), id(items[0]) if items else 0, id(items[-1]) if items else 0)
        cached = self._indexes.get((name, attr))
        if cached is None or cached[0] != stamp:
            cached = (stamp, _by_id(items, attr))
            self._indexes[(name, attr)] = cached
        return [item for item in cached[1].get(id(obj), ()) if getattr(item, attr) is obj]

    def configs_of(self, workload: Workload) -> list[ConfigLink]:
        return self._lookup("configs", "workload", workload)

    def workloads_of(self, config: TrainingConfig) -> list[ConfigLink]:
        return self._lookup("configs", "config", config)

    def configs_of_container(self, container: Container) -> list[ConfigLink]:
        """The config links of one container, in link order."""
        return self._lookup("configs", "container", container)

    def pools_of(self, template: PodTemplate) -> list[PoolLink]:
        return self._lookup("pools", "template", template)

    def launches_of(self, container: Container) -> list[Launch]:
        return self._lookup("launches", "container", container)

    def placement_of(self, template: PodTemplate) -> Placement | None:
        found = self._lookup("placements", "template", template)
        return found[0] if found else None


@dataclass(slots=True)
class Project:
    files: list[ParsedFile] = field(default_factory=list)
    terraform: TerraformModel = field(default_factory=TerraformModel)
    kubernetes: KubernetesModel = field(default_factory=KubernetesModel)
    training: list[TrainingConfig] = field(default_factory=list)
    links: Links = field(default_factory=Links)
    # Why a document that looks like one of ours was not read (path -> reasons), for -v.
    not_read: dict[str, list[str]] = field(default_factory=dict)
    # Secret-looking values of the files' HCL trees, collected before the
    # model stage releases those trees (ParsedFile.hcl is None afterwards);
    # mlcost_lint.secrets.collect_secrets reads them from here.
    hcl_secrets: frozenset[str] | None = None
    # Secret-looking values of the files a sliced run did not read
    # (mlcost_lint.slice_choice.outside_secrets): messages never print them either.
    outside_secrets: frozenset[str] = frozenset()
    # The configs and ConfigMaps of the files such a run did not read, by
    # name (model.absent): path lookups decide as the whole run would.
    absent: Absent | None = None
    # Files a check joined by a name one of them writes (a training config
    # and the config it names: rules/efficiency/gpu_training), as display
    # path pairs: a slice reads them together (project_slice._partners).
    joined_by_checks: set[tuple[str, str]] = field(default_factory=set)
