"""``optimization_barrier`` batches as the identity: the batched values pass
through one barrier with their batch dimensions unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core.primitives.optimization_barrier import optimization_barrier_p


def _rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /) -> tuple[list[Any], list[BDim]]:
    return list(optimization_barrier_p.bind(*args)), list(dims)


batching_rules[optimization_barrier_p] = _rule
