"""Lowering of the elementwise family.

Most primitives are one StableHLO (or CHLO) operation; what needs care is
where core's semantics (XLA's, written in NumPy) and a bare operation part:

* rank-0 operands of binary primitives broadcast (HLO wants equal shapes);
* transcendental functions of ``float16``/``bfloat16`` run in float32 and
  round back, as core computes them;
* ``sign`` of unsigned integers, ``exp2`` (``2 ** x``) and ``integer_pow``
  (repeated squaring, as core) have no single operation;
* ``round`` picks ``round_nearest_afz`` or ``round_nearest_even``;
* ``select_n`` with an int32 selector is a chain of selects in which an
  out-of-range selector picks the last case (as core's implementation);
* ``convert_element_type`` to bool is ``x != 0``, complex to real keeps the
  real part; float to integer truncates and saturates with NaN -> 0, which is
  what XLA's ``stablehlo.convert`` does (checked by the tests).

Integer ``div``/``rem`` by zero (-1 / the dividend; ``INT_MIN / -1``),
out-of-range shifts and NaN-propagating ``max``/``min``/``clamp`` are XLA's
own semantics, which core's NumPy implementations reproduce.

Known differences from core's NumPy results (tested, not papered over):

* XLA's CPU code flushes subnormal results of float arithmetic to zero;
* ``max``/``min`` order ``-0.0`` below ``+0.0`` (NumPy returns the second
  operand of an equal pair);
* transcendental functions agree to a few units in the last place (core
  computes ``erf``, ``lgamma``, ``digamma`` and ``erf_inv`` in float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.primitives import elementwise as ew
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value, concrete_shape

# ---------------------------------------------------------------------------
# One operation each


def _unary_rule(op: str, *, widen: bool = False) -> Any:
    def rule(ctx: RuleContext, x: Value, **params: Any) -> list[Value]:
        out = ctx.avals_out[0]
        if widen and x.dtype in ops.HALF_FLOATS:
            y = ops.unary(ctx, op, ops.convert(ctx, x, ops.F32))
            return [ops.convert(ctx, y, out.dtype)]
        return [ops.unary(ctx, op, x, out.dtype)]

    return rule


_UNARY = {
    ew.neg_p: ("stablehlo.negate", False),
    ew.floor_p: ("stablehlo.floor", False),
    ew.ceil_p: ("stablehlo.ceil", False),
    ew.is_finite_p: ("stablehlo.is_finite", False),
    ew.exp_p: ("stablehlo.exponential", True),
    ew.log_p: ("stablehlo.log", True),
    ew.log1p_p: ("stablehlo.log_plus_one", True),
    ew.expm1_p: ("stablehlo.exponential_minus_one", True),
    ew.tanh_p: ("stablehlo.tanh", True),
    ew.logistic_p: ("stablehlo.logistic", True),
    ew.sin_p: ("stablehlo.sine", True),
    ew.cos_p: ("stablehlo.cosine", True),
    ew.tan_p: ("stablehlo.tan", True),
    ew.asin_p: ("chlo.asin", True),
    ew.acos_p: ("chlo.acos", True),
    ew.atan_p: ("chlo.atan", True),
    ew.sinh_p: ("chlo.sinh", True),
    ew.cosh_p: ("chlo.cosh", True),
    ew.asinh_p: ("chlo.asinh", True),
    ew.acosh_p: ("chlo.acosh", True),
    ew.atanh_p: ("chlo.atanh", True),
    ew.sqrt_p: ("stablehlo.sqrt", False),
    ew.rsqrt_p: ("stablehlo.rsqrt", True),
    ew.cbrt_p: ("stablehlo.cbrt", True),
    ew.abs_p: ("stablehlo.abs", False),
    ew.erf_p: ("chlo.erf", True),
    ew.erf_inv_p: ("chlo.erf_inv", True),
    ew.lgamma_p: ("chlo.lgamma", True),
    ew.digamma_p: ("chlo.digamma", True),
    ew.not_p: ("stablehlo.not", False),
}

for _prim, (_op, _widen) in _UNARY.items():
    lowering_rules[_prim] = _unary_rule(_op, widen=_widen)


def _operands(ctx: RuleContext, *xs: Value) -> list[Value]:
    """The operands broadcast to the result shape (rank-0 operands broadcast)."""
    shape = concrete_shape(ctx.avals_out[0])
    return [ops.broadcast_to(ctx, x, shape) for x in xs]


def _binary_rule(op: str, *, widen: bool = False) -> Any:
    def rule(ctx: RuleContext, x: Value, y: Value) -> list[Value]:
        a, b = _operands(ctx, x, y)
        if widen and a.dtype in ops.HALF_FLOATS:
            r = ops.binary(ctx, op, ops.convert(ctx, a, ops.F32), ops.convert(ctx, b, ops.F32))
            return [ops.convert(ctx, r, a.dtype)]
        return [ops.binary(ctx, op, a, b)]

    return rule


_BINARY = {
    ew.add_p: ("stablehlo.add", False),
    ew.sub_p: ("stablehlo.subtract", False),
    ew.mul_p: ("stablehlo.multiply", False),
    ew.div_p: ("stablehlo.divide", False),
    ew.rem_p: ("stablehlo.remainder", False),
    ew.pow_p: ("stablehlo.power", True),
    ew.max_p: ("stablehlo.maximum", False),
    ew.min_p: ("stablehlo.minimum", False),
    ew.atan2_p: ("stablehlo.atan2", True),
    ew.nextafter_p: ("chlo.next_after", False),
    ew.and_p: ("stablehlo.and", False),
    ew.or_p: ("stablehlo.or", False),
    ew.xor_p: ("stablehlo.xor", False),
    ew.shift_left_p: ("stablehlo.shift_left", False),
    ew.shift_right_arithmetic_p: ("stablehlo.shift_right_arithmetic", False),
    ew.shift_right_logical_p: ("stablehlo.shift_right_logical", False),
}

for _prim, (_op, _widen) in _BINARY.items():
    lowering_rules[_prim] = _binary_rule(_op, widen=_widen)


def _compare_rule(direction: str) -> Any:
    def rule(ctx: RuleContext, x: Value, y: Value) -> list[Value]:
        a, b = _operands(ctx, x, y)
        return [ops.compare(ctx, a, b, direction)]

    return rule


for _prim, _dir in ((ew.eq_p, "EQ"), (ew.ne_p, "NE"), (ew.lt_p, "LT"), (ew.le_p, "LE"), (ew.gt_p, "GT"),
                    (ew.ge_p, "GE")):
    lowering_rules[_prim] = _compare_rule(_dir)


# ---------------------------------------------------------------------------
# A few operations each


@lowering_rules.register(ew.sign_p)
def _sign(ctx: RuleContext, x: Value) -> list[Value]:
    if dtypes.is_unsigned_int(x.dtype):  # stablehlo.sign takes signed types only
        nonzero = ops.compare(ctx, x, ops.full(ctx, 0, x.dtype, x.shape), "NE")
        return [ops.convert(ctx, nonzero, x.dtype)]
    return [ops.unary(ctx, "stablehlo.sign", x)]


@lowering_rules.register(ew.exp2_p)
def _exp2(ctx: RuleContext, x: Value) -> list[Value]:
    w = ops.widened(ctx, x)
    y = ops.binary(ctx, "stablehlo.power", ops.full(ctx, 2, w.dtype, w.shape), w)
    return [ops.convert(ctx, y, x.dtype)]


@lowering_rules.register(ew.round_p)
def _round(ctx: RuleContext, x: Value, *, rounding_method: int) -> list[Value]:
    op = "stablehlo.round_nearest_even" if int(rounding_method) == 1 else "stablehlo.round_nearest_afz"
    return [ops.unary(ctx, op, x)]


@lowering_rules.register(ew.integer_pow_p)
def _integer_pow(ctx: RuleContext, x: Value, *, y: int) -> list[Value]:
    # Repeated squaring in x's dtype, the same multiplications as core.
    if y == 0:
        return [ops.full(ctx, 1, x.dtype, x.shape)]
    n = abs(y)
    acc: Value | None = None
    base = x
    while True:
        if n & 1:
            acc = base if acc is None else ops.binary(ctx, "stablehlo.multiply", acc, base)
        n >>= 1
        if not n:
            break
        base = ops.binary(ctx, "stablehlo.multiply", base, base)
    assert acc is not None
    if y < 0:
        acc = ops.binary(ctx, "stablehlo.divide", ops.full(ctx, 1, x.dtype, x.shape), acc)
    return [acc]


@lowering_rules.register(ew.select_n_p)
def _select_n(ctx: RuleContext, which: Value, *cases: Value) -> list[Value]:
    if len(cases) == 1:
        return [cases[0]]
    if which.dtype == ops.BOOL:
        return [ops.select(ctx, which, cases[1], cases[0])]
    out = cases[-1]  # an out-of-range selector picks the last case
    for i in range(len(cases) - 2, -1, -1):
        hit = ops.compare(ctx, which, ops.full(ctx, i, which.dtype, which.shape), "EQ")
        out = ops.select(ctx, hit, cases[i], out)
    return [out]


@lowering_rules.register(ew.clamp_p)
def _clamp(ctx: RuleContext, lo: Value, x: Value, hi: Value) -> list[Value]:
    return [ctx.op1("stablehlo.clamp", [lo, x, hi], x.aval)]


@lowering_rules.register(ew.convert_element_type_p)
def _convert_element_type(ctx: RuleContext, x: Value, *, new_dtype: Any, weak_type: bool) -> list[Value]:
    return [convert_element_type(ctx, x, np.dtype(new_dtype))]


def convert_element_type(ctx: RuleContext, x: Value, new: np.dtype[Any]) -> Value:
    """Core's ``convert_element_type``: to bool is ``x != 0``, complex to real
    keeps the real part, float to integer truncates and saturates (NaN -> 0)."""
    if x.dtype == new:
        return x
    if new == ops.BOOL:
        return ops.compare(ctx, x, ops.full(ctx, 0, x.dtype, x.shape), "NE")
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new):
        x = ops.unary(ctx, "stablehlo.real", x, np.real(np.zeros((), x.dtype)).dtype)
    return ops.convert(ctx, x, new)


@lowering_rules.register(ew.bitcast_convert_type_p)
def _bitcast_convert_type(ctx: RuleContext, x: Value, *, new_dtype: Any) -> list[Value]:
    return [ctx.op1("stablehlo.bitcast_convert", [x], ctx.avals_out[0])]
