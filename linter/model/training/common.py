"""Pieces every framework reader shares: applying defaults, object-store
paths, model ids, and the Trainer-style argument block that Transformers,
TRL and Axolotl all write."""

from __future__ import annotations

import re
from typing import Any

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Setting, TrainingSettings
from mlcost_lint.model.training._values import (
    ConfigView, as_bool, as_int, as_lower, as_str, default_setting, is_runtime, key_text, written,
)
from mlcost_lint.model.training.defaults import defaults_for

# Object-store URIs (rules.md MLC501). The Azure https form needs the
# blob/dfs endpoint so that ordinary web URLs are not taken as data paths.
_OBJECT_STORE = re.compile(
    r"^(?:s3a?|gs|az|abfss?|wasbs?)://[^\s]+$"
    r"|^https://[a-z0-9]{3,24}\.(?:blob|dfs)\.core\.windows\.net(?:/[^\s]*)?$",
    re.IGNORECASE,
)

# Keys naming the model being trained, in the order they are preferred.
MODEL_ID_KEYS: tuple[str, ...] = (
    "base_model", "model_name_or_path", "pretrained_model_name_or_path", "model_name", "model_id",
)


def is_object_store_path(text: str) -> bool:
    # every such path has "://": a C-level test first (called for every string of every config)
    return "://" in text and bool(_OBJECT_STORE.match(text.strip()))


def collect_data_paths(view: ConfigView, settings: TrainingSettings) -> None:
    """Every object-store URI anywhere in the config, with its location.
    Interpolated values (``s3://${bucket}/x``) are left out: the bucket is
    not known."""
    for path, text in view.walk_strings():
        if is_object_store_path(text) and not is_runtime(text):
            settings.data_paths.append(
                Setting(text.strip(), explicit=True, location=view.loc(*path), key=key_text(path)))


def apply_defaults(settings: TrainingSettings, framework: str, flavour: str = "") -> None:
    """Fill every setting still absent (UNKNOWN and not written) with the
    framework's default, ``explicit=False``. Then the device: a config that
    does not say where it runs is GPU training (rules.md, Settled questions)."""
    for name, (value, _source) in defaults_for(framework, flavour).items():
        current: Setting[Any] = getattr(settings, name)
        if not current.explicit and current.value is UNKNOWN:
            setattr(settings, name, default_setting(value))
    if not settings.device.explicit and settings.device.value is UNKNOWN:
        settings.device = default_setting("gpu")


def put(settings: TrainingSettings, name: str, found: Setting[Any] | None) -> None:
    """Store a written setting; keep the current one when nothing was written."""
    if found is not None:
        setattr(settings, name, found)


def read_model_id(view: ConfigView, settings: TrainingSettings, base: tuple = ()) -> None:
    put(settings, "model_id", view.first(tuple(base + (k,) for k in MODEL_ID_KEYS), as_str))


def precision_from_flags(view: ConfigView, flags: tuple[tuple[tuple, str], ...],
                         truthy: dict[str, str] | None = None,
                         default_on: frozenset[str] = frozenset()) -> Setting[Any] | None:
    """Precision from boolean switches such as ``bf16: true``/``fp16: true``.

    ``flags`` are (key path, precision) pairs in priority order. The first
    switch that is on wins; a run-time value (``auto``, ``${...}``) makes the
    result UNKNOWN unless ``truthy`` maps that text to a precision (Axolotl
    ``bf16: auto`` is on). When no switch is on: "fp32", explicit at the
    first switch written off, provided every unwritten switch is off by
    default. A switch named in ``default_on`` (by its first key) that is
    not written leaves the answer to the framework default (None)."""
    truthy = truthy or {}
    seen_off: list[Setting[Any]] = []
    unknown: Setting[Any] | None = None
    unwritten_on = False
    for keys, precision in flags:
        raw = view.get(*keys, default=None)
        found = view.setting(keys, as_bool)
        if found is None or raw is None:  # null: the framework's default decides
            unwritten_on = unwritten_on or keys[0] in default_on
            continue
        if isinstance(raw, str) and raw.strip().lower() in truthy:
            return Setting(truthy[raw.strip().lower()], True, found.location, found.key)
        if found.value is True:
            return Setting(precision, True, found.location, found.key)
        if found.value is UNKNOWN:
            unknown = unknown or found
        else:
            seen_off.append(found)
    if unknown is not None:
        return Setting(UNKNOWN, True, unknown.location, unknown.key)
    if seen_off and not unwritten_on:
        first = seen_off[0]
        return Setting("fp32", True, first.location, first.key)
    return None


# --- Trainer-style arguments (Transformers TrainingArguments, TRL, Axolotl) ---

_SAVE_STRATEGIES = frozenset({"steps", "epoch", "no", "best"})


def as_save_strategy(value: Any) -> Any:
    text = as_lower(value)
    if isinstance(text, str):
        text = text.removeprefix("intervalstrategy.").removeprefix("savestrategy.")
    return text if text in _SAVE_STRATEGIES else UNKNOWN


def as_step_interval(value: Any) -> Any:
    """``save_steps``/``logging_steps``: an int >= 1; a float below 1 is a
    ratio of the run length, unknown here."""
    number = as_int(value)
    if number is UNKNOWN or number < 1:
        return UNKNOWN
    return number


def as_positive_steps(value: Any) -> Any:
    """``max_steps``: -1 (or any value below 1) means "not step-limited"."""
    number = as_int(value)
    return number if number is not UNKNOWN and number > 0 else UNKNOWN


def as_checkpoint_limit(value: Any) -> Any:
    """``save_total_limit``: None or <= 0 keeps every checkpoint (Transformers
    rotates only for a positive limit)."""
    if value is None:
        return None
    number = as_int(value)
    if number is UNKNOWN:
        return UNKNOWN
    return number if number > 0 else None


def as_report_to(value: Any) -> Any:
    if isinstance(value, str):
        return UNKNOWN if is_runtime(value) else value.strip()
    if isinstance(value, list) and all(isinstance(v, str) and not is_runtime(v) for v in value):
        return [v.strip() for v in value]
    if value is None:
        return "none"
    return UNKNOWN


def as_fsdp_on(value: Any) -> Any:
    """TrainingArguments ``fsdp``: a non-empty option string/list or true."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return bool(value.strip()) and value.strip().lower() not in ("false", "no", "none")
    if isinstance(value, list):
        return bool(value)
    if value is None:
        return False
    return UNKNOWN


def read_trainer_arguments(view: ConfigView, settings: TrainingSettings) -> None:
    """The keys TrainingArguments defines, as written (shared by Transformers,
    TRL and Axolotl, which passes them through)."""
    put(settings, "save_strategy", view.setting(("save_strategy",), as_save_strategy))
    put(settings, "save_steps", view.setting(("save_steps",), as_step_interval))
    put(settings, "checkpoint_limit", view.setting(("save_total_limit",), as_checkpoint_limit))
    put(settings, "hub_strategy", view.setting(("hub_strategy",), as_lower))
    put(settings, "output_dir", view.setting(("output_dir",), as_str))
    put(settings, "max_steps", view.setting(("max_steps",), as_positive_steps))
    put(settings, "logging_steps", view.setting(("logging_steps",), as_step_interval))
    put(settings, "log_level", view.setting(("log_level",), as_lower))
    put(settings, "log_level_replica", view.setting(("log_level_replica",), as_lower))
    put(settings, "report_to", view.setting(("report_to",), as_report_to))
    put(settings, "dataloader_num_workers", view.setting(("dataloader_num_workers",), as_int))
    put(settings, "dataloader_pin_memory", view.setting(("dataloader_pin_memory",), as_bool))

    # Checkpointing follows the save strategy when that is written.
    strategy = settings.save_strategy
    if strategy.explicit:
        enabled = UNKNOWN if strategy.value is UNKNOWN else strategy.value != "no"
        settings.checkpointing_enabled = Setting(enabled, True, strategy.location, strategy.key)

    # use_cpu (and the older no_cuda) force CPU training.
    for key in ("use_cpu", "no_cuda"):
        found = view.setting((key,), as_bool)
        if found is None:
            continue
        if found.value is True:
            settings.device = Setting("cpu", True, found.location, found.key)
            break
        if found.value is UNKNOWN:
            settings.device = Setting(UNKNOWN, True, found.location, found.key)

    # TrainingArguments.debug ("underflow_overflow", "tpu_metrics_debug")
    # slows every step; an empty string or list is off.
    debug = view.get("debug")
    if (isinstance(debug, str) and debug.strip() and not is_runtime(debug)) or \
            (isinstance(debug, list) and debug):
        text = debug if isinstance(debug, str) else " ".join(str(d) for d in debug)
        settings.debug_flags.append(Setting(text, True, view.loc("debug"), "debug"))

    # DeepSpeed: a path is a referenced config (its ZeRO stage is read there);
    # an inline dict is read here.
    ds = view.get("deepspeed", default=None)
    if isinstance(ds, str) and ds.strip():
        if not is_runtime(ds):
            settings.referenced_configs.append(Setting(ds.strip(), True, view.loc("deepspeed"), "deepspeed"))
        settings.zero_stage = Setting(UNKNOWN, True, view.loc("deepspeed"), "deepspeed")
    elif isinstance(ds, dict):
        stage = view.setting(("deepspeed", "zero_optimization", "stage"), as_int)
        settings.zero_stage = stage or Setting(0, True, view.loc("deepspeed"), "deepspeed")
    elif ds is not None:
        settings.zero_stage = Setting(UNKNOWN, True, view.loc("deepspeed"), "deepspeed")
    acc = view.get("accelerate_config", default=None)
    if isinstance(acc, str) and acc.strip() and not is_runtime(acc):
        settings.referenced_configs.append(
            Setting(acc.strip(), True, view.loc("accelerate_config"), "accelerate_config"))

    put(settings, "fsdp", view.setting(("fsdp",), as_fsdp_on))

    # Quantised loading (TRL ModelConfig, Axolotl): 4 wins over 8.
    for key, bits in (("load_in_4bit", 4), ("load_in_8bit", 8)):
        found = view.setting((key,), as_bool)
        if found is not None and found.value is True:
            settings.load_bits = Setting(bits, True, found.location, found.key)
            break
        if found is not None and found.value is UNKNOWN:
            settings.load_bits = Setting(UNKNOWN, True, found.location, found.key)


def debug_flag(view: ConfigView, keys: tuple, settings: TrainingSettings) -> None:
    """Record ``keys`` as a debug flag when its value is on (true, or a
    profiler name/object); off values (false, null, "") are not flags."""
    raw = view.get(*keys, default=None)
    if raw is None or raw is False:
        return
    if isinstance(raw, str) and (not raw.strip() or raw.strip().lower() in ("false", "none", "null", "no")):
        return
    if isinstance(raw, (dict, list)) and not raw:
        return
    if is_runtime(raw):
        return
    settings.debug_flags.append(Setting(written(raw), True, view.loc(*keys), key_text(keys)))
