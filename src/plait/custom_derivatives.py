"""``plait.custom_derivatives``: the names JAX users import from
``jax.custom_derivatives``: the decorators (``custom_jvp``, ``custom_vjp``,
``custom_gradient``), ``closure_convert``, the values rules defined with
``symbolic_zeros=True`` receive (``SymbolicZero``, ``CustomVJPPrimal``) and
helpers for them, and the call primitives custom rules stage to."""

from __future__ import annotations

from typing import Any

from plait._jax_extras import closure_convert, custom_gradient
from plait_core.abstract import get_aval, to_tangent_type
from plait_core.custom_derivatives import CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp, zeros_of
from plait_core.primitives.calls import custom_jvp_call_p, custom_vjp_call_p
from plait_core.tree_util import tree_map

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """The zero tangent of each leaf of ``val``: a :class:`SymbolicZero` of the
    leaf's tangent type when ``symbolic_zeros``, else an array of zeros of that
    type (``float0`` for integer and boolean leaves)."""

    def zero(x: Any) -> Any:
        aval = to_tangent_type(get_aval(x))
        return SymbolicZero(aval) if symbolic_zeros else zeros_of(aval)

    return tree_map(zero, val)


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """``tree`` with each :class:`CustomVJPPrimal` (what a ``custom_vjp``
    forward rule with ``symbolic_zeros=True`` receives) replaced by its value."""

    def value(x: Any) -> Any:
        return x.value if isinstance(x, CustomVJPPrimal) else x

    return tree_map(value, tree, is_leaf=lambda x: isinstance(x, CustomVJPPrimal))


