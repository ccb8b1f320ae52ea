"""``lax`` functions of the elementwise family, with JAX's names and signatures.

Operands are arrays, scalars or traced values.  Operands of a multi-operand
function must share a dtype, except that weakly typed values (Python scalars,
and results computed from them only) take the dtype of the others when it is
one they promote to: ``lax.add(x_f16, 1.0)`` is ``float16``,
``lax.add(x_u8, 3)`` is ``uint8``, while ``lax.add(x_i32, 1.5)`` and
``lax.add(x_f32, x_i32)`` are ``TypeError``s (use ``plait.numpy`` for NumPy's
promotion).  Rank-0 operands broadcast against the others; other shapes must
match exactly.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval
from plait_core.primitive import Primitive
from plait_core.primitives import elementwise as ew
from plait_core.primitives.elementwise import RoundingMethod
from plait_core.trace import Tracer

DType = np.dtype[Any]

__all__ = [
    "RoundingMethod",
    "_convert_element_type",
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
    "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "cbrt", "ceil", "clamp", "convert_element_type", "cos", "cosh", "digamma", "div",
    "eq", "erf", "erf_inv", "exp", "exp2", "expm1", "floor", "ge", "gt", "integer_pow",
    "is_finite", "le", "lgamma", "log", "log1p", "logistic", "lt", "max", "min", "mul",
    "ne", "neg", "nextafter", "pow", "reciprocal", "rem", "round", "rsqrt", "select",
    "select_n", "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign",
    "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh",
]

_PY_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


# ---------------------------------------------------------------------------
# Operand handling


def _dtype_and_weakness(x: Any, name: str) -> tuple[DType, bool]:
    """(canonical dtype, weak_type) of an operand; ``TypeError`` naming the
    function and the value's type for values that are not arrays."""
    if isinstance(x, Tracer):
        aval = x.aval
        return aval.dtype, aval.weak_type
    t = type(x)
    if t is builtins.float:
        return dtypes.default_float_dtype(), True
    if t is np.ndarray:
        try:
            return dtypes.canonicalize_dtype(x.dtype), False
        except TypeError as e:
            raise TypeError(f"an argument of {name}: {e}") from None
    aval = get_aval(x, f"an argument of {name}")
    return aval.dtype, aval.weak_type


def _check_operand(x: Any, name: str) -> None:
    if not isinstance(x, Tracer) and type(x) is not np.ndarray:
        _dtype_and_weakness(x, name)


def _same_dtypes(name: str, args: Sequence[Any]) -> list[Any]:
    """``args`` with weakly typed ones converted to the dtype they meet."""
    typed = [_dtype_and_weakness(a, name) for a in args]
    first = typed[0][0]
    if all(d == first for d, _ in typed[1:]):
        return list(args)
    target = dtypes.result_type_and_weakness(*[ShapedArray((), d, w) for d, w in typed])[0]
    out = []
    for a, (d, w) in zip(args, typed):
        if d == target:
            out.append(a)
        elif w:
            out.append(_convert_element_type(a, target, True))
        else:
            listed = ", ".join(f"{d.name}{' (weak)' if w else ''}" for d, w in typed)
            raise TypeError(
                f"lax.{name} requires arguments of the same dtype, got {listed}; only weakly typed "
                "values (Python scalars) are converted, and only to a dtype they promote to. Convert "
                "with lax.convert_element_type, or use plait.numpy, which promotes"
            )
    return out


def _binary(prim: Primitive, x: Any, y: Any) -> Any:
    # The hot path (two operands of one dtype, or an array and a Python float
    # of its dtype) binds straight away.
    dx = _dtype_and_weakness(x, prim.name)[0]
    dy = _dtype_and_weakness(y, prim.name)[0]
    if dx is dy or dx == dy:
        return prim.bind(x, y)
    return prim.bind(*_same_dtypes(prim.name, (x, y)))


def _unary(prim: Primitive, x: Any, **params: Any) -> Any:
    _check_operand(x, prim.name)
    return prim.bind(x, **params)


# ---------------------------------------------------------------------------
# Conversions


def _canonical_dtype(dtype: Any, name: str) -> DType:
    if isinstance(dtype, type) and dtype in _PY_SCALARS:  # (np.dtype(bool) == bool, hence the type check)
        return dtypes.python_scalar_dtype(dtype(0))
    try:
        return dtypes.canonicalize_dtype(np.dtype(dtype))
    except TypeError as e:
        raise TypeError(f"lax.{name}: {e}") from None


def _convert_element_type(operand: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Convert ``operand`` to ``new_dtype`` with the given weak type (for other
    lax modules: ``weak_type=True`` keeps a Python scalar weakly typed).
    Returns ``operand`` itself when a traced value already has that type."""
    dt = _canonical_dtype(new_dtype, "convert_element_type")
    if isinstance(operand, Tracer):
        aval = operand.aval
        if aval.dtype == dt and aval.weak_type == weak_type:
            return operand
    else:
        _check_operand(operand, "convert_element_type")
        if type(operand) is builtins.int and dtypes.is_int(dt):
            info = np.iinfo(dt)
            if not int(info.min) <= operand <= int(info.max):
                raise OverflowError(f"Python int {operand} does not fit in {dt.name} (lax.convert_element_type)")
    return ew.convert_element_type_p.bind(operand, new_dtype=dt, weak_type=builtins.bool(weak_type))


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """Elementwise conversion to ``new_dtype`` (a NumPy dtype or Python type;
    canonicalised, so ``float64`` is ``float32`` while x64 is off).

    Float to integer truncates toward zero and saturates at the integer range
    (NaN gives 0); to bool is ``x != 0``; complex to real keeps the real part;
    integers wrap.  The result is strongly typed."""
    return _convert_element_type(operand, new_dtype, False)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of ``operand`` as ``new_dtype`` (integer or float).

    Same width: same shape.  Narrower target: a trailing axis of size
    ``old_width // new_width`` is added.  Wider target: the trailing axis, of
    size ``new_width // old_width``, is consumed."""
    _check_operand(operand, "bitcast_convert_type")
    dt = _canonical_dtype(new_dtype, "bitcast_convert_type")
    return ew.bitcast_convert_type_p.bind(operand, new_dtype=dt)


# ---------------------------------------------------------------------------
# Unary


def neg(x: Any) -> Any:
    """``-x`` (unsigned integers wrap)."""
    return _unary(ew.neg_p, x)


def sign(x: Any) -> Any:
    """-1, 0 or 1 by the sign of ``x`` (``x/|x|`` for complex; unsigned: 0 or 1;
    a float zero keeps its sign and NaN stays NaN)."""
    return _unary(ew.sign_p, x)


def floor(x: Any) -> Any:
    """Largest integral value ``<= x`` (floats only)."""
    return _unary(ew.floor_p, x)


def ceil(x: Any) -> Any:
    """Smallest integral value ``>= x`` (floats only)."""
    return _unary(ew.ceil_p, x)


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Round to the nearest integral value (floats only); ties go away from zero
    (``RoundingMethod.AWAY_FROM_ZERO``, the default) or to even
    (``RoundingMethod.TO_NEAREST_EVEN``)."""
    if type(rounding_method) is builtins.bool or not isinstance(rounding_method, int):
        raise TypeError(f"lax.round: rounding_method must be a RoundingMethod, got {rounding_method!r}")
    try:
        method = int(RoundingMethod(rounding_method))
    except ValueError:
        raise ValueError(
            f"lax.round: rounding_method must be 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN), got {rounding_method}"
        ) from None
    return _unary(ew.round_p, x, rounding_method=method)


def is_finite(x: Any) -> Any:
    """True where ``x`` is neither infinite nor NaN (floats only); bool result."""
    return _unary(ew.is_finite_p, x)


def exp(x: Any) -> Any:
    """``e ** x`` (floating or complex)."""
    return _unary(ew.exp_p, x)


def exp2(x: Any) -> Any:
    """``2 ** x`` (floating or complex)."""
    return _unary(ew.exp2_p, x)


def log(x: Any) -> Any:
    """Natural logarithm (NaN for negative reals, -inf at 0)."""
    return _unary(ew.log_p, x)


def log1p(x: Any) -> Any:
    """``log(1 + x)``, accurate for small ``x``."""
    return _unary(ew.log1p_p, x)


def expm1(x: Any) -> Any:
    """``exp(x) - 1``, accurate for small ``x``."""
    return _unary(ew.expm1_p, x)


def tanh(x: Any) -> Any:
    """Hyperbolic tangent."""
    return _unary(ew.tanh_p, x)


def logistic(x: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``, without overflow for large ``|x|``."""
    return _unary(ew.logistic_p, x)


def sin(x: Any) -> Any:
    """Sine."""
    return _unary(ew.sin_p, x)


def cos(x: Any) -> Any:
    """Cosine."""
    return _unary(ew.cos_p, x)


def tan(x: Any) -> Any:
    """Tangent."""
    return _unary(ew.tan_p, x)


def asin(x: Any) -> Any:
    """Inverse sine (NaN outside [-1, 1] for reals)."""
    return _unary(ew.asin_p, x)


def acos(x: Any) -> Any:
    """Inverse cosine (NaN outside [-1, 1] for reals)."""
    return _unary(ew.acos_p, x)


def atan(x: Any) -> Any:
    """Inverse tangent."""
    return _unary(ew.atan_p, x)


def sinh(x: Any) -> Any:
    """Hyperbolic sine."""
    return _unary(ew.sinh_p, x)


def cosh(x: Any) -> Any:
    """Hyperbolic cosine."""
    return _unary(ew.cosh_p, x)


def asinh(x: Any) -> Any:
    """Inverse hyperbolic sine."""
    return _unary(ew.asinh_p, x)


def acosh(x: Any) -> Any:
    """Inverse hyperbolic cosine (NaN below 1 for reals)."""
    return _unary(ew.acosh_p, x)


def atanh(x: Any) -> Any:
    """Inverse hyperbolic tangent (+-inf at +-1, NaN beyond for reals)."""
    return _unary(ew.atanh_p, x)


def sqrt(x: Any) -> Any:
    """Square root (NaN for negative reals)."""
    return _unary(ew.sqrt_p, x)


def rsqrt(x: Any) -> Any:
    """``1 / sqrt(x)``."""
    return _unary(ew.rsqrt_p, x)


def cbrt(x: Any) -> Any:
    """Real cube root (floats only; negative for negative ``x``)."""
    return _unary(ew.cbrt_p, x)


def abs(x: Any) -> Any:
    """``|x|`` (signed integers, floats, complex; complex gives its real dtype;
    the most negative integer stays itself, as in two's complement)."""
    return _unary(ew.abs_p, x)


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a static Python int ``y``, by repeated multiplication
    (integers wrap; a negative ``y`` needs a floating or complex ``x``)."""
    if type(y) is builtins.bool or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow: the exponent y must be a Python int, got {type(y).__name__} {y!r}")
    return _unary(ew.integer_pow_p, x, y=operator.index(y))


def square(x: Any) -> Any:
    """``x * x``."""
    return integer_pow(x, 2)


def reciprocal(x: Any) -> Any:
    """``1 / x`` (floating or complex)."""
    return integer_pow(x, -1)


def erf(x: Any) -> Any:
    """The error function (floats only)."""
    return _unary(ew.erf_p, x)


def erf_inv(x: Any) -> Any:
    """The inverse error function: +-inf at +-1, NaN outside [-1, 1] (floats only)."""
    return _unary(ew.erf_inv_p, x)


def lgamma(x: Any) -> Any:
    """``log|Gamma(x)|``; +inf at the poles 0, -1, -2, ... (floats only)."""
    return _unary(ew.lgamma_p, x)


def digamma(x: Any) -> Any:
    """The digamma function ``d/dx log Gamma(x)``; NaN at the poles 0, -1, -2, ...
    (floats only)."""
    return _unary(ew.digamma_p, x)


def bitwise_not(x: Any) -> Any:
    """Logical not of a bool array; bitwise not of an integer array."""
    return _unary(ew.not_p, x)


# ---------------------------------------------------------------------------
# Binary


def add(x: Any, y: Any) -> Any:
    """``x + y`` (numeric; integers wrap)."""
    return _binary(ew.add_p, x, y)


def sub(x: Any, y: Any) -> Any:
    """``x - y`` (numeric; integers wrap)."""
    return _binary(ew.sub_p, x, y)


def mul(x: Any, y: Any) -> Any:
    """``x * y`` (numeric; integers wrap)."""
    return _binary(ew.mul_p, x, y)


def div(x: Any, y: Any) -> Any:
    """``x / y``.  Integer division truncates toward zero (``-7 / 2 == -3``), as
    in C; ``x / 0`` is -1 for signed and the largest value for unsigned
    integers, and ``INT_MIN / -1`` is ``INT_MIN`` (XLA's answers)."""
    return _binary(ew.div_p, x, y)


def rem(x: Any, y: Any) -> Any:
    """Remainder of ``x / y`` with the sign of ``x`` (C's ``fmod``, not Python's
    ``%``); for integers ``x % 0`` is ``x``."""
    return _binary(ew.rem_p, x, y)


def pow(x: Any, y: Any) -> Any:
    """``x ** y`` (floating or complex; ``y`` of the same dtype)."""
    return _binary(ew.pow_p, x, y)


def max(x: Any, y: Any) -> Any:
    """Elementwise maximum; NaN if either operand is NaN."""
    return _binary(ew.max_p, x, y)


def min(x: Any, y: Any) -> Any:
    """Elementwise minimum; NaN if either operand is NaN."""
    return _binary(ew.min_p, x, y)


def atan2(x: Any, y: Any) -> Any:
    """The angle of the point ``(y, x)``: ``atan(x / y)`` in the right quadrant."""
    return _binary(ew.atan2_p, x, y)


def nextafter(x1: Any, x2: Any) -> Any:
    """The next representable value after ``x1`` in the direction of ``x2``."""
    return _binary(ew.nextafter_p, x1, x2)


def bitwise_and(x: Any, y: Any) -> Any:
    """Logical and of bools; bitwise and of integers."""
    return _binary(ew.and_p, x, y)


def bitwise_or(x: Any, y: Any) -> Any:
    """Logical or of bools; bitwise or of integers."""
    return _binary(ew.or_p, x, y)


def bitwise_xor(x: Any, y: Any) -> Any:
    """Logical xor of bools; bitwise xor of integers."""
    return _binary(ew.xor_p, x, y)


def eq(x: Any, y: Any) -> Any:
    """``x == y`` (bool result)."""
    return _binary(ew.eq_p, x, y)


def ne(x: Any, y: Any) -> Any:
    """``x != y`` (bool result)."""
    return _binary(ew.ne_p, x, y)


def lt(x: Any, y: Any) -> Any:
    """``x < y`` (bool result; not for complex)."""
    return _binary(ew.lt_p, x, y)


def le(x: Any, y: Any) -> Any:
    """``x <= y`` (bool result; not for complex)."""
    return _binary(ew.le_p, x, y)


def gt(x: Any, y: Any) -> Any:
    """``x > y`` (bool result; not for complex)."""
    return _binary(ew.gt_p, x, y)


def ge(x: Any, y: Any) -> Any:
    """``x >= y`` (bool result; not for complex)."""
    return _binary(ew.ge_p, x, y)


def shift_left(x: Any, y: Any) -> Any:
    """``x << y`` on integers; a shift by the bit width or more (or a negative
    one) gives 0."""
    return _binary(ew.shift_left_p, x, y)


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """``x >> y`` on integers, filling with the sign bit (unsigned values are
    read as two's complement); a shift by the bit width or more fills every bit."""
    return _binary(ew.shift_right_arithmetic_p, x, y)


def shift_right_logical(x: Any, y: Any) -> Any:
    """``x >> y`` on integers, filling with zeros; a shift by the bit width or
    more gives 0."""
    return _binary(ew.shift_right_logical_p, x, y)


# ---------------------------------------------------------------------------
# Selection


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise.  ``which`` is bool (at most 2 cases: False
    picks ``cases[0]``) or int32 (an out-of-range index is unspecified), a
    scalar or of the cases' shape; the cases share shape and dtype."""
    if not cases:
        raise ValueError("lax.select_n requires at least one case")
    _check_operand(which, "select_n")
    return ew.select_n_p.bind(which, *_same_dtypes("select_n", cases))


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where the bool ``pred`` is true, else ``on_false``."""
    _check_operand(pred, "select")
    if _dtype_and_weakness(pred, "select")[0] != dtypes.bool_:
        raise TypeError(
            f"lax.select: pred must be bool, got {_dtype_and_weakness(pred, 'select')[0].name}; "
            "use lax.select_n for integer selectors"
        )
    on_false, on_true = _same_dtypes("select", (on_false, on_true))
    return ew.select_n_p.bind(pred, on_false, on_true)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """``x`` limited to ``[min, max]`` elementwise (``min``/``max`` are scalars
    or of ``x``'s shape); NaN propagates."""
    lo, xx, hi = _same_dtypes("clamp", (min, x, max))
    return ew.clamp_p.bind(lo, xx, hi)
