"""What each framework does when a key is absent (issue 5.2).

An absent key is not "unknown": the framework applies its default, and the
default is often the costly choice (Transformers keeps every checkpoint).
:data:`FRAMEWORK_DEFAULTS` lists only defaults that were checked in the
framework's source and that do not depend on run-time state; each entry says
where it was checked. Readers apply an entry with ``explicit=False`` and no
location when the config does not write the setting. docs/framework-defaults.md
is written from this table.

Keys are :class:`Framework` values plus dialects (``TrainingConfig.flavour``):
``"trl"`` overrides ``"transformers"`` for TRL-style configs, ``"script"`` for
files with model/script arguments and no TRL-only key. A dialect entry
whose value is :data:`UNKNOWN` removes the parent's default (the dialect's
default differs between versions, so it is not certain).

Setting names are :class:`TrainingSettings` field names; values use the
normalised vocabulary (``checkpoint_limit`` None = keep all).
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.core import UNKNOWN

_TF = "checked against transformers 5.24.0 src/transformers/training_args.py (TrainingArguments field default)"
_TRL = "checked against trl 1.16.0 trl/trainer/base_config.py (_BaseConfig)"
_AX = "checked against axolotl 0.19.0"
_DS = "checked against DeepSpeed deepspeedai/DeepSpeed@088be89 deepspeed/runtime/constants.py"
_ACC = "checked against accelerate 1.15.0 accelerate/commands/config/config_args.py"
_PL = "checked against lightning 2.6.6 lightning/pytorch/trainer/trainer.py"
_PLCK = "checked against lightning 2.6.6 lightning/pytorch/callbacks/model_checkpoint.py"
_TT = "checked against torchtune 0.6.1 recipes/*.py"

FRAMEWORK_DEFAULTS: dict[str, dict[str, tuple[Any, str]]] = {
    "transformers": {
        "precision": ("fp32", f"{_TF}: bf16=False, fp16=False"),
        "save_strategy": ("steps", f"{_TF}: save_strategy='steps'"),
        "save_steps": (500, f"{_TF}: save_steps=500"),
        "checkpoint_limit": (None, f"{_TF}: save_total_limit=None (keep all)"),
        "checkpointing_enabled": (True, f"{_TF}: save_strategy='steps' saves checkpoints"),
        "hub_strategy": ("every_save", f"{_TF}: hub_strategy='every_save'"),
        "logging_steps": (500, f"{_TF}: logging_steps=500"),
        "log_level": ("passive", f"{_TF}: log_level='passive'"),
        "log_level_replica": ("warning", f"{_TF}: log_level_replica='warning'"),
        "dataloader_num_workers": (0, f"{_TF}: dataloader_num_workers=0"),
        "dataloader_pin_memory": (True, f"{_TF}: dataloader_pin_memory=True"),
        "zero_stage": (0, f"{_TF}: deepspeed=None (no ZeRO unless a DeepSpeed config is given)"),
        "fsdp": (False, f"{_TF}: fsdp=None/'' (no FSDP)"),
    },
    "trl": {
        # TRL >= the _BaseConfig rewrite sets bf16=None -> True unless fp16;
        # older TRL inherited bf16=False. The version is not in the config.
        "precision": (UNKNOWN, f"{_TRL}: bf16=None -> True unless fp16 (older TRL: False), version-dependent"),
        "logging_steps": (UNKNOWN, f"{_TRL}: logging_steps=10 (older TRL: 500), version-dependent"),
    },
    "script": {
        # Trainer keys beside model/script arguments (model_name_or_path,
        # dataset_name) and no TRL-only key: parsed by the TRL CLI (bf16 on by
        # default) or by a Transformers example script (fp32); the file does
        # not say which, so the defaults that differ are unknown.
        "precision": (UNKNOWN, f"{_TRL} vs {_TF}: TRL CLI or Transformers script, not written in the file"),
        "logging_steps": (UNKNOWN, f"{_TRL} vs {_TF}: TRL CLI or Transformers script, not written in the file"),
    },
    "axolotl": {
        "precision": ("bf16", f"{_AX} src/axolotl/utils/schemas/config.py: bf16='auto' (on)"),
        "save_strategy": ("epoch", f"{_AX} src/axolotl/core/builders/base.py: 'epoch' when neither save_steps nor save_strategy"),
        "checkpointing_enabled": (True, f"{_AX} src/axolotl/core/builders/base.py: saves every epoch by default"),
        "checkpoint_limit": (4, f"{_AX} src/axolotl/core/builders/base.py: save_total_limit if truthy else 4"),
        "output_dir": ("./model-out", f"{_AX} src/axolotl/utils/schemas/model.py: output_dir='./model-out'"),
        "hub_strategy": ("every_save", f"{_AX}: hub_strategy=None is not passed on; {_TF}"),
        "dataloader_num_workers": (0, f"{_AX}: passed to TrainingArguments only when set; {_TF}"),
        "dataloader_pin_memory": (True, f"{_AX}: passed to TrainingArguments only when set; {_TF}"),
        "lora": (False, f"{_AX} src/axolotl/utils/schemas/peft.py: adapter=None (full fine-tune)"),
        "load_bits": (16, f"{_AX} src/axolotl/utils/schemas/peft.py: load_in_8bit=False, load_in_4bit=False"),
        "zero_stage": (0, f"{_AX}: no ZeRO unless deepspeed: is given"),
        "fsdp": (False, f"{_AX}: no FSDP unless fsdp/fsdp_config is given"),
    },
    "deepspeed": {
        "precision": ("fp32", f"{_DS}: FP16_ENABLED_DEFAULT=False, BFLOAT16_ENABLED_DEFAULT=False"),
        "zero_stage": (0, "checked against DeepSpeed deepspeedai/DeepSpeed deepspeed/runtime/zero/config.py: DeepSpeedZeroConfig.stage=0"),
        # steps_per_print: 10 in older DeepSpeed, None (never) in current master.
    },
    "accelerate": {
        "num_machines": (1, f"{_ACC}: ClusterConfig.num_machines=1"),
        # mixed_precision absent -> None in the config: the script's own
        # Accelerator(mixed_precision=...) or the env decides, so UNKNOWN.
    },
    "lightning": {
        "precision": ("fp32", f"{_PL}: precision=None -> '32-true' (connectors/accelerator_connector.py)"),
        "logging_steps": (50, f"{_PL}: log_every_n_steps=None -> 50"),
        "checkpointing_enabled": (True, f"{_PL}: enable_checkpointing=None -> True"),
        "checkpoint_limit": (1, f"{_PLCK}: ModelCheckpoint(save_top_k=1)"),
        "save_strategy": ("epoch", f"{_PLCK}: every_n_epochs=1 when no interval is set"),
    },
    "torchtune": {
        "logging_steps": (1, f"{_TT}: cfg.get('log_every_n_steps', 1)"),
        "save_strategy": ("epoch", f"{_TT}: save_checkpoint(epoch=curr_epoch) at the end of every epoch"),
        "checkpointing_enabled": (True, f"{_TT}: save_checkpoint at the end of every epoch"),
    },
    "nemo": {
        # NeMo builds a Lightning Trainer from cfg.trainer, so the Trainer's
        # defaults apply to an uncomposed config (flavour "", see detect.py).
        "precision": ("fp32", f"{_PL}: precision=None -> '32-true' (NeMo passes cfg.trainer to Trainer)"),
        "logging_steps": (50, f"{_PL}: log_every_n_steps=None -> 50 (NeMo passes cfg.trainer to Trainer)"),
    },
    "hydra": {
        # A config composed from a defaults list gets its absent keys from
        # other files: no default is certain.
    },
}


def defaults_for(framework: str, flavour: str = "") -> dict[str, tuple[Any, str]]:
    """The defaults that apply to one config: the framework's, overridden by
    its dialect's; UNKNOWN entries removed. A Hydra-composed config has none."""
    if flavour == "hydra":
        return {}
    table = dict(FRAMEWORK_DEFAULTS.get(framework, {}))
    if flavour:
        table.update(FRAMEWORK_DEFAULTS.get(flavour, {}))
    return {name: entry for name, entry in table.items() if entry[0] is not UNKNOWN}


def _cell(value: Any) -> str:
    if value is UNKNOWN:
        return "UNKNOWN (not modelled)"
    if value is None:
        return "None (keep all)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def defaults_markdown() -> str:
    """The defaults table as Markdown (docs/framework-defaults.md embeds it;
    a test keeps the two equal)."""
    lines = ["| framework | setting | default | checked against |", "|---|---|---|---|"]
    for framework, table in FRAMEWORK_DEFAULTS.items():
        for name, (value, source) in table.items():
            lines.append(f"| {framework} | `{name}` | {_cell(value)} | {source.removeprefix('checked against ')} |")
    return "\n".join(lines) + "\n"
