"""Training configs normalised across frameworks.

Each framework's reader (one module per framework in this package) turns a
parsed document into a :class:`TrainingConfig` whose :class:`TrainingSettings`
use one vocabulary, so a rule asks "is checkpoint retention limited?" once,
not once per framework. Every setting records whether it was written
(``explicit``) or is the framework's documented default, and where it was
written. Values the config leaves to run time (DeepSpeed ``"auto"``, Hydra
``${...}`` interpolations) are UNKNOWN.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import Any, Generic, TypeVar

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe
from mlcost_lint.parse.document import Document, KeyPath

T = TypeVar("T")


class Framework(str, Enum):
    TRANSFORMERS = "transformers"   # TrainingArguments, TRL *Config, alignment-handbook recipes
    AXOLOTL = "axolotl"
    DEEPSPEED = "deepspeed"
    ACCELERATE = "accelerate"
    LIGHTNING = "lightning"
    TORCHTUNE = "torchtune"
    NEMO = "nemo"                   # NeMo / Hydra


@dataclass(slots=True)
class Setting(Generic[T]):
    """One normalised setting. ``location`` is None for a default that is not
    written anywhere (rules then report at the config's own location)."""

    value: Maybe[T]
    explicit: bool = False
    location: Location | None = None
    key: str = ""          # the key as written, e.g. "save_total_limit" or "trainer.precision"

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN


def absent() -> Setting[Any]:
    """A setting the config does not determine and no default applies to."""
    return Setting(UNKNOWN)


@dataclass(slots=True)
class TrainingSettings:
    # Where it runs. "gpu" | "cpu" | "tpu"; a config with no linked workload
    # and no device setting is GPU training (rules.md, Settled questions).
    device: Setting[str] = field(default_factory=absent)
    # "fp32" | "bf16" | "fp16" | "fp8" | "mixed" (on, kind unknown)
    precision: Setting[str] = field(default_factory=absent)

    # Checkpoints. save_strategy: "steps" | "epoch" | "no" | "best"
    save_strategy: Setting[str] = field(default_factory=absent)
    save_steps: Setting[int] = field(default_factory=absent)
    # Kept checkpoints: an int limit, or None for "keep all".
    checkpoint_limit: Setting[int | None] = field(default_factory=absent)
    checkpointing_enabled: Setting[bool] = field(default_factory=absent)
    hub_strategy: Setting[str] = field(default_factory=absent)
    output_dir: Setting[str] = field(default_factory=absent)
    max_steps: Setting[int] = field(default_factory=absent)

    # Logging.
    logging_steps: Setting[int] = field(default_factory=absent)
    log_level: Setting[str] = field(default_factory=absent)
    log_level_replica: Setting[str] = field(default_factory=absent)
    report_to: Setting[Any] = field(default_factory=absent)
    # Debug switches left on: (name as written, value) each with a location.
    debug_flags: list[Setting[str]] = field(default_factory=list)

    # Data loading.
    dataloader_num_workers: Setting[int] = field(default_factory=absent)
    dataloader_pin_memory: Setting[bool] = field(default_factory=absent)
    data_paths: list[Setting[str]] = field(default_factory=list)   # s3://, gs://, ... URIs

    # Model and memory (for the memory estimate).
    model_id: Setting[str] = field(default_factory=absent)
    lora: Setting[bool] = field(default_factory=absent)
    load_bits: Setting[int] = field(default_factory=absent)          # 16, 8 or 4
    zero_stage: Setting[int] = field(default_factory=absent)
    fsdp: Setting[bool] = field(default_factory=absent)

    # Launch.
    num_processes: Setting[int] = field(default_factory=absent)     # Accelerate config
    num_machines: Setting[int] = field(default_factory=absent)
    # A DeepSpeed / Accelerate config this one points at (Trainer `deepspeed: ds.json`).
    referenced_configs: list[Setting[str]] = field(default_factory=list)


@dataclass(slots=True)
class TrainingConfig:
    path: str
    framework: Framework
    detection_reason: str          # why this document was taken as this framework
    document: Document
    key_path: KeyPath = ()         # where the config starts inside the document
    settings: TrainingSettings = field(default_factory=TrainingSettings)
    # When embedded in a ConfigMap: the ConfigMap address and the data key.
    embedded_in: str | None = None
    embedded_key: str | None = None
    # A narrower dialect of the framework whose defaults differ: "trl" (TRL
    # *Config / alignment-handbook recipe, detected by TRL-only keys) for
    # TRANSFORMERS, "hydra" for a NeMo/Hydra config composed from a
    # ``defaults:`` list (its absent keys come from other files, so no
    # framework default is applied). "" otherwise.
    flavour: str = ""
    # Trainer arguments written on a launch line, not in a file
    # (:mod:`mlcost_lint.link.line_args`): the line as messages name it
    # ("torchrun train.py"); the document holds the flags, located on the line.
    launch_line: str = ""
    # A file config whose values the flags of this launch line override.
    overridden_by: str = ""

    @property
    def address(self) -> str:
        if self.embedded_in:
            return f"{self.embedded_in}[{self.embedded_key}]"
        if self.launch_line:
            return f"{self.framework.value}:{self.path}:{self.document.start_line}"
        return f"{self.framework.value}:{self.path}"

    @property
    def location(self) -> Location:
        return self.document.location(self.key_path)

    def loc(self, setting: Setting[Any] | None = None) -> Location:
        """Where to report a setting: where it is written, else the config."""
        if setting is not None and setting.location is not None:
            return setting.location
        return self.location


# The readers import the types above, so they are imported last.
from mlcost_lint.model.training.defaults import FRAMEWORK_DEFAULTS  # noqa: E402
from mlcost_lint.model.training.detect import read_embedded_configs, read_training_config  # noqa: E402

__all__ = [
    "FRAMEWORK_DEFAULTS",
    "Framework",
    "Setting",
    "TrainingConfig",
    "TrainingSettings",
    "absent",
    "read_embedded_configs",
    "read_training_config",
]
