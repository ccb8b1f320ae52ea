"""Primitives that automatic differentiation relies on.

* ``stop_gradient``: the identity on values; autodiff gives it a zero
  derivative (the ``lax.stop_gradient`` wrapper maps it over pytrees).
* ``add_any``: the addition autodiff uses to accumulate cotangents.  Both
  operands have the same shape and dtype (``float0`` included: the sum of
  two ``float0`` values is ``float0``).
* ``zeros_like``: zeros of its operand's abstract value.
* ``custom_lin``: ``custom_lin(*residuals, *tangents; num_res, bwd, out_avals,
  in_nonzeros)``, the linear map whose transpose is a ``custom_vjp`` backward
  rule.  It appears only in linearized programs, which reverse mode transposes;
  evaluating it forwards (forward mode of a ``custom_vjp`` function) is an error.
* ``invertible_lin``: ``invertible_lin(*known, *outputs, *tangents; jaxpr, name,
  known, nonzeros)``, the tangents of an ``invertible_call``'s outputs computed
  from what it keeps (its outputs and the inputs flagged ``known``); reverse mode
  transposes it by reconstructing the body's values from its outputs.  Its
  forward evaluation needs forward-mode differentiation, which plait-autodiff
  installs as its implementation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, to_tangent_type
from plait_core.primitive import Primitive
from plait_core.primitives.reductions import shape_text, shapes_match

stop_gradient_p = Primitive("stop_gradient", family="ad")
stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_impl(lambda x: x)


def _add_any_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.dtype != y.dtype:
        raise TypeError(
            f"add_any: both operands must have the same dtype, got {x.dtype.name} ({x.str_short()}) "
            f"and {y.dtype.name} ({y.str_short()})"
        )
    if not shapes_match(x.shape, y.shape):
        raise ValueError(
            f"add_any: both operands must have the same shape, got {shape_text(x.shape)} and {shape_text(y.shape)}"
        )
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def _add_any(x: np.ndarray, y: np.ndarray) -> Any:
    if x.dtype == dtypes.float0:
        return np.zeros(x.shape, dtypes.float0)
    return np.add(x, y)


add_any_p = Primitive("add_any", family="ad")
add_any_p.def_abstract_eval(_add_any_rule)
add_any_p.def_impl(_add_any)

zeros_like_p = Primitive("zeros_like", family="ad")
zeros_like_p.def_abstract_eval(lambda x: x)
zeros_like_p.def_impl(lambda x: np.zeros(x.shape, x.dtype))

custom_lin_p = Primitive("custom_lin", family="ad", multiple_results=True)


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(
    *avals: ShapedArray, num_res: int, bwd: Any, out_avals: tuple[ShapedArray, ...], in_nonzeros: tuple[bool, ...]
) -> list[ShapedArray]:
    return list(out_avals)


@custom_lin_p.def_impl
def _custom_lin_impl(*args: Any, **params: Any) -> Any:
    raise TypeError(
        "can't apply forward-mode differentiation (jvp) to a custom_vjp function: it defines a "
        "reverse-mode rule only. Use vjp or grad, or give the function a custom_jvp rule instead"
    )


invertible_lin_p = Primitive("invertible_lin", family="ad", multiple_results=True)


@invertible_lin_p.def_abstract_eval
def _invertible_lin_abstract_eval(*avals: ShapedArray, jaxpr: Any, **params: Any) -> list[ShapedArray]:
    return [to_tangent_type(a) for a in jaxpr.out_avals]


@invertible_lin_p.def_impl
def _invertible_lin_impl(*args: Any, **params: Any) -> Any:
    raise TypeError(
        "invertible_lin is evaluated forwards by plait-autodiff (install and import it): it is the "
        "linearized form of an invertible function and needs forward-mode differentiation"
    )


__all__ = ["add_any_p", "custom_lin_p", "invertible_lin_p", "stop_gradient_p", "zeros_like_p"]
