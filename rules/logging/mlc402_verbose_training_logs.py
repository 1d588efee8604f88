from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.training import Framework, TrainingConfig
from mlcost_lint.rule import Category, Confidence, Finding, Level, Rule
from mlcost_lint.rules.efficiency.gpu_training import config_label, device_of

# The key each framework logs its step interval with, and what to write.
_INTERVAL_FIX = {
    Framework.DEEPSPEED: "steps_per_print: 100 (or remove it)",
}
_DEBUG_LEVELS = frozenset({"debug"})
# Frameworks that gather the loss to the host only on logging steps (the
# Trainer's _maybe_log_save_evaluate); torchtune reads it every step anyway.
_SYNC_ON_LOG = frozenset({Framework.TRANSFORMERS, Framework.AXOLOTL})


class VerboseTrainingLogs(Rule):
    """
    ## What it does
    Flags per-step logging and debug log levels in accelerator training
    configs: `logging_steps: 1` (Transformers, TRL, Axolotl),
    `log_every_n_steps: 1` (Lightning `trainer`, torchtune, NeMo `trainer`),
    DeepSpeed `steps_per_print: 1`, `log_level: debug` or
    `log_level_replica: debug`, and `report_to: all` (every installed
    tracker). Only written values count. Configs that run on CPU are not
    checked.

    ## Why is this expensive
    Logging every step forces a device sync for each logged scalar and
    sends one record per step to every tracker and log sink: a 100k-step
    run writes 100k points per metric to W&B/MLflow and to the cluster's log
    pipeline, which bills by ingested volume. Debug levels on every replica
    multiply the volume by the number of GPUs; `report_to: all` duplicates
    it into every integration that happens to be installed.

    ## Example
    ```yaml
    logging_steps: 1
    log_level_replica: debug
    report_to: all
    ```

    ## Fix
    ```yaml
    logging_steps: 50
    log_level_replica: warning
    report_to: [wandb]
    ```
    """

    code = "MLC402"
    name = "verbose-training-logs"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.LOGGING
    summary = "Training logs every step or at debug level"
    fix = "Log every 10-100 steps, at info/warning level, to the trackers you use."

    def check(self, project, settings) -> Iterator[Finding]:
        for config in project.training:
            problems = list(_problems(config))
            if not problems:
                continue
            device = device_of(project, config)
            if not device.is_accelerated:
                continue
            for setting, text in problems:
                message = f"{config.framework.value} config {config_label(config)} {text}"
                yield self.finding(message, config.loc(setting), config.address,
                                   related=device.related(), object_line=config.location.line)


def _problems(config: TrainingConfig):
    s = config.settings
    steps = s.logging_steps
    if steps.explicit and steps.value == 1:
        fix = _INTERVAL_FIX.get(config.framework, f"{steps.key}: 50")
        sync = "a loss gather and device sync plus " if config.framework in _SYNC_ON_LOG else ""
        yield steps, (f"logs every training step ({steps.key}: 1): {sync}one record per step "
                      f"to every logger and log sink; set {fix}")
    for setting in (s.log_level, s.log_level_replica):
        if setting.explicit and setting.value in _DEBUG_LEVELS:
            replicas = " on every replica" if setting.key.endswith("replica") else ""
            yield setting, (f"logs at debug level{replicas} ({setting.key}: debug); "
                            f"set {setting.key}: warning (or info)")
    report = s.report_to
    if report.explicit and (report.value == "all" or (isinstance(report.value, list) and "all" in report.value)):
        yield report, (f"reports to every installed tracker ({report.key}: all); "
                       "name the trackers you use (e.g. report_to: [wandb])")
