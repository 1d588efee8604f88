"""DeepSpeed JSON (or YAML) configs. ``"auto"`` values are filled in by the
HF Trainer/Accelerate integration at run time: UNKNOWN here."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Setting, TrainingSettings
from mlcost_lint.model.training._values import ConfigView, as_bool, as_int
from mlcost_lint.model.training.common import as_step_interval, debug_flag, put

# "bfloat16" is the older spelling of the bf16 block (constants.BFLOAT16_OLD).
_PRECISION_BLOCKS = (("bf16", "bf16"), ("bfloat16", "bf16"), ("fp16", "fp16"), ("amp", "mixed"))
# Profilers and timers that slow every step (rules.md MLC403).
_DEBUG_KEYS = (("flops_profiler", "enabled"), ("wall_clock_breakdown",), ("comms_logger", "enabled"))


def read(view: ConfigView, settings: TrainingSettings, flavour: str = "") -> None:
    put(settings, "precision", precision(view))
    zero = view.get("zero_optimization", default=None)
    if isinstance(zero, dict):
        put(settings, "zero_stage", view.setting(("zero_optimization", "stage"), as_int)
            or Setting(0, True, view.loc("zero_optimization"), "zero_optimization"))
    elif zero is not None:
        settings.zero_stage = Setting(UNKNOWN, True, view.loc("zero_optimization"), "zero_optimization")
    put(settings, "logging_steps", view.setting(("steps_per_print",), as_step_interval))
    for keys in _DEBUG_KEYS:
        if as_bool(view.get(*keys)) is True:
            debug_flag(view, keys, settings)


def precision(view: ConfigView) -> Setting | None:
    """The first enabled precision block wins; ``"auto"`` is UNKNOWN; none
    enabled -> fp32 (explicit when some block says enabled: false)."""
    off: Setting | None = None
    for block, name in _PRECISION_BLOCKS:
        if not isinstance(view.get(block), dict):
            continue
        found = view.setting((block, "enabled"), as_bool)
        if found is None:
            # A block without "enabled" is off (DeepSpeed *_ENABLED_DEFAULT = False).
            off = off or Setting("fp32", True, view.loc(block), block)
            continue
        if found.value is True:
            return Setting(name, True, found.location, found.key)
        if found.value is UNKNOWN:
            return Setting(UNKNOWN, True, found.location, found.key)
        off = off or Setting("fp32", True, found.location, found.key)
    return off
