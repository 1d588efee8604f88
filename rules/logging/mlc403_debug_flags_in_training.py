from __future__ import annotations

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.managed import per_node_job

from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Framework, Setting, TrainingConfig
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.efficiency.gpu_training import config_label, config_subject, container_device, device_of


@dataclass(frozen=True, slots=True)
class EnvSwitch:
    """A debug environment variable: the values that turn it on (upper
    case), what it costs, and what to do instead."""

    values: frozenset[str]
    cost: str
    fix: str


# Environment switches (rules.md MLC403). Values compare case-insensitively
# (NCCL and c10 parse them that way).
ENV_SWITCHES: dict[str, EnvSwitch] = {
    "CUDA_LAUNCH_BLOCKING": EnvSwitch(
        frozenset({"1"}), "every CUDA kernel launch waits for the kernel to finish", "remove it"),
    "NCCL_DEBUG": EnvSwitch(
        frozenset({"INFO", "TRACE"}), "NCCL logs every communicator and channel setup (TRACE: every call)",
        "set NCCL_DEBUG=WARN or remove it"),
    "NCCL_DEBUG_SUBSYS": EnvSwitch(
        frozenset({"ALL"}), "NCCL debug output for every subsystem", "remove it"),
    "TORCH_DISTRIBUTED_DEBUG": EnvSwitch(
        frozenset({"INFO", "DETAIL"}),
        "torch.distributed adds checks and logging to collectives (DETAIL: a consistency check per collective)",
        "remove it (or set OFF)"),
    "TORCH_CPP_LOG_LEVEL": EnvSwitch(
        frozenset({"INFO", "0"}), "PyTorch C++ info logging on every rank", "set WARNING or remove it"),
}

# Config debug switches (reader key, by its last segment) -> what it costs.
_CONFIG_SWITCH_COST: tuple[tuple[str, str, str], ...] = (
    ("detect_anomaly", "autograd anomaly detection re-checks every backward op",
     "remove detect_anomaly (or set false)"),
    ("profiler", "the profiler records every step", "remove the profiler"),
    ("flops_profiler.enabled", "the DeepSpeed flops profiler instruments the model",
     "set flops_profiler.enabled: false"),
    ("wall_clock_breakdown", "DeepSpeed synchronises the GPU to time forward/backward/step",
     "set wall_clock_breakdown: false"),
    ("comms_logger.enabled", "DeepSpeed logs every collective", "set comms_logger.enabled: false"),
    ("profiler.enabled", "the torch profiler records steps", "set profiler.enabled: false"),
    ("debug", "debug mode adds checks to every step", "remove debug"),
)


def _switch_cost(config: TrainingConfig, flag: Setting[Any]) -> tuple[str, str]:
    key = flag.key
    if config.framework in (Framework.TRANSFORMERS, Framework.AXOLOTL) and key == "debug":
        return (f"TrainingArguments debug {flag.value!r} adds per-step checks",
                "remove debug")
    for suffix, cost, fix in _CONFIG_SWITCH_COST:
        if key == suffix or key.endswith("." + suffix):
            return cost, fix
    return "a debug switch that slows every step", f"turn {key} off"


class DebugFlagsInTraining(Rule):
    """
    ## What it does
    Flags switches that slow every step or flood logs, left on in a
    training job:

    - in the environment of a training container (one that requests an
      accelerator, or that runs a training config in the scan):
      `CUDA_LAUNCH_BLOCKING=1`, `NCCL_DEBUG=INFO`/`TRACE`,
      `NCCL_DEBUG_SUBSYS=ALL`, `TORCH_DISTRIBUTED_DEBUG=INFO`/`DETAIL`,
      `TORCH_CPP_LOG_LEVEL=INFO`; the same in a TRL config's `env:` block
      and exported at the top level of a Slurm batch script that requests GPUs;
    - in training configs: Lightning `trainer.detect_anomaly: true` and
      `trainer.profiler`, DeepSpeed `flops_profiler.enabled`,
      `wall_clock_breakdown` and `comms_logger.enabled`, torchtune
      `profiler.enabled`, TrainingArguments `debug`. Accelerate's `debug: true`
    (shape checks on gathers) is not reported.

    Configs and containers that train on CPU only are not checked; values
    from `valueFrom` or `$(VAR)` are unknown and not flagged.

    ## Why is this expensive
    `CUDA_LAUNCH_BLOCKING=1` serialises the GPU with the CPU and can halve
    throughput; anomaly detection and profilers add work to every step;
    NCCL and distributed debug output multiplies log volume by the number
    of ranks. These are meant for a debugging session, not for a job that
    runs for days on paid GPUs.

    ## Example
    ```yaml
    env:
      - {name: NCCL_DEBUG, value: INFO}
      - {name: CUDA_LAUNCH_BLOCKING, value: "1"}
    ```

    ## Fix
    Remove the switches (keep `NCCL_DEBUG=WARN` if you want NCCL errors
    explained).
    """

    code = "MLC403"
    name = "debug-flags-in-training"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.LOGGING
    reports_in = frozenset({Reports.TRAINING, Reports.WORKLOAD})
    summary = "Debug switch left on in a training job"
    fix = "Remove debug environment variables, profilers and anomaly detection."

    def check(self, project, settings) -> Iterator[Finding]:
        yield from self._containers(project)
        yield from self._configs(project)

    def _containers(self, project) -> Iterator[Finding]:
        for workload in project.kubernetes.workloads:
            linked = {id(link.container): link for link in project.links.configs_of(workload)}
            for template in workload.templates:
                for container in template.containers:
                    why = _training_container(template, container, linked.get(id(container)))
                    if why is None:
                        continue
                    for name, var in container.env.items():
                        switch = ENV_SWITCHES.get(name)
                        if switch is None or var.value is UNKNOWN or not isinstance(var.value, str):
                            continue
                        if var.value.strip().upper() not in switch.values:
                            continue
                        role = f" {template.role}" if template.role else ""
                        job = per_node_job(workload)
                        if job is not None:
                            how = "exported in" if workload.batch is not None else "set in"
                            message = (f"{name}={var.value.strip()} {how} {job.title} "
                                       f"({job.gpus_text()}): {switch.cost}; {switch.fix}")
                            yield self.finding(message, var.location, workload.address,
                                               object_line=job.header.line)
                            continue
                        message = (f"{name}={var.value.strip()} in container {container.name} of "
                                   f"{workload.kind} {workload.name}{role} ({why}): {switch.cost}; "
                                   f"{switch.fix}")
                        address = f"{workload.address}/{template.role or 'template'}/{container.name}"
                        yield self.finding(message, var.location, address,
                                           object_line=container.loc().line)

    def _configs(self, project) -> Iterator[Finding]:
        for config in project.training:
            flags = list(config.settings.debug_flags)
            env = _config_env(config)
            if not flags and not env:
                continue
            device = device_of(project, config)
            if not device.is_accelerated:
                continue
            label = f"{config_subject(config)}"
            for flag in flags:
                cost, fix = _switch_cost(config, flag)
                message = f"{label} leaves {flag.key} on ({flag.value}): {cost}; {fix}"
                yield self.finding(message, config.loc(flag), config.address,
                                   related=device.related(), object_line=config.location.line)
            for name, value, location in env:
                switch = ENV_SWITCHES[name]
                message = f"{label} sets {name}={value} in env: {switch.cost}; {switch.fix}"
                yield self.finding(message, location, config.address,
                                   related=device.related(), object_line=config.location.line)


def _training_container(template, container, link) -> str | None:
    """Why this container counts as an accelerator job, or None. Only a
    container that requests an accelerator gets one from the device plugin;
    one that requests none trains on CPU (or is unknown) even when it runs
    a training config, and is left alone."""
    kind, _gpu = container_device(template, container)
    if kind is UNKNOWN or kind == "cpu":
        return None
    names = sorted(n for n, c in container.accelerators().items() if c is UNKNOWN or c > 0)
    why = f"requests {', '.join(names)}"
    if link is not None:
        why += f", runs {config_label(link.config)}"
    return why


def _config_env(config: TrainingConfig) -> list[tuple[str, str, Any]]:
    """Debug switches in a TRL CLI config's ``env:`` mapping (the TRL CLI
    exports it before training)."""
    if config.framework is not Framework.TRANSFORMERS:
        return []
    env = config.document.get(config.key_path + ("env",))
    if not isinstance(env, dict):
        return []
    out = []
    for name, value in env.items():
        switch = ENV_SWITCHES.get(name) if isinstance(name, str) else None
        if switch is None or not isinstance(value, (str, int)) or isinstance(value, bool):
            continue
        text = str(value).strip()
        if "$" in text or text.upper() not in switch.values:
            continue
        out.append((name, text, config.document.location(config.key_path + ("env", name))))
    return out
