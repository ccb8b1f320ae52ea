"""The shapes shared by elementwise primitives, factored once.

* dtype classes (:class:`DTypeClass`): which dtypes an operation accepts, with
  the words an error message uses for them;
* the elementwise shape rule: operands have equal shapes, except that rank-0
  operands broadcast against the others (so ``x + 1.0`` stages one ``add``
  whose second operand is a literal);
* factories that make a unary or binary primitive from a NumPy kernel: the
  abstract rule and the eager implementation check operands the same way, so
  a bad call fails with the same message staged or eager, and the kernel runs
  with NumPy's floating-point warnings silenced (XLA does not warn either).

and the NumPy kernels that are more than one ufunc: XLA's integer division
and shifts, rounding, saturating float-to-int conversion, ``nextafter`` and the
special functions (``erf``, ``erf_inv``, ``lgamma``, ``digamma``) without SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import InconclusiveDimensionOperation, Shape, definitely_equal_shapes
from plait_core.primitive import Primitive

DType = np.dtype[Any]
Kernel = Callable[..., Any]
ParamCheck = Callable[[str, DType, dict[str, Any]], None]


class Typed(Protocol):
    """Anything with a shape and a dtype: an abstract value or a NumPy array."""

    @property
    def shape(self) -> tuple[Any, ...]: ...

    @property
    def dtype(self) -> DType: ...


# ---------------------------------------------------------------------------
# dtype classes


class DTypeClass:
    """A set of dtypes an operation accepts, and how an error message names it."""

    __slots__ = ("description", "members")

    def __init__(self, description: str, members: Iterable[DType]) -> None:
        self.description = description
        self.members = frozenset(members)

    def __contains__(self, dtype: object) -> bool:
        return dtype in self.members


_SIGNED: tuple[DType, ...] = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, *dtypes.NARROW_SIGNED)
_UNSIGNED: tuple[DType, ...] = (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, *dtypes.NARROW_UNSIGNED)
_FLOATS: tuple[DType, ...] = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64, *dtypes.NARROW_FLOATS)
_COMPLEX = (dtypes.complex64, dtypes.complex128)
_BOOL = (dtypes.bool_,)

INT = DTypeClass("an integer", _SIGNED + _UNSIGNED)
FLOATING = DTypeClass("a floating-point", _FLOATS)
INEXACT = DTypeClass("a floating-point or complex", _FLOATS + _COMPLEX)
NUMERIC = DTypeClass("a numeric (integer, floating-point or complex)", _SIGNED + _UNSIGNED + _FLOATS + _COMPLEX)
SIGNED_NUMERIC = DTypeClass("a signed integer, floating-point or complex", _SIGNED + _FLOATS + _COMPLEX)
REAL = DTypeClass("an integer or floating-point", _SIGNED + _UNSIGNED + _FLOATS)
ORDERED = DTypeClass("a boolean, integer or floating-point", _BOOL + _SIGNED + _UNSIGNED + _FLOATS)
INTEGRAL = DTypeClass("a boolean or integer", _BOOL + _SIGNED + _UNSIGNED)
ANY = DTypeClass("any supported", _BOOL + _SIGNED + _UNSIGNED + _FLOATS + _COMPLEX)

#: Floats NumPy computes poorly or slowly in: kernels run in float32 and round back
#: (as XLA computes them: the narrow floats too).
LOW_FLOATS = frozenset((dtypes.bfloat16, dtypes.float16, *dtypes.NARROW_FLOATS))
#: The narrow integers (int4, uint2, ...): kernels run in int32 and wrap back.
NARROW_INTS = frozenset((*dtypes.NARROW_SIGNED, *dtypes.NARROW_UNSIGNED))


def short(dtype: DType) -> str:
    """The dtype's name as users write it (``float32``, ``bfloat16``)."""
    return str(dtype.name)


def check_dtype(name: str, dtype: DType, accepted: DTypeClass, what: str = "operands") -> None:
    """Raise ``TypeError`` naming the primitive and the dtype unless ``accepted`` has it."""
    if dtype not in accepted.members:
        raise TypeError(
            f"{name} does not accept {short(dtype)} {what}; it needs {accepted.description} dtype"
        )


def check_same_dtypes(name: str, operands: Sequence[Typed]) -> DType:
    """The operands' common dtype; ``TypeError`` naming all of them when they differ."""
    dt = operands[0].dtype
    for o in operands[1:]:
        if o.dtype != dt:
            names = ", ".join(short(o.dtype) for o in operands)
            raise TypeError(
                f"{name} requires operands of the same dtype, got {names}; convert one with "
                "lax.convert_element_type (lax functions convert weakly typed Python scalars for you)"
            )
    return dt


# ---------------------------------------------------------------------------
# The elementwise shape rule


def _fmt_shape(shape: Shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def same_shape(name: str, a: Shape, b: Shape) -> bool:
    """Whether two shapes are equal; ``InconclusiveDimensionOperation`` naming the
    primitive when symbolic dimensions make it undecidable."""
    try:
        return bool(a == b)
    except InconclusiveDimensionOperation:
        if definitely_equal_shapes(a, b):
            return True
        raise InconclusiveDimensionOperation(
            f"{name}: cannot tell whether the operand shapes {_fmt_shape(a)} and {_fmt_shape(b)} "
            "are equal; their symbolic dimensions may differ"
        ) from None


def elementwise_shape(name: str, shapes: Sequence[Shape]) -> Shape:
    """The result shape of an elementwise operation: the operands' common shape.

    Rank-0 operands broadcast; all others must have equal shapes (``ValueError``
    naming the primitive and every shape otherwise)."""
    result: Shape = ()
    for s in shapes:
        if not s or s is result:
            continue
        if not result:
            result = s
        elif not same_shape(name, result, s):
            listed = " and ".join(_fmt_shape(t) for t in shapes)
            raise ValueError(
                f"{name} requires operands of equal shapes (rank-0 operands broadcast), got {listed}; "
                "use lax.broadcast_in_dim or plait.numpy's broadcasting to match them"
            )
    return result


def binary_shape(name: str, xs: Shape, ys: Shape) -> Shape:
    """:func:`elementwise_shape` for two operands, with the common cases first."""
    if xs is ys or not ys:
        return xs
    if not xs:
        return ys
    if same_shape(name, xs, ys):
        return xs
    return elementwise_shape(name, (xs, ys))


# ---------------------------------------------------------------------------
# Factories


def _widened(kernel: Kernel) -> Kernel:
    """Run ``kernel`` in float32 for bfloat16/float16 and narrow float operands
    and round back, in int32 for narrow integers and wrap back."""

    def run(*args: np.ndarray, **params: Any) -> Any:
        dt = args[0].dtype
        if dt in LOW_FLOATS:
            out = np.asarray(kernel(*[a.astype(np.float32) for a in args], **params))
            return out.astype(dt) if out.dtype == np.float32 else out
        if dt in NARROW_INTS:
            out = np.asarray(kernel(*[a.astype(np.int32) for a in args], **params))
            return out.astype(dt) if out.dtype == np.int32 else out
        return kernel(*args, **params)

    return run


def unary_primitive(
    name: str,
    accepted: DTypeClass,
    kernel: Kernel,
    *,
    result_dtype: Callable[[DType], DType] | None = None,
    widen: bool = True,
    check_params: ParamCheck | None = None,
) -> Primitive:
    """A one-operand elementwise primitive computing ``kernel`` (a NumPy function).

    ``result_dtype`` maps the operand dtype to the result's (identity by
    default); the result is weakly typed when the operand is, whatever its
    dtype (``abs`` of a weak complex value is a weak float, ``is_finite`` of a
    weak float a weak bool), as in JAX.
    ``widen`` runs the kernel in float32 for bfloat16/float16 operands.
    ``check_params(name, dtype, params)`` validates static parameters.
    """
    prim = Primitive(name, family="elementwise")
    run = _widened(kernel) if widen else kernel

    def out_dtype(dt: DType, params: dict[str, Any]) -> DType:
        check_dtype(name, dt, accepted)
        if check_params is not None:
            check_params(name, dt, params)
        return dt if result_dtype is None else result_dtype(dt)

    def rule(x: ShapedArray, **params: Any) -> ShapedArray:
        dt = out_dtype(x.dtype, params)
        if dt == x.dtype:
            return x
        return ShapedArray(x.shape, dt, x.weak_type)

    def impl(x: np.ndarray, **params: Any) -> np.ndarray:
        dt = out_dtype(x.dtype, params)
        with np.errstate(all="ignore"):
            return np.asarray(run(x, **params), dt)

    prim.def_abstract_eval(rule)
    prim.def_impl(impl)
    return prim


def binary_primitive(
    name: str,
    accepted: DTypeClass,
    kernel: Kernel,
    *,
    result_dtype: DType | None = None,
    widen: bool = True,
) -> Primitive:
    """A two-operand elementwise primitive computing ``kernel`` (a NumPy function).

    Operands must have the same dtype (``TypeError``) and equal shapes, rank-0
    operands broadcasting (``ValueError``).  The result is weakly typed when
    both operands are, also when ``result_dtype`` fixes its dtype (``bool``
    for comparisons: comparing two weak values gives a weak ``bool``, as in JAX).
    """
    prim = Primitive(name, family="elementwise")
    run = _widened(kernel) if widen else kernel

    def check(x: Typed, y: Typed) -> DType:
        dt = x.dtype
        if y.dtype != dt:
            check_same_dtypes(name, (x, y))
        if dt not in accepted.members:
            check_dtype(name, dt, accepted)
        return dt

    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        dt = check(x, y)
        shape = binary_shape(name, x.shape, y.shape)
        weak = x.weak_type and y.weak_type
        if result_dtype is not None:
            return ShapedArray(shape, result_dtype, weak)
        if shape is x.shape and weak == x.weak_type:
            return x
        return ShapedArray(shape, dt, weak)

    def impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        dt = check(x, y)
        binary_shape(name, x.shape, y.shape)
        with np.errstate(all="ignore"):
            return np.asarray(run(x, y), dt if result_dtype is None else result_dtype)

    prim.def_abstract_eval(rule)
    prim.def_impl(impl)
    return prim


# ---------------------------------------------------------------------------
# Kernels (NumPy arrays in, NumPy arrays out; floating-point warnings are
# silenced by the factories).


def _unsigned_twin(dt: DType) -> DType:
    return np.dtype(f"u{dt.itemsize}")


def _signed_twin(dt: DType) -> DType:
    return np.dtype(f"i{dt.itemsize}")


def sign(x: np.ndarray) -> Any:
    """-1, 0 or 1 (``x/|x|`` for complex); a float zero keeps its sign, NaN stays NaN."""
    if dtypes.is_float(x.dtype):
        return np.where(x == 0, x, np.sign(x))
    return np.sign(x)


def round_(x: np.ndarray, *, rounding_method: int) -> Any:
    """Round to an integral value: halves away from zero (0) or to even (1)."""
    if rounding_method == 1:
        return np.rint(x)
    t = np.trunc(x)
    # x - trunc(x) is exact, so a half is detected without the 0.49999997 + 0.5 trap.
    step = np.where(np.abs(x - t) >= 0.5, np.sign(x), 0)
    return np.copysign(t + step, x)


def logistic(x: np.ndarray) -> Any:
    """``1 / (1 + exp(-x))`` without overflow for large ``|x|``."""
    if dtypes.is_complex(x.dtype):
        return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def rsqrt(x: np.ndarray) -> Any:
    """``1 / sqrt(x)``."""
    return 1 / np.sqrt(x)


def integer_pow(x: np.ndarray, *, y: int) -> Any:
    """``x ** y`` by repeated squaring in ``x``'s dtype (integers wrap)."""
    if y == 0:
        return np.ones_like(x)
    n = -y if y < 0 else y
    acc: Any = None
    base: Any = x
    while True:
        if n & 1:
            acc = base if acc is None else np.multiply(acc, base)
        n >>= 1
        if not n:
            break
        base = np.multiply(base, base)
    return 1 / acc if y < 0 else acc


def _int_divmod(x: np.ndarray, y: np.ndarray) -> tuple[Any, Any]:
    """Quotient truncated toward zero and remainder with the dividend's sign,
    with XLA's answers where C leaves them undefined: ``x / 0`` is all ones
    (-1, or the largest unsigned value), ``x % 0`` is ``x``, and
    ``INT_MIN / -1`` is ``INT_MIN`` with remainder 0."""
    dt = x.dtype
    zero = y == 0
    safe = np.where(zero, np.ones((), dt), y)
    if dtypes.is_signed_int(dt):
        safe = np.where((y == -1) & (x == dtypes.iinfo(dt).min), np.ones((), dt), safe)
    r = np.fmod(x, safe)
    q = (x - r) // safe  # x - r is an exact multiple of safe, and never overflows
    all_ones = np.array(-1 if dtypes.is_signed_int(dt) else dtypes.iinfo(dt).max, dt)
    return np.where(zero, all_ones, q), np.where(zero, x, r)


def div(x: np.ndarray, y: np.ndarray) -> Any:
    """Division; integer division truncates toward zero (C, not Python)."""
    if dtypes.is_int(x.dtype):
        return _int_divmod(x, y)[0]
    return np.true_divide(x, y)


def rem(x: np.ndarray, y: np.ndarray) -> Any:
    """Remainder with the sign of the dividend (C ``fmod``)."""
    if dtypes.is_int(x.dtype):
        return _int_divmod(x, y)[1]
    return np.fmod(x, y)


def _shift_amount(x: np.ndarray, y: np.ndarray) -> tuple[Any, Any, int]:
    """Which shift amounts are in range (0 <= y < bits; negative ones are read
    as huge unsigned ones, as XLA does), and the amounts as unsigned values."""
    bits = x.dtype.itemsize * 8
    u = _unsigned_twin(x.dtype)
    amount = y.view(u) if y.dtype.itemsize == u.itemsize else y.astype(u)
    return amount < bits, amount, bits


def shift_left(x: np.ndarray, y: np.ndarray) -> Any:
    """``x << y``; shifting by the bit width or more gives 0."""
    valid, amount, _ = _shift_amount(x, y)
    u = _unsigned_twin(x.dtype)
    shifted = np.left_shift(x.view(u), np.where(valid, amount, 0).astype(u))
    return np.where(valid, shifted, 0).astype(u).view(x.dtype)


def shift_right_logical(x: np.ndarray, y: np.ndarray) -> Any:
    """``x >> y`` filling with zeros (also for signed ``x``); too far gives 0."""
    valid, amount, _ = _shift_amount(x, y)
    u = _unsigned_twin(x.dtype)
    shifted = np.right_shift(x.view(u), np.where(valid, amount, 0).astype(u))
    return np.where(valid, shifted, 0).astype(u).view(x.dtype)


def shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> Any:
    """``x >> y`` filling with the sign bit (also for unsigned ``x``); too far
    fills every bit with the sign."""
    valid, amount, bits = _shift_amount(x, y)
    s = _signed_twin(x.dtype)
    shifted = np.right_shift(x.view(s), np.where(valid, amount, bits - 1).astype(s))
    return np.asarray(shifted, s).view(x.dtype)


def float_to_int(x: np.ndarray, dt: DType) -> Any:
    """Truncate toward zero, saturating at the integer range; NaN gives 0."""
    info = dtypes.iinfo(dt)
    f = np.trunc(x.astype(np.float64))
    high = f >= float(int(info.max) + 1)  # a power of two, exact in float64
    low = f < float(int(info.min))
    out = np.where(np.isnan(f) | high | low, 0.0, f).astype(dt)
    out = np.where(high, np.array(info.max, dt), out)
    return np.where(low, np.array(info.min, dt), out)


def convert(x: np.ndarray, *, new_dtype: DType, weak_type: bool) -> Any:
    """Convert elementwise: to bool is ``x != 0``, complex to real keeps the real
    part, float to integer truncates and saturates (NaN gives 0), integers wrap."""
    if x.dtype == new_dtype:
        return x
    if new_dtype == dtypes.bool_:
        return x != 0
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    if dtypes.is_float(x.dtype) and dtypes.is_int(new_dtype):
        return float_to_int(x, new_dtype)
    if x.dtype == np.float64 and new_dtype in _NARROW_FLOAT_SET:
        return _to_float32_odd(x).astype(new_dtype)
    return x.astype(new_dtype)


_NARROW_FLOAT_SET = frozenset(dtypes.NARROW_FLOATS)


def _to_float32_odd(x: np.ndarray) -> np.ndarray:
    """``x`` (float64) in float32 rounded to odd: truncated toward zero, the
    last bit set when inexact.  Rounding that to a type at least two bits
    narrower (every narrow float) rounds ``x`` correctly in one step, as XLA
    does; ml_dtypes' own float64 conversion rounds twice, through float32."""
    with np.errstate(all="ignore"):
        y = x.astype(np.float32)
        away = np.abs(y.astype(np.float64)) > np.abs(x)
        y = np.where(away, np.nextafter(y, np.float32(0)), y)
        inexact = (y.astype(np.float64) != x) & np.isfinite(x)
        bits = y.view(np.uint32) | inexact.astype(np.uint32)
    return np.asarray(bits.view(np.float32))


def bitcast(x: np.ndarray, *, new_dtype: DType) -> Any:
    """Reinterpret the bits; a narrower dtype adds a trailing axis, a wider one
    consumes the trailing axis (element order as in memory, little-endian)."""
    a, b = x.dtype.itemsize, new_dtype.itemsize
    c = x if x.flags.c_contiguous else np.ascontiguousarray(x)  # (ascontiguousarray makes 0-d arrays 1-d)
    if a == b:
        return c.view(new_dtype)
    if a > b:
        return c.reshape(c.shape + (1,)).view(new_dtype)
    return c.view(new_dtype).reshape(c.shape[:-1])


# Special functions, computed in float64 (then rounded to the operand dtype).

_erf1 = np.frompyfunc(math.erf, 1, 1)


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # poles, and overflow past float64
        return math.inf


_lgamma1 = np.frompyfunc(_lgamma_scalar, 1, 1)


def _f64(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def erf(x: np.ndarray) -> Any:
    """The error function."""
    return _f64(_erf1(_f64(x)))


def lgamma(x: np.ndarray) -> Any:
    """``log|Gamma(x)|``; ``inf`` at the poles 0, -1, -2, ..."""
    return _f64(_lgamma1(_f64(x)))


def _erf_inv_residual(x: float, y: float) -> float:
    # erf(x) - y, in the form that keeps digits: near +-1 through erfc, since
    # 1 - y and 1 + y are exact there.
    if y > 0.5:
        return (1.0 - y) - math.erfc(x)
    if y < -0.5:
        return math.erfc(-x) - (1.0 + y)
    return math.erf(x) - y


_erf_inv_residual1 = np.frompyfunc(_erf_inv_residual, 2, 1)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erf_inv(y: np.ndarray) -> Any:
    """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside).

    A closed-form start (Winitzki's approximation, relative error ~2e-3) is
    polished by three Halley steps on ``erf(x) - y``, which converge cubically.
    """
    y = _f64(y)
    a = 0.147
    ln = np.log1p(-y * y)
    t = 2.0 / (math.pi * a) + ln / 2.0
    x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    for _ in range(3):
        f = _f64(_erf_inv_residual1(x, y))
        step = f / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
        x = np.where(np.isfinite(step), x - step / (1.0 + x * step), x)
    x = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), x)
    return np.where((np.abs(y) > 1.0) | np.isnan(y), np.nan, x)


def digamma(x: np.ndarray) -> Any:
    """The logarithmic derivative of Gamma; NaN at the poles 0, -1, -2, ... (as XLA).

    Negative arguments are reflected (``psi(x) = psi(1 - x) - pi / tan(pi x)``),
    small ones raised past 10 by ``psi(x) = psi(x + 1) - 1/x``, then the
    asymptotic series in ``1/x**2`` is summed.
    """
    x = _f64(x)
    reflect = x < 0
    z = np.where(reflect, 1.0 - x, x)
    acc = np.zeros_like(z)
    for _ in range(10):
        small = z < 10.0
        acc = acc - np.where(small, 1.0 / z, 0.0)
        z = np.where(small, z + 1.0, z)
    w = 1.0 / (z * z)
    tail = w * (1 / 12 - w * (1 / 120 - w * (1 / 252 - w * (1 / 240 - w * (1 / 132 - w * (691 / 32760))))))
    psi = np.log(z) - 0.5 / z - tail + acc
    frac = x - np.round(x)  # tan has period pi: reduce before multiplying by pi
    psi = np.where(reflect, psi - math.pi / np.tan(math.pi * frac), psi)
    pole = (x <= 0) & (x == np.floor(x))
    return np.where(pole | np.isneginf(x), np.nan, psi)
