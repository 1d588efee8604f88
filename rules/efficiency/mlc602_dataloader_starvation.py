from __future__ import annotations

from typing import Iterator

from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.rules.efficiency.gpu_training import config_subject, device_of


class DataloaderStarvation(Rule):
    """
    ## What it does
    Flags GPU training whose data loader is written to starve the GPU: an
    explicit `dataloader_num_workers: 0` (Transformers, TRL, Axolotl),
    `num_workers: 0` in a Lightning data module's `init_args`, a NeMo
    `model.train_ds` or a torchtune `dataloader` block, and
    `dataloader_pin_memory: false` / `pin_memory: false`.

    Only values written in the config count: the Transformers default of 0
    workers is left alone (rules.md, Settled questions). A config is GPU
    training when a workload in the scan runs it with a GPU, or when nothing
    runs it and it does not say CPU or TPU.

    ## Why is this expensive
    With no workers, the training process itself reads, decodes, tokenises
    and collates every batch between steps, and the GPU idles while it does;
    without pinned memory each host-to-device copy is synchronous. Image and
    audio pipelines commonly leave GPUs 30-70% idle this way: paid GPU hours
    spent waiting for the CPU.

    ## Example
    ```yaml
    per_device_train_batch_size: 16
    dataloader_num_workers: 0
    dataloader_pin_memory: false
    ```

    ## Fix
    Load batches in background workers (a few per GPU, up to the CPU cores
    the pod gets) and keep pinned memory on:
    ```yaml
    dataloader_num_workers: 4
    dataloader_pin_memory: true
    ```
    """

    code = "MLC602"
    name = "dataloader-starvation"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.EFFICIENCY
    reports_in = frozenset({Reports.TRAINING, Reports.WORKLOAD})
    summary = "GPU training loads data in the training process (no workers or unpinned memory)"
    fix = "Set DataLoader workers above 0 (e.g. 4) and keep pin_memory on."

    def check(self, project, settings) -> Iterator[Finding]:
        for config in project.training:
            s = config.settings
            workers = s.dataloader_num_workers
            pin = s.dataloader_pin_memory
            no_workers = workers.explicit and workers.value == 0
            unpinned = pin.explicit and pin.value is False
            if not (no_workers or unpinned):
                continue
            device = device_of(project, config)
            if not device.is_gpu:
                continue
            problems: list[str] = []
            fixes: list[str] = []
            if no_workers:
                problems.append(f"{workers.key}: 0 loads every batch in the training process")
                fixes.append(f"set {workers.key} to 4 or more (up to the CPU cores per GPU)")
            if unpinned:
                problems.append(f"{pin.key}: false makes every host-to-GPU copy synchronous")
                fixes.append(f"remove {pin.key}: false")
            where = device.where()
            context = f" ({where})" if where else ""
            first = workers if no_workers else pin
            message = (f"{config_subject(config)} starves the GPU"
                       f"{context}: {'; '.join(problems)}; {' and '.join(fixes)}")
            yield self.finding(message, config.loc(first), config.address,
                               related=device.related(), object_line=config.location.line)
