"""More elementwise and small array functions of ``jax.numpy``: ``fabs``, ``gcd``,
``lcm``, ``ldexp``, ``frexp``, ``modf``, ``spacing``, ``i0``,
``bitwise_count``, ``unwrap``, ``geomspace``, ``array_equiv``, ``isscalar``,
``iterable``, ``isdtype``, ``astype``, ``matvec`` and ``vecmat``.

Each is built from other ``plait.numpy``/``lax`` operations, so every
transformation applies; semantics (dtypes, edge values) follow JAX 0.10.2.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.bessel import bessel_i0
from plait_core.numpy import creation as _creation
from plait_core.numpy import dots as _dots
from plait_core.numpy import logic as _logic
from plait_core.numpy import math as _math
from plait_core.numpy import reductions as _reductions
from plait_core.numpy import signal as _signal
from plait_core.numpy._util import (
    ArrayLike,
    as_array,
    dtype_of,
    is_array,
    is_python_scalar,
    promote_args_inexact,
    promote_args_numeric,
)
from plait_core.numpy.shape import broadcast_arrays, concatenate, ndim, shape
from plait_core.numpy.updates import scatter_update
from plait_core.trace import Tracer

Array = Any


def fabs(x: ArrayLike, /) -> Array:
    """Absolute value, always as a floating-point array (integers are converted)."""
    (x,) = promote_args_inexact("fabs", x)
    return lax.abs(x)


def _require_integer(name: str, *xs: Any) -> None:
    for x in xs:
        if not dtypes.is_int(dtype_of(x)):
            raise TypeError(f"{name}: arguments must be integers, got {dtype_of(x)}")


def gcd(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Greatest common divisor of integers (non-negative; ``gcd(0, 0) == 0``)."""
    x1, x2 = promote_args_numeric("gcd", x1, x2)
    _require_integer("gcd", x1, x2)
    a, b = broadcast_arrays(_math.abs(x1), _math.abs(x2))

    def cond(ab: tuple[Any, Any]) -> Any:
        return _reductions.any(ab[1] != 0)

    def body(ab: tuple[Any, Any]) -> tuple[Any, Any]:
        a, b = ab
        nonzero = b != 0
        safe_b = _logic.where(nonzero, b, 1)
        return _logic.where(nonzero, b, a), _logic.where(nonzero, a % safe_b, 0)

    return lax.while_loop(cond, body, (a, b))[0]


def lcm(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Least common multiple of integers (non-negative; 0 when either is 0)."""
    x1, x2 = promote_args_numeric("lcm", x1, x2)
    _require_integer("lcm", x1, x2)
    g = gcd(x1, x2)
    zero = g == 0
    return _logic.where(zero, 0, _math.abs(x1 // _logic.where(zero, 1, g) * x2))


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 * 2**x2`` for floating ``x1`` and integer ``x2`` (scaled in two halves
    so that large exponents with small mantissas do not overflow early)."""
    if not dtypes.is_int(dtype_of(as_array(x2, "ldexp", 1))):
        raise TypeError(f"ldexp: x2 must be an integer array, got {dtype_of(as_array(x2, 'ldexp', 1))}")
    (x1,) = promote_args_inexact("ldexp", x1)
    dt = dtype_of(x1)
    half = _creation.asarray(x2) // 2
    rest = _creation.asarray(x2) - half
    return x1 * _math.exp2(half.astype(dt)) * _math.exp2(rest.astype(dt))


def frexp(x: ArrayLike, /) -> tuple[Array, Array]:
    """Split ``x`` into a mantissa in ``[0.5, 1)`` (in absolute value) and an
    integer exponent with ``x == mantissa * 2**exponent``; 0, infinities and NaN
    give themselves and exponent 0."""
    (x,) = promote_args_inexact("frexp", x)
    if dtypes.is_complex(dtype_of(x)):
        raise TypeError("frexp does not accept complex arguments")
    dt = dtype_of(x)
    special = (x == 0) | ~_math.isfinite(x)
    ax = _logic.where(special, 1, _math.abs(x))
    e = (_math.floor(_math.log2(ax)) + 1).astype(np.int32)
    m = ax / _math.exp2(e.astype(dt))
    high = m >= 1
    m, e = _logic.where(high, m / 2, m), _logic.where(high, e + 1, e)
    low = m < 0.5
    m, e = _logic.where(low, m * 2, m), _logic.where(low, e - 1, e)
    mantissa = _logic.where(special, x, _math.copysign(m, x))
    return mantissa, _logic.where(special, 0, e).astype(np.int32)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Array, Array]:
    """``(fractional part, integral part)`` of ``x``, both with the sign of ``x``
    (as in JAX, the fractional part of an infinity is NaN)."""
    if out is not None:
        raise NotImplementedError("modf: the out argument is not supported (JAX arrays are immutable)")
    (x,) = promote_args_inexact("modf", x)
    whole = _math.trunc(x)
    return x - whole, whole


def spacing(x: ArrayLike, /) -> Array:
    """The distance from ``x`` to the next float away from zero (negative for
    negative ``x``): ``nextafter(x, sign(x) * inf) - x``."""
    (x,) = promote_args_inexact("spacing", x)
    toward = _logic.where(_math.signbit(x), -np.inf, np.inf).astype(dtype_of(x))
    return _math.nextafter(x, toward) - x


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 0."""
    (x,) = promote_args_inexact("i0", x)
    return bessel_i0(x)


def bitwise_count(x: ArrayLike, /) -> Array:
    """The number of 1 bits in ``|x|`` (integers and booleans), as ``uint8``."""
    x = as_array(x, "bitwise_count")
    dt = dtype_of(x)
    if dt == np.bool_:
        return x.astype(np.uint8)
    if not dtypes.is_int(dt):
        raise TypeError(f"bitwise_count: the argument must be an integer array, got {dt}")
    ux = _math.abs(x).astype(np.dtype(f"uint{dt.itemsize * 8}"))
    count = _creation.zeros(shape(x), np.uint8)
    for i in range(dt.itemsize * 8):
        count = count + ((ux >> i) & 1).astype(np.uint8)
    return count


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi) -> Array:
    """Remove jumps larger than ``discont`` (default ``period / 2``) along ``axis``
    by adding multiples of ``period``, as NumPy's ``unwrap``."""
    (p,) = promote_args_inexact("unwrap", p)
    dt = dtype_of(p)
    period_a = _creation.asarray(period, dt)
    discont_a = period_a / 2 if discont is None else _creation.asarray(discont, dt)
    dd = _signal.diff(p, axis=axis)
    half = period_a / 2
    ddmod = _math.mod(dd + half, period_a) - half
    ddmod = _logic.where((ddmod == -half) & (dd > 0), half, ddmod)
    correct = _logic.where(_math.abs(dd) < discont_a, 0, ddmod - dd)
    n = shape(p)[axis]
    first = lax.slice_in_dim(p, 0, 1, axis=axis)
    rest = lax.slice_in_dim(p, 1, n, axis=axis) + _reductions.cumsum(correct, axis=axis)
    return concatenate([first, rest], axis=axis)


def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Array:
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop`` (same
    sign, non-zero); the ends are exactly ``start`` and (with ``endpoint``) ``stop``."""
    start, stop = promote_args_inexact("geomspace", start, stop)
    sign = _math.sign(start)
    logs = _creation.logspace(_math.log10(_math.abs(start)), _math.log10(_math.abs(stop)), num, endpoint=endpoint, axis=axis)
    out = sign * logs
    if num > 0:
        index: list[Any] = [slice(None)] * ndim(out)
        ax = axis if axis >= 0 else ndim(out) + axis
        index[ax] = 0
        out = scatter_update(out, tuple(index), start, "set")
        if endpoint and num > 1:
            index[ax] = -1
            out = scatter_update(out, tuple(index), stop, "set")
    return out.astype(dtype) if dtype is not None else out


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """True when the arrays are equal elementwise after broadcasting (shapes that do
    not broadcast are a ``TypeError``, as in JAX)."""
    return _reductions.all(_logic.equal(a1, a2))


def isscalar(element: Any) -> bool:
    """True for Python and NumPy scalars, 0-d arrays (including traced ones) and
    strings; False for other arrays and containers."""
    if is_python_scalar(element) or isinstance(element, (str, bytes, np.generic)):
        return True
    if is_array(element) or isinstance(element, Tracer):
        return builtins.bool(ndim(element) == 0)
    return False


iterable = np.iterable

_KINDS: dict[str, Callable[[np.dtype[Any]], bool]] = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: np.issubdtype(d, np.signedinteger),
    "unsigned integer": lambda d: np.issubdtype(d, np.unsignedinteger),
    "integral": lambda d: np.issubdtype(d, np.integer),
    "real floating": lambda d: np.issubdtype(d, np.floating) or d == dtypes.bfloat16,
    "complex floating": lambda d: np.issubdtype(d, np.complexfloating),
    "numeric": lambda d: d != np.bool_ and (np.issubdtype(d, np.number) or d == dtypes.bfloat16),
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """The array API's dtype query: ``kind`` is a dtype, one of ``'bool'``,
    ``'signed integer'``, ``'unsigned integer'``, ``'integral'``, ``'real floating'``,
    ``'complex floating'``, ``'numeric'``, or a tuple of those (any matches)."""
    d = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}; expected one of {sorted(_KINDS)} or a dtype")
            if _KINDS[k](d):
                return True
        elif d == np.dtype(k):
            return True
    return False


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Array:
    """``x`` converted to ``dtype`` (the array API's function form of ``x.astype``)."""
    if device is not None:
        raise NotImplementedError("astype: device= is not supported; use plait.device_put")
    return as_array(x, "astype").astype(dtype)


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Batched matrix-vector product: ``x1[..., i, j] * x2[..., j]`` summed over ``j``."""
    x1, x2 = _creation.asarray(x1), _creation.asarray(x2)
    return _dots.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Batched vector-matrix product ``conj(x1[..., i]) * x2[..., i, j]`` summed over ``i``."""
    x1, x2 = _creation.asarray(x1), _creation.asarray(x2)
    return _dots.matmul(_math.conj(x1)[..., None, :], x2)[..., 0, :]


__all__ = [
    "array_equiv", "astype", "bitwise_count", "fabs", "frexp", "gcd", "geomspace", "i0", "isdtype", "isscalar",
    "iterable", "lcm", "ldexp", "matvec", "modf", "spacing", "unwrap", "vecmat",
]
