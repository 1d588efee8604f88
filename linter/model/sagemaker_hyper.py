"""A SageMaker training job's ``hyper_parameters`` as a training config.

SageMaker passes ``hyper_parameters`` to the training entry point as
``--key value`` command-line flags (the Hugging Face, PyTorch and other
framework containers do so through the training toolkit; the SageMaker
Python SDK JSON-encodes each value, so ``"\\"gpt2\\""`` is the string
``gpt2``). A Hugging Face job names its model there (``model_name_or_path``,
``model_id``, ``model_name``) and often its Trainer flags (``bf16``,
``use_peft``, ``fsdp``, ``deepspeed``).

Which rules it feeds, and why so few: the flags are read by a script we
do not see, so every flag it does not pass has the *script's* default,
not a framework's. The config therefore holds only what the memory
estimate needs (model id, precision, LoRA, quantised load, ZeRO, FSDP) and
the device switch (``use_cpu``/``no_cuda``); it is linked to the job's
container like a config a command names, never listed among the scanned
training configs, so MLC301/MLC302/MLC402/MLC601/MLC602 (which would have
to assume Transformers defaults for every flag not passed) do not run on
it, and its checkpoint and logging flags are not read (SageMaker's
``checkpoint_config`` is what MLC207/MLC208 judge). Its ``flavour`` is
:data:`SCRIPT_FLAGS`: a memory feature it does not state (LoRA, sharding,
the load precision of a LoRA) may be on in the script, so the estimate is
taken at its largest (MLC201(c)) and no OOM is predicted (MLC202) unless
every feature is stated.

A map with no model id and no Trainer-style key (an XGBoost job's
``max_depth``, a script's ``epochs``) is not a training config.
"""

from __future__ import annotations

import json
from typing import Any

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework, TrainingConfig, TrainingSettings
from mlcost_lint.model.training.common import MODEL_ID_KEYS
from mlcost_lint.parse.document import Document, KeyPath

# TrainingConfig.flavour of a config made of a script's command-line flags.
SCRIPT_FLAGS = "script-flags"

# Keys that only a Transformers TrainingArguments / TRL parser defines (a
# generic ``epochs``, ``learning_rate`` or ``batch_size`` does not count).
TRAINER_KEYS = frozenset({
    "per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
    "num_train_epochs", "bf16", "fp16", "tf32", "gradient_checkpointing", "save_strategy", "save_total_limit",
    "eval_strategy", "evaluation_strategy", "logging_steps", "warmup_ratio", "lr_scheduler_type",
    "use_peft", "fsdp", "deepspeed", "use_cpu", "no_cuda", "load_in_4bit", "load_in_8bit",
})

# The settings copied from the Transformers reader: the memory estimate and the device.
_KEPT = ("model_id", "precision", "lora", "load_bits", "zero_stage", "fsdp", "device")


def decoded(value: Any) -> Any:
    """A hyperparameter value as the script sees it: the SDK's JSON
    encoding removed (``"\\"gpt2\\""`` -> ``gpt2``, ``"true"`` stays text);
    anything not literal is UNKNOWN."""
    if value is UNKNOWN or not isinstance(value, (str, int, float, bool)):
        return UNKNOWN
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            inner = json.loads(value)
        except ValueError:
            return value
        return inner if isinstance(inner, str) else value
    return value


def hyper_parameters_config(resource: Any, title: str) -> TrainingConfig | None:
    """The training config a job's ``hyper_parameters`` map states, or None."""
    from mlcost_lint.model.training import transformers
    from mlcost_lint.model.training._values import ConfigView

    raw = resource.attrs.get("hyper_parameters")
    if not isinstance(raw, dict) or not raw:
        return None
    data = {k: decoded(v) for k, v in raw.items() if isinstance(k, str)}
    models = [k for k in MODEL_ID_KEYS if isinstance(data.get(k), str) and data[k].strip()]
    trainer = sorted(k for k in data if k in TRAINER_KEYS)
    if not models and not trainer:
        return None
    base = resource.loc("hyper_parameters")
    positions: dict[KeyPath, tuple[int, int]] = {(): (base.line, base.column)}
    for key in data:
        at = resource.loc(f"hyper_parameters.{key}")
        positions[(key,)] = (at.line, at.column)
    document = Document(path=base.path, index=0, data=data, positions=positions,
                        start_line=base.line, end_line=base.line)
    scratch = TrainingSettings()
    transformers.read(ConfigView(document), scratch)
    settings = TrainingSettings()
    for name in _KEPT:
        setattr(settings, name, getattr(scratch, name))
    said = ", ".join(models[:1] + trainer[:3])
    return TrainingConfig(
        path=base.path, framework=Framework.TRANSFORMERS,
        detection_reason=f"hyper_parameters of {title} (passed to the entry point as flags): {said}",
        document=document, settings=settings, flavour=SCRIPT_FLAGS)
