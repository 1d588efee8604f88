"""Accelerate config YAML (``accelerate config`` / ``accelerate launch
--config_file``), including its nested ``deepspeed_config``/``fsdp_config``."""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Setting, TrainingSettings
from mlcost_lint.model.training._values import ConfigView, as_bool, as_int, as_lower, as_str, default_setting
from mlcost_lint.model.training.common import put

_MIXED_PRECISION = {"no": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8"}
# distributed_type -> device. GPU-class: CUDA/ROCm and Intel XPU; XLA/TPU;
# CPU; other accelerators (HPU, NPU, MLU, ...) are not in the vocabulary.
_DEVICE_BY_TYPE = {
    "no": "gpu", "multi_gpu": "gpu", "deepspeed": "gpu", "fsdp": "gpu", "megatron_lm": "gpu",
    "multi_xpu": "gpu", "xla": "tpu", "tpu": "tpu", "multi_cpu": "cpu",
}


def read(view: ConfigView, settings: TrainingSettings, flavour: str = "") -> None:
    put(settings, "precision", view.setting(("mixed_precision",), _precision))
    if not view.has("mixed_precision"):
        # Configs older than mixed_precision wrote `fp16: true` (config_args.py).
        legacy = view.setting(("fp16",), as_bool)
        if legacy is not None and legacy.value is True:
            settings.precision = Setting("fp16", True, legacy.location, legacy.key)
    dist = view.setting(("distributed_type",), as_lower)
    dist_type = dist.value if dist is not None else UNKNOWN

    if dist is not None:
        device = _DEVICE_BY_TYPE.get(dist_type, UNKNOWN) if dist_type is not UNKNOWN else UNKNOWN
        settings.device = Setting(device, True, dist.location, dist.key)
    cpu = view.setting(("use_cpu",), as_bool)
    if cpu is not None and cpu.value is True:
        settings.device = Setting("cpu", True, cpu.location, cpu.key)

    put(settings, "num_processes", view.setting(("num_processes",), _count))
    put(settings, "num_machines", view.setting(("num_machines",), _count))
    if not settings.num_processes.explicit and dist_type == "no":
        # config_args.py: num_processes defaults to 1 for distributed_type NO.
        settings.num_processes = default_setting(1)

    if dist is not None and dist_type is not UNKNOWN:
        settings.fsdp = Setting(dist_type == "fsdp", True, dist.location, dist.key)
        if dist_type == "deepspeed":
            ds_file = view.setting(("deepspeed_config", "deepspeed_config_file"), as_str)
            stage = view.setting(("deepspeed_config", "zero_stage"), as_int)
            if ds_file is not None and ds_file.value is not UNKNOWN:
                settings.referenced_configs.append(ds_file)
                settings.zero_stage = Setting(UNKNOWN, True, ds_file.location, ds_file.key)
            elif stage is not None:
                settings.zero_stage = stage
            else:
                settings.zero_stage = Setting(UNKNOWN, True, dist.location, dist.key)
        else:
            settings.zero_stage = Setting(0, True, dist.location, dist.key)

    # `debug: true` (Accelerate's debug mode: shape checks on gathers) is not
    # a debug flag MLC403 reports: rules.md, "Fragments are not workloads".


def _precision(value: Any) -> Any:
    text = as_lower(value)
    return _MIXED_PRECISION.get(text, UNKNOWN) if text is not UNKNOWN else UNKNOWN


def _count(value: Any) -> Any:
    number = as_int(value)
    return number if number is not UNKNOWN and number >= 1 else UNKNOWN
