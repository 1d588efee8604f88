from __future__ import annotations

from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.model.training import Framework, TrainingConfig
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.efficiency.gpu_training import (
    config_label, config_subject, device_of, partners, raw_value,
)

FP32 = "fp32"

# What to write instead, per framework: (with bf16, on a GPU without bf16).
# None: the framework has no mixed-precision switch for that GPU (torchtune
# refuses fp16 for fine-tuning), so there is nothing to tell the user.
_FIX: dict[Framework, tuple[str, str | None]] = {
    Framework.TRANSFORMERS: ("bf16: true", "fp16: true"),
    Framework.AXOLOTL: ("bf16: auto", "fp16: true"),
    Framework.ACCELERATE: ("mixed_precision: bf16", "mixed_precision: fp16"),
    Framework.DEEPSPEED: ('"bf16": {"enabled": true}', '"fp16": {"enabled": true}'),
    Framework.LIGHTNING: ("trainer.precision: bf16-mixed", "trainer.precision: 16-mixed"),
    Framework.NEMO: ("trainer.precision: bf16-mixed", "trainer.precision: 16-mixed"),
    Framework.TORCHTUNE: ("dtype: bf16", None),
}

# Frameworks whose fp32 default lives in a ``trainer:`` block: a config
# without one (a LightningCLI model/data file) gets its Trainer arguments
# from another file or the command line, so the default is not certain.
_TRAINER_BLOCK = frozenset({Framework.LIGHTNING, Framework.NEMO})


class NoMixedPrecision(Rule):
    """
    ## What it does
    Flags GPU training in full fp32: Transformers/TRL/alignment-handbook
    configs without `bf16`/`fp16` on (the Transformers default is fp32),
    Axolotl with every half-precision switch off, Accelerate
    `mixed_precision: "no"`, a DeepSpeed `fp16`/`bf16` block with
    `enabled: false`, Lightning `trainer.precision` 32/`"32-true"`/absent,
    torchtune `dtype: fp32`, NeMo `trainer.precision: 32`.

    A config is GPU training when a workload in the scan runs it with a GPU,
    or when nothing in the scan runs it and it does not say CPU or TPU. It
    is not flagged when a config that shapes the same run sets mixed
    precision: the Accelerate config passed with it, the Trainer config
    that names its DeepSpeed config, a DeepSpeed config with
    `bf16.enabled: true`. Values left to run time (`"auto"`, `${...}`) are
    unknown and never flagged. A DeepSpeed config with no precision block is
    flagged only when it is written for `deepspeed.initialize` itself (literal
    batch sizes, no `"auto"` value anywhere): one written for the HF Trainer or
    Accelerate (`"auto"` values) gets its precision from them.

    ## Why is this expensive
    Tensor cores on A100/H100/L4-class GPUs run bf16/fp16 matrix maths 2-16x
    faster than fp32, and half-precision activations halve memory, which
    allows larger batches. An fp32 run takes about twice the GPU hours for
    the same model quality.

    ## Example
    ```yaml
    # TrainingArguments
    output_dir: /checkpoints/bert-imdb
    per_device_train_batch_size: 4
    gradient_accumulation_steps: 8
    learning_rate: 2.0e-5
    ```

    ## Fix
    Turn mixed precision on (`fp16` instead of `bf16` on T4/V100 and older
    GPUs, which have no bf16):
    ```yaml
    bf16: true
    ```
    """

    code = "MLC601"
    name = "no-mixed-precision"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.EFFICIENCY
    reports_in = frozenset({Reports.TRAINING, Reports.WORKLOAD})
    summary = "GPU training in full fp32 precision"
    fix = "Enable bf16 (fp16 on T4/V100) mixed precision."

    def check(self, project, settings) -> Iterator[Finding]:
        for config in project.training:
            finding = self._check_config(project, config)
            if finding is not None:
                yield finding

    def _check_config(self, project, config: TrainingConfig) -> Finding | None:
        precision = config.settings.precision
        if precision.value != FP32:
            return None
        framework = config.framework
        if framework not in _FIX:
            return None
        if framework is Framework.DEEPSPEED and not precision.explicit and not _standalone_deepspeed(config):
            return None
        trainer_block = config.document.get(config.key_path + ("trainer",))
        if framework in _TRAINER_BLOCK and not precision.explicit and not isinstance(trainer_block, dict):
            return None
        device = device_of(project, config)
        if not device.is_gpu:
            return None
        others, missing = partners(project, config)
        if missing:
            # A DeepSpeed/Accelerate config named but not in the scan may
            # set the precision itself.
            return None
        if any(_sets_precision(other) for other in others):
            return None

        with_bf16, without_bf16 = _FIX[framework]
        gpu = device.gpu
        if gpu is not None and not gpu.bf16:
            if without_bf16 is None:
                return None
            suggestion = f"set {without_bf16} ({gpu.name} has no bf16)"
        elif gpu is not None:
            suggestion = f"set {with_bf16}"
        else:
            suggestion = f"set {with_bf16} ({without_bf16} on T4/V100 and older GPUs)" \
                if without_bf16 else f"set {with_bf16}"

        what = _written_as(config)
        where = device.where()
        context = f" ({where})" if where else ""
        location = config.loc(precision)
        if precision.location is None and isinstance(trainer_block, dict):
            location = config.document.location(config.key_path + ("trainer",))
        message = f"{config_subject(config)} trains in full fp32 " \
                  f"on GPU{context}: {what}; {suggestion}"
        related: list[Related] = device.related()
        for other in others:
            if other.settings.precision.explicit and other.settings.precision.value is UNKNOWN:
                related.append(Related(other.loc(other.settings.precision),
                                       f"{config_label(other)} takes its precision from this config (auto)"))
        return self.finding(message, location, config.address, related=related,
                            object_line=config.location.line)


def _sets_precision(other: TrainingConfig) -> bool:
    """True when ``other`` may set the run's precision to something other
    than fp32: mixed precision written, or a value left to run time other
    than DeepSpeed/Accelerate ``"auto"`` (which takes this config's)."""
    setting = other.settings.precision
    if not setting.explicit:
        return False
    if setting.value is UNKNOWN:
        raw = raw_value(other, setting)
        return not (isinstance(raw, str) and raw.strip().lower() == "auto")
    return setting.value != FP32


def _written_as(config: TrainingConfig) -> str:
    """How the config says fp32, for the message."""
    setting = config.settings.precision
    framework = config.framework
    if setting.explicit:
        raw: Any = raw_value(config, setting)
        if framework is Framework.DEEPSPEED:
            return f"no fp16/bf16 block is enabled ({setting.key}: {_shown(raw)})"
        shown = str(raw).lower() if isinstance(raw, bool) else raw
        if framework in (Framework.TRANSFORMERS, Framework.AXOLOTL):
            return "bf16 and fp16 are false"
        return f"{setting.key}: {shown}" if shown is not None else f"{setting.key} is fp32"
    if framework in _TRAINER_BLOCK:
        return "trainer.precision is not set (Lightning defaults to 32-true)"
    if framework is Framework.TRANSFORMERS:
        return "neither bf16 nor fp16 is set (TrainingArguments default fp32)"
    return "no mixed precision is set"


def _shown(raw: Any) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, dict):
        return "{...}"
    return str(raw)


def _has_auto(node: Any) -> bool:
    if isinstance(node, str):
        return node.strip().lower() == "auto"
    if isinstance(node, dict):
        return any(_has_auto(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_auto(v) for v in node)
    return False


def _standalone_deepspeed(config: TrainingConfig) -> bool:
    """A DeepSpeed config for ``deepspeed.initialize`` (pipeline-parallel and
    GAN examples): a literal batch size and no ``"auto"`` left for the HF
    Trainer or Accelerate to fill, so a missing fp16/bf16 block means fp32."""
    root = config.document.get(config.key_path)
    if not isinstance(root, dict) or _has_auto(root):
        return False
    return any(isinstance(root.get(k), int) and not isinstance(root.get(k), bool)
               for k in ("train_batch_size", "train_micro_batch_size_per_gpu"))
