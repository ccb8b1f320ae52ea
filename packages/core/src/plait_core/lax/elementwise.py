"""``lax`` functions of the elementwise family, with JAX's names and signatures.

Operands are arrays, scalars or traced values.  Operands of a multi-operand
function must share a dtype, as in JAX: weak types do not matter and nothing
is converted, a Python scalar having the default dtype of its kind
(``lax.add(x_f32, 1.0)`` is ``float32`` with x64 off, while
``lax.add(x_f16, 1.0)``, ``lax.add(x_u8, 3)`` and ``lax.add(x_f32, x_i32)``
are ``TypeError``s; use ``plait.numpy`` for NumPy's promotion, or
``lax.convert_element_type``).  Rank-0 operands broadcast against the
others; other shapes must match exactly.  (plait's own code that wants weakly
typed scalars converted uses :mod:`plait_core.lax._lenient`.)
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval
from plait_core.abstract import _array_types as _ARRAY_TYPES
from plait_core.primitive import Primitive
from plait_core.primitives import elementwise as ew
from plait_core.primitives.elementwise import RoundingMethod
from plait_core.trace import Tracer, tracer_types

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
    # Registered array types (device Arrays) first: the commonest operands
    # eagerly, and their abstract value is one call away.
    handler = _ARRAY_TYPES.get(x.__class__)
    if handler is not None:
        aval = handler.aval(x)
        return aval.dtype, aval.weak_type
    if x.__class__ in tracer_types:
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
    if isinstance(x, np.generic):  # (what get_aval says, without building an aval)
        return dtypes.canonicalize_dtype(x.dtype), False
    try:
        aval = get_aval(x)
    except TypeError:  # again, to say where (the message is only built when needed)
        aval = get_aval(x, f"an argument of {name}")
    return aval.dtype, aval.weak_type


def _check_operand(x: Any, name: str) -> None:
    c = x.__class__
    if c not in _ARRAY_TYPES and c not in tracer_types and c is not np.ndarray:
        _dtype_and_weakness(x, name)


def _dtype_list(typed: Sequence[tuple[DType, bool]], args: Sequence[Any]) -> str:
    return ", ".join(
        d.name + (f" (a Python {type(a).__name__})" if type(a) in _PY_SCALARS else " (weak)" if w else "")
        for a, (d, w) in zip(args, typed)
    )


def _same_dtypes(name: str, args: Sequence[Any]) -> list[Any]:
    """``args`` when they share one dtype, as JAX's lax requires: weak types do
    not matter and nothing is converted (a Python scalar has the default
    dtype of its kind, so ``lax.add(x_f32, 1.0)`` works with x64 off and
    ``lax.add(x_f16, 1.0)`` never does); ``TypeError`` naming the function
    and the dtypes otherwise."""
    typed = [_dtype_and_weakness(a, name) for a in args]
    first = typed[0][0]
    if all(d == first for d, _ in typed[1:]):
        return list(args)
    raise TypeError(
        f"lax.{name} requires arguments of the same dtype, got {_dtype_list(typed, args)}; lax does not "
        "promote, not even Python scalars: convert with lax.convert_element_type, or use plait.numpy, "
        "which promotes"
    )


def _weak_converted(name: str, args: Sequence[Any]) -> list[Any]:
    """``args`` with weakly typed ones (Python scalars) converted to the dtype
    they meet, when they promote to it: the lenient rule of plait's internal
    :mod:`plait_core.lax._lenient` (public ``lax`` is strict, as JAX's)."""
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
            raise TypeError(
                f"lax.{name} requires arguments of the same dtype, got {_dtype_list(typed, args)}; only weakly "
                "typed values are converted, and only to a dtype they promote to"
            )
    return out


def _binary(prim: Primitive, x: Any, y: Any, lenient: bool = False) -> Any:
    # Two operands of one dtype (an array and a Python float of its dtype
    # among them) bind straight away.
    dx = _dtype_and_weakness(x, prim.name)[0]
    dy = _dtype_and_weakness(y, prim.name)[0]
    if dx is dy or dx == dy:
        return prim.bind(x, y)
    return prim.bind(*(_weak_converted if lenient else _same_dtypes)(prim.name, (x, y)))


def _binary_function(prim: Primitive, name: str, doc: str, lenient: bool = False) -> Callable[[Any, Any], Any]:
    """The lax function applying the parameterless binary ``prim`` with the
    rule on dtypes of :func:`_binary` (JAX's; ``lenient``: plait's internal
    one, which converts weakly typed operands).  Two registered arrays
    (device Arrays) of one dtype bind at once, in the one Python frame of
    the call."""

    def fn(x: Any, y: Any) -> Any:
        cx = x.__class__
        hx = _ARRAY_TYPES.get(cx)
        if hx is not None:
            hy = _ARRAY_TYPES.get(y.__class__)
            if hy is not None and hx.aval(x).dtype == hy.aval(y).dtype:
                return prim.bind(x, y)
        elif cx in tracer_types:
            # While tracing: two tracers of one dtype, or a tracer and a Python
            # float of the default float dtype (``x + 1.0``), bind at once.
            cy = y.__class__
            if cy is cx:
                if x.aval.dtype == y.aval.dtype:
                    return prim.bind(x, y)
            elif cy is builtins.float and x.aval.dtype == dtypes.default_float_dtype():
                return prim.bind(x, y)
        return _binary(prim, x, y, lenient)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _unary_function(prim: Primitive, name: str, doc: str) -> Callable[[Any], Any]:
    """The lax function applying the parameterless unary ``prim``: it checks
    that its operand is an array or a scalar and binds ``prim``.  Made by this
    factory so that a call is one Python frame (eager operations pay for every
    frame, and a registered array needs no check beyond its type)."""
    what = prim.name

    def fn(x: Any) -> Any:
        c = x.__class__
        if c not in _ARRAY_TYPES and c not in tracer_types:
            _check_operand(x, what)
        return prim.bind(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


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
    elif type(operand) is builtins.int and not dtypes.is_narrow(dt):
        # A Python int is checked against the target type, not the default integer type:
        # jnp.uint32(3213575472) holds although the int does not fit in int32 (as in JAX).
        # (It wraps around in a narrow integer type, as in JAX.)
        if dtypes.is_int(dt):
            info = dtypes.iinfo(dt)
            if not int(info.min) <= operand <= int(info.max):
                raise OverflowError(f"Python int {operand} does not fit in {dt.name} (lax.convert_element_type)")
        operand = np.asarray(operand, dtype=dt)
    else:
        _check_operand(operand, "convert_element_type")
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


neg = _unary_function(ew.neg_p, "neg", """``-x`` (unsigned integers wrap).""")


sign = _unary_function(ew.sign_p, "sign", """-1, 0 or 1 by the sign of ``x`` (``x/|x|`` for complex; unsigned: 0 or 1;
    a float zero keeps its sign and NaN stays NaN).""")


floor = _unary_function(ew.floor_p, "floor", """Largest integral value ``<= x`` (floats only).""")


ceil = _unary_function(ew.ceil_p, "ceil", """Smallest integral value ``>= x`` (floats only).""")


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
    _check_operand(x, "round")
    return ew.round_p.bind(x, rounding_method=method)


is_finite = _unary_function(ew.is_finite_p, "is_finite", """True where ``x`` is neither infinite nor NaN (floats only); bool result.""")


exp = _unary_function(ew.exp_p, "exp", """``e ** x`` (floating or complex).""")


exp2 = _unary_function(ew.exp2_p, "exp2", """``2 ** x`` (floating or complex).""")


log = _unary_function(ew.log_p, "log", """Natural logarithm (NaN for negative reals, -inf at 0).""")


log1p = _unary_function(ew.log1p_p, "log1p", """``log(1 + x)``, accurate for small ``x``.""")


expm1 = _unary_function(ew.expm1_p, "expm1", """``exp(x) - 1``, accurate for small ``x``.""")


tanh = _unary_function(ew.tanh_p, "tanh", """Hyperbolic tangent.""")


logistic = _unary_function(ew.logistic_p, "logistic", """The logistic sigmoid ``1 / (1 + exp(-x))``, without overflow for large ``|x|``.""")


sin = _unary_function(ew.sin_p, "sin", """Sine.""")


cos = _unary_function(ew.cos_p, "cos", """Cosine.""")


tan = _unary_function(ew.tan_p, "tan", """Tangent.""")


asin = _unary_function(ew.asin_p, "asin", """Inverse sine (NaN outside [-1, 1] for reals).""")


acos = _unary_function(ew.acos_p, "acos", """Inverse cosine (NaN outside [-1, 1] for reals).""")


atan = _unary_function(ew.atan_p, "atan", """Inverse tangent.""")


sinh = _unary_function(ew.sinh_p, "sinh", """Hyperbolic sine.""")


cosh = _unary_function(ew.cosh_p, "cosh", """Hyperbolic cosine.""")


asinh = _unary_function(ew.asinh_p, "asinh", """Inverse hyperbolic sine.""")


acosh = _unary_function(ew.acosh_p, "acosh", """Inverse hyperbolic cosine (NaN below 1 for reals).""")


atanh = _unary_function(ew.atanh_p, "atanh", """Inverse hyperbolic tangent (+-inf at +-1, NaN beyond for reals).""")


sqrt = _unary_function(ew.sqrt_p, "sqrt", """Square root (NaN for negative reals).""")


rsqrt = _unary_function(ew.rsqrt_p, "rsqrt", """``1 / sqrt(x)``.""")


cbrt = _unary_function(ew.cbrt_p, "cbrt", """Real cube root (floats only; negative for negative ``x``).""")


abs = _unary_function(ew.abs_p, "abs", """``|x|`` (signed integers, floats, complex; complex gives its real dtype;
    the most negative integer stays itself, as in two's complement).""")


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a static Python int ``y``, by repeated multiplication
    (integers wrap; a negative ``y`` needs a floating or complex ``x``)."""
    if type(y) is builtins.bool or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow: the exponent y must be a Python int, got {type(y).__name__} {y!r}")
    _check_operand(x, "integer_pow")
    return ew.integer_pow_p.bind(x, y=operator.index(y))


def square(x: Any) -> Any:
    """``x * x``."""
    return integer_pow(x, 2)


def reciprocal(x: Any) -> Any:
    """``1 / x`` (floating or complex)."""
    return integer_pow(x, -1)


erf = _unary_function(ew.erf_p, "erf", """The error function (floats only).""")


erf_inv = _unary_function(ew.erf_inv_p, "erf_inv", """The inverse error function: +-inf at +-1, NaN outside [-1, 1] (floats only).""")


lgamma = _unary_function(ew.lgamma_p, "lgamma", """``log|Gamma(x)|``; +inf at the poles 0, -1, -2, ... (floats only).""")


digamma = _unary_function(ew.digamma_p, "digamma", """The digamma function ``d/dx log Gamma(x)``; NaN at the poles 0, -1, -2, ...
    (floats only).""")


bitwise_not = _unary_function(ew.not_p, "bitwise_not", """Logical not of a bool array; bitwise not of an integer array.""")


# ---------------------------------------------------------------------------
# Binary


add = _binary_function(ew.add_p, "add", """``x + y`` (numeric; integers wrap).""")


sub = _binary_function(ew.sub_p, "sub", """``x - y`` (numeric; integers wrap).""")


mul = _binary_function(ew.mul_p, "mul", """``x * y`` (numeric; integers wrap).""")


div = _binary_function(ew.div_p, "div", """``x / y``.  Integer division truncates toward zero (``-7 / 2 == -3``), as
    in C; ``x / 0`` is -1 for signed and the largest value for unsigned
    integers, and ``INT_MIN / -1`` is ``INT_MIN`` (XLA's answers).""")


rem = _binary_function(ew.rem_p, "rem", """Remainder of ``x / y`` with the sign of ``x`` (C's ``fmod``, not Python's
    ``%``); for integers ``x % 0`` is ``x``.""")


def pow(x: Any, y: Any) -> Any:
    """``x ** y`` for a floating or complex ``x``; ``y`` has ``x``'s dtype or is
    an integer (of any integer dtype, a Python int too), as in JAX."""
    return _pow(x, y, False)


def _pow(x: Any, y: Any, lenient: bool) -> Any:
    dx = _dtype_and_weakness(x, "pow")[0]
    dy, wy = _dtype_and_weakness(y, "pow")
    if dx != dy and dtypes.is_inexact(dx) and dtypes.is_int(dy):
        y = _convert_element_type(y, dx, wy)
    return _binary(ew.pow_p, x, y, lenient)


max = _binary_function(ew.max_p, "max", """Elementwise maximum; NaN if either operand is NaN.""")


min = _binary_function(ew.min_p, "min", """Elementwise minimum; NaN if either operand is NaN.""")


atan2 = _binary_function(ew.atan2_p, "atan2", """The angle of the point ``(y, x)``: ``atan(x / y)`` in the right quadrant.""")


def nextafter(x1: Any, x2: Any) -> Any:
    """The next representable value after ``x1`` in the direction of ``x2``."""
    return _binary(ew.nextafter_p, x1, x2)


def _select_n(which: Any, cases: Sequence[Any], lenient: bool) -> Any:
    if not cases:
        raise ValueError("lax.select_n requires at least one case")
    _check_operand(which, "select_n")
    return ew.select_n_p.bind(which, *(_weak_converted if lenient else _same_dtypes)("select_n", cases))


def _select(pred: Any, on_true: Any, on_false: Any, lenient: bool) -> Any:
    _check_operand(pred, "select")
    if _dtype_and_weakness(pred, "select")[0] != dtypes.bool_:
        raise TypeError(
            f"lax.select: pred must be bool, got {_dtype_and_weakness(pred, 'select')[0].name}; "
            "use lax.select_n for integer selectors"
        )
    on_false, on_true = (_weak_converted if lenient else _same_dtypes)("select", (on_false, on_true))
    return ew.select_n_p.bind(pred, on_false, on_true)


def _clamp(min: Any, x: Any, max: Any, lenient: bool) -> Any:
    lo, xx, hi = (_weak_converted if lenient else _same_dtypes)("clamp", (min, x, max))
    return ew.clamp_p.bind(lo, xx, hi)


bitwise_and = _binary_function(ew.and_p, "bitwise_and", """Logical and of bools; bitwise and of integers.""")


bitwise_or = _binary_function(ew.or_p, "bitwise_or", """Logical or of bools; bitwise or of integers.""")


bitwise_xor = _binary_function(ew.xor_p, "bitwise_xor", """Logical xor of bools; bitwise xor of integers.""")


eq = _binary_function(ew.eq_p, "eq", """``x == y`` (bool result).""")


ne = _binary_function(ew.ne_p, "ne", """``x != y`` (bool result).""")


lt = _binary_function(ew.lt_p, "lt", """``x < y`` (bool result; not for complex).""")


le = _binary_function(ew.le_p, "le", """``x <= y`` (bool result; not for complex).""")


gt = _binary_function(ew.gt_p, "gt", """``x > y`` (bool result; not for complex).""")


ge = _binary_function(ew.ge_p, "ge", """``x >= y`` (bool result; not for complex).""")


shift_left = _binary_function(ew.shift_left_p, "shift_left", """``x << y`` on integers; a shift by the bit width or more (or a negative
    one) gives 0.""")


shift_right_arithmetic = _binary_function(ew.shift_right_arithmetic_p, "shift_right_arithmetic", """``x >> y`` on integers, filling with the sign bit (unsigned values are
    read as two's complement); a shift by the bit width or more fills every bit.""")


shift_right_logical = _binary_function(ew.shift_right_logical_p, "shift_right_logical", """``x >> y`` on integers, filling with zeros; a shift by the bit width or
    more gives 0.""")


# ---------------------------------------------------------------------------
# Selection


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise.  ``which`` is bool (at most 2 cases: False
    picks ``cases[0]``) or int32 (an out-of-range index is unspecified), a
    scalar or of the cases' shape; the cases share shape and dtype."""
    return _select_n(which, cases, False)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where the bool ``pred`` is true, else ``on_false``."""
    return _select(pred, on_true, on_false, False)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """``x`` limited to ``[min, max]`` elementwise (``min``/``max`` are scalars
    or of ``x``'s shape); NaN propagates."""
    return _clamp(min, x, max, False)
