"""plait_core.numpy elementwise math against NumPy, eager and staged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_numpy_util import BF16, F16, F32, I32, check, check_staged, sample, tol

import plait_core
import plait_core.numpy as pnp
from plait_core import dtypes

SHAPES = [(), (5,), (2, 3)]

# name, NumPy oracle, (low, high) sampling domain
UNARY_INEXACT = [
    ("exp", np.exp, (-3, 3)),
    ("exp2", np.exp2, (-3, 3)),
    ("log", np.log, (0.1, 5)),
    ("log2", np.log2, (0.1, 5)),
    ("log10", np.log10, (0.1, 5)),
    ("log1p", np.log1p, (-0.5, 3)),
    ("expm1", np.expm1, (-2, 2)),
    ("sin", np.sin, (-3, 3)),
    ("cos", np.cos, (-3, 3)),
    ("tan", np.tan, (-1.2, 1.2)),
    ("arcsin", np.arcsin, (-0.95, 0.95)),
    ("arccos", np.arccos, (-0.95, 0.95)),
    ("arctan", np.arctan, (-3, 3)),
    ("sinh", np.sinh, (-2, 2)),
    ("cosh", np.cosh, (-2, 2)),
    ("tanh", np.tanh, (-3, 3)),
    ("arcsinh", np.arcsinh, (-3, 3)),
    ("arccosh", np.arccosh, (1.1, 4)),
    ("arctanh", np.arctanh, (-0.9, 0.9)),
    ("sqrt", np.sqrt, (0, 5)),
    ("cbrt", np.cbrt, (-5, 5)),
    ("reciprocal", np.reciprocal, (0.5, 3)),
    ("deg2rad", np.deg2rad, (-180, 180)),
    ("rad2deg", np.rad2deg, (-3, 3)),
    ("sinc", np.sinc, (-2, 2)),
]


@pytest.mark.parametrize("name,oracle,domain", UNARY_INEXACT, ids=[u[0] for u in UNARY_INEXACT])
@pytest.mark.parametrize("dtype", [F32, BF16, F16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary_inexact(name: str, oracle: Any, domain: tuple[float, float], dtype: Any, shape: Any) -> None:
    x = sample(shape, dtype, low=domain[0], high=domain[1])
    expected = oracle(x.astype(np.float64))
    check(getattr(pnp, name), x, expected=expected, dtype=dtype, **tol(dtype))


@pytest.mark.parametrize("name,oracle,domain", UNARY_INEXACT[:8], ids=[u[0] for u in UNARY_INEXACT[:8]])
def test_unary_inexact_of_integers_gives_default_float(name: str, oracle: Any, domain: Any) -> None:
    x = np.array([1, 2, 3], np.int32)
    check(getattr(pnp, name), x, expected=oracle(x.astype(np.float64)), dtype=F32, **tol(F32))


def test_unary_of_python_scalar_is_weak() -> None:
    closed = plait_core.make_jaxpr(lambda: pnp.sin(1.0))()
    assert closed.out_avals[0].weak_type
    closed = plait_core.make_jaxpr(lambda x: pnp.sin(2) * x)(np.ones(2, np.float16))
    assert closed.out_avals[0].dtype == np.float16


UNARY_SAME = [
    ("negative", np.negative),
    ("positive", np.positive),
    ("absolute", np.absolute),
    ("abs", np.abs),
    ("sign", np.sign),
    ("floor", np.floor),
    ("ceil", np.ceil),
    ("trunc", np.trunc),
    ("fix", np.fix),
    ("square", np.square),
]


@pytest.mark.parametrize("name,oracle", UNARY_SAME, ids=[u[0] for u in UNARY_SAME])
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(np.int8), BF16], ids=str)
def test_unary_keeping_dtype(name: str, oracle: Any, dtype: Any) -> None:
    x = sample((2, 5), dtype, low=-4, high=4)
    if dtype.kind == "f":
        x = (x * 1.3).astype(dtype)
    expected = oracle(x.astype(np.float64) if dtype == BF16 else x)
    check(getattr(pnp, name), x, expected=expected, dtype=dtype, **tol(dtype))


def test_unsigned_abs_sign() -> None:
    x = np.array([0, 3, 250], np.uint8)
    check(pnp.abs, x, expected=x, dtype=np.uint8)
    check(pnp.sign, x, expected=np.sign(x), dtype=np.uint8)
    check(pnp.abs, np.array([True, False]), expected=[True, False], dtype=bool)


def test_rint_of_integers_is_the_default_float() -> None:
    # As JAX: rint promotes integers and booleans to the default float.
    x = np.array([[3, -2], [0, 7]], np.int8)
    check(pnp.rint, x, expected=x.astype(np.float32), dtype=np.float32)
    check(pnp.rint, np.array([True, False]), expected=[1.0, 0.0], dtype=np.float32)
    y = (sample((2, 5), F32, low=-4, high=4) * 1.3).astype(F32)
    check(pnp.rint, y, expected=np.rint(y), dtype=F32)


@pytest.mark.parametrize("name", ["negative", "sign", "subtract"])
def test_boolean_inputs_rejected(name: str) -> None:
    args = (np.array([True]),) * (2 if name == "subtract" else 1)
    with pytest.raises(TypeError, match=f"{name} does not accept boolean inputs"):
        getattr(pnp, name)(*args)


@pytest.mark.parametrize("decimals", [-1, 0, 1, 2])
@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
def test_round_decimals(decimals: int, dtype: Any) -> None:
    x = (sample((3, 4), F32, low=-100, high=100) * 1.01).astype(dtype)
    check(lambda v: pnp.round(v, decimals), x, expected=np.round(x, decimals), dtype=dtype, rtol=1e-5, atol=1e-4)


def test_round_halves_to_even() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32)
    check(pnp.around, x, expected=np.round(x))
    check(lambda v: pnp.round(v, -1), np.array([15, 25, -15], np.int32), expected=[20, 20, -20])
    with pytest.raises(TypeError, match=r"round: decimals must be an integer, got 1.5"):
        pnp.round(x, 1.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Binary functions

BINARY = [
    ("add", np.add, False),
    ("subtract", np.subtract, False),
    ("multiply", np.multiply, False),
    ("true_divide", np.true_divide, True),
    ("divide", np.divide, True),
    ("maximum", np.maximum, False),
    ("minimum", np.minimum, False),
    ("fmax", np.fmax, False),
    ("fmin", np.fmin, False),
    ("arctan2", np.arctan2, True),
    ("hypot", np.hypot, True),
    ("logaddexp", np.logaddexp, True),
    ("logaddexp2", np.logaddexp2, True),
    ("copysign", np.copysign, True),
    ("heaviside", np.heaviside, True),
]

SHAPE_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((), (4,)), ((4,), ())]


@pytest.mark.parametrize("name,oracle,inexact", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("dtypes_", [(F32, F32), (I32, F32), (np.dtype(np.int8), np.dtype(np.int16)),
                                     (BF16, F16), (F16, F16)], ids=str)
def test_binary(name: str, oracle: Any, inexact: bool, shapes: Any, dtypes_: Any) -> None:
    da, db = dtypes_
    a = sample(shapes[0], da, seed=1)
    b = sample(shapes[1], db, seed=2)
    if name == "heaviside":
        a = np.round(a).astype(da)
    want_dt = dtypes.result_type(a, b)
    if inexact and not dtypes.is_inexact(want_dt):
        want_dt = F32
    expected = oracle(a.astype(np.float64), b.astype(np.float64))
    t = tol(BF16) if BF16 in (da, db) or want_dt in (BF16, F16) else tol(F32)
    if name == "arctan2" and want_dt == F16:
        t = {"rtol": 5e-3, "atol": 5e-3}
    check(getattr(pnp, name), a, b, expected=expected, dtype=want_dt, **t)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
def test_binary_on_booleans(name: str) -> None:
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    check(getattr(pnp, name), a, b, expected=getattr(np, name)(a, b), dtype=bool)


@pytest.mark.parametrize("name,oracle", [("add", np.add), ("multiply", np.multiply), ("subtract", np.subtract),
                                         ("true_divide", np.true_divide), ("power", np.power)])
@pytest.mark.parametrize("scalar", [2, 2.5, True])
@pytest.mark.parametrize("dtype", [F16, BF16, np.dtype(np.int16), np.dtype(np.uint8)], ids=str)
def test_python_scalars_do_not_widen(name: str, oracle: Any, scalar: Any, dtype: Any) -> None:
    x = sample((4,), dtype, low=1, high=4)
    if name == "subtract" and scalar is True:
        scalar = 1
    want = dtypes.result_type(x, scalar)
    if name == "true_divide" and not dtypes.is_inexact(want):
        want = F32
    expected = oracle(x.astype(np.float64), float(scalar))
    if want.kind in "iu":
        expected = expected.astype(want)
    check(lambda v: getattr(pnp, name)(v, scalar), x, expected=expected, dtype=want, **tol(BF16))
    check(lambda v: getattr(pnp, name)(scalar, v) if name != "power" else getattr(pnp, name)(v, scalar), x,
          expected=oracle(float(scalar), x.astype(np.float64)).astype(want) if name != "power" else expected,
          dtype=want, **tol(BF16))


def test_integer_true_divide_is_float() -> None:
    a, b = np.array([1, 7, -7], np.int32), np.array([2, 2, 2], np.int32)
    check(pnp.true_divide, a, b, expected=a / b, dtype=F32)


ints = st.integers(-50, 50)
nonzero_ints = ints.filter(lambda v: v != 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(ints, min_size=1, max_size=6), st.lists(nonzero_ints, min_size=1, max_size=6))
def test_floor_division_and_modulo_follow_python(xs: list[int], ys: list[int]) -> None:
    n = min(len(xs), len(ys))
    a, b = np.array(xs[:n], np.int32), np.array(ys[:n], np.int32)
    check(pnp.floor_divide, a, b, expected=np.array([x // y for x, y in zip(xs, ys)]), dtype=I32)
    check(pnp.remainder, a, b, expected=np.array([x % y for x, y in zip(xs, ys)]), dtype=I32)
    check(pnp.fmod, a, b, expected=np.fmod(a, b), dtype=I32)
    q, r = pnp.divmod(a, b)
    np.testing.assert_array_equal(np.asarray(q), a // b)
    np.testing.assert_array_equal(np.asarray(r), a % b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-100, 100, width=32), min_size=1, max_size=6),
       st.lists(st.floats(0.25, 30, width=32), min_size=1, max_size=6), st.booleans())
def test_float_floor_division_and_modulo(xs: list[float], ys: list[float], negate: bool) -> None:
    n = min(len(xs), len(ys))
    a = np.array(xs[:n], np.float32)
    b = np.array(ys[:n], np.float32) * (-1 if negate else 1)
    check(pnp.floor_divide, a, b, expected=np.floor_divide(a, b), dtype=F32, rtol=1e-6, atol=1e-5)
    check(pnp.remainder, a, b, expected=np.remainder(a, b), dtype=F32, rtol=1e-5, atol=1e-5)


def test_float_floor_divide_by_zero() -> None:
    a = np.array([1.0, -1.0, 0.0], np.float32)
    with np.errstate(all="ignore"):
        check(pnp.floor_divide, a, np.zeros(3, np.float32), expected=np.floor_divide(a, 0.0))


def test_unsigned_floor_divmod() -> None:
    a, b = np.array([7, 250, 3], np.uint8), np.array([2, 7, 5], np.uint8)
    check(pnp.floor_divide, a, b, expected=a // b, dtype=np.uint8)
    check(pnp.remainder, a, b, expected=a % b, dtype=np.uint8)


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(np.int8), BF16], ids=str)
def test_static_integer_power(exponent: int, dtype: Any) -> None:
    x = sample((3, 2), dtype, low=-3, high=3)
    closed = plait_core.make_jaxpr(lambda v: pnp.power(v, exponent))(x)
    assert "integer_pow" in str(closed)
    expected = np.power(x.astype(np.float64), exponent)
    if dtype.kind == "i":
        expected = np.power(x, exponent)
    check(lambda v: pnp.power(v, exponent), x, expected=expected, dtype=dtype, **tol(dtype))
    check_staged(lambda v: v ** exponent, x, expected=expected, dtype=dtype, **tol(dtype))


def test_integer_array_power_and_errors() -> None:
    a = np.array([2, -3, 5, 0, 7], np.int32)
    b = np.array([3, 3, 0, 4, 2], np.int32)
    check(pnp.power, a, b, expected=np.power(a, b), dtype=I32)
    check(pnp.power, np.array([1.5, 2.0], np.float32), np.array([2.0, 0.5], np.float32),
          expected=np.power([1.5, 2.0], [2.0, 0.5]))
    with pytest.raises(ValueError, match="power: integers to negative integer powers are not allowed"):
        pnp.power(a, -1)
    # Booleans compute in int32, as in JAX.
    check(pnp.power, np.array([True, False]), np.array([True, True]), expected=[1, 0], dtype=I32)


def test_float_power_uses_widest_float() -> None:
    check(pnp.float_power, np.array([2, 3], np.int32), 2, expected=[4.0, 9.0], dtype=F32)


def test_nextafter() -> None:
    a = np.array([1.0, -1.0, 0.0], np.float32)
    b = np.array([2.0, -2.0, -1.0], np.float32)
    check(pnp.nextafter, a, b, expected=np.nextafter(a, b), rtol=0, atol=0)


def test_hypot_extremes() -> None:
    a = np.array([3e30, 0.0, np.inf, 1e-30], np.float32)
    b = np.array([4e30, 0.0, np.nan, 1e-30], np.float32)
    check(pnp.hypot, a, b, expected=np.hypot(a, b), rtol=1e-6)


def test_logaddexp_infinities() -> None:
    a = np.array([-np.inf, np.inf, np.nan, 0.0], np.float32)
    b = np.array([-np.inf, np.inf, 1.0, -np.inf], np.float32)
    with np.errstate(invalid="ignore"):
        expected = np.logaddexp(a, b)
    check(pnp.logaddexp, a, b, expected=expected)


# ---------------------------------------------------------------------------
# Classification and cleanup


def test_classification() -> None:
    x = np.array([1.0, np.nan, np.inf, -np.inf, -0.0], np.float32)
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"):
        check(getattr(pnp, name), x, expected=getattr(np, name)(x), dtype=bool)
    i = np.array([1, -2], np.int32)
    for name in ("isnan", "isinf", "isfinite", "signbit"):
        check(getattr(pnp, name), i, expected=getattr(np, name)(i), dtype=bool)


def test_nan_to_num() -> None:
    x = np.array([np.nan, np.inf, -np.inf, 2.0], np.float32)
    check(pnp.nan_to_num, x, expected=np.nan_to_num(x))
    check(lambda v: pnp.nan_to_num(v, nan=1.0, posinf=9.0, neginf=-9.0), x,
          expected=np.nan_to_num(x, nan=1.0, posinf=9.0, neginf=-9.0))
    check(pnp.nan_to_num, np.array([1, 2], np.int32), expected=[1, 2], dtype=I32)


def test_real_imag_conj_of_real_arrays() -> None:
    x = sample((3,), F32)
    check(pnp.real, x, expected=x)
    check(pnp.imag, x, expected=np.zeros(3))
    check(pnp.conj, x, expected=x)


def test_bf16_f16_results_keep_dtype() -> None:
    x = sample((4,), BF16, low=0.5, high=2)
    out = check(pnp.sqrt, x, expected=np.sqrt(x.astype(np.float64)), **tol(BF16))
    assert out[0].dtype == BF16
    out = check(lambda v: pnp.add(v, v), sample((4,), F16), expected=2 * sample((4,), F16).astype(float))
    assert out[0].dtype == F16


def test_bool_dtype_result_of_add_of_bool_and_int() -> None:
    check(pnp.add, np.array([True, False]), np.array([1, 2], np.int32), expected=[2, 2], dtype=I32)
