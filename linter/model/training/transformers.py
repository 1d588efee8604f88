"""Transformers ``TrainingArguments`` as YAML/JSON, TRL ``*Config`` files and
alignment-handbook recipes (which are TRL configs plus model arguments)."""

from __future__ import annotations

from mlcost_lint.model.training import TrainingSettings
from mlcost_lint.model.training._values import ConfigView, as_bool
from mlcost_lint.model.training.common import (
    precision_from_flags, put, read_model_id, read_trainer_arguments,
)

_PRECISION_FLAGS = ((("bf16",), "bf16"), (("fp16",), "fp16"))


def read(view: ConfigView, settings: TrainingSettings, flavour: str = "") -> None:
    read_trainer_arguments(view, settings)
    # TRL's configs turn bf16 on when it is not written (unless fp16 is).
    default_on = frozenset({"bf16"}) if flavour == "trl" else frozenset()
    put(settings, "precision", precision_from_flags(view, _PRECISION_FLAGS, default_on=default_on))
    read_model_id(view, settings)
    # PEFT switches: TRL ModelConfig ``use_peft``; some recipes write ``peft``.
    put(settings, "lora", view.first((("use_peft",), ("peft",)), _peft_on))


def _peft_on(value: object) -> object:
    if isinstance(value, dict):  # an inline PEFT config block
        return bool(value)
    return as_bool(value)
