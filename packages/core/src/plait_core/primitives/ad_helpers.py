"""Primitives that automatic differentiation relies on.

* ``stop_gradient``: the identity on values; autodiff gives it a zero
  derivative (the ``lax.stop_gradient`` wrapper maps it over pytrees).
* ``add_any``: the addition autodiff uses to accumulate cotangents.  Both
  operands have the same shape and dtype (``float0`` included: the sum of
  two ``float0`` values is ``float0``).
* ``zeros_like``: zeros of its operand's abstract value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
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

__all__ = ["add_any_p", "stop_gradient_p", "zeros_like_p"]
