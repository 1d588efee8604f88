"""Kubernetes objects as rules see them: workloads, their pod templates and
containers, and ConfigMaps. Built from parsed documents by
:mod:`mlcost_lint.model.kubernetes_build`."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.parse.document import Document, KeyPath

# Extended resources that are accelerators (rules.md: "GPU" means any of these).
ACCELERATOR_RESOURCE_PREFIXES: tuple[str, ...] = (
    "nvidia.com/gpu",
    "nvidia.com/mig-",
    "amd.com/gpu",
    "gpu.intel.com/",
    "google.com/tpu",
    "aws.amazon.com/neuron",
    "habana.ai/gaudi",
    "gres/gpu",          # Slurm generic resources (--gres=gpu:N, --gpus-per-node): mlcost_lint.model.slurm
)


def is_accelerator_resource(name: str) -> bool:
    # every exact name is also a prefix of itself: one C-level startswith
    return name.startswith(ACCELERATOR_RESOURCE_PREFIXES)


@dataclass(slots=True)
class Located:
    """Anything that lives inside a document, addressed by its key path."""

    document: Document
    key_path: KeyPath

    def loc(self, *keys: Any) -> Location:
        return self.document.location(self.key_path + tuple(keys))

    def has(self, *keys: Any) -> bool:
        return self.document.position(self.key_path + tuple(keys)) is not None


@dataclass(slots=True)
class EnvVar:
    name: str
    value: Maybe[str]        # UNKNOWN for valueFrom / $(VAR) references
    location: Location


@dataclass(slots=True)
class VolumeMount:
    name: str
    mount_path: str


@dataclass(slots=True)
class Container(Located):
    name: str = ""
    image: str | None = None
    command: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    env: dict[str, EnvVar] = field(default_factory=dict)
    requests: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, Any] = field(default_factory=dict)
    volume_mounts: list[VolumeMount] = field(default_factory=list)
    is_init: bool = False
    # A whole shell script this container runs when it is not a command
    # list (a Slurm batch script): (text, origin as program_of_script takes it).
    script: tuple[str, Location] | None = None
    # Set at the end of the model stage (freeze): readers still fill requests,
    # limits and scripts while the model is built, so nothing is remembered
    # before. Links and rules then ask accelerators() ~20 times and the shell
    # program (link/shell.py program_of) ~4 times per container.
    frozen: bool = field(default=False, repr=False, compare=False)
    frozen_accelerators: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    frozen_program: Any = field(default=None, repr=False, compare=False)   # read-only once built

    @property
    def argv(self) -> list[str]:
        """command + args as one list: what the container runs."""
        return [*self.command, *self.args]

    def freeze(self) -> None:
        """The model stage is done with this container (model/build.py)."""
        self.frozen, self.frozen_program = False, None
        self.frozen_accelerators = self.accelerators()
        self.frozen = True

    def accelerators(self) -> dict[str, Maybe[int]]:
        """Accelerator resource name -> count (limits win, as Kubernetes
        requires them equal for extended resources). UNKNOWN when not a number."""
        if self.frozen:
            return dict(self.frozen_accelerators)
        out: dict[str, Maybe[int]] = {}
        for source in (self.requests, self.limits):
            for name, qty in source.items():
                if isinstance(name, str) and is_accelerator_resource(name):
                    out[name] = parse_count(qty)
        return out

    def gpu_count(self) -> Maybe[int]:
        """Total accelerators requested; 0 when none; UNKNOWN when any count is."""
        total = 0
        for count in self.accelerators().values():
            if count is UNKNOWN:
                return UNKNOWN
            total += count
        return total

    def gpu_resource_path(self) -> KeyPath:
        """Key path (relative to the container) of its accelerator request."""
        for section in ("limits", "requests"):
            source = self.limits if section == "limits" else self.requests
            for name in source:
                if isinstance(name, str) and is_accelerator_resource(name):
                    return ("resources", section, name)
        return ("resources",)


def parse_count(qty: Any) -> Maybe[int]:
    if isinstance(qty, bool):
        return UNKNOWN
    if isinstance(qty, int):
        return qty
    if isinstance(qty, str) and qty.strip().isascii() and qty.strip().isdigit() and len(qty.strip()) <= 18:
        return int(qty.strip())
    return UNKNOWN


@dataclass(slots=True)
class PodTemplate(Located):
    """A pod template of a workload (``key_path`` points at the template,
    ``spec_path`` at its pod spec). ``role`` names the replica group:
    "" for single-template kinds, "Worker"/"Master"/"Launcher" for Kubeflow,
    "head"/worker group name for Ray, the task name for Volcano."""

    spec_path: KeyPath = ()
    role: str = ""
    # Pods of this template (None: the kind has no replica count here). For a
    # multi-host Ray worker group that is replicas x numOfHosts.
    replicas: Maybe[int] | None = None
    # Ray worker groups: minReplicas as written (in replicas, not pods: a
    # replica is hosts_per_replica pods).
    min_replicas: Maybe[int] | None = None
    hosts_per_replica: Maybe[int] = 1        # KubeRay numOfHosts; 1 elsewhere
    labels: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    node_selector: dict[str, Any] = field(default_factory=dict)
    affinity: dict[str, Any] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    init_containers: list[Container] = field(default_factory=list)
    volumes: list[dict[str, Any]] = field(default_factory=list)
    active_deadline_seconds: Maybe[int] | None = None
    restart_policy: str | None = None

    def gpu_count(self) -> Maybe[int]:
        """Accelerators one pod of this template requests (app containers)."""
        total = 0
        for c in self.containers:
            n = c.gpu_count()
            if n is UNKNOWN:
                return UNKNOWN
            total += n
        return total

    def spec_loc(self, *keys: Any) -> Location:
        return self.document.location(self.spec_path + tuple(keys))

    def holds_accelerators(self) -> bool:
        """Whether a pod of this template gets accelerators: some container
        requests one, maybe with a count that cannot be known
        (``nvidia.com/gpu: $GPUS_PER_NODE``). An unknown count is not an
        unknown kind (rules.md, Settled questions)."""
        return any(count is UNKNOWN or count > 0
                   for c in self.containers for count in c.accelerators().values())


@dataclass(slots=True)
class Workload(Located):
    kind: str = ""
    api_version: str = ""
    name: str = ""
    namespace: str | None = None
    labels: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    templates: list[PodTemplate] = field(default_factory=list)
    # A training job of a managed service (SageMaker, Azure ML, Vertex AI):
    # what the service states beyond a pod spec (mlcost_lint.model.managed.ManagedJob).
    managed: Any = None
    # A batch job of a scheduler outside Kubernetes (Slurm): its run-time
    # bound and the directives rules name (mlcost_lint.model.batch.BatchJob).
    batch: Any = None

    @property
    def address(self) -> str:
        if self.managed is not None:
            return self.managed.address
        if self.batch is not None:
            return self.batch.address
        ns = self.namespace or "default"
        return f"{self.kind}/{ns}/{self.name}"

    @property
    def location(self) -> Location:
        return self.loc()

    def accelerator_templates(self) -> list[PodTemplate]:
        """Templates that hold accelerators, counts known or not (for rules
        that need only that fact: MLC204-MLC207, MLC403)."""
        return [t for t in self.templates if t.holds_accelerators()]

    def gpu_templates(self) -> list[PodTemplate]:
        """Templates that request a known, positive number of accelerators."""
        out = []
        for t in self.templates:
            n = t.gpu_count()
            if n is not UNKNOWN and n > 0:
                out.append(t)
        return out


def config_map_address(name: str, namespace: str | None) -> str:
    """How findings and embedded configs name a ConfigMap (also one a sliced run did not read: model.absent)."""
    return f"ConfigMap/{namespace or 'default'}/{name}"


@dataclass(slots=True)
class ConfigMap(Located):
    name: str = ""
    namespace: str | None = None
    data: dict[str, str] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return config_map_address(self.name, self.namespace)


@dataclass(slots=True)
class KubernetesModel:
    workloads: list[Workload] = field(default_factory=list)
    config_maps: list[ConfigMap] = field(default_factory=list)
    # Kustomize patches: merged into a base later, so not workloads of their
    # own (rules.md, "Fragments are not workloads"); kept for links only.
    fragments: list[Workload] = field(default_factory=list)
    # Other kinds seen (Service, Namespace, ...), kept only by kind for links.
    other_kinds: dict[str, int] = field(default_factory=dict)
