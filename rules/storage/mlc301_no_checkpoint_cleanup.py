from __future__ import annotations

from typing import Any, Iterator

from mlcost_lint.model.training import Framework, Setting, TrainingConfig
from mlcost_lint.model.training._values import as_bool
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.efficiency.gpu_training import config_subject

# Frameworks whose retention this rule knows. torchtune (one checkpoint per
# epoch, no retention switch in its recipes) and DeepSpeed (the script saves)
# have no keep-all form in their configs.
_TRAINER_STYLE = frozenset({Framework.TRANSFORMERS, Framework.AXOLOTL})
_TOP_K = frozenset({Framework.LIGHTNING, Framework.NEMO})
_SAVING = frozenset({"steps", "epoch", "best"})

# What keeps the newest checkpoints instead, per framework.
_FIX = {
    Framework.TRANSFORMERS: "set save_total_limit (e.g. 2)",
    Framework.AXOLOTL: "set save_total_limit (e.g. 2)",
    Framework.LIGHTNING: "set save_top_k to the number of checkpoints to keep (e.g. 3)",
    Framework.NEMO: "set save_top_k to the number of checkpoints to keep (e.g. 3)",
}


class NoCheckpointCleanup(Rule):
    """
    ## What it does
    Flags training configs that keep every checkpoint they write:
    Transformers/TRL/alignment-handbook configs that save (`save_strategy`
    steps, epoch or best; the Transformers default is every 500 steps)
    without a positive `save_total_limit`; Lightning `ModelCheckpoint` and
    NeMo `exp_manager.checkpoint_callback_params` with `save_top_k: -1`;
    `hub_strategy: all_checkpoints` with a push to the Hugging Face Hub
    (Transformers `push_to_hub: true`, Axolotl `hub_model_id`).

    Axolotl keeps 4 checkpoints when `save_total_limit` is unset, so only its
    `hub_strategy` is checked. torchtune and DeepSpeed configs have no
    retention setting and are not checked.

    ## Why is this expensive
    A checkpoint of an 8B-parameter model with optimizer state is about
    100 GB. Saving every 500 steps without rotation fills the volume (and
    the job fails on a full disk after hours of GPU time) or, on object
    storage, is billed every month for checkpoints nobody will load.

    ## Example
    ```yaml
    output_dir: s3://ml-ckpt/llama-sft
    save_strategy: steps
    save_steps: 500
    ```

    ## Fix
    Keep only the newest checkpoints:
    ```yaml
    save_total_limit: 2
    ```
    """

    code = "MLC301"
    name = "no-checkpoint-cleanup"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.STORAGE
    reports_in = frozenset({Reports.TRAINING, Reports.WORKLOAD})
    summary = "Checkpoints are saved with no retention limit"
    fix = "Set save_total_limit / save_top_k so that old checkpoints are deleted."

    def check(self, project, settings) -> Iterator[Finding]:
        for config in project.training:
            finding = self._keep_all(config)
            if finding is not None:
                yield finding
            finding = self._hub_all(config)
            if finding is not None:
                yield finding

    def _keep_all(self, config: TrainingConfig) -> Finding | None:
        s = config.settings
        framework = config.framework
        if framework not in _TRAINER_STYLE and framework not in _TOP_K:
            return None
        if s.checkpointing_enabled.value is not True:
            return None
        limit = s.checkpoint_limit
        if limit.value is not None:      # a limit, or UNKNOWN
            return None
        strategy = s.save_strategy
        if framework in _TRAINER_STYLE:
            if strategy.value not in _SAVING:
                return None
            what = _trainer_saves(config)
            if not limit.explicit:
                why = "save_total_limit is not set"
            else:
                raw = _raw(config, limit)
                why = f"{limit.key}: {'null' if raw is None else raw} keeps every checkpoint"
        else:
            if not limit.explicit:
                return None             # Lightning/NeMo keep 1 by default
            what = "saves checkpoints"
            why = f"{limit.key}: -1 keeps every checkpoint"
        anchor = limit if limit.explicit else strategy if strategy.explicit else \
            s.save_steps if s.save_steps.explicit else None
        message = (f"{config_subject(config, framework)} {what} and never deletes one: "
                   f"{why}; {_FIX[framework]}")
        return self.finding(message, config.loc(anchor), config.address,
                            object_line=config.location.line)

    def _hub_all(self, config: TrainingConfig) -> Finding | None:
        s = config.settings
        hub = s.hub_strategy
        if not hub.explicit or hub.value != "all_checkpoints":
            return None
        if s.checkpointing_enabled.value is not True:
            return None
        pushes = _pushes_to_hub(config)
        if pushes is None:
            return None
        message = (f"{config_subject(config)} pushes every checkpoint "
                   f"to the Hugging Face Hub ({pushes}): hub_strategy: all_checkpoints keeps one "
                   "folder per checkpoint in the repository; use hub_strategy: checkpoint "
                   "(latest only) or every_save")
        return self.finding(message, config.loc(hub), config.address,
                            object_line=config.location.line)


def _raw(config: TrainingConfig, setting: Setting[Any]) -> Any:
    if not setting.key:
        return None
    return config.document.get(config.key_path + tuple(setting.key.split(".")))


def _trainer_saves(config: TrainingConfig) -> str:
    s = config.settings
    strategy, steps = s.save_strategy, s.save_steps
    if strategy.value == "steps":
        interval = f"every {steps.value} steps" if isinstance(steps.value, int) else "every few steps"
        written = "" if strategy.explicit or steps.explicit else " (TrainingArguments default)"
        return f"saves a checkpoint {interval}{written}"
    if strategy.value == "epoch":
        return "saves a checkpoint every epoch"
    return "saves a checkpoint at every new best metric"


def _pushes_to_hub(config: TrainingConfig) -> str | None:
    """Why the config pushes to the Hub, or None when it does not (or it is
    not known): hub_strategy means nothing without a push."""
    root = config.document.get(config.key_path)
    if not isinstance(root, dict):
        return None
    if as_bool(root.get("push_to_hub")) is True:
        return "push_to_hub: true"
    if config.framework is Framework.AXOLOTL:
        hub_id = root.get("hub_model_id")
        if isinstance(hub_id, str) and hub_id.strip() and "${" not in hub_id:
            return f"hub_model_id: {hub_id.strip()}"
    return None
