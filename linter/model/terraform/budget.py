"""The step budget of a Terraform evaluation.

Every expression node the evaluator visits costs a step, and so do the work
done inside functions (limits.METER), their results by size and every node
of a value walked whole (``==``, evaluator.DEEP_FUNCTIONS). One budget is
shared by a whole build (``max-evaluation-steps``), so exponential
constructs stop; each value has its own share of it.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.terraform.limits import BudgetExceeded


class Budget:
    """Steps for the whole build (``limit``) and for any one value
    (``node_limit``, a twentieth of it): one exponential local becomes
    UNKNOWN without starving every other value of the build."""

    __slots__ = ("limit", "steps", "exhausted", "node_limit", "node_start")

    def __init__(self, limit: int) -> None:
        self.limit = max(int(limit), 1)
        self.node_limit = max(self.limit // 20, 1000)
        self.steps = 0
        self.node_start = 0
        self.exhausted = False

    def start_value(self) -> None:
        self.node_start = self.steps

    def charge(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > self.limit:
            self.exhausted = True
            raise BudgetExceeded(True)
        if self.steps - self.node_start > self.node_limit:
            raise BudgetExceeded(False)

    def walk(self, value: Any) -> None:
        """Charge one step per node of a nested value (shared sub-values
        count every time, so a value built by doubling costs what it is)."""
        stack = [value]
        n = 0
        while stack:
            v = stack.pop()
            n += 1
            if n >= 256:
                self.charge(n)
                n = 0
            if isinstance(v, dict):
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)
        self.charge(n)


__all__ = ["Budget"]
