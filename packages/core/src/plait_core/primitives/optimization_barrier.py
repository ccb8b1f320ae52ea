"""The ``optimization_barrier`` primitive: the identity on any number of
operands, which the compiler may not move computations across (XLA's
OptimizationBarrier): every operand is computed before any result is used,
and no computation on the results is merged with one before the barrier."""

from __future__ import annotations

from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.primitive import Primitive

__all__ = ["optimization_barrier_p"]


def _abstract_eval(*avals: ShapedArray) -> list[ShapedArray]:
    return list(avals)


def _impl(*args: Any) -> list[Any]:
    return list(args)


optimization_barrier_p = Primitive("optimization_barrier", family="structural", multiple_results=True)
optimization_barrier_p.def_abstract_eval(_abstract_eval)
optimization_barrier_p.def_impl(_impl)
