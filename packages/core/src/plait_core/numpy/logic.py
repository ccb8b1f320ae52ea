"""Comparisons, logical and bitwise functions, ``where``, ``clip`` and ``isclose``.

Comparisons promote their inputs (JAX's rules) and return booleans.  Logical
functions treat any non-zero value as true.  Bitwise functions and shifts
take booleans and integers only; ``right_shift`` is arithmetic for signed
integers and logical for unsigned ones, as in NumPy.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

from plait_core import dtypes, lax
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
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
    promote_dtypes,
)
from plait_core.numpy.selection import nonzero

BinaryFn = Callable[[ArrayLike, ArrayLike], Array]


def _named(fn: Any, name: str, doc: str) -> Any:
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# ---------------------------------------------------------------------------
# Comparisons


def _comparison(name: str, op: Callable[[Array, Array], Array], symbol: str, ordering: builtins.bool) -> BinaryFn:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        x1, x2 = promote_args(name, x1, x2)
        if ordering and dtypes.is_complex(dtype_of(x1)):
            # Complex numbers order lexicographically: by real part, then imaginary part (as JAX).
            x1, x2 = broadcast_args(name, x1, x2)
            re1, re2 = lax.real(x1), lax.real(x2)
            return _lenient.select_n(_lenient.eq(re1, re2), op(re1, re2), op(lax.imag(x1), lax.imag(x2)))
        return op(x1, x2)

    doc = f"``x1 {symbol} x2`` elementwise with broadcasting, as booleans."
    if ordering:
        doc += " Complex numbers compare by real part, then by imaginary part."
    return _named(fn, name, doc)  # type: ignore[no-any-return]


equal = _comparison("equal", lax.eq, "==", False)
not_equal = _comparison("not_equal", lax.ne, "!=", False)
less = _comparison("less", lax.lt, "<", True)
less_equal = _comparison("less_equal", lax.le, "<=", True)
greater = _comparison("greater", lax.gt, ">", True)
greater_equal = _comparison("greater_equal", lax.ge, ">=", True)


# ---------------------------------------------------------------------------
# Logical functions


def _to_bool(x: Array) -> Array:
    if dtypes.is_bool(dtype_of(x)):
        return x
    return _lenient.ne(x, const_like(x, 0))


def _logical(name: str, op: Callable[[Array, Array], Array], what: str) -> BinaryFn:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        a, b = promote_args(name, x1, x2, keep_scalars=False)  # as JAX: promoted first
        return op(_to_bool(a), _to_bool(b))

    return _named(fn, name, f"The truth value of ``x1 {what} x2`` elementwise (non-zero is true).")  # type: ignore[no-any-return]


logical_and = _logical("logical_and", lax.bitwise_and, "AND")
logical_or = _logical("logical_or", lax.bitwise_or, "OR")
logical_xor = _logical("logical_xor", lax.bitwise_xor, "XOR")


def logical_not(x: ArrayLike, /) -> Array:
    """The truth value of ``NOT x`` elementwise (non-zero is true)."""
    (a,) = promote_dtypes("logical_not", x)
    return lax.bitwise_not(_to_bool(as_array(a, "logical_not")))


# ---------------------------------------------------------------------------
# Bitwise functions


def _require_integral(name: str, x: Array) -> None:
    dt = dtype_of(x)
    if not (dtypes.is_bool(dt) or dtypes.is_int(dt)):
        raise TypeError(f"{name} does not accept {dt.name} inputs; it needs integer or boolean arrays")


def _bitwise(name: str, op: Callable[[Array, Array], Array], what: str) -> BinaryFn:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        x1, x2 = promote_args(name, x1, x2)
        _require_integral(name, x1)
        return op(x1, x2)

    return _named(fn, name, f"The bitwise {what} of integers or booleans, with broadcasting.")  # type: ignore[no-any-return]


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and, "AND")
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or, "OR")
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor, "XOR")


def bitwise_not(x: ArrayLike, /) -> Array:
    """The bitwise NOT of integers (``~x``); logical NOT of booleans."""
    x = as_array(x, "bitwise_not")
    _require_integral("bitwise_not", x)
    return lax.bitwise_not(x)


invert = bitwise_invert = bitwise_not


def left_shift(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 << x2`` for integers."""
    x1, x2 = promote_args_numeric("left_shift", x1, x2)
    if not dtypes.is_int(dtype_of(x1)):
        raise TypeError(f"left_shift does not accept {dtype_of(x1).name} inputs; it needs integer arrays")
    return _lenient.shift_left(x1, x2)


def right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 >> x2`` for integers: arithmetic for signed, logical for unsigned."""
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    dt = dtype_of(x1)
    if not dtypes.is_int(dt):
        raise TypeError(f"right_shift does not accept {dt.name} inputs; it needs integer arrays")
    if dtypes.is_unsigned_int(dt):
        return _lenient.shift_right_logical(x1, x2)
    return _lenient.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


# ---------------------------------------------------------------------------
# Selection


def where(condition: ArrayLike, x: ArrayLike | None = None, y: ArrayLike | None = None, /, *,
          size: int | None = None, fill_value: Any = None) -> Any:
    """Elements of ``x`` where ``condition`` is true and of ``y`` elsewhere (all three
    broadcast together; ``x`` and ``y`` are promoted to a common dtype).

    With ``condition`` alone this is :func:`nonzero` (``size`` and ``fill_value``
    as there)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where: either both x and y must be given, or neither")
    check_arraylike("where", condition, x, y)
    x, y = promote_dtypes("where", x, y)
    cond = _to_bool(as_array(condition, "where"))
    cond, x, y = broadcast_args("where", cond, x, y)
    return _lenient.select_n(cond, y, x)


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: ArrayLike = 0) -> Array:
    """For each element, the choice of the first condition that holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist has {len(condlist)} entries but choicelist has {len(choicelist)}")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    result = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        result = where(cond, choice, result)
    return result


def clip(a: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None, *,
         min: ArrayLike | None = None, max: ArrayLike | None = None) -> Array:
    """``a`` limited to ``[a_min, a_max]`` (either bound may be omitted; ``min``/``max``
    are the NumPy 2 spellings).  Bounds broadcast against ``a``."""
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    out = as_array(a, "clip")
    for v in (out, lo, hi):
        if v is not None and dtypes.is_complex(dtype_of(as_array(v, "clip"))):
            raise ValueError("clip: complex numbers have no order, so they cannot be clipped; clip their real or "
                             "imaginary part, or their magnitude, instead")
    if lo is not None:
        out, lo_ = promote_args("clip", out, lo)
        out = _maximum(out, lo_)
    if hi is not None:
        out, hi_ = promote_args("clip", out, hi)
        out = _minimum(out, hi_)
    return out


def _maximum(a: Array, b: Array) -> Array:
    return _lenient.bitwise_or(a, b) if dtypes.is_bool(dtype_of(a)) else _lenient.max(a, b)


def _minimum(a: Array, b: Array) -> Array:
    return _lenient.bitwise_and(a, b) if dtypes.is_bool(dtype_of(a)) else _lenient.min(a, b)


# ---------------------------------------------------------------------------
# Approximate equality


def _finite(x: Array) -> Array:
    """``lax.is_finite``, of both parts for complex values."""
    if dtypes.is_complex(dtype_of(x)):
        return _lenient.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: builtins.bool = False) -> Array:
    """True where ``|a - b| <= atol + rtol * |b|`` (infinities must match exactly;
    NaNs are equal only with ``equal_nan``)."""
    check_arraylike("isclose", a, b)
    a, b = promote_args("isclose", a, b)
    dt = dtype_of(a)
    if not dtypes.is_inexact(dt):
        a, b = promote_args_inexact("isclose", a, b)
        dt = dtype_of(a)
    rdt = dtype_of(lax.abs(a)) if dtypes.is_complex(dt) else dt
    tolerance = _lenient.add(convert(atol, rdt), _lenient.mul(convert(rtol, rdt), lax.abs(b)))
    close = _lenient.le(lax.abs(_lenient.sub(a, b)), tolerance)
    finite = _lenient.bitwise_and(_finite(a), _finite(b))
    result = _lenient.bitwise_or(_lenient.bitwise_and(close, finite), _lenient.eq(a, b))
    if equal_nan:
        both_nan = _lenient.bitwise_and(_lenient.ne(a, a), _lenient.ne(b, b))
        result = _lenient.bitwise_or(result, both_nan)
    return result


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: builtins.bool = False) -> Array:
    """Whether every element of ``a`` is close to ``b`` (see :func:`isclose`)."""
    close = isclose(a, b, rtol, atol, equal_nan)
    return lax.reduce_and(close, tuple(range(len(close.shape))))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: builtins.bool = False) -> Any:
    """True when the arrays have the same shape and elements (NaNs equal with
    ``equal_nan``).  Typed PRNG key arrays are equal when their key data are,
    and never equal to an array of another kind, as in JAX."""
    kinds = [dtypes.extended_scalar_type(getattr(a, "dtype", None)) for a in (a1, a2)]
    if kinds[0] is not None or kinds[1] is not None:
        if type(a1) is not type(a2) or a1.dtype != a2.dtype or tuple(a1.shape) != tuple(a2.shape):
            return full_like_value(convert(False, dtypes.bool_), False)
        eq = as_array(a1 == a2, "array_equal", 0)  # keys compare by their data, elementwise
        return lax.reduce_and(eq, tuple(range(len(eq.shape))))
    check_arraylike("array_equal", a1, a2)
    x, y = as_array(a1, "array_equal", 0), as_array(a2, "array_equal", 1)
    if tuple(x.shape) != tuple(y.shape):
        return full_like_value(convert(False, dtypes.bool_), False)
    x, y = promote_dtypes("array_equal", x, y)
    eq = _lenient.eq(x, y)
    if equal_nan and dtypes.is_inexact(dtype_of(x)):
        eq = _lenient.bitwise_or(eq, _lenient.bitwise_and(_lenient.ne(x, x), _lenient.ne(y, y)))
    return lax.reduce_and(eq, tuple(range(len(eq.shape))))
