"""Batching rules of the elementwise family.

Elementwise primitives do not care where the batch is: one-operand ones
keep it in place (:func:`~plait_batching.factories.defvectorized`), n-ary
ones make their operands agree on it
(:func:`~plait_batching.factories.defbroadcasting`).  ``select_n`` lets only
its selector be a scalar next to full cases, ``clamp`` only its bounds.
``bitcast_convert_type`` to a wider type consumes the last dimension, so the
batch is moved off it first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.factories import defbroadcasting, defvectorized
from plait_batching.moves import BDim, moveaxis
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core import get_aval
from plait_core.primitives import elementwise as ew

UNARY = (
    ew.neg_p, ew.sign_p, ew.floor_p, ew.ceil_p, ew.round_p, ew.is_finite_p, ew.exp_p, ew.exp2_p,
    ew.log_p, ew.log1p_p, ew.expm1_p, ew.tanh_p, ew.logistic_p, ew.sin_p, ew.cos_p, ew.tan_p,
    ew.asin_p, ew.acos_p, ew.atan_p, ew.sinh_p, ew.cosh_p, ew.asinh_p, ew.acosh_p, ew.atanh_p,
    ew.sqrt_p, ew.rsqrt_p, ew.cbrt_p, ew.abs_p, ew.integer_pow_p, ew.erf_p, ew.erf_inv_p,
    ew.lgamma_p, ew.digamma_p, ew.not_p, ew.convert_element_type_p,
)  # fmt: skip

BINARY = (
    ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p, ew.pow_p, ew.max_p, ew.min_p, ew.atan2_p,
    ew.nextafter_p, ew.and_p, ew.or_p, ew.xor_p, ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p,
    ew.ge_p, ew.shift_left_p, ew.shift_right_arithmetic_p, ew.shift_right_logical_p,
)  # fmt: skip

defvectorized(*UNARY)
defbroadcasting(*BINARY)
defbroadcasting(ew.select_n_p, scalar_ok=lambda i: i == 0)
defbroadcasting(ew.clamp_p, scalar_ok=lambda i: i != 1)


def _bitcast_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, new_dtype: Any) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    assert d is not None
    if d == get_aval(x).ndim - 1:  # a wider target consumes the last dimension: not the batch's
        x, d = moveaxis(x, d, 0), 0
    return ew.bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


batching_rules[ew.bitcast_convert_type_p] = _bitcast_rule
