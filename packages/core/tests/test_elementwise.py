"""Elementwise primitives and their lax functions, against NumPy.

Every case runs three ways: eagerly, and staged (``make_jaxpr`` then
``check_jaxpr`` and ``eval_jaxpr``); all three must agree with a NumPy oracle
computed in float64 (or exactly, for integers) on the same inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings

import plait_core as pc
from plait_core import lax
from plait_core.dims import InconclusiveDimensionOperation, symbolic_dims
from plait_core.lax import _lenient
from plait_core.primitives import elementwise as ew

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
I8, I32, U8, U32 = np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.uint32)
BOOL, C64 = np.dtype(np.bool_), np.dtype(np.complex64)

FLOATS = [F32, F16, BF16]
INTS = [I32, U8, U32]
SINTS = [I32, I8]
SHAPES = [(), (3,), (2, 3)]

# Relative tolerance of a result rounded to the dtype, plus a little compute slack.
RTOL = {F32: 2e-6, F16: 2e-3, BF16: 1.6e-2, C64: 2e-6}


# ---------------------------------------------------------------------------
# Inputs and checking


def sample(dtype: np.dtype[Any], shape: tuple[int, ...], domain: str, seed: int = 0) -> np.ndarray:
    """Random inputs of ``dtype`` inside a function's domain."""
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = {"nonzero": (1, 50), "small": (0, 7)}.get(domain, (-50, 50))
        lo = max(lo, int(info.min))
        vals = rng.integers(lo, hi + 1, shape)
        if domain == "nonzero" and info.min < 0:
            vals = vals * rng.choice([-1, 1], shape)
        return np.asarray(vals).astype(dtype)
    ranges = {"any": (-3.0, 3.0), "pos": (0.1, 5.0), "unit": (-0.9, 0.9), "ge1": (1.1, 5.0), "nonzero": (0.5, 3.0)}
    lo, hi = ranges[domain]
    vals = rng.uniform(lo, hi, shape)
    if domain == "nonzero":
        vals = vals * rng.choice([-1.0, 1.0], shape)
    if dtype == C64:
        return (vals + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
    return np.asarray(vals).astype(dtype)


def f64(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def assert_matches(got: Any, want: np.ndarray, dtype: np.dtype[Any]) -> None:
    """``got`` has ``want``'s shape and ``dtype`` and its values (NaN matches NaN)."""
    got = np.asarray(got)
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype.kind in "fcV" or dtype in (BF16,):
        rtol = RTOL.get(np.dtype(dtype), 1e-12)
        np.testing.assert_allclose(f64(got), f64(want), rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)


def run_three_ways(fn: Callable[..., Any], *args: Any) -> list[Any]:
    """fn(*args) eagerly, and staged then evaluated; the staged program type-checks."""
    eager = fn(*args)
    closed = pc.make_jaxpr(fn)(*args)
    pc.check_jaxpr(closed)
    (staged,) = pc.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    out_aval = closed.out_avals[0]
    assert np.shape(staged) == out_aval.shape and np.asarray(staged).dtype == out_aval.dtype
    return [eager, staged]


def check(fn: Callable[..., Any], want: np.ndarray, dtype: np.dtype[Any], *args: Any) -> None:
    for got in run_three_ways(fn, *args):
        assert_matches(got, want, np.dtype(dtype))


def as_dtype(ref: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(ref).astype(dtype)


# ---------------------------------------------------------------------------
# Unary, against NumPy


def _vec(f: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: np.vectorize(f, otypes=[np.float64])(x)


def _round_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


NUMERIC = FLOATS + INTS
UNARY: list[tuple[str, Callable[..., Any], Callable[..., Any], str, list[np.dtype[Any]]]] = [
    ("neg", lax.neg, np.negative, "any", NUMERIC),
    ("sign", lax.sign, np.sign, "any", NUMERIC),
    ("floor", lax.floor, np.floor, "any", FLOATS),
    ("ceil", lax.ceil, np.ceil, "any", FLOATS),
    ("round", lax.round, _round_away, "any", FLOATS),
    ("exp", lax.exp, np.exp, "any", FLOATS + [C64]),
    ("exp2", lax.exp2, np.exp2, "any", FLOATS),
    ("log", lax.log, np.log, "pos", FLOATS + [C64]),
    ("log1p", lax.log1p, np.log1p, "pos", FLOATS),
    ("expm1", lax.expm1, np.expm1, "any", FLOATS),
    ("tanh", lax.tanh, np.tanh, "any", FLOATS),
    ("logistic", lax.logistic, lambda x: 1 / (1 + np.exp(-x)), "any", FLOATS),
    ("sin", lax.sin, np.sin, "any", FLOATS + [C64]),
    ("cos", lax.cos, np.cos, "any", FLOATS),
    ("tan", lax.tan, np.tan, "unit", FLOATS),
    ("asin", lax.asin, np.arcsin, "unit", FLOATS),
    ("acos", lax.acos, np.arccos, "unit", FLOATS),
    ("atan", lax.atan, np.arctan, "any", FLOATS),
    ("sinh", lax.sinh, np.sinh, "any", FLOATS),
    ("cosh", lax.cosh, np.cosh, "any", FLOATS),
    ("asinh", lax.asinh, np.arcsinh, "any", FLOATS),
    ("acosh", lax.acosh, np.arccosh, "ge1", FLOATS),
    ("atanh", lax.atanh, np.arctanh, "unit", FLOATS),
    ("sqrt", lax.sqrt, np.sqrt, "pos", FLOATS + [C64]),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), "pos", FLOATS),
    ("cbrt", lax.cbrt, np.cbrt, "any", FLOATS),
    ("abs", lax.abs, np.abs, "any", FLOATS + [I32, I8]),
    ("erf", lax.erf, _vec(math.erf), "any", FLOATS),
    ("lgamma", lax.lgamma, _vec(math.lgamma), "pos", FLOATS),
    ("square", lax.square, np.square, "any", FLOATS + [I32]),
    ("reciprocal", lax.reciprocal, np.reciprocal, "nonzero", FLOATS),
    ("bitwise_not", lax.bitwise_not, np.invert, "any", [BOOL, *INTS]),
]


def _unary_cases() -> list[Any]:
    return [
        pytest.param(fn, ref, domain, dt, shape, id=f"{name}-{dt.name}-{len(shape)}d")
        for name, fn, ref, domain, dts in UNARY
        for dt in dts
        for shape in SHAPES
    ]


@pytest.mark.parametrize("fn,ref,domain,dtype,shape", _unary_cases())
def test_unary_matches_numpy(fn: Any, ref: Any, domain: str, dtype: Any, shape: Any) -> None:
    x = sample(dtype, shape, domain)
    exact = dtype.kind in "iub"
    want = ref(x) if exact else as_dtype(ref(f64(x)), dtype)
    check(fn, as_dtype(want, dtype), dtype, x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_is_finite(dtype: Any) -> None:
    x = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3.0]).astype(dtype).reshape(2, 3)
    check(lax.is_finite, np.isfinite(f64(x)), BOOL, x)


@pytest.mark.parametrize("dtype", [C64])
def test_abs_of_complex_is_real(dtype: Any) -> None:
    x = sample(dtype, (2, 3), "any")
    check(lax.abs, np.abs(x.astype(np.complex128)).astype(np.float32), F32, x)


@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32, I8])
@pytest.mark.parametrize("y", [0, 1, 2, 3, 7])
def test_integer_pow(dtype: Any, y: int) -> None:
    x = sample(dtype, (2, 3), "any")
    if dtype.kind == "i":  # integers wrap: NumPy's power wraps the same way
        want = np.power(x, np.asarray(y, dtype))
    else:
        want = as_dtype(f64(x) ** y, dtype)
    check(lambda a: lax.integer_pow(a, y), want, dtype, x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_integer_pow_negative(dtype: Any) -> None:
    x = sample(dtype, (3,), "nonzero")
    check(lambda a: lax.integer_pow(a, -3), as_dtype(f64(x) ** -3, dtype), dtype, x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_halves(dtype: Any) -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.2]).astype(dtype)
    check(lambda a: lax.round(a), as_dtype(_round_away(f64(x)), dtype), dtype, x)
    even = lambda a: lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)  # noqa: E731
    check(even, as_dtype(np.rint(f64(x)), dtype), dtype, x)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_sign_keeps_signed_zero_and_nan(dtype: Any) -> None:
    x = np.array([-0.0, 0.0, np.nan, -3.0, 2.0], dtype)
    for got in run_three_ways(lax.sign, x):
        got = np.asarray(got)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(x))
        np.testing.assert_array_equal(got, np.where(x == 0, x, np.sign(x)))


@pytest.mark.parametrize("dtype", [U8, U32])
def test_sign_of_unsigned(dtype: Any) -> None:
    x = np.array([0, 1, 200], dtype)
    check(lax.sign, (x > 0).astype(dtype), dtype, x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logistic_is_stable(dtype: Any) -> None:
    x = np.array([-1e4, -100.0, -20.0, 0.0, 20.0, 100.0, 1e4]).astype(dtype)
    with np.errstate(over="ignore"):
        want = as_dtype(1 / (1 + np.exp(-f64(x))), dtype)
    for got in run_three_ways(lax.logistic, x):
        assert not np.isnan(f64(got)).any()
        assert_matches(got, want, dtype)


# Special functions without SciPy: independent float64 oracles.


def _erf_inv_by_bisection(y: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf, otypes=[np.float64])
    lo, hi = np.full(y.shape, -6.0), np.full(y.shape, 6.0)
    for _ in range(80):
        mid = (lo + hi) / 2
        below = erf(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_erf_inv(dtype: Any, shape: Any) -> None:
    y = sample(dtype, shape, "unit")
    check(lax.erf_inv, as_dtype(_erf_inv_by_bisection(f64(y)), dtype), dtype, y)


def test_erf_inv_edges_and_tails() -> None:
    y = np.array([0.0, 1.0, -1.0, 1.5, -2.0, np.nan, 0.9999999, -0.9999999, 1e-30], np.float32)
    want = _erf_inv_by_bisection(np.clip(f64(y), -0.99999999, 0.99999999))
    want = np.where(np.abs(f64(y)) == 1, np.copysign(np.inf, f64(y)), want)
    want = np.where(np.isnan(y) | (np.abs(f64(y)) > 1), np.nan, want)
    want[-1] = f64(y)[-1] * math.sqrt(math.pi) / 2  # erf_inv(y) ~ y sqrt(pi)/2 for tiny y
    check(lax.erf_inv, want.astype(np.float32), F32, y)


def test_erf_inv_float64_is_accurate() -> None:
    with pc.enable_x64():
        y = np.linspace(-0.999999, 0.999999, 101)
        got = np.asarray(lax.erf_inv(y))
        assert got.dtype == np.float64
        np.testing.assert_allclose(np.vectorize(math.erf)(got), y, rtol=1e-14, atol=1e-16)


def _digamma_by_difference(x: np.ndarray) -> np.ndarray:
    h = 1e-6
    lg = np.vectorize(math.lgamma, otypes=[np.float64])
    return (lg(x + h) - lg(x - h)) / (2 * h)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("domain", ["pos", "negative"])
def test_digamma(dtype: Any, shape: Any, domain: str) -> None:
    x = sample(dtype, shape, "pos")
    if domain == "negative":  # between the poles: -k + (0.2 .. 0.8)
        x = (-np.floor(f64(x)) - 1 + 0.2 + 0.6 * (f64(x) % 1)).astype(dtype)
    check(lax.digamma, as_dtype(_digamma_by_difference(f64(x)), dtype), dtype, x)


def test_digamma_poles_and_identities() -> None:
    with pc.enable_x64():
        x = np.array([0.0, -1.0, -7.0, np.nan, np.inf, -np.inf])
        got = np.asarray(lax.digamma(x))
        np.testing.assert_array_equal(got, np.array([np.nan, np.nan, np.nan, np.nan, np.inf, np.nan]))
        z = np.linspace(0.05, 40.0, 301)
        step = np.asarray(lax.digamma(z + 1)) - np.asarray(lax.digamma(z))
        np.testing.assert_allclose(step, 1 / z, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(np.asarray(lax.digamma(np.array([1.0]))), [-0.5772156649015329], rtol=1e-14)


def test_lgamma_negative_and_poles() -> None:
    x = np.array([-0.5, -2.5, 0.0, -1.0, -3.0, np.inf, -np.inf, np.nan], np.float32)
    want = np.array([math.lgamma(-0.5), math.lgamma(-2.5), np.inf, np.inf, np.inf, np.inf, np.inf, np.nan])
    check(lax.lgamma, want.astype(np.float32), F32, x)


def test_erf_float64_matches_math() -> None:
    with pc.enable_x64():
        x = np.linspace(-4, 4, 81)
        np.testing.assert_allclose(np.asarray(lax.erf(x)), [math.erf(v) for v in x], rtol=1e-15, atol=1e-17)


# ---------------------------------------------------------------------------
# Binary, against NumPy


BINARY: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[str, str], list[np.dtype[Any]]]] = [
    ("add", lax.add, np.add, ("any", "any"), NUMERIC + [C64]),
    ("sub", lax.sub, np.subtract, ("any", "any"), NUMERIC),
    ("mul", lax.mul, np.multiply, ("any", "any"), NUMERIC + [C64]),
    ("div", lax.div, np.divide, ("any", "nonzero"), FLOATS + [C64]),
    ("rem", lax.rem, np.fmod, ("any", "nonzero"), FLOATS),
    ("pow", lax.pow, np.power, ("pos", "any"), FLOATS),
    ("max", lax.max, np.maximum, ("any", "any"), NUMERIC + [BOOL]),
    ("min", lax.min, np.minimum, ("any", "any"), NUMERIC + [BOOL]),
    ("atan2", lax.atan2, np.arctan2, ("any", "any"), FLOATS),
    ("bitwise_and", lax.bitwise_and, np.bitwise_and, ("any", "any"), [BOOL, *INTS]),
    ("bitwise_or", lax.bitwise_or, np.bitwise_or, ("any", "any"), [BOOL, *INTS]),
    ("bitwise_xor", lax.bitwise_xor, np.bitwise_xor, ("any", "any"), [BOOL, *INTS]),
    ("eq", lax.eq, np.equal, ("any", "any"), NUMERIC + [BOOL]),
    ("ne", lax.ne, np.not_equal, ("any", "any"), NUMERIC + [BOOL]),
    ("lt", lax.lt, np.less, ("any", "any"), NUMERIC + [BOOL]),
    ("le", lax.le, np.less_equal, ("any", "any"), NUMERIC + [BOOL]),
    ("gt", lax.gt, np.greater, ("any", "any"), NUMERIC + [BOOL]),
    ("ge", lax.ge, np.greater_equal, ("any", "any"), NUMERIC + [BOOL]),
]
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def _binary_cases() -> list[Any]:
    return [
        pytest.param(name, fn, ref, doms, dt, shape, id=f"{name}-{dt.name}-{len(shape)}d")
        for name, fn, ref, doms, dts in BINARY
        for dt in dts
        for shape in SHAPES
    ]


@pytest.mark.parametrize("name,fn,ref,domains,dtype,shape", _binary_cases())
def test_binary_matches_numpy(name: str, fn: Any, ref: Any, domains: Any, dtype: Any, shape: Any) -> None:
    x = sample(dtype, shape, domains[0], seed=1)
    y = sample(dtype, shape, domains[1], seed=2)
    if name in COMPARISONS and shape:
        y.flat[0] = x.flat[0]  # exercise equality
    out_dtype = BOOL if name in COMPARISONS else dtype
    if dtype.kind in "iub" or name in COMPARISONS:
        want = ref(x, y)  # exact (integers wrap like NumPy's)
    else:
        want = as_dtype(ref(f64(x), f64(y)), dtype)
    check(fn, want, out_dtype, x, y)


@pytest.mark.parametrize("name,fn,ref", [(n, f, r) for n, f, r, _, _ in BINARY if n in ("add", "mul", "max", "lt")])
def test_rank0_operands_broadcast(name: str, fn: Any, ref: Any) -> None:
    x = sample(F32, (2, 3), "any", seed=3)
    s = np.float32(1.25)
    check(fn, ref(x, s), BOOL if name in COMPARISONS else F32, x, s)
    check(fn, ref(s, x), BOOL if name in COMPARISONS else F32, s, x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter(dtype: Any) -> None:
    x = np.array([0.0, 1.0, 1.0, -2.0, np.nan, 3.0]).astype(dtype)
    y = np.array([1.0, 2.0, 0.0, -2.0, 1.0, np.inf]).astype(dtype)
    check(lax.nextafter, np.nextafter(x, y), dtype, x, y)
    # Moving toward y, the result differs from x by one unit in the last place.
    got = f64(lax.nextafter(x, y))[1:4]
    spacing = np.abs(f64(np.nextafter(x, y))[1:4] - f64(x)[1:4])
    np.testing.assert_array_equal(np.abs(got - f64(x)[1:4]), spacing)
    assert f64(lax.nextafter(x, y))[0] > 0


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
@pytest.mark.parametrize("fn,ref", [(lax.max, np.fmax), (lax.min, np.fmin)])
def test_max_min_propagate_nan(dtype: Any, fn: Any, ref: Any) -> None:
    x = np.array([np.nan, 1.0, np.nan, -1.0]).astype(dtype)
    y = np.array([0.0, np.nan, np.nan, 2.0]).astype(dtype)
    want = np.where(np.isnan(f64(x)) | np.isnan(f64(y)), np.nan, ref(f64(x), f64(y)))
    check(fn, as_dtype(want, dtype), dtype, x, y)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_comparisons_with_nan(dtype: Any) -> None:
    x = np.array([np.nan, 1.0, np.nan]).astype(dtype)
    y = np.array([np.nan, np.nan, 0.0]).astype(dtype)
    for fn, ref in [(lax.eq, np.equal), (lax.ne, np.not_equal), (lax.lt, np.less), (lax.ge, np.greater_equal)]:
        check(fn, ref(x, y), BOOL, x, y)


# Integer division and remainder: C semantics, XLA's answers at the edges.


def _c_divmod(a: int, b: int, dtype: np.dtype[Any]) -> tuple[int, int]:
    if b == 0:
        return (-1 if dtype.kind == "i" else int(np.iinfo(dtype).max)), a
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - q * b


def _c_div_rem(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pairs = [_c_divmod(int(a), int(b), x.dtype) for a, b in zip(x.ravel(), y.ravel())]
    wrap = lambda v: np.array([p for p in v], dtype=np.int64).astype(x.dtype).reshape(x.shape)  # noqa: E731
    return wrap([p[0] for p in pairs]), wrap([p[1] for p in pairs])


@pytest.mark.parametrize("dtype", [I32, I8, U8, U32])
def test_integer_div_rem_truncate_toward_zero(dtype: Any) -> None:
    vals = [-7, 7, -8, 9, 0, 5] if dtype.kind == "i" else [7, 200, 9, 0, 5, 255]
    divs = [2, -2, -3, 3, 3, 0] if dtype.kind == "i" else [2, 3, 255, 1, 0, 7]
    x, y = np.array(vals, dtype), np.array(divs, dtype)
    q, r = _c_div_rem(x, y)
    check(lax.div, q, dtype, x, y)
    check(lax.rem, r, dtype, x, y)
    # Python's floor semantics would differ on the mixed-sign pairs.
    if dtype.kind == "i":
        assert (q != x // np.where(y == 0, 1, y)).any()


@pytest.mark.parametrize("dtype", [I32, I8])
def test_integer_div_overflow(dtype: Any) -> None:
    lo = np.iinfo(dtype).min
    x, y = np.array([lo, lo, 3], dtype), np.array([-1, 1, 0], dtype)
    check(lax.div, np.array([lo, lo, -1], dtype), dtype, x, y)
    check(lax.rem, np.array([0, 0, 3], dtype), dtype, x, y)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_rem_has_sign_of_dividend(dtype: Any) -> None:
    x = np.array([-7.5, 7.5, -7.5, 7.5]).astype(dtype)
    y = np.array([2.0, -2.0, -2.0, 2.0]).astype(dtype)
    want = as_dtype(np.fmod(f64(x), f64(y)), dtype)
    assert (np.sign(f64(want)) == np.sign(f64(x))).all()
    check(lax.rem, want, dtype, x, y)


# Shifts, against Python integers.


def _shift_oracle(kind: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    mask = (1 << bits) - 1
    out = []
    for a, s in zip(x.ravel().tolist(), y.ravel().tolist()):
        u = a & mask
        signed = u - (1 << bits) if u >> (bits - 1) else u
        in_range = 0 <= s < bits
        if kind == "left":
            v = (u << s) & mask if in_range else 0
        elif kind == "logical":
            v = u >> s if in_range else 0
        else:
            v = (signed >> (s if in_range else bits - 1)) & mask
        out.append(v)
    return np.array(out, np.uint64).astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype).reshape(x.shape)


@pytest.mark.parametrize("dtype", [I32, I8, U8, U32])
@pytest.mark.parametrize(
    "kind,fn",
    [("left", lax.shift_left), ("logical", lax.shift_right_logical), ("arith", lax.shift_right_arithmetic)],
)
def test_shifts(dtype: Any, kind: str, fn: Any) -> None:
    bits = dtype.itemsize * 8
    info = np.iinfo(dtype)
    amounts = [0, 1, 3, bits - 1, bits, bits + 5] + ([-1, -bits] if dtype.kind == "i" else [])
    xs = [int(info.min), int(info.max), 1, 5][: len(amounts)]
    x = np.array([xs[i % len(xs)] for i in range(len(amounts))], dtype)
    y = np.array(amounts, dtype)
    check(fn, _shift_oracle(kind, x, y), dtype, x, y)


# ---------------------------------------------------------------------------
# select_n, clamp


@pytest.mark.parametrize("dtype", [F32, I32, BOOL, BF16])
@pytest.mark.parametrize("shape", SHAPES)
def test_select_n_bool(dtype: Any, shape: Any) -> None:
    which = sample(BOOL, shape, "any", seed=4)
    a, b = sample(dtype, shape, "any", seed=5), sample(dtype, shape, "any", seed=6)
    check(lax.select_n, np.where(which, b, a), dtype, which, a, b)
    check(lax.select, np.where(which, a, b), dtype, which, a, b)


@pytest.mark.parametrize("shape", SHAPES)
def test_select_n_int32(shape: Any) -> None:
    which = np.asarray(np.random.default_rng(7).integers(0, 3, shape)).astype(np.int32)
    cases = [sample(F32, shape, "any", seed=s) for s in (8, 9, 10)]
    check(lax.select_n, np.choose(which, cases), F32, which, *cases)


def test_select_n_scalar_selector() -> None:
    a, b = sample(F32, (2, 3), "any", seed=1), sample(F32, (2, 3), "any", seed=2)
    check(lax.select_n, b, F32, np.bool_(True), a, b)
    check(lax.select_n, a, F32, np.int32(0), a, b)


@pytest.mark.parametrize("dtype", [F32, I32, U8, BF16])
@pytest.mark.parametrize("shape", SHAPES)
def test_clamp(dtype: Any, shape: Any) -> None:
    x = sample(dtype, shape, "any" if dtype != U8 else "small")
    lo, hi = np.array(1, dtype), np.array(4 if dtype == U8 else 2, dtype)
    check(lax.clamp, np.clip(x, lo, hi), dtype, lo, x, hi)
    if shape:
        lo_arr = np.full(shape, 0, dtype)
        check(lax.clamp, np.clip(x, lo_arr, hi), dtype, lo_arr, x, hi)


def test_clamp_propagates_nan_and_takes_python_bounds() -> None:
    x = np.array([-1.0, 0.5, 2.0, np.nan], np.float32)
    check(lambda v: lax.clamp(0.0, v, 1.0), np.array([0.0, 0.5, 1.0, np.nan], np.float32), F32, x)


# ---------------------------------------------------------------------------
# Conversions


def _float_to_int_oracle(x: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    info = np.iinfo(dtype)
    v = np.where(np.isnan(f64(x)), 0.0, np.clip(np.trunc(f64(x)), float(info.min), float(info.max)))
    return np.array([int(a) if abs(a) < 2**62 else (int(info.max) if a > 0 else int(info.min)) for a in v.ravel()],
                    dtype=np.int64 if dtype.kind == "i" else np.uint64).astype(dtype).reshape(x.shape)


@pytest.mark.parametrize("src", [F32, F16, BF16])
@pytest.mark.parametrize("dst", [I32, U8, I8, U32])
def test_convert_float_to_int_saturates(src: Any, dst: Any) -> None:
    x = as_dtype(np.array([np.nan, 3e9, -3e9, -1.7, 2.9, np.inf, -np.inf, 200.0, -200.0]), src)
    check(lambda a: lax.convert_element_type(a, dst), _float_to_int_oracle(x, dst), dst, x)


@pytest.mark.parametrize("src", [F32, F16, BF16, I32, U8, BOOL])
@pytest.mark.parametrize("dst", [F32, F16, BF16, I32, U8, BOOL])
@pytest.mark.parametrize("shape", SHAPES)
def test_convert_element_type(src: Any, dst: Any, shape: Any) -> None:
    x = sample(src, shape, "any" if src.kind != "u" else "small")
    if src in FLOATS and dst.kind in "iu":
        want = _float_to_int_oracle(x, dst)
    elif dst == BOOL:
        want = f64(x) != 0
    else:
        want = as_dtype(f64(x) if src in FLOATS else x, dst)
    check(lambda a: lax.convert_element_type(a, dst), want, dst, x)


def test_convert_complex_to_real_and_bool() -> None:
    x = np.array([1.5 + 2j, 0 + 1j, 0j], np.complex64)
    check(lambda a: lax.convert_element_type(a, np.float32), np.real(x), F32, x)
    check(lambda a: lax.convert_element_type(a, bool), x != 0, BOOL, x)


def test_convert_canonicalizes_dtypes() -> None:
    x = np.arange(3, dtype=np.float32)
    assert np.asarray(lax.convert_element_type(x, np.float64)).dtype == np.float32
    assert np.asarray(lax.convert_element_type(x, float)).dtype == np.float32
    assert np.asarray(lax.convert_element_type(x, int)).dtype == np.int32
    with pc.enable_x64():
        assert np.asarray(lax.convert_element_type(x, np.float64)).dtype == np.float64


def test_convert_weak_type_param_and_folding() -> None:
    closed = pc.make_jaxpr(lambda x: lax._convert_element_type(x, np.float16, True))(np.ones(3, np.float32))
    assert closed.out_avals[0] == pc.ShapedArray((3,), np.float16, True)
    assert ew.convert_element_type_p.fold_literals
    # A literal converted to the operand's dtype (plait's internal lenient rule) is folded, not staged.
    closed = pc.make_jaxpr(lambda x: _lenient.mul(x, 2.0))(np.ones(3, np.float16))
    assert [e.primitive for e in closed.eqns] == [ew.mul_p]
    lit = closed.eqns[0].invars[1]
    assert isinstance(lit, pc.Literal) and lit.aval == pc.ShapedArray((), np.float16, True)
    assert np.asarray(lit.val).dtype == np.float16 and float(lit.val) == 2.0


def test_convert_same_type_traced_is_identity() -> None:
    closed = pc.make_jaxpr(lambda x: lax.convert_element_type(x, np.float32))(np.ones(3, np.float32))
    assert closed.eqns == []


@pytest.mark.parametrize(
    "src,dst,shape,out_shape",
    [
        (F32, U8, (2, 3), (2, 3, 4)),
        (F32, I32, (2, 3), (2, 3)),
        (U8, F32, (3, 4), (3,)),
        (BF16, np.dtype(np.uint16), (3,), (3,)),
        (F32, np.dtype(np.uint16), (), (2,)),
        (np.dtype(np.uint16), F16, (2,), (2,)),
    ],
)
def test_bitcast_convert_type(src: Any, dst: Any, shape: Any, out_shape: Any) -> None:
    x = sample(src, shape, "any")
    want = np.ascontiguousarray(x).reshape(-1).view(dst).reshape(out_shape)
    check(lambda a: lax.bitcast_convert_type(a, dst), want, dst, x)
    back = lax.bitcast_convert_type(lax.bitcast_convert_type(x, dst), src)
    np.testing.assert_array_equal(np.asarray(back).reshape(-1).view(np.uint8), x.reshape(-1).view(np.uint8))


# ---------------------------------------------------------------------------
# Weak types and staging


# lax follows JAX: operands share one dtype, weakly typed or not, and a Python scalar has the default
# dtype of its kind (results checked against JAX 0.10.2).  plait's own code uses plait_core.lax._lenient,
# which converts weakly typed operands to the dtype they meet.

_MIXED = r"requires arguments of the same dtype, got "


@pytest.mark.parametrize(
    ("fn", "args", "listed"),
    [
        (lax.add, (np.ones(3, np.float16), 1.0), "float16, float32 (a Python float)"),
        (lax.mul, (np.ones(3, np.float16), 2.0), "float16, float32 (a Python float)"),
        (lax.add, (1, 1.0), "int32 (a Python int), float32 (a Python float)"),
        (lax.add, (np.ones(3, np.uint8), 3), "uint8, int32 (a Python int)"),
        (lax.add, (np.ones(3, np.int32), 1.5), "int32, float32 (a Python float)"),
        (lax.add, (np.ones(3, np.float32), 2), "float32, int32 (a Python int)"),
        (lax.max, (np.ones(3, ml_dtypes.bfloat16), 0.0), "bfloat16, float32 (a Python float)"),
        (lax.lt, (np.ones(3, np.int8), 1), "int8, int32 (a Python int)"),
        (lax.add, (np.ones(3, np.complex64), 1.0), "complex64, float32 (a Python float)"),
        (lax.mul, (np.ones(3, np.float32), np.ones(3, np.int32)), "float32, int32"),
        (lax.sub, (np.ones(3, np.float16), lax.mul(np.float32(1), 1.0)), "float16, float32"),
        (lax.nextafter, (np.ones(3, np.float16), 1.0), "float16, float32 (a Python float)"),
        (lax.complex, (np.ones(3, np.float32), np.ones(3, np.float16)), "float32, float16"),
        (lambda x, y: lax.select(np.ones(3, bool), x, y), (np.ones(3, np.float16), np.ones(3, np.float32)),
         "float32, float16"),
        (lambda x, y: lax.clamp(x, y, 1.0), (0.0, np.ones(3, np.float16)), "float32 (a Python float), float16, "
         "float32 (a Python float)"),
        (lax.pow, (np.ones(3, np.float16), 2.0), "float16, float32 (a Python float)"),
    ],
)
def test_lax_refuses_operands_of_different_dtypes_as_jax(fn: Any, args: Any, listed: str) -> None:
    name = getattr(fn, "__name__", "")
    with pytest.raises(TypeError, match=(rf"lax\.{name} " if name != "<lambda>" else "") + _MIXED
                       + listed.replace("(", r"\(").replace(")", r"\)")):
        fn(*args)


@pytest.mark.parametrize(
    ("fn", "args", "dtype", "weak"),
    [
        (lax.add, (np.ones(3, np.float32), 2.0), np.float32, False),
        (lax.add, (2.0, np.ones(3, np.float32)), np.float32, False),
        (lax.add, (np.ones(3, np.int32), 1), np.int32, False),
        (lax.add, (1, 1), np.int32, True),
        (lax.add, (1.0, 1.0), np.float32, True),
        (lax.add, (np.ones(3, np.complex64), 1j), np.complex64, False),
        (lax.add, (np.ones(3, np.float32), np.float64(1)), np.float32, False),  # canonicalised with x64 off
        (lax.add, (np.ones(3, np.float32), np.ones(3)), np.float32, False),
        (lax.bitwise_and, (np.ones(3, bool), True), np.bool_, False),
        (lax.div, (np.ones(3, np.int32), 2), np.int32, False),
        (lax.clamp, (0.0, np.ones(3, np.float32), 1.0), np.float32, False),
        (lax.complex, (np.ones(3, np.float32), 1.0), np.complex64, False),
        # pow takes an integer exponent of any integer dtype
        (lax.pow, (np.ones(3, np.float32), 2), np.float32, False),
        (lax.pow, (np.ones(3, np.float16), 2), np.float16, False),
        (lax.pow, (np.ones(3, np.float32), np.ones(3, np.int32)), np.float32, False),
        (lax.pow, (np.ones(3, np.complex64), np.ones(3, np.int32)), np.complex64, False),
        (lax.pow, (np.ones(3, np.float16), np.full(3, 3, np.int8)), np.float16, False),
        (lax.pow, (2.0, np.ones(3, np.int32)), np.float32, False),
    ],
)
def test_lax_operands_of_one_dtype_as_jax(fn: Any, args: Any, dtype: Any, weak: bool) -> None:
    assert np.asarray(fn(*args)).dtype == np.dtype(dtype)
    closed = pc.make_jaxpr(fn)(*args)
    assert closed.out_avals[0].dtype == np.dtype(dtype) and closed.out_avals[0].weak_type == weak


def test_lax_pow_with_an_integer_exponent_computes_it() -> None:
    x = np.array([2.0, -1.5, 0.5], np.float16)
    np.testing.assert_array_equal(np.asarray(lax.pow(x, np.full(3, 3, np.int8))), x ** 3)
    np.testing.assert_allclose(np.asarray(lax.pow(np.full(2, 2.0, np.float32), -3)), [0.125, 0.125])
    with pytest.raises(TypeError, match=r"pow"):
        lax.pow(np.ones(3, np.int32), 2)


def test_lax_under_x64_python_scalars_are_64_bit() -> None:
    with pc.enable_x64():
        with pytest.raises(TypeError, match=r"lax\.add " + _MIXED + r"float32, float64 \(a Python float\)"):
            lax.add(np.ones(3, np.float32), 1.0)
        with pytest.raises(TypeError, match=r"lax\.div " + _MIXED + r"int32, int64 \(a Python int\)"):
            lax.div(np.ones(3, np.int32), 2)
        closed = pc.make_jaxpr(lambda a: lax.add(a, 1.0))(np.ones(3, np.float64))
        assert closed.out_avals[0].dtype == np.float64 and len(closed.eqns) == 1


def test_lenient_weak_python_scalar_takes_the_array_dtype() -> None:
    x = np.ones((2, 3), np.float16)
    closed = pc.make_jaxpr(lambda a: _lenient.add(a, 1.0))(x)
    assert closed.out_avals[0] == pc.ShapedArray((2, 3), np.float16, False)
    out = _lenient.add(x, 1.0)
    assert np.asarray(out).dtype == np.float16
    np.testing.assert_array_equal(out, x + np.float16(1))
    u = np.array([250, 3], np.uint8)
    check(lambda a: _lenient.add(a, 3), u + np.uint8(3), U8, u)
    assert _lenient.clamp(0.0, x, 1.0).dtype == np.float16
    assert _lenient.select(True, np.float16(1), 0.5).dtype == np.float16
    assert _lenient.pow(x, 2.0).dtype == np.float16


def test_two_weak_scalars_stay_weak() -> None:
    closed = pc.make_jaxpr(lambda: lax.add(1.0, 2.0))()
    assert closed.out_avals[0] == pc.ShapedArray((), np.float32, True)
    assert float(np.asarray(lax.add(1.0, 2.0))) == 3.0
    with pytest.raises(TypeError, match=r"lax\.mul " + _MIXED + r"int32 \(a Python int\), float32"):
        lax.mul(2, 3.5)
    closed = pc.make_jaxpr(lambda: _lenient.mul(2, 3.5))()
    assert closed.out_avals[0] == pc.ShapedArray((), np.float32, True)
    assert float(np.asarray(pc.eval_jaxpr(closed.jaxpr, closed.consts)[0])) == 7.0


def test_x_plus_python_float_stages_one_equation() -> None:
    closed = pc.make_jaxpr(lambda a: lax.add(a, 1.0))(np.ones(3, np.float32))
    assert len(closed.eqns) == 1
    eqn = closed.eqns[0]
    assert eqn.primitive is ew.add_p and isinstance(eqn.invars[1], pc.Literal)
    assert str(closed).splitlines()[1].strip() == "b:f32[3] = add a 1.0"


def test_lenient_does_not_convert_a_strong_operand() -> None:
    with pytest.raises(TypeError, match=r"lax\.add " + _MIXED + r"int32, float32 \(a Python float\); only weakly"):
        _lenient.add(np.ones(3, np.int32), 1.5)
    with pytest.raises(TypeError, match=r"lax\.mul " + _MIXED + r"float32, int32; only weakly"):
        _lenient.mul(np.ones(3, np.float32), np.ones(3, np.int32))


def test_lenient_weak_int_out_of_range_is_an_error() -> None:
    with pytest.raises(OverflowError, match=r"300.*uint8"):
        _lenient.add(np.ones(3, np.uint8), 300)


def test_lenient_x64_weak_float_keeps_array_width() -> None:
    with pc.enable_x64():
        closed = pc.make_jaxpr(lambda a: _lenient.add(a, 1.0))(np.ones(3, np.float32))
        assert closed.out_avals[0].dtype == np.float32 and len(closed.eqns) == 1
        closed = pc.make_jaxpr(lambda a: _lenient.add(a, 1.0))(np.ones(3, np.float64))
        assert closed.out_avals[0].dtype == np.float64


def test_symbolic_shapes() -> None:
    n, m = symbolic_dims("n m")
    a = pc.ShapedArray((n, 3), np.float32)
    assert ew.add_p.abstract_eval(a, pc.ShapedArray((n, 3), np.float32)).shape == (n, 3)
    assert ew.mul_p.abstract_eval(pc.ShapedArray((), np.float32), a).shape == (n, 3)
    with pytest.raises(InconclusiveDimensionOperation, match=r"add.*\(n, 3\).*\(m, 3\)"):
        ew.add_p.abstract_eval(a, pc.ShapedArray((m, 3), np.float32))
    with pytest.raises(ValueError, match=r"add.*\(n, 3\).*\(n \+ 1, 3\)"):
        ew.add_p.abstract_eval(a, pc.ShapedArray((n + 1, 3), np.float32))


def test_every_catalog_primitive_exists() -> None:
    names = [
        "neg", "sign", "floor", "ceil", "round", "is_finite", "exp", "exp2", "log", "log1p", "expm1",
        "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
        "atanh", "sqrt", "rsqrt", "cbrt", "abs", "integer_pow", "erf", "erf_inv", "lgamma", "digamma",
        "not", "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "and", "or",
        "xor", "eq", "ne", "lt", "le", "gt", "ge", "shift_left", "shift_right_arithmetic",
        "shift_right_logical", "select_n", "clamp", "convert_element_type", "bitcast_convert_type",
    ]
    for name in names:
        prim = pc.primitive_by_name(name)
        assert prim.family == "elementwise"
        assert getattr(ew, f"{name}_p") is prim


# ---------------------------------------------------------------------------
# Errors


def _staged(fn: Callable[..., Any], *args: Any) -> Any:
    return pc.make_jaxpr(fn)(*args)


MODES = {"eager": lambda fn, *a: fn(*a), "staged": _staged}


@pytest.mark.parametrize("mode", MODES)
def test_non_array_argument(mode: str) -> None:
    x = np.ones(3, np.float32)
    run = MODES[mode]
    with pytest.raises(TypeError, match=r"an argument of add: expected an array.*builtins\.str"):
        run(lambda a: lax.add(a, "one"), x)
    with pytest.raises(TypeError, match=r"an argument of exp: expected an array.*list"):
        run(lambda a: lax.exp([1.0, 2.0]), x)
    with pytest.raises(TypeError, match=r"an argument of select_n: expected an array.*object"):
        run(lambda a: lax.select_n(object(), a, a), x)


def test_non_array_argument_to_primitive_when_staged() -> None:
    with pytest.raises(TypeError, match=r"add.*str"):
        _staged(lambda a: ew.add_p.bind(a, "one"), np.ones(3, np.float32))


@pytest.mark.parametrize("mode", MODES)
def test_dtype_mismatch_at_primitive(mode: str) -> None:
    x, i = np.ones(3, np.float32), np.ones(3, np.int32)
    with pytest.raises(TypeError, match=r"add requires operands of the same dtype, got float32, int32"):
        MODES[mode](ew.add_p.bind, x, i)


@pytest.mark.parametrize("mode", MODES)
def test_shape_mismatch(mode: str) -> None:
    x, y = np.ones((2, 3), np.float32), np.ones((3,), np.float32)
    with pytest.raises(ValueError, match=r"add requires operands of equal shapes.*\(2, 3\) and \(3,\)"):
        MODES[mode](lax.add, x, y)
    with pytest.raises(ValueError, match=r"lt requires operands of equal shapes.*\(2, 3\) and \(3, 1\)"):
        MODES[mode](lax.lt, x, np.ones((3, 1), np.float32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,name", [(lax.exp, "exp"), (lax.sin, "sin"), (lax.erf, "erf"), (lax.floor, "floor"),
                                     (lax.is_finite, "is_finite"), (lax.digamma, "digamma")])
def test_float_op_rejects_ints(mode: str, fn: Any, name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name} does not accept int32 operands; it needs a floating"):
        MODES[mode](fn, np.ones(3, np.int32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,name", [(lax.bitwise_and, "and"), (lax.shift_left, "shift_left"),
                                     (lax.shift_right_logical, "shift_right_logical")])
def test_bitwise_ops_reject_floats(mode: str, fn: Any, name: str) -> None:
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=rf"{name} does not accept float32 operands"):
        MODES[mode](fn, x, x)


@pytest.mark.parametrize("mode", MODES)
def test_other_dtype_errors(mode: str) -> None:
    run = MODES[mode]
    with pytest.raises(TypeError, match=r"not does not accept float32 operands; it needs a boolean or integer"):
        run(lax.bitwise_not, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="add does not accept bool operands"):
        run(lax.add, np.ones(3, bool), np.ones(3, bool))
    with pytest.raises(TypeError, match="lt does not accept complex64 operands"):
        run(lax.lt, np.ones(3, np.complex64), np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="abs does not accept uint8 operands"):
        run(lax.abs, np.ones(3, np.uint8))
    with pytest.raises(TypeError, match=r"integer_pow: integers cannot be raised to a negative power"):
        run(lambda a: lax.integer_pow(a, -1), np.ones(3, np.int32))


def test_parameter_errors() -> None:
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="integer_pow: the exponent y must be a Python int, got float"):
        lax.integer_pow(x, 2.0)
    with pytest.raises(ValueError, match=r"round: rounding_method must be 0 .* got 3"):
        lax.round(x, 3)
    with pytest.raises(ValueError, match="round: rounding_method must be 0"):
        ew.round_p.bind(x, rounding_method=2)
    with pytest.raises(TypeError, match=r"convert_element_type.*dtype"):
        lax.convert_element_type(x, "not a dtype")
    with pytest.raises(TypeError, match=r"lax\.select: pred must be bool, got int32"):
        lax.select(np.ones(3, np.int32), x, x)


@pytest.mark.parametrize("mode", MODES)
def test_select_n_and_clamp_errors(mode: str) -> None:
    run = MODES[mode]
    x, b = np.ones(3, np.float32), np.ones(3, bool)
    with pytest.raises(TypeError, match="select_n: a bool selector chooses between at most 2 cases, got 3"):
        run(lax.select_n, b, x, x, x)
    with pytest.raises(TypeError, match="select_n: the selector `which` must be bool or int32, got float32"):
        run(lax.select_n, x, x, x)
    with pytest.raises(ValueError, match=r"select_n requires cases of equal shapes, got \(3,\), \(2,\)"):
        run(lax.select_n, np.bool_(True), x, np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"select_n: the selector .* shape \(3,\), got shape \(2,\)"):
        run(lax.select_n, np.ones(2, bool), x, x)
    with pytest.raises(TypeError, match="select_n requires operands of the same dtype, got float32, int32"):
        run(ew.select_n_p.bind, b, x, np.ones(3, np.int32))
    with pytest.raises(ValueError, match=r"clamp: max must be a scalar or have the operand's shape \(3,\), got shape \(2,\)"):
        run(lax.clamp, np.float32(0), x, np.ones(2, np.float32))
    with pytest.raises(ValueError, match="select_n requires at least one case"):
        lax.select_n(b)


@pytest.mark.parametrize("mode", MODES)
def test_bitcast_errors(mode: str) -> None:
    run = MODES[mode]
    with pytest.raises(ValueError, match=r"bitcast_convert_type: converting uint8 to the wider float32 needs a trailing axis of size 4.*\(3, 2\)"):
        run(lambda a: lax.bitcast_convert_type(a, np.float32), np.ones((3, 2), np.uint8))
    with pytest.raises(TypeError, match="bitcast_convert_type does not accept bool operands"):
        run(lambda a: lax.bitcast_convert_type(a, np.uint8), np.ones(3, bool))


def test_check_jaxpr_catches_wrong_outvar_type() -> None:
    closed = pc.make_jaxpr(lambda a: lax.lt(a, 0.0))(np.ones(3, np.float32))
    eqn = closed.eqns[0]
    eqn.outvars[0].aval = pc.ShapedArray((3,), np.float32)
    with pytest.raises(pc.JaxprTypeError, match="lt produces bool"):
        pc.check_jaxpr(closed)


# ---------------------------------------------------------------------------
# Property tests


_f32s = st.floats(width=32, allow_nan=True, allow_infinity=True)
_i32s = st.integers(-(2**31), 2**31 - 1)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), op=st.sampled_from(["add", "sub", "mul", "max", "min", "eq", "lt"]),
       dtype=st.sampled_from([F32, I32]))
def test_binary_property(data: Any, op: str, dtype: Any) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    elements = _f32s if dtype == F32 else _i32s
    x = data.draw(hnp.arrays(dtype, shape, elements=elements))
    y = data.draw(hnp.arrays(dtype, shape, elements=elements))
    ref = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
           "eq": np.equal, "lt": np.less}[op]
    with np.errstate(all="ignore"):
        want = np.asarray(ref(x, y))
    for got in run_three_ways(getattr(lax, op), x, y):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_int_div_rem_property(data: Any) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=5))
    x = data.draw(hnp.arrays(I32, shape, elements=_i32s))
    y = data.draw(hnp.arrays(I32, shape, elements=st.one_of(_i32s, st.sampled_from([0, 1, -1, 2, -2]))))
    q, r = _c_div_rem(x.reshape(-1), y.reshape(-1))
    for got in run_three_ways(lax.div, x, y):
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), q)
    for got in run_three_ways(lax.rem, x, y):
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), r)
