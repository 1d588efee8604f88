"""NeMo (Hydra/OmegaConf) YAML: a Lightning ``trainer:`` block, NeMo's
``exp_manager:`` (which builds the checkpoint callback) and ``model:`` with
its ``train_ds``. ``${...}`` interpolations are UNKNOWN."""

from __future__ import annotations

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import TrainingSettings
from mlcost_lint.model.training._values import ConfigView, as_bool, as_str
from mlcost_lint.model.training.common import put
from mlcost_lint.model.training.lightning import read_data_block, read_model_checkpoint, read_trainer

_EXP = ("exp_manager",)


def read(view: ConfigView, settings: TrainingSettings, flavour: str = "") -> None:
    read_trainer(view, settings)
    # exp_manager owns checkpointing: create_checkpoint_callback and its params.
    create = view.setting(_EXP + ("create_checkpoint_callback",), as_bool)
    if create is not None:
        settings.checkpointing_enabled = create
    read_model_checkpoint(view, settings, _EXP + ("checkpoint_callback_params",))
    put(settings, "output_dir", view.setting(_EXP + ("exp_dir",), as_str))
    for block in ("train_ds", "data"):
        if isinstance(view.get("model", block), dict):
            read_data_block(view, settings, ("model", block))
            break
    found = view.first((("model", "restore_from_path"), ("model", "pretrained_model_name"),
                        ("model", "model_name_or_path")), as_str)
    put(settings, "model_id", found)
    # A NeMo PEFT recipe: model.peft.peft_scheme lora/qlora.
    scheme = view.setting(("model", "peft", "peft_scheme"), _lora_scheme)
    if scheme is not None:
        settings.lora = scheme


def _lora_scheme(value: object) -> object:
    if isinstance(value, str):
        return value.strip().lower() in ("lora", "qlora")
    return False if value is None else UNKNOWN
