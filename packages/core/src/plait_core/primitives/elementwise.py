"""Primitives of the elementwise family (DESIGN.md §4).

Every operand of an elementwise primitive has the same dtype (no implicit
promotion at this level; the ``lax`` functions convert weakly typed Python
scalars) and the same shape, except that rank-0 operands broadcast.  The
result is weakly typed when every operand is.  Semantics follow XLA where
NumPy differs: integer ``div`` truncates toward zero and ``rem`` takes the
dividend's sign, ``max``/``min`` propagate NaN, out-of-range shifts give 0
(or the sign fill), float-to-integer conversion saturates.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import definitely_equal
from plait_core.jaxpr import register_convert_element_type
from plait_core.primitive import Primitive
from plait_core.primitives import _elementwise_helpers as h
from plait_core.primitives._elementwise_helpers import (
    ANY,
    FLOATING,
    INEXACT,
    INT,
    INTEGRAL,
    NUMERIC,
    ORDERED,
    REAL,
    SIGNED_NUMERIC,
    DType,
    Typed,
    binary_primitive,
    unary_primitive,
)

__all__ = [
    "RoundingMethod",
    "abs_p", "acos_p", "acosh_p", "add_p", "and_p", "asin_p", "asinh_p", "atan2_p", "atan_p",
    "atanh_p", "bitcast_convert_type_p", "cbrt_p", "ceil_p", "clamp_p", "convert_element_type_p",
    "cos_p", "cosh_p", "digamma_p", "div_p", "eq_p", "erf_inv_p", "erf_p", "exp2_p", "exp_p",
    "expm1_p", "floor_p", "ge_p", "gt_p", "integer_pow_p", "is_finite_p", "le_p", "lgamma_p",
    "log1p_p", "log_p", "logistic_p", "lt_p", "max_p", "min_p", "mul_p", "ne_p", "neg_p",
    "nextafter_p", "not_p", "or_p", "pow_p", "rem_p", "round_p", "rsqrt_p", "select_n_p",
    "shift_left_p", "shift_right_arithmetic_p", "shift_right_logical_p", "sign_p", "sin_p",
    "sinh_p", "sqrt_p", "sub_p", "tan_p", "tanh_p", "xor_p",
]


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties: halves away from zero, or to the nearest even."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _real_of(dt: DType) -> DType:
    """The real dtype of a complex one (``abs``); real dtypes map to themselves."""
    if dt == dtypes.complex64:
        return dtypes.float32
    if dt == dtypes.complex128:
        return dtypes.float64
    return dt


def _bool_result(dt: DType) -> DType:
    return dtypes.bool_


def _check_rounding(name: str, dt: DType, params: dict[str, Any]) -> None:
    m = params.get("rounding_method")
    if type(m) is not int and not isinstance(m, RoundingMethod):
        raise TypeError(f"{name}: rounding_method must be a RoundingMethod or int, got {m!r}")
    if m not in (0, 1):
        raise ValueError(f"{name}: rounding_method must be 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN), got {m}")


def _check_exponent(name: str, dt: DType, params: dict[str, Any]) -> None:
    y = params.get("y")
    if type(y) is not int:
        raise TypeError(f"{name}: the exponent y must be a Python int, got {type(y).__name__} {y!r}")
    if y < 0 and dtypes.is_int(dt):
        raise TypeError(f"{name}: integers cannot be raised to a negative power, got {dt.name} ** {y}")


# ---------------------------------------------------------------------------
# Unary

neg_p = unary_primitive("neg", NUMERIC, np.negative)
sign_p = unary_primitive("sign", NUMERIC, h.sign)
floor_p = unary_primitive("floor", FLOATING, np.floor)
ceil_p = unary_primitive("ceil", FLOATING, np.ceil)
round_p = unary_primitive("round", FLOATING, h.round_, check_params=_check_rounding)
is_finite_p = unary_primitive("is_finite", FLOATING, np.isfinite, result_dtype=_bool_result)
exp_p = unary_primitive("exp", INEXACT, np.exp)
exp2_p = unary_primitive("exp2", INEXACT, np.exp2)
log_p = unary_primitive("log", INEXACT, np.log)
log1p_p = unary_primitive("log1p", INEXACT, np.log1p)
expm1_p = unary_primitive("expm1", INEXACT, np.expm1)
tanh_p = unary_primitive("tanh", INEXACT, np.tanh)
logistic_p = unary_primitive("logistic", INEXACT, h.logistic)
sin_p = unary_primitive("sin", INEXACT, np.sin)
cos_p = unary_primitive("cos", INEXACT, np.cos)
tan_p = unary_primitive("tan", INEXACT, np.tan)
asin_p = unary_primitive("asin", INEXACT, np.arcsin)
acos_p = unary_primitive("acos", INEXACT, np.arccos)
atan_p = unary_primitive("atan", INEXACT, np.arctan)
sinh_p = unary_primitive("sinh", INEXACT, np.sinh)
cosh_p = unary_primitive("cosh", INEXACT, np.cosh)
asinh_p = unary_primitive("asinh", INEXACT, np.arcsinh)
acosh_p = unary_primitive("acosh", INEXACT, np.arccosh)
atanh_p = unary_primitive("atanh", INEXACT, np.arctanh)
sqrt_p = unary_primitive("sqrt", INEXACT, np.sqrt)
rsqrt_p = unary_primitive("rsqrt", INEXACT, h.rsqrt)
cbrt_p = unary_primitive("cbrt", FLOATING, np.cbrt)
abs_p = unary_primitive("abs", SIGNED_NUMERIC, np.abs, result_dtype=_real_of)
integer_pow_p = unary_primitive("integer_pow", NUMERIC, h.integer_pow, check_params=_check_exponent)
erf_p = unary_primitive("erf", FLOATING, h.erf, widen=False)
erf_inv_p = unary_primitive("erf_inv", FLOATING, h.erf_inv, widen=False)
lgamma_p = unary_primitive("lgamma", FLOATING, h.lgamma, widen=False)
digamma_p = unary_primitive("digamma", FLOATING, h.digamma, widen=False)
not_p = unary_primitive("not", INTEGRAL, np.invert)

# ---------------------------------------------------------------------------
# Binary

add_p = binary_primitive("add", NUMERIC, np.add)
sub_p = binary_primitive("sub", NUMERIC, np.subtract)
mul_p = binary_primitive("mul", NUMERIC, np.multiply)
div_p = binary_primitive("div", NUMERIC, h.div)
rem_p = binary_primitive("rem", REAL, h.rem)
pow_p = binary_primitive("pow", INEXACT, np.power)
max_p = binary_primitive("max", ANY, np.maximum)
min_p = binary_primitive("min", ANY, np.minimum)
atan2_p = binary_primitive("atan2", FLOATING, np.arctan2)
nextafter_p = binary_primitive("nextafter", FLOATING, np.nextafter, widen=False)
and_p = binary_primitive("and", INTEGRAL, np.bitwise_and)
or_p = binary_primitive("or", INTEGRAL, np.bitwise_or)
xor_p = binary_primitive("xor", INTEGRAL, np.bitwise_xor)
eq_p = binary_primitive("eq", ANY, np.equal, result_dtype=dtypes.bool_, widen=False)
ne_p = binary_primitive("ne", ANY, np.not_equal, result_dtype=dtypes.bool_, widen=False)
lt_p = binary_primitive("lt", ORDERED, np.less, result_dtype=dtypes.bool_, widen=False)
le_p = binary_primitive("le", ORDERED, np.less_equal, result_dtype=dtypes.bool_, widen=False)
gt_p = binary_primitive("gt", ORDERED, np.greater, result_dtype=dtypes.bool_, widen=False)
ge_p = binary_primitive("ge", ORDERED, np.greater_equal, result_dtype=dtypes.bool_, widen=False)
shift_left_p = binary_primitive("shift_left", INT, h.shift_left)
shift_right_arithmetic_p = binary_primitive("shift_right_arithmetic", INT, h.shift_right_arithmetic)
shift_right_logical_p = binary_primitive("shift_right_logical", INT, h.shift_right_logical)

# ---------------------------------------------------------------------------
# select_n(which, *cases)

select_n_p = Primitive("select_n", family="elementwise")


def _check_select_n(which: Typed, cases: Sequence[Typed]) -> DType:
    if not cases:
        raise ValueError("select_n requires at least one case")
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise TypeError(f"select_n: the selector `which` must be bool or int32, got {which.dtype.name}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError(f"select_n: a bool selector chooses between at most 2 cases, got {len(cases)}")
    dt = h.check_same_dtypes("select_n", cases)
    shape = cases[0].shape
    for c in cases[1:]:
        if not h.same_shape("select_n", shape, c.shape):
            listed = ", ".join(str(tuple(c.shape)) for c in cases)
            raise ValueError(f"select_n requires cases of equal shapes, got {listed}")
    if which.shape and not h.same_shape("select_n", which.shape, shape):
        raise ValueError(
            f"select_n: the selector must be a scalar or have the cases' shape {tuple(shape)}, "
            f"got shape {tuple(which.shape)}"
        )
    return dt


@select_n_p.def_abstract_eval
def _select_n_rule(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    dt = _check_select_n(which, cases)
    weak = all(c.weak_type for c in cases)
    first = cases[0]
    return first if first.weak_type == weak else ShapedArray(first.shape, dt, weak)


@select_n_p.def_impl
def _select_n_impl(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    dt = _check_select_n(which, cases)
    if which.dtype == dtypes.bool_:
        out = np.where(which, cases[-1], cases[0])
    else:
        # Out-of-range selectors pick the last case (XLA leaves them unspecified).
        out = np.broadcast_to(cases[-1], np.broadcast_shapes(which.shape, cases[-1].shape))
        for i in range(len(cases) - 2, -1, -1):
            out = np.where(which == i, cases[i], out)
    return np.array(out, dt)


# ---------------------------------------------------------------------------
# clamp(min, x, max)

clamp_p = Primitive("clamp", family="elementwise")


def _check_clamp(lo: Typed, x: Typed, hi: Typed) -> DType:
    dt = h.check_same_dtypes("clamp", (lo, x, hi))
    h.check_dtype("clamp", dt, REAL)
    for what, bound in (("min", lo), ("max", hi)):
        if bound.shape and not h.same_shape("clamp", bound.shape, x.shape):
            raise ValueError(
                f"clamp: {what} must be a scalar or have the operand's shape {tuple(x.shape)}, "
                f"got shape {tuple(bound.shape)}"
            )
    return dt


@clamp_p.def_abstract_eval
def _clamp_rule(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    _check_clamp(lo, x, hi)
    weak = lo.weak_type and x.weak_type and hi.weak_type
    return x if x.weak_type == weak else x.update(weak_type=weak)


@clamp_p.def_impl
def _clamp_impl(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    dt = _check_clamp(lo, x, hi)
    # maximum/minimum propagate NaN, as XLA's clamp does.
    return np.array(np.minimum(np.maximum(x, lo), hi), dt)


# ---------------------------------------------------------------------------
# convert_element_type and bitcast_convert_type

convert_element_type_p = Primitive("convert_element_type", family="elementwise")
convert_element_type_p.fold_literals = True
register_convert_element_type(convert_element_type_p)


def _check_target(name: str, new_dtype: Any) -> DType:
    if not isinstance(new_dtype, np.dtype) or new_dtype not in dtypes.ALL_DTYPES:
        raise TypeError(f"{name}: new_dtype must be a supported NumPy dtype, got {new_dtype!r}")
    return new_dtype


@convert_element_type_p.def_abstract_eval
def _convert_rule(x: ShapedArray, *, new_dtype: DType, weak_type: bool) -> ShapedArray:
    _check_target("convert_element_type", new_dtype)
    h.check_dtype("convert_element_type", x.dtype, ANY)
    if x.dtype == new_dtype and x.weak_type == weak_type:
        return x
    return ShapedArray(x.shape, new_dtype, bool(weak_type))


@convert_element_type_p.def_impl
def _convert_impl(x: np.ndarray, *, new_dtype: DType, weak_type: bool) -> np.ndarray:
    _check_target("convert_element_type", new_dtype)
    h.check_dtype("convert_element_type", x.dtype, ANY)
    with np.errstate(all="ignore"):
        return np.asarray(h.convert(x, new_dtype=new_dtype, weak_type=weak_type), new_dtype)


bitcast_convert_type_p = Primitive("bitcast_convert_type", family="elementwise")

_BITCASTABLE = h.DTypeClass("an integer or floating-point", REAL.members)


def _bitcast_shape(shape: tuple[Any, ...], old: DType, new: DType) -> tuple[Any, ...]:
    name = "bitcast_convert_type"
    h.check_dtype(name, old, _BITCASTABLE)
    h.check_dtype(name, new, _BITCASTABLE, what="targets")
    a, b = old.itemsize, new.itemsize
    if a == b:
        return tuple(shape)
    if a > b:
        return tuple(shape) + (a // b,)
    ratio = b // a
    if not shape or not definitely_equal(shape[-1], ratio):
        raise ValueError(
            f"{name}: converting {old.name} to the wider {new.name} needs a trailing axis of size "
            f"{ratio} to consume, got shape {tuple(shape)}"
        )
    return tuple(shape[:-1])


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_rule(x: ShapedArray, *, new_dtype: DType) -> ShapedArray:
    new = _check_target("bitcast_convert_type", new_dtype)
    return ShapedArray(_bitcast_shape(x.shape, x.dtype, new), new, False)


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x: np.ndarray, *, new_dtype: DType) -> np.ndarray:
    new = _check_target("bitcast_convert_type", new_dtype)
    _bitcast_shape(x.shape, x.dtype, new)
    return np.asarray(h.bitcast(x, new_dtype=new))
