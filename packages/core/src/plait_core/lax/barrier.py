"""``lax.optimization_barrier`` (JAX's name and signature)."""

from __future__ import annotations

from typing import Any

from plait_core.primitives.optimization_barrier import optimization_barrier_p
from plait_core.tree_util import tree_flatten, tree_unflatten

__all__ = ["optimization_barrier"]


def optimization_barrier(operand: Any) -> Any:
    """``operand`` (an array or a pytree of arrays) unchanged, behind a barrier
    the compiler may not move computations across: everything the operands
    depend on is computed before anything that uses the results.  Used to
    control rematerialisation and scheduling; it changes no value and is the
    identity under every transformation (applied to tangents and cotangents
    too)."""
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))
