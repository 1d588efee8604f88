"""torchtune recipe configs: ``_component_`` blocks for the model,
checkpointer, optimizer..., plus recipe keys (``dtype``, ``device``,
``log_every_n_steps``, ``profiler``, ``output_dir``)."""

from __future__ import annotations

import re
from typing import Any

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Setting, TrainingSettings
from mlcost_lint.model.training._values import ConfigView, as_bool, as_lower, as_str
from mlcost_lint.model.training.common import as_step_interval, debug_flag, put

# training.get_dtype: "fp32"/"bf16"/"fp16" (fp16 is refused for finetuning,
# but it is what the config says); fp64 is not in the vocabulary.
_DTYPE = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16"}
_DEVICE = {"cpu": "cpu", "cuda": "gpu", "xpu": "gpu", "mps": "gpu"}
# torchtune.models.llama3_1.lora_llama3_1_8b / qlora_llama3_1_8b.
_LORA_BUILDER = re.compile(r"(?:^|\.)(q?lora)_[^.]*$")


def read(view: ConfigView, settings: TrainingSettings, flavour: str = "") -> None:
    put(settings, "precision", view.setting(("dtype",), _dtype))
    put(settings, "device", view.setting(("device",), _device))
    put(settings, "logging_steps", view.setting(("log_every_n_steps",), as_step_interval))
    put(settings, "output_dir", view.setting(("output_dir",), as_str))
    if as_bool(view.get("profiler", "enabled")) is True:
        debug_flag(view, ("profiler", "enabled"), settings)

    model = view.setting(("model", "_component_"), as_str)
    if model is not None:
        settings.model_id = model
        if isinstance(model.value, str):
            match = _LORA_BUILDER.search(model.value)
            settings.lora = Setting(bool(match), True, model.location, model.key)
            if match and match.group(1) == "qlora":
                settings.load_bits = Setting(4, True, model.location, model.key)
    # dataloader block (newer recipes): num_workers / pin_memory.
    put(settings, "dataloader_num_workers", view.setting(("dataloader", "num_workers"), _workers))
    put(settings, "dataloader_pin_memory", view.setting(("dataloader", "pin_memory"), as_bool))


def _dtype(value: Any) -> Any:
    text = as_lower(value)
    return _DTYPE.get(text, UNKNOWN) if text is not UNKNOWN else UNKNOWN


def _device(value: Any) -> Any:
    text = as_lower(value)
    if text is UNKNOWN:
        return UNKNOWN
    return _DEVICE.get(text.split(":", 1)[0], UNKNOWN)


def _workers(value: Any) -> Any:
    from mlcost_lint.model.training._values import as_int
    number = as_int(value)
    return number if number is not UNKNOWN and number >= 0 else UNKNOWN
