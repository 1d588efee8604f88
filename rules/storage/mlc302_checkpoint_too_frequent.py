from __future__ import annotations

import math
from typing import Any, Iterator

from mlcost_lint.model.training import Framework, TrainingConfig
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.efficiency.gpu_training import config_subject

# Frameworks whose checkpoint interval is a step count this rule can read:
# Trainer-style save_steps (Transformers/TRL/alignment recipes, Axolotl
# passes it through) and ModelCheckpoint every_n_train_steps (Lightning,
# NeMo exp_manager.checkpoint_callback_params).
_TRAINER_STYLE = frozenset({Framework.TRANSFORMERS, Framework.AXOLOTL})
_STEP_FRAMEWORKS = _TRAINER_STYLE | {Framework.LIGHTNING, Framework.NEMO}
# Whose default interval counts for the "checkpoints per run" clause
# (rules.md, Settled questions): Transformers' 500 steps, inherited by TRL
# and alignment recipes. Axolotl, Lightning and NeMo need it written.
_DEFAULT_INTERVAL_COUNTS = frozenset({Framework.TRANSFORMERS})


class CheckpointTooFrequent(Rule):
    """
    ## What it does
    Flags checkpoints written so often that saving dominates: a step
    interval below `min-checkpoint-interval-steps` (default 100) in
    `save_steps` (Transformers, TRL, Axolotl) or Lightning/NeMo
    `ModelCheckpoint` `every_n_train_steps`, or more than
    `max-checkpoints-per-run` (default 200) checkpoints over a run whose
    length is written as `max_steps`. The Transformers default interval of
    500 steps counts for the second clause; Axolotl, Lightning and NeMo need
    the interval written.

    A fractional `save_steps` below 1 is a share of the run (Transformers
    saves every `ceil(max_steps * save_steps)` steps), so `save_steps: 0.001`
    is about 1000 checkpoints whatever the run length. A run shorter than
    the minimum interval (a smoke test) is not flagged.

    ## Why is this expensive
    Every save stops all GPUs while model and optimizer state (about 16 bytes
    per parameter: 130 GB for an 8B model) are written, typically for tens
    of seconds to minutes. Saving every 10 steps can double the run's GPU
    hours, and every checkpoint written to object storage is billed until it
    is deleted.

    ## Example
    ```yaml
    max_steps: 20000
    save_strategy: steps
    save_steps: 10
    ```

    ## Fix
    Save every few hundred steps (or by time), enough to bound the work lost
    to a preemption:
    ```yaml
    save_steps: 500
    save_total_limit: 2
    ```
    """

    code = "MLC302"
    name = "checkpoint-too-frequent"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.STORAGE
    reports_in = frozenset({Reports.TRAINING, Reports.WORKLOAD})
    summary = "Checkpoints are written too often"
    fix = "Raise the checkpoint interval (save_steps / every_n_train_steps)."

    def check(self, project, settings) -> Iterator[Finding]:
        minimum = settings.min_checkpoint_interval_steps
        maximum = settings.max_checkpoints_per_run
        for config in project.training:
            finding = self._check_config(config, minimum, maximum)
            if finding is not None:
                yield finding

    def _check_config(self, config: TrainingConfig, minimum: int, maximum: int) -> Finding | None:
        framework = config.framework
        if framework not in _STEP_FRAMEWORKS:
            return None
        s = config.settings
        if s.checkpointing_enabled.value is not True or s.save_strategy.value != "steps":
            return None
        steps = s.save_steps
        max_steps = s.max_steps.value if isinstance(s.max_steps.value, int) else None
        label = f"{config_subject(config, framework)}"
        fix = f"save at most every {minimum} steps or fewer than {maximum} times per run"

        ratio = _ratio(config) if framework in _TRAINER_STYLE and steps.explicit else None
        if ratio is not None:
            return self._ratio_finding(config, ratio, max_steps, minimum, maximum, label, fix)

        interval = steps.value if isinstance(steps.value, int) and steps.value > 0 else None
        if interval is None:
            return None
        if not steps.explicit and framework not in _DEFAULT_INTERVAL_COUNTS:
            return None
        run_known = f" of a {max_steps}-step run" if max_steps is not None else ""
        if steps.explicit and interval < minimum and (max_steps is None or max_steps > minimum):
            count = f" ({max_steps // interval} checkpoints{run_known})" if max_steps else ""
            message = (f"{label} saves a checkpoint every {interval} steps{count}, below "
                       f"min-checkpoint-interval-steps {minimum}: every save stalls the GPUs; "
                       f"raise {steps.key} to {minimum} or more")
            return self.finding(message, config.loc(steps), config.address,
                                object_line=config.location.line)
        if max_steps is not None and max_steps // interval > maximum:
            count = max_steps // interval
            written = f"{steps.key} {interval}" if steps.explicit else \
                f"save_steps {interval}, the TrainingArguments default"
            message = (f"{label} writes {count} checkpoints over max_steps {max_steps} "
                       f"({written}), more than max-checkpoints-per-run {maximum}; "
                       f"raise the interval to at least {math.ceil(max_steps / maximum)} steps")
            anchor = steps if steps.explicit else s.max_steps
            return self.finding(message, config.loc(anchor), config.address,
                                object_line=config.location.line)
        return None

    def _ratio_finding(self, config: TrainingConfig, ratio: float, max_steps: int | None,
                       minimum: int, maximum: int, label: str, fix: str) -> Finding | None:
        steps = config.settings.save_steps
        if max_steps is not None:
            # Trainer: save_steps = ceil(max_steps * ratio) when below 1.
            interval = max(1, math.ceil(max_steps * ratio))
            count = max_steps // interval
            if max_steps <= minimum or (interval >= minimum and count <= maximum):
                return None
            detail = f"every {interval} steps, {count} checkpoints over max_steps {max_steps}"
        else:
            # Unknown run length: about 1/ratio saves (fewer only in a run so
            # short that the interval rounds up to a single step, which is
            # then below any minimum). 1% margin for the rounding.
            count = math.floor(1 / (ratio * 1.01))
            if count <= maximum:
                return None
            detail = f"about {round(1 / ratio)} checkpoints per run"
        message = (f"{label} sets {steps.key}: {ratio:g}, a share of the run: {detail}, more often "
                   f"than min-checkpoint-interval-steps {minimum} / max-checkpoints-per-run "
                   f"{maximum} allow; {fix}")
        return self.finding(message, config.loc(steps), config.address,
                            object_line=config.location.line)


def _ratio(config: TrainingConfig) -> float | None:
    """A Trainer ``save_steps`` written as a float in (0, 1): a share of
    the total steps (TrainingArguments docs)."""
    steps = config.settings.save_steps
    raw: Any = config.document.get(config.key_path + (steps.key or "save_steps",))
    if isinstance(raw, str):
        try:
            raw = float(raw.strip())
        except ValueError:
            return None
    if isinstance(raw, float) and not isinstance(raw, bool) and 0 < raw < 1 and math.isfinite(raw):
        return raw
    return None
