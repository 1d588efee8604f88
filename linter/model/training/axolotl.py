"""Axolotl YAML: Trainer-style keys plus its own (``base_model``,
``adapter``, ``micro_batch_size``, ``sequence_len``, ``saves_per_epoch``...)."""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Setting, TrainingSettings
from mlcost_lint.model.training._values import ConfigView, as_int, as_lower
from mlcost_lint.model.training.common import (
    as_checkpoint_limit, precision_from_flags, put, read_model_id, read_trainer_arguments,
)

# bf16: auto enables bf16 on GPUs that support it and fp16 otherwise
# (axolotl utils/config resolve_dtype): mixed precision either way, counted
# as bf16 (rules.md MLC601). float16/bfloat16 load the model in half
# precision without AMP. fp8 is Axolotl's own switch.
_PRECISION_FLAGS = (
    (("fp8",), "fp8"), (("bf16",), "bf16"), (("fp16",), "fp16"),
    (("bfloat16",), "bf16"), (("float16",), "fp16"),
)
_ADAPTERS_LORA = frozenset({"lora", "qlora"})


def read(view: ConfigView, settings: TrainingSettings, flavour: str = "") -> None:
    read_trainer_arguments(view, settings)
    # bf16 unwritten is "auto" (on): then the default decides.
    put(settings, "precision", precision_from_flags(view, _PRECISION_FLAGS, truthy={"auto": "bf16"},
                                                    default_on=frozenset({"bf16"})))
    read_model_id(view, settings)

    # save_total_limit: Axolotl replaces a falsy limit (absent, null, 0) by 4.
    limit = view.setting(("save_total_limit",), _axolotl_limit)
    if limit is not None:
        settings.checkpoint_limit = limit

    # saves_per_epoch N: N step-based saves per epoch, interval computed at run time.
    per_epoch = view.setting(("saves_per_epoch",), as_int)
    if per_epoch is not None and not settings.save_steps.explicit and not settings.save_strategy.explicit:
        settings.save_strategy = Setting("steps", True, per_epoch.location, per_epoch.key)
        settings.save_steps = Setting(UNKNOWN, True, per_epoch.location, per_epoch.key)
        settings.checkpointing_enabled = Setting(True, True, per_epoch.location, per_epoch.key)
    # save_steps written wins over save_strategy (core/builders/base.py).
    raw_steps = view.get("save_steps")
    if settings.save_steps.key == "save_steps" and raw_steps and not isinstance(raw_steps, (dict, list)):
        steps = settings.save_steps
        settings.save_strategy = Setting("steps", True, steps.location, steps.key)
        settings.checkpointing_enabled = Setting(True, True, steps.location, steps.key)

    adapter = view.setting(("adapter",), _adapter_is_lora)
    if adapter is not None:
        settings.lora = adapter
        if view.get("adapter") == "qlora" and not settings.load_bits.explicit:
            settings.load_bits = Setting(4, True, adapter.location, adapter.key)

    if view.get("fsdp") or view.get("fsdp_config") or view.get("fsdp_version"):
        key = next(k for k in ("fsdp", "fsdp_config", "fsdp_version") if view.get(k))
        settings.fsdp = Setting(True, True, view.loc(key), key)


def _axolotl_limit(value: Any) -> Any:
    limit = as_checkpoint_limit(value)
    return 4 if limit is None else limit


def _adapter_is_lora(value: Any) -> Any:
    if value is None:
        return False
    text = as_lower(value)
    if text is UNKNOWN:
        return UNKNOWN
    return text in _ADAPTERS_LORA
