"""``plait.custom_derivatives``: the names JAX users import from
``jax.custom_derivatives``: the decorators (``custom_jvp``, ``custom_vjp``,
``custom_gradient``), ``closure_convert``, the values rules defined with
``symbolic_zeros=True`` receive (``SymbolicZero``, ``CustomVJPPrimal``) and
helpers for them, ``linear_call`` (a linear function with a given transpose),
and the call primitives custom rules stage to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait._jax_extras import closure_convert, custom_gradient
from plait_core.abstract import get_aval, to_tangent_type
from plait_core.custom_derivatives import CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp, zeros_of
from plait_core.primitives.calls import custom_jvp_call_p, custom_vjp_call_p
from plait_core.tree_util import tree_leaves, tree_map

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
    "linear_call",
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




def linear_call(callee: Callable[[Any, Any], Any], transpose: Callable[[Any, Any], Any], residual_args: Any,
                linear_args: Any) -> Any:
    """``callee(residual_args, linear_args)``, a function linear in
    ``linear_args``, whose reverse-mode derivative is given by ``transpose``:
    the cotangent of ``linear_args`` is ``transpose(residual_args, ct)`` for an
    output cotangent ``ct`` (``transpose`` is trusted, not checked).  As in
    JAX, ``residual_args`` may not be differentiated (a ``TypeError`` when a
    derivative with respect to them is asked for).  plait supports reverse mode
    (``grad``, ``vjp``) and ``vmap``; forward mode (``jvp``) is refused as for
    every ``custom_vjp`` function."""

    @custom_vjp
    def call(res: Any, lin: Any) -> Any:
        return callee(res, lin)

    def fwd(res: Any, lin: Any) -> tuple[Any, Any]:
        if any(p.perturbed for p in tree_leaves(res, is_leaf=lambda x: isinstance(x, CustomVJPPrimal))):
            raise TypeError("linear_call: the residual arguments cannot be differentiated; only the linear "
                            "arguments have a derivative (given by the transpose function)")
        res_values = custom_vjp_primal_tree_values(res)
        return callee(res_values, custom_vjp_primal_tree_values(lin)), res_values

    def bwd(res: Any, ct: Any) -> tuple[Any, Any]:
        return zero_from_primal(res, symbolic_zeros=True), transpose(res, ct)

    call.defvjp(fwd, bwd, symbolic_zeros=True)
    return call(residual_args, linear_args)
