"""Kept capacity: what a node pool keeps running with no job (its minimum
size while autoscaling, else its fixed size, per its
:class:`~mlcost_lint.model.pool_specs.PoolSpec`), and :func:`count_value`,
a node / replica count as written.

    kept_capacity(pool) -> KeptCapacity | UNKNOWN | None
        What a pool keeps running with no job.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Maybe

if TYPE_CHECKING:
    from mlcost_lint.model.node_pools import NodePool


@dataclass(slots=True)
class KeptCapacity:
    """What a pool keeps running with no job: ``nodes`` (at least), the
    attribute that sets it, and whether that value is a default."""

    nodes: int | None          # None: a fixed size whose count is not written
    attr: str | None
    value: Any
    defaulted: bool = False
    autoscaling: bool = True

    def gpus(self, pool: NodePool) -> float | None:
        return None if self.nodes is None else self.nodes * pool.gpus_per_node


def count_value(value: Any) -> Maybe[int] | None:
    """A written count: int, None when absent, UNKNOWN otherwise."""
    if value is None:
        return None
    if value is UNKNOWN or isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 18:
        return int(value.strip())
    return UNKNOWN


def _autoscaling_on(pool: NodePool) -> Maybe[bool]:
    spec = pool.spec
    if not spec.autoscaling:
        return True
    for path in spec.autoscaling:
        value = pool.get(path)
        if value is None:
            continue
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(value, bool):
            return value
        if isinstance(value, (list, dict)):
            return bool(value)      # an autoscaling block is written
        return UNKNOWN
    return UNKNOWN if spec.autoscaling_default is None else spec.autoscaling_default


def kept_capacity(pool: NodePool) -> Maybe[KeptCapacity] | None:
    """How much of the pool runs while idle: None when nothing (minimum 0),
    UNKNOWN when it cannot be known."""
    spec = pool.spec
    scaling = _autoscaling_on(pool)
    if scaling is UNKNOWN:
        return UNKNOWN
    if scaling:
        for path in spec.minimum:
            value = count_value(pool.get(path))
            if value is UNKNOWN:
                return UNKNOWN
            if value is not None:
                if value > 0:
                    return KeptCapacity(_nodes(pool, value), path, value)
                # a written 0 for one minimum still lets the other (total_*) decide
                continue
        written = any(pool.get(p) is not None for p in spec.minimum)
        if not written and spec.minimum_default:
            return KeptCapacity(_nodes(pool, spec.minimum_default), None, spec.minimum_default, defaulted=True)
        return None
    for path in spec.fixed:
        value = count_value(pool.get(path))
        if value is UNKNOWN:
            return UNKNOWN
        if value is not None:
            return KeptCapacity(value, path, value, autoscaling=False) if value > 0 else None
    if spec.fixed_default is not None:
        if spec.fixed_default <= 0:
            return None
        return KeptCapacity(spec.fixed_default, None, spec.fixed_default, defaulted=True, autoscaling=False)
    return KeptCapacity(None, None, None, autoscaling=False)


def _nodes(pool: NodePool, minimum: int) -> int:
    if pool.spec.unit != "vcpus":
        return minimum
    vcpus = pool.accelerator.vcpus
    return math.ceil(minimum / vcpus) if vcpus else 1
