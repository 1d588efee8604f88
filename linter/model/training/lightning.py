"""PyTorch Lightning: LightningCLI YAML (``trainer:``, ``model:``/``data:``
with ``class_path``/``init_args``) and the ``trainer:`` block NeMo shares."""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Setting, TrainingSettings
from mlcost_lint.model.training._values import (
    ConfigView, as_bool, as_int, as_lower, as_str,
)
from mlcost_lint.model.training.common import (
    MODEL_ID_KEYS, as_positive_steps, as_step_interval, debug_flag, put,
)

# Trainer(precision=...) spellings (lightning.fabric.connector) -> vocabulary.
# 64-bit is not in the vocabulary: UNKNOWN rather than a wrong word.
_PRECISION = {
    "32": "fp32", "32-true": "fp32",
    "16": "fp16", "16-mixed": "fp16", "16-true": "fp16",
    "bf16": "bf16", "bf16-mixed": "bf16", "bf16-true": "bf16",
    "transformer-engine": "fp8", "transformer-engine-float16": "fp8",
}
_DEVICE = {"cpu": "cpu", "tpu": "tpu", "gpu": "gpu", "cuda": "gpu", "mps": "gpu", "auto": "gpu"}


def as_precision(value: Any) -> Any:
    if isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, (int, float)):
        value = str(int(value)) if float(value).is_integer() else str(value)
    text = as_lower(value)
    return _PRECISION.get(text, UNKNOWN) if text is not UNKNOWN else UNKNOWN


def as_device(value: Any) -> Any:
    text = as_lower(value)
    return _DEVICE.get(text, UNKNOWN) if text is not UNKNOWN else UNKNOWN


def read_trainer(view: ConfigView, settings: TrainingSettings, trainer: tuple = ("trainer",)) -> None:
    """The Trainer arguments under ``trainer`` (Lightning CLI and NeMo)."""
    put(settings, "precision", view.setting(trainer + ("precision",), as_precision))
    if not view.has(*trainer, "precision") and view.get(*trainer, "plugins"):
        # A precision plugin (bitsandbytes, MixedPrecision...) decides instead.
        settings.precision = Setting(UNKNOWN, True, view.loc(*trainer, "plugins"), "trainer.plugins")
    put(settings, "device", view.setting(trainer + ("accelerator",), as_device))
    put(settings, "logging_steps", view.setting(trainer + ("log_every_n_steps",), as_step_interval))
    put(settings, "checkpointing_enabled", view.setting(trainer + ("enable_checkpointing",), as_bool))
    put(settings, "max_steps", view.setting(trainer + ("max_steps",), as_positive_steps))
    put(settings, "output_dir", view.setting(trainer + ("default_root_dir",), as_str))
    put(settings, "num_machines", view.setting(trainer + ("num_nodes",), _count))

    # barebones=True turns checkpointing and step logging off.
    bare = view.setting(trainer + ("barebones",), as_bool)
    if bare is not None and bare.value is True:
        settings.checkpointing_enabled = Setting(False, True, bare.location, bare.key)

    if as_bool(view.get(*trainer, "detect_anomaly")) is True:
        debug_flag(view, trainer + ("detect_anomaly",), settings)
    debug_flag(view, trainer + ("profiler",), settings)

    callbacks = view.get(*trainer, "callbacks")
    entries = [(i, c) for i, c in enumerate(callbacks)] if isinstance(callbacks, list) else \
        [(None, callbacks)] if isinstance(callbacks, dict) else []
    for index, callback in entries:
        if not isinstance(callback, dict):
            continue
        cls = callback.get("class_path")
        if not (isinstance(cls, str) and cls.rsplit(".", 1)[-1] == "ModelCheckpoint"):
            continue
        base = trainer + ("callbacks",) + ((index,) if index is not None else ()) + ("init_args",)
        read_model_checkpoint(view, settings, base)
        break


def read_model_checkpoint(view: ConfigView, settings: TrainingSettings, base: tuple) -> None:
    """ModelCheckpoint arguments (Lightning) or NeMo checkpoint_callback_params."""
    put(settings, "checkpoint_limit", view.setting(base + ("save_top_k",), as_top_k))
    steps = view.setting(base + ("every_n_train_steps",), as_int)
    if steps is not None and steps.value is not UNKNOWN and steps.value > 0:
        settings.save_steps = steps
        settings.save_strategy = Setting("steps", True, steps.location, steps.key)
    elif steps is not None and steps.value is UNKNOWN:
        settings.save_strategy = Setting(UNKNOWN, True, steps.location, steps.key)
    epochs = view.setting(base + ("every_n_epochs",), as_int)
    if epochs is not None and not settings.save_strategy.explicit:
        settings.save_strategy = Setting("epoch" if epochs.value is not UNKNOWN and epochs.value > 0
                                         else UNKNOWN, True, epochs.location, epochs.key)
    if view.has(*base, "train_time_interval") and not settings.save_strategy.explicit:
        settings.save_strategy = Setting(UNKNOWN, True, view.loc(*base, "train_time_interval"),
                                         ".".join(str(b) for b in base) + ".train_time_interval")
    put(settings, "output_dir", view.setting(base + ("dirpath",), as_str))


def as_top_k(value: Any) -> Any:
    """save_top_k: -1 keeps every checkpoint (None), k >= 0 keeps k."""
    number = as_int(value)
    if number is UNKNOWN:
        return UNKNOWN
    if number == -1:
        return None
    return number if number >= 0 else UNKNOWN


def read_data_block(view: ConfigView, settings: TrainingSettings, base: tuple) -> None:
    put(settings, "dataloader_num_workers", view.setting(base + ("num_workers",), _workers))
    put(settings, "dataloader_pin_memory", view.setting(base + ("pin_memory",), as_bool))


def read(view: ConfigView, settings: TrainingSettings, flavour: str = "") -> None:
    read_trainer(view, settings)
    read_data_block(view, settings, ("data", "init_args"))
    for key in MODEL_ID_KEYS:
        found = view.setting(("model", "init_args", key), as_str)
        if found is not None:
            settings.model_id = found
            break


def _workers(value: Any) -> Any:
    number = as_int(value)
    return number if number is not UNKNOWN and number >= 0 else UNKNOWN


def _count(value: Any) -> Any:
    number = as_int(value)
    return number if number is not UNKNOWN and number >= 1 else UNKNOWN

