from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.training import TrainingConfig
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.efficiency.gpu_training import config_subject, device_of

_DEBUG_LEVELS = frozenset({"debug"})


class VerboseTrainingLogs(Rule):
    """
    ## What it does
    Flags debug log levels and log fan-out in accelerator training configs:
    `log_level: debug` or `log_level_replica: debug`, and `report_to: all`
    (every installed tracker). Only written values count. Configs that run
    on CPU are not checked. Per-step metric logging (`logging_steps: 1`,
    `log_every_n_steps: 1`, DeepSpeed `steps_per_print: 1`) is house style
    in public recipes and costs little, so it is not reported.

    ## Why is this expensive
    Debug records from every rank go to the cluster's log pipeline, which
    bills by ingested volume: `log_level_replica: debug` multiplies the
    volume by the number of GPUs. `report_to: all` sends every metric to
    every integration that happens to be installed, each of which may bill
    per tracked run or by storage.

    ## Example
    ```yaml
    log_level_replica: debug
    report_to: all
    ```

    ## Fix
    ```yaml
    log_level_replica: warning
    report_to: [wandb]
    ```
    """

    code = "MLC402"
    name = "verbose-training-logs"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.LOGGING
    reports_in = frozenset({Reports.TRAINING, Reports.WORKLOAD})
    summary = "Training logs at debug level or to every tracker"
    fix = "Log at info/warning level, to the trackers you use."

    def check(self, project, settings) -> Iterator[Finding]:
        for config in project.training:
            problems = list(_problems(config))
            if not problems:
                continue
            device = device_of(project, config)
            if not device.is_accelerated:
                continue
            for setting, text in problems:
                message = f"{config_subject(config)} {text}"
                yield self.finding(message, config.loc(setting), config.address,
                                   related=device.related(), object_line=config.location.line)


def _problems(config: TrainingConfig):
    s = config.settings
    for setting in (s.log_level, s.log_level_replica):
        if setting.explicit and setting.value in _DEBUG_LEVELS:
            replicas = " on every replica" if setting.key.endswith("replica") else ""
            yield setting, (f"logs at debug level{replicas} ({setting.key}: debug); "
                            f"set {setting.key}: warning (or info)")
    report = s.report_to
    if report.explicit and (report.value == "all" or (isinstance(report.value, list) and "all" in report.value)):
        yield report, (f"reports to every installed tracker ({report.key}: all); "
                       "name the trackers you use (e.g. report_to: [wandb])")
