"""Batch jobs of schedulers outside Kubernetes (Slurm), as rules see them.

Such a job joins the project model as a :class:`~mlcost_lint.model.kubernetes.Workload`
(one pod template per node, one container running the script) so that the
launch, config and data-path links and the GPU rules read it like any other
workload; :class:`BatchJob` holds what a pod spec does not have: the
scheduler's run-time bound, and the directives as written so that messages
can name the line to change.
"""

from __future__ import annotations


from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location, Maybe


@dataclass(frozen=True, slots=True)
class Directive:
    """A scheduler directive as written (``#SBATCH --gres=gpu:8``) and where."""

    written: str
    location: Location

    def __str__(self) -> str:
        return f"{self.written} (line {self.location.line})"


@dataclass(slots=True)
class BatchJob:
    scheduler: str                      # "slurm"
    label: str                          # "Slurm job"
    name: str
    path: str
    header: Location                    # the first directive: where a missing one goes
    directive_prefix: str               # "#SBATCH"
    nodes: Maybe[int]
    tasks_per_node: Maybe[int]
    gpus_per_node: Maybe[int] | None    # None: no GPU requested
    gpus: Directive | None              # the directive the GPU count comes from
    # Seconds; None when not written; UNKNOWN when not readable ($VAR).
    time_limit: Maybe[int] | None
    time: Directive | None
    time_unbounded: bool = False        # written, but as UNLIMITED / INFINITE / 0
    partition: str | None = None
    partition_at: Directive | None = None

    @property
    def address(self) -> str:
        return f"{self.scheduler}/{self.path}"

    @property
    def title(self) -> str:
        return f"{self.label} {self.name}"

    def gpus_where(self) -> str:
        """"#SBATCH --gres=gpu:8, line 5"."""
        return f"{self.gpus.written}, line {self.gpus.location.line}" if self.gpus is not None else ""

    def gpus_text(self) -> str:
        """"8 GPUs per node: #SBATCH --gres=gpu:8 on line 5"."""
        if self.gpus is None:
            return "no GPUs"
        count = self.gpus_per_node
        if isinstance(count, int):
            shown = f"{count} GPU{'s' if count != 1 else ''} per node"
        else:
            shown = "an unknown number of GPUs per node"
        return f"{shown}: {self.gpus.written} on line {self.gpus.location.line}"
