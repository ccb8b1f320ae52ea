"""Elementwise arithmetic and transcendental functions under their NumPy names.

Every function promotes its inputs with JAX's rules (Python scalars are weakly
typed), broadcasts them NumPy-style, and binds ``lax`` operations.  Functions
that only make sense on real numbers (``sin``, ``sqrt``, ``true_divide``, ...)
compute in the default float dtype when given integers or booleans; ``//``
and ``%`` follow Python's floor semantics, built on the truncating ``lax.div``
and ``lax.rem``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import _array_types as _ARRAY_TYPES
from plait_core.config import config
from plait_core.eager_fast import runner_memo
from plait_core.eager_fast import shortcuts as _fast
from plait_core.eager_staging import staged_when_eager
from plait_core.lax import _lenient
from plait_core.lax._logaddexp import logaddexp as _logaddexp
from plait_core.lax._logaddexp import logaddexp2 as _logaddexp2
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _array_aval,
    _folded,
    _host_converted,
    _yields_to,
    as_array,
    broadcast_args,
    check_arraylike,
    const_like,
    convert,
    dtype_of,
    full_like_value,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes_inexact,
    promote_dtypes_numeric,
    scalar_like,
    to_inexact,
)
from plait_core.primitive import Primitive
from plait_core.primitives import elementwise as _ew
from plait_core.trace import EvalTrace as _EvalTrace
from plait_core.trace import Tracer
from plait_core.trace import _state as _trace_state

UnaryFn = Callable[[ArrayLike], Array]
BinaryFn = Callable[[ArrayLike, ArrayLike], Array]


def _named(fn: Any, name: str, doc: str) -> Any:
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _no_bool(name: str, x: Array) -> None:
    if dtypes.is_bool(dtype_of(x)):
        raise TypeError(f"{name} does not accept boolean inputs; convert with astype first")


# ---------------------------------------------------------------------------
# Unary functions computed in floating point


# ---------------------------------------------------------------------------
# Eager shortcuts (issue 17; see plait_core.eager_fast): a call whose outcome
# is one primitive bound on its operands asks the eager backend directly.

_NO_PARAMS: dict[str, Any] = {}
_inexact_dtypes: dict[Any, builtins.bool] = {}


def _is_inexact(dt: Any) -> builtins.bool:
    hit = _inexact_dtypes.get(dt)
    if hit is None:
        hit = _inexact_dtypes[dt] = dtypes.is_inexact(dt)
    return hit


def _lax_unary_primitive(op: Callable[[Array], Array]) -> Primitive | None:
    """The primitive a ``lax`` unary function binds as it is (one made by
    lax's ``_unary_function``, which binds it on any array), else ``None``."""
    code: Any = getattr(op, "__code__", None)
    closure: Any = getattr(op, "__closure__", None)
    if code is None or code is not getattr(lax.neg, "__code__", None) or closure is None:
        return None
    freevars: Any = getattr(code, "co_freevars", ())
    cells = dict(zip(freevars, closure))
    prim = cells["prim"].cell_contents if "prim" in cells else None
    return prim if isinstance(prim, Primitive) else None


_AS_IS = 1
_ON_HOST = 2
_scalar_plans: dict[tuple[Any, ...], int] = {}


def _scalar_operand(aval: Any, s: Any) -> Any:
    """What ``promote_args`` makes of the Python int or float ``s`` next to an
    array of ``aval`` when the pair then binds as it is (``s`` itself, or a
    NumPy scalar of the array's dtype), or ``None`` (the general path): as
    ``_scalar_for`` decides, remembered per (dtype, weak type, scalar type, x64)."""
    key = (aval.dtype, aval.weak_type, s.__class__, config.x64_enabled)
    plan = _scalar_plans.get(key)
    if plan is None:
        if s.__class__ is builtins.int and not -(2**31) <= s < 2**31:
            return None  # _yields_to leaves these to the general path: no plan from them
        if aval.dtype.kind == "b":
            plan = 0  # booleans: logical operations (or refusals), not the arithmetic primitive
        elif dtypes.python_scalar_dtype(s) == aval.dtype:
            plan = _AS_IS
        elif not aval.weak_type and _yields_to(aval, s):
            plan = _ON_HOST
        else:
            plan = 0
        _scalar_plans[key] = plan
    if plan == _AS_IS:
        return s
    if plan == _ON_HOST:
        return _host_converted(s, aval.dtype)
    return None


def _shortcut_pair(prim: Primitive, x1: Any, x2: Any) -> Any:
    """``prim`` bound on a device Array ``x1`` and ``x2`` by the backend's
    shortcut, for the arithmetic functions binding ``prim`` on non-boolean
    operands of one type (``add``, ``subtract``, ``multiply`` and their
    operators); ``None`` when the general path must decide."""
    t = x2.__class__
    if t is x1.__class__:
        return _fast.binary(prim, x1, x2, True)
    if t is builtins.float or t is builtins.int:
        aval = x1.aval
        x64 = config.x64_enabled
        plan = _scalar_plans.get((aval.dtype, aval.weak_type, t, x64))
        if plan == _AS_IS:
            return _fast.binary(prim, x1, x2, False)
        if plan == _ON_HOST:
            s = _folded[x64].get((t, x2, aval.dtype))
            if s is None:
                s = _host_converted(x2, aval.dtype)
        elif plan is None:
            s = _scalar_operand(aval, x2)
        else:
            return None
        if s is not None:
            return _fast.binary(prim, x1, s, False)
    return None


def _inexact_unary(name: str, op: Callable[[Array], Array], what: str) -> UnaryFn:
    prim = _lax_unary_primitive(op)

    def fn(x: ArrayLike, /) -> Array:
        handler = _ARRAY_TYPES.get(x.__class__)  # a device Array: the commonest case eagerly
        aval = handler.aval(x) if handler is not None else _array_aval(x)
        if aval is None or not _is_inexact(aval.dtype):
            (x,) = promote_dtypes_inexact(name, x)
        return op(x)

    if prim is not None:
        general = fn
        memo = runner_memo()

        def fn(x: ArrayLike, /) -> Array:
            # A floating device Array eagerly: the primitive bound on it, by the
            # backend's runner of the last signature seen here (it answers
            # ``None`` for any other), else its shortcut (the dtype's test is
            # learnt by the general path).
            if x.__class__ is _fast.array_type and _trace_state.trace.__class__ is _EvalTrace:
                out = memo[0](x)
                if out is not None:
                    return out
                if _inexact_dtypes.get(x.aval.dtype):  # type: ignore[attr-defined]
                    out = _fast.unary(prim, _NO_PARAMS, x)
                    memo[0] = _fast.unary_runner(prim, _NO_PARAMS, x)
                    return out
            return general(x)

    return _named(fn, name, f"{what}, elementwise (integers and booleans compute in the default float dtype).")  # type: ignore[no-any-return]


def _log_base(base: float) -> Callable[[Array], Array]:
    def op(x: Array) -> Array:
        return _lenient.div(lax.log(x), lax.log(convert(base, dtype_of(x))))

    return op


exp = _inexact_unary("exp", lax.exp, "The exponential e**x")
exp2 = _inexact_unary("exp2", lax.exp2, "Two to the power x")
log = _inexact_unary("log", lax.log, "The natural logarithm")
log2 = _inexact_unary("log2", _log_base(2.0), "The base-2 logarithm")
log10 = _inexact_unary("log10", _log_base(10.0), "The base-10 logarithm")
log1p = _inexact_unary("log1p", lax.log1p, "log(1 + x), accurate for small x")
expm1 = _inexact_unary("expm1", lax.expm1, "exp(x) - 1, accurate for small x")
sin = _inexact_unary("sin", lax.sin, "The sine")
cos = _inexact_unary("cos", lax.cos, "The cosine")
tan = _inexact_unary("tan", lax.tan, "The tangent")
arcsin = _inexact_unary("arcsin", lax.asin, "The inverse sine")
arccos = _inexact_unary("arccos", lax.acos, "The inverse cosine")
arctan = _inexact_unary("arctan", lax.atan, "The inverse tangent")
sinh = _inexact_unary("sinh", lax.sinh, "The hyperbolic sine")
cosh = _inexact_unary("cosh", lax.cosh, "The hyperbolic cosine")
tanh = _inexact_unary("tanh", lax.tanh, "The hyperbolic tangent")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "The inverse hyperbolic sine")
arccosh = _inexact_unary("arccosh", lax.acosh, "The inverse hyperbolic cosine")
arctanh = _inexact_unary("arctanh", lax.atanh, "The inverse hyperbolic tangent")
sqrt = _inexact_unary("sqrt", lax.sqrt, "The non-negative square root")
cbrt = _inexact_unary("cbrt", lax.cbrt, "The cube root")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def reciprocal(x: ArrayLike, /) -> Array:
    """``1 / x`` elementwise, computed in floating point (as JAX does); weakly
    typed when ``x`` is."""
    (x,) = promote_dtypes_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def deg2rad(x: ArrayLike, /) -> Array:
    """Degrees to radians."""
    (x,) = promote_dtypes_inexact("deg2rad", x)
    return _lenient.mul(x, const_like(x, np.pi / 180))


def rad2deg(x: ArrayLike, /) -> Array:
    """Radians to degrees."""
    (x,) = promote_dtypes_inexact("rad2deg", x)
    return _lenient.mul(x, const_like(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


def sinc(x: ArrayLike, /) -> Array:
    """The normalised sinc ``sin(pi x) / (pi x)``, with ``sinc(0) == 1``."""
    (x,) = promote_dtypes_inexact("sinc", x)
    dt = dtype_of(x)
    zero = _lenient.eq(x, convert(0, dt))
    safe = _lenient.select_n(zero, x, full_like_value(x, 1))
    pix = _lenient.mul(safe, const_like(x, np.pi))
    return _lenient.select_n(zero, _lenient.div(lax.sin(pix), pix), full_like_value(x, 1))


# ---------------------------------------------------------------------------
# Sign, absolute value, rounding


def negative(x: ArrayLike, /) -> Array:
    """``-x`` elementwise (booleans are rejected, as in NumPy)."""
    x = as_array(x, "negative")
    _no_bool("negative", x)
    return lax.neg(x)


def positive(x: ArrayLike, /) -> Array:
    """``+x``: the input itself (booleans included, as in JAX)."""
    return as_array(x, "positive")


def absolute(x: ArrayLike, /) -> Array:
    """``|x|`` elementwise; unsigned integers and booleans are returned unchanged."""
    x = as_array(x, "absolute")
    dt = dtype_of(x)
    if dtypes.is_unsigned_int(dt) or dtypes.is_bool(dt):
        return x
    return lax.abs(x)


abs = absolute


def sign(x: ArrayLike, /) -> Array:
    """-1, 0 or 1 by the sign of ``x`` (NaN stays NaN); booleans are rejected."""
    x = as_array(x, "sign")
    dt = dtype_of(x)
    _no_bool("sign", x)
    if dtypes.is_unsigned_int(dt):
        return convert(_lenient.ne(x, convert(0, dt)), dt)
    return lax.sign(x)


def _keep_integers(name: str, op: Callable[[Array], Array]) -> UnaryFn:
    def fn(x: ArrayLike, /) -> Array:
        x = as_array(x, name)
        if not dtypes.is_inexact(dtype_of(x)):
            return x
        return op(x)

    return fn


def _trunc(x: Array) -> Array:
    negative_x = _lenient.lt(x, convert(0, dtype_of(x)))
    return _lenient.select_n(negative_x, lax.floor(x), lax.ceil(x))


floor = _named(_keep_integers("floor", lax.floor), "floor",
               "The largest integer not greater than x (integers are returned unchanged).")
ceil = _named(_keep_integers("ceil", lax.ceil), "ceil",
              "The smallest integer not less than x (integers are returned unchanged).")
trunc = _named(_keep_integers("trunc", _trunc), "trunc",
               "x rounded towards zero (integers are returned unchanged).")
fix = _named(_keep_integers("fix", _trunc), "fix", "x rounded towards zero (``trunc``).")


def _round_even(x: Array) -> Array:
    if dtypes.is_complex(dtype_of(x)):  # the real and imaginary parts, each
        return _lenient.complex(_round_even(lax.real(x)), _round_even(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def rint(x: ArrayLike, /) -> Array:
    """``x`` rounded to the nearest integer, halves to even; integers and booleans
    are converted to the default float dtype (as in JAX)."""
    x = as_array(x, "rint")
    if not dtypes.is_inexact(dtype_of(x)):
        return convert(x, dtypes.default_float_dtype())
    return _round_even(x)


def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Array:
    """``a`` rounded to ``decimals`` decimal places, halves to even (NumPy's ``round``).

    Integers are unchanged for ``decimals >= 0`` and rounded to a multiple of
    ``10**-decimals`` otherwise."""
    if out is not None:
        raise TypeError("round: the out argument is not supported (plait arrays are immutable)")
    a = as_array(a, "round")
    if not isinstance(decimals, (builtins.int, np.integer)) or isinstance(decimals, builtins.bool):
        raise TypeError(f"round: decimals must be an integer, got {decimals!r}")
    dt = dtype_of(a)
    if dtypes.is_bool(dt):
        raise ValueError("round: booleans cannot be rounded (the dtype bool is not numeric); "
                         "convert with astype first")
    if not dtypes.is_inexact(dt):
        if decimals >= 0:
            return a
        factor = 10 ** (-builtins.int(decimals))
        as_float = convert(a, dtypes.default_float_dtype())
        scaled = _round_even(_lenient.div(as_float, convert(float(factor), dtype_of(as_float))))
        return convert(_lenient.mul(scaled, convert(float(factor), dtype_of(as_float))), dt)
    if decimals == 0:
        return _round_even(a)
    factor = convert(10.0 ** builtins.abs(builtins.int(decimals)), dt)
    if decimals > 0:
        return _lenient.div(_round_even(_lenient.mul(a, factor)), factor)
    return _lenient.mul(_round_even(_lenient.div(a, factor)), factor)


around = round


# ---------------------------------------------------------------------------
# Binary arithmetic


def add(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 + x2`` elementwise with broadcasting; booleans add as logical or."""
    if x1.__class__ is _fast.array_type and _trace_state.trace.__class__ is _EvalTrace:
        out = _shortcut_pair(_ew.add_p, x1, x2)
        if out is not None:
            return out
    x1, x2 = promote_args("add", x1, x2)
    if dtypes.is_bool(dtype_of(x1)):
        return _lenient.bitwise_or(x1, x2)
    return _lenient.add(x1, x2)


def subtract(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 - x2`` elementwise with broadcasting (booleans are rejected, as in NumPy)."""
    if x1.__class__ is _fast.array_type and _trace_state.trace.__class__ is _EvalTrace:
        out = _shortcut_pair(_ew.sub_p, x1, x2)
        if out is not None:
            return out
    x1, x2 = promote_args("subtract", x1, x2)
    _no_bool("subtract", x1)
    return _lenient.sub(x1, x2)


def multiply(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 * x2`` elementwise with broadcasting; booleans multiply as logical and."""
    if x1.__class__ is _fast.array_type and _trace_state.trace.__class__ is _EvalTrace:
        out = _shortcut_pair(_ew.mul_p, x1, x2)
        if out is not None:
            return out
    x1, x2 = promote_args("multiply", x1, x2)
    if dtypes.is_bool(dtype_of(x1)):
        return _lenient.bitwise_and(x1, x2)
    return _lenient.mul(x1, x2)


def true_divide(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 / x2`` elementwise; integers and booleans divide in the default float dtype."""
    x1, x2 = promote_args_inexact("true_divide", x1, x2)
    return _lenient.div(x1, x2)


divide = true_divide


def _is_negative(x: Array) -> Array:
    dt = dtype_of(x)
    if dtypes.is_unsigned_int(dt):
        return full_like_value(x, False, dtypes.bool_)
    return _lenient.lt(x, convert(0, dt))


def _nonzero_divisor(x2: Array) -> Array:
    """An integer divisor with its zeros replaced by 1: JAX's remainders by an
    integer zero are 0 (XLA's would be the dividend)."""
    return _lenient.select_n(_lenient.eq(x2, scalar_like(x2, 0)), x2, full_like_value(x2, 1))


def _int_floor_divmod(x1: Array, x2: Array) -> tuple[Array, Array]:
    quotient = _lenient.div(x1, x2)
    remainder_ = _int_remainder(x1, x2)
    if dtypes.is_unsigned_int(dtype_of(x1)):
        return quotient, remainder_
    zero = scalar_like(x1, 0)
    # Truncation rounds towards zero; floor rounds down, which differs exactly when the
    # truncated remainder is non-zero and the operands' signs differ (as JAX decides it:
    # by the signs, so that a division by zero gives XLA's -1 minus 1, JAX's -2).
    signs_differ = _lenient.ne(lax.sign(x1), lax.sign(x2))
    fix_up = _lenient.bitwise_and(signs_differ, _lenient.ne(_lenient.rem(x1, x2), zero))
    one = scalar_like(x1, 1)
    return _lenient.select_n(fix_up, quotient, _lenient.sub(quotient, one)), remainder_


def _int_remainder(x1: Array, x2: Array) -> Array:
    """Python's modulo of integers (the sign of ``x2``); 0 where ``x2`` is 0, as JAX."""
    x2 = _nonzero_divisor(x2)
    mod = _lenient.rem(x1, x2)
    if dtypes.is_unsigned_int(dtype_of(x1)):
        return mod
    zero = scalar_like(x1, 0)
    fix_up = _lenient.bitwise_and(_lenient.ne(mod, zero), _lenient.ne(_is_negative(mod), _is_negative(x2)))
    return _lenient.select_n(fix_up, mod, _lenient.add(mod, x2))


def _float_floor_divmod(x1: Array, x2: Array) -> tuple[Array, Array]:
    dt = dtype_of(x1)
    zero = convert(0, dt)
    mod = _lenient.rem(x1, x2)
    fix_up = _lenient.bitwise_and(_lenient.ne(mod, zero), _lenient.ne(_lenient.lt(mod, zero), _lenient.lt(x2, zero)))
    mod = _lenient.select_n(fix_up, mod, _lenient.add(mod, x2))
    # (x1 - mod) / x2 is an integer up to rounding error: round it to the nearest.
    quotient = _round_even(_lenient.div(_lenient.sub(x1, mod), x2))
    by_zero = _lenient.eq(x2, zero)
    quotient = _lenient.select_n(by_zero, quotient, _lenient.div(x1, x2))
    # Piecewise constant: its derivative is a symbolic zero, as in JAX (so cbrt(x // 3) at 0 has tangent 0, not NaN).
    return lax.stop_gradient(quotient), mod


def _floor_divmod(name: str, x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:
    x1, x2 = promote_args_numeric(name, x1, x2)
    dt = dtype_of(x1)
    if dtypes.is_complex(dt):
        raise TypeError(f"{name} does not accept complex inputs")
    if dtypes.is_int(dt):
        return _int_floor_divmod(x1, x2)
    return _float_floor_divmod(x1, x2)


def floor_divide(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 // x2``: the quotient rounded down (Python's floor division)."""
    return _floor_divmod("floor_divide", x1, x2)[0]


def remainder(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 % x2``: the remainder with the sign of ``x2`` (Python's modulo);
    booleans compute in ``int32``.  Integer remainders by 0 are 0, and ``x1 // 0``
    is XLA's -1 corrected as a negative quotient (-2; the largest value for
    unsigned types), as JAX computes them."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    dt = dtype_of(x1)
    if dtypes.is_complex(dt):
        raise TypeError(f"remainder does not accept {dt.name} inputs")
    if dtypes.is_int(dt):
        return _int_remainder(x1, x2)
    mod = _lenient.rem(x1, x2)
    zero = convert(0, dt)
    fix_up = _lenient.bitwise_and(_lenient.ne(mod, zero), _lenient.ne(_is_negative(mod), _is_negative(x2)))
    return _lenient.select_n(fix_up, mod, _lenient.add(mod, x2))


mod = remainder


def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:
    """``(x1 // x2, x1 % x2)`` with Python's floor semantics."""
    return _floor_divmod("divmod", x1, x2)


def fmod(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The remainder of truncated division: it has the sign of ``x1`` (C's
    ``fmod``); for integers 0 where ``x2`` is 0, as JAX."""
    x1, x2 = promote_args_numeric("fmod", x1, x2)
    if dtypes.is_int(dtype_of(x1)):
        x2 = _nonzero_divisor(x2)
    return _lenient.rem(x1, x2)


def _int_pow(base: Array, exponent: Array) -> Array:
    """Integer power by binary exponentiation over every bit of the exponent."""
    dt = dtype_of(base)
    one = convert(1, dt)
    acc = full_like_value(base, 1, dt)  # strongly typed, as JAX's result
    bits = dt.itemsize * 8
    negative_exponent = None
    if dtypes.is_signed_int(dt):
        negative_exponent = _lenient.lt(exponent, convert(0, dt))
        exponent = _lenient.select_n(negative_exponent, exponent, full_like_value(exponent, 0))
    for _ in builtins.range(bits):
        odd = _lenient.ne(_lenient.bitwise_and(exponent, one), convert(0, dt))
        acc = _lenient.select_n(odd, acc, _lenient.mul(acc, base))
        base = _lenient.mul(base, base)
        exponent = _lenient.shift_right_logical(exponent, one)
    if negative_exponent is not None:
        acc = _lenient.select_n(negative_exponent, acc, full_like_value(acc, 0))
    return acc


def _static_int_exponent(x: Any) -> int | None:
    if type(x) is builtins.int:
        return x
    if isinstance(x, np.integer):
        return builtins.int(x)
    return None


def power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 ** x2`` elementwise with broadcasting, typed as JAX types it.

    * A static integer exponent (a Python or NumPy int) uses ``lax.integer_pow``
      on ``x1`` alone: the result has ``x1``'s dtype and weak type (booleans
      compute in ``int32``, so ``b ** 2`` is a strong ``int32``); integers to
      negative static powers are a ``ValueError``.
    * Integer (or boolean) operands use exact binary exponentiation in their
      common dtype (negative exponents give 0).
    * A floating or complex ``x1`` to an integer array power keeps ``x1``'s
      dtype and is strongly typed.
    * Otherwise both operands are promoted and ``lax.pow`` computes."""
    a1, a2 = check_arraylike("power", x1, x2)
    static = _static_int_exponent(x2)
    if static is not None and not isinstance(x2, Tracer):
        (x,) = promote_dtypes_numeric("power", x1)
        if dtypes.is_int(dtype_of(x)) and static < 0:
            raise ValueError(f"power: integers to negative integer powers are not allowed (exponent {static})")
        return lax.integer_pow(x, static)
    p1, p2 = promote_args_numeric("power", x1, x2, keep_scalars=False)
    dt = dtype_of(p1)
    if dtypes.is_int(dt):
        return _int_pow(p1, p2)
    if dtypes.is_inexact(a1.dtype) and dtypes.is_int(a2.dtype):
        b1, b2 = broadcast_args("power", x1, x2)
        return _lenient.pow(b1, convert(b2, a1.dtype))  # a strongly typed exponent: a strong result
    return _lenient.pow(p1, p2)


pow = power


def float_power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 ** x2`` computed in floating point: the operands are promoted to their
    common inexact dtype (as JAX does; NumPy would widen to float64)."""
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    return _lenient.pow(x1, x2)


def square(x: ArrayLike, /) -> Array:
    """``x * x`` elementwise (booleans compute in ``int32``, as in JAX)."""
    (x,) = promote_dtypes_numeric("square", x)
    return lax.integer_pow(x, 2)


def _bool_or(op: Callable[[Array, Array], Array], bool_op: Callable[[Array, Array], Array],
             name: str, doc: str) -> BinaryFn:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        x1, x2 = promote_args(name, x1, x2)
        if dtypes.is_bool(dtype_of(x1)):
            return bool_op(x1, x2)
        return op(x1, x2)

    return _named(fn, name, doc)  # type: ignore[no-any-return]


maximum = _bool_or(lax.max, lax.bitwise_or, "maximum",
                   "The elementwise maximum; NaN in either input gives NaN.")
minimum = _bool_or(lax.min, lax.bitwise_and, "minimum",
                   "The elementwise minimum; NaN in either input gives NaN.")


def _nan_ignoring(name: str, pick: BinaryFn) -> BinaryFn:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        x1, x2 = promote_args(name, x1, x2, keep_scalars=False)
        if not dtypes.is_inexact(dtype_of(x1)):
            return pick(x1, x2)
        picked = pick(x1, x2)
        picked = _lenient.select_n(_lenient.ne(x2, x2), picked, x1)
        return _lenient.select_n(_lenient.ne(x1, x1), picked, x2)

    return fn


fmax = _named(_nan_ignoring("fmax", maximum), "fmax",
              "The elementwise maximum ignoring NaN (NaN only where both inputs are NaN).")
fmin = _named(_nan_ignoring("fmin", minimum), "fmin",
              "The elementwise minimum ignoring NaN (NaN only where both inputs are NaN).")


def arctan2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The angle of the point ``(x2, x1)``, in ``[-pi, pi]``."""
    x1, x2 = promote_args_inexact("arctan2", x1, x2)
    return _lenient.atan2(x1, x2)


atan2 = arctan2


def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``sqrt(x1**2 + x2**2)`` without intermediate overflow or underflow."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if dtypes.is_complex(dtype_of(x1)):
        raise ValueError("hypot is not defined for complex inputs (as in JAX)")
    a, b = lax.abs(x1), lax.abs(x2)
    big, small = _lenient.max(a, b), _lenient.min(a, b)
    zero = _lenient.eq(big, const_like(big, 0))
    safe_big = _lenient.select_n(zero, big, full_like_value(big, 1))
    ratio = _lenient.div(small, safe_big)
    result = _lenient.mul(big, lax.sqrt(_lenient.add(const_like(ratio, 1), _lenient.mul(ratio, ratio))))
    result = _lenient.select_n(zero, result, big)
    # An infinite side makes the hypotenuse infinite even when the other is NaN.
    inf = const_like(a, np.inf)
    is_inf = _lenient.bitwise_or(_lenient.eq(a, inf), _lenient.eq(b, inf))
    return _lenient.select_n(is_inf, result, full_like_value(result, np.inf))


def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The next representable float after ``x1`` in the direction of ``x2``."""
    x1, x2 = promote_args_inexact("nextafter", x1, x2)
    return _lenient.nextafter(x1, x2)


def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The Heaviside step: 0 for ``x1 < 0``, ``x2`` for ``x1 == 0``, 1 for ``x1 > 0``."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    x1, x2, zero, one = broadcast_args("heaviside", x1, x2, const_like(x1, 0), const_like(x1, 1))
    step = _lenient.select_n(_lenient.gt(x1, zero), zero, one)
    return _lenient.select_n(_lenient.eq(x1, zero), step, x2)


def signbit(x: ArrayLike, /) -> Array:
    """True where the sign bit is set (``-0.0`` and negative NaNs included)."""
    x = as_array(x, "signbit")
    dt = dtype_of(x)
    if dtypes.is_bool(dt) or dtypes.is_unsigned_int(dt):
        return full_like_value(x, False, dtypes.bool_)
    if dtypes.is_signed_int(dt):
        return _lenient.lt(x, np.zeros((), dt))  # a strong zero: the result is strongly typed, as in JAX
    if dtypes.is_complex(dt):
        raise ValueError("signbit does not accept complex inputs (they have no sign bit)")
    int_type = {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[dt.itemsize]
    bits = lax.bitcast_convert_type(x, int_type)
    return _lenient.lt(bits, convert(0, int_type))


def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``|x1|`` with the sign of ``x2``."""
    x1, x2 = promote_args_inexact("copysign", x1, x2, keep_scalars=False)
    if dtypes.is_complex(dtype_of(x1)):
        raise TypeError("copysign does not accept complex inputs")
    magnitude = lax.abs(x1)
    return _lenient.select_n(signbit(x2), magnitude, lax.neg(magnitude))


@staged_when_eager
def logaddexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``log(exp(x1) + exp(x2))`` computed without overflow.  Its derivatives are
    those of the smooth function (``exp(x1 - out)``, ...), also where the arguments
    tie, as JAX's custom rule gives."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x1, x2)


@staged_when_eager
def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``log2(2**x1 + 2**x2)`` computed without overflow, with the smooth
    function's derivatives (``2**(x1 - out)``, ...) also where the arguments tie."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    ln2 = const_like(_lenient.max(x1, x2), float(np.log(2.0)))  # weak only when both inputs are weak scalars, as in JAX
    return _logaddexp2(x1, x2, ln2)


# ---------------------------------------------------------------------------
# Floating-point classification


def isfinite(x: ArrayLike, /) -> Array:
    """True where ``x`` is neither infinite nor NaN (always true for integers)."""
    x = as_array(x, "isfinite")
    if not dtypes.is_inexact(dtype_of(x)):
        return full_like_value(x, True, dtypes.bool_)
    if dtypes.is_complex(dtype_of(x)):
        return _lenient.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def isnan(x: ArrayLike, /) -> Array:
    """True where ``x`` is NaN (always false for integers)."""
    x = as_array(x, "isnan")
    return _lenient.ne(x, x)


def isinf(x: ArrayLike, /) -> Array:
    """True where ``x`` is positive or negative infinity (always false for integers)."""
    x = as_array(x, "isinf")
    dt = dtype_of(x)
    if not dtypes.is_inexact(dt):
        return full_like_value(x, False, dtypes.bool_)
    return _lenient.eq(lax.abs(x), convert(np.inf, to_inexact(dtype_of(lax.abs(x)))))


def _no_complex(name: str, x: Array) -> None:
    if dtypes.is_complex(dtype_of(x)):
        raise ValueError(f"{name} is not defined for complex inputs (as in JAX)")


def isposinf(x: ArrayLike, /) -> Array:
    """True where ``x`` is ``+inf``."""
    x = as_array(x, "isposinf")
    _no_complex("isposinf", x)
    if not dtypes.is_inexact(dtype_of(x)):
        return full_like_value(x, False, dtypes.bool_)
    return _lenient.eq(x, convert(np.inf, dtype_of(x)))


def isneginf(x: ArrayLike, /) -> Array:
    """True where ``x`` is ``-inf``."""
    x = as_array(x, "isneginf")
    _no_complex("isneginf", x)
    if not dtypes.is_inexact(dtype_of(x)):
        return full_like_value(x, False, dtypes.bool_)
    return _lenient.eq(x, convert(-np.inf, dtype_of(x)))


def nan_to_num(x: ArrayLike, copy: builtins.bool = True, nan: float = 0.0,
               posinf: float | None = None, neginf: float | None = None) -> Array:
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf``
    (default: the largest and smallest finite values of the dtype)."""
    del copy
    x = as_array(x, "nan_to_num")
    dt = dtype_of(x)
    if dtypes.is_complex(dt):  # each part on its own
        def part(v: Array) -> Array:
            return nan_to_num(v, nan=nan, posinf=posinf, neginf=neginf)

        return _lenient.complex(part(lax.real(x)), part(lax.imag(x)))
    if not dtypes.is_float(dt):
        return x
    x = convert(x, dt)  # the result is strongly typed, as in JAX
    info = dtypes.finfo(dt)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = _lenient.select_n(_lenient.ne(x, x), x, full_like_value(x, nan))
    out = _lenient.select_n(_lenient.eq(out, convert(np.inf, dt)), out, full_like_value(x, hi))
    return _lenient.select_n(_lenient.eq(out, convert(-np.inf, dt)), out, full_like_value(x, lo))


# ---------------------------------------------------------------------------
# Real and complex parts (complex support is limited to what lax offers)


def complex_part(name: str, x: Array) -> Array:
    """``lax.<name>`` of a complex value, where lax offers it."""
    op = getattr(lax, name, None)
    if op is None:
        raise TypeError(f"{name} of a complex array ({dtype_of(x).name}) is not supported: "
                        f"plait's lax has no {name} operation")
    return op(x)


def real(val: ArrayLike, /) -> Array:
    """The real part (the input itself for real dtypes)."""
    val = as_array(val, "real")
    if dtypes.is_complex(dtype_of(val)):
        return complex_part("real", val)
    return val


def imag(val: ArrayLike, /) -> Array:
    """The imaginary part (zeros for real dtypes)."""
    val = as_array(val, "imag")
    if dtypes.is_complex(dtype_of(val)):
        return complex_part("imag", val)
    return full_like_value(val, 0)


def conjugate(x: ArrayLike, /) -> Array:
    """The complex conjugate (the input itself for real dtypes)."""
    x = as_array(x, "conjugate")
    if dtypes.is_complex(dtype_of(x)):
        return complex_part("conj", x)
    return x


conj = conjugate
