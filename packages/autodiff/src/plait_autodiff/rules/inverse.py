"""Inverse rules for invertible reverse mode.

``rule(in_avals, outs, ins, **params) -> ins`` receives the equation's
output values and its inputs with ``None`` for the one to rebuild, and
returns every input.  What a rule cannot solve (an even power, an operand
broadcast from a scalar, ...) is decided from avals alone, by its entry in
:data:`~plait_autodiff.registries.inverse_refusals`, so the backward pass
plans to keep such an operand instead; the rule raises
:class:`~plait_autodiff.invertible.CannotInvert` with the same reason if it
is asked anyway.
Multiplication and division are inverted assuming the known factor is
nonzero, as the reversible-network literature does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff.invertible import CannotInvert
from plait_autodiff.registries import inverse_refusals, inverse_rules
from plait_core import dtypes, ops
from plait_core.abstract import ShapedArray
from plait_core.primitives import ad_helpers as ad
from plait_core.primitives import elementwise as ew
from plait_core.primitives import structural as st

Avals = Sequence[ShapedArray]


def _unknown(ins: Sequence[Any]) -> int:
    return next(i for i, x in enumerate(ins) if x is None)


def _broadcast_refusal(in_avals: Avals, out_avals: Avals, i: int, **params: Any) -> str | None:
    if in_avals[i].ndim == 0 and out_avals[0].ndim > 0:
        return "the value to rebuild is a scalar broadcast against an array"
    return None


def _refuse(prim: Any, in_avals: Avals, outs: Sequence[Any], i: int, params: dict[str, Any]) -> None:
    """Raise :class:`CannotInvert` when the refusal of ``prim`` says so."""
    refusal = inverse_refusals.get(prim)
    reason = None if refusal is None else refusal(in_avals, [ops.aval(o) for o in outs], i, **params)
    if reason is not None:
        raise CannotInvert(reason)


def _filled(ins: Sequence[Any], i: int, value: Any) -> list[Any]:
    full = list(ins)
    full[i] = value
    return full


def _binary(
    prim: Any, solve_first: Callable[[Any, Any], Any], solve_second: Callable[[Any, Any], Any]
) -> Callable[..., list[Any]]:
    """``out = op(a, b)``: ``a = solve_first(out, b)``, ``b = solve_second(out, a)``."""
    inverse_refusals[prim] = _broadcast_refusal

    def rule(in_avals: Avals, outs: Sequence[Any], ins: Sequence[Any], **params: Any) -> list[Any]:
        (out,) = outs
        i = _unknown(ins)
        _refuse(prim, in_avals, outs, i, params)
        value = solve_first(out, ins[1]) if i == 0 else solve_second(out, ins[0])
        return _filled(ins, i, value)

    return rule


inverse_rules[ew.add_p] = _binary(ew.add_p, ops.sub, ops.sub)
inverse_rules[ad.add_any_p] = _binary(ad.add_any_p, ops.sub, ops.sub)
inverse_rules[ew.sub_p] = _binary(ew.sub_p, ops.add, lambda out, a: ops.sub(a, out))
inverse_rules[ew.mul_p] = _binary(ew.mul_p, ops.div, ops.div)
inverse_rules[ew.div_p] = _binary(ew.div_p, ops.mul, lambda out, a: ops.div(a, out))


def _unary(inverse: Callable[[Any], Any]) -> Callable[..., list[Any]]:
    def rule(in_avals: Avals, outs: Sequence[Any], ins: Sequence[Any], **params: Any) -> list[Any]:
        return [inverse(outs[0])]

    return rule


for _p, _inv in (
    (ew.neg_p, ops.neg), (ew.exp_p, ew.log_p.bind), (ew.log_p, ew.exp_p.bind), (ew.tanh_p, ew.atanh_p.bind),
    (ew.atanh_p, ew.tanh_p.bind), (ew.expm1_p, ew.log1p_p.bind), (ew.log1p_p, ew.expm1_p.bind),
    (st.copy_p, lambda y: y),
):  # fmt: skip
    inverse_rules[_p] = _unary(_inv)


def _integer_pow_refusal(in_avals: Avals, out_avals: Avals, i: int, *, y: int) -> str | None:
    return f"x ** {y} loses the sign of x (an even power has no inverse)" if y % 2 == 0 else None


def _integer_pow_inverse(in_avals: Avals, outs: Sequence[Any], ins: Sequence[Any], *, y: int) -> list[Any]:
    (out,) = outs
    _refuse(ew.integer_pow_p, in_avals, outs, 0, {"y": y})
    if y == 1:
        return [out]
    if y == -1:
        return [ops.div(ops.const(out, 1), out)]
    if y == 3:
        return [ew.cbrt_p.bind(out)]
    magnitude = ew.pow_p.bind(ew.abs_p.bind(out), ops.const(out, 1 / y))
    return [ops.mul(ew.sign_p.bind(out), magnitude)]


inverse_rules[ew.integer_pow_p] = _integer_pow_inverse
inverse_refusals[ew.integer_pow_p] = _integer_pow_refusal


def _convert_refusal(in_avals: Avals, out_avals: Avals, i: int, *, new_dtype: Any, weak_type: bool) -> str | None:
    source = in_avals[0]
    if dtypes.is_inexact(source.dtype) and dtypes.is_inexact(new_dtype):
        return None
    return f"only conversions between floating types are inverted, not {source.dtype.name} -> {np.dtype(new_dtype).name}"


def _convert_inverse(in_avals: Avals, outs: Sequence[Any], ins: Sequence[Any], *, new_dtype: Any, weak_type: bool) -> list[Any]:
    source = in_avals[0]
    _refuse(ew.convert_element_type_p, in_avals, outs, 0, {"new_dtype": new_dtype, "weak_type": weak_type})
    return [ops.convert(outs[0], np.dtype(source.dtype), source.weak_type)]


inverse_rules[ew.convert_element_type_p] = _convert_inverse
inverse_refusals[ew.convert_element_type_p] = _convert_refusal


def _reshape_inverse(in_avals: Avals, outs: Sequence[Any], ins: Sequence[Any], *, new_sizes: Any, dimensions: Any) -> list[Any]:
    shape = in_avals[0].shape
    if dimensions is None:
        return [ops.reshape(outs[0], shape)]
    permuted = tuple(shape[d] for d in dimensions)
    return [ops.transpose(ops.reshape(outs[0], permuted), tuple(np.argsort(dimensions)))]


inverse_rules[st.reshape_p] = _reshape_inverse
inverse_rules[st.transpose_p] = lambda in_avals, outs, ins, *, permutation: [
    ops.transpose(outs[0], tuple(np.argsort(permutation)))
]
inverse_rules[st.rev_p] = lambda in_avals, outs, ins, *, dimensions: [ops.rev(outs[0], dimensions)]
inverse_rules[st.squeeze_p] = lambda in_avals, outs, ins, *, dimensions: [
    st.expand_dims_p.bind(outs[0], dimensions=dimensions)
]
inverse_rules[st.expand_dims_p] = lambda in_avals, outs, ins, *, dimensions: [
    st.squeeze_p.bind(outs[0], dimensions=dimensions)
]
