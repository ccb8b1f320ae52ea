"""plait_core.numpy comparisons, logical and bitwise functions, where, clip, isclose."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_numpy_util import BF16, F32, I32, check, sample

import plait_core
import plait_core.numpy as pnp
from plait_core import dtypes
from plait_core.errors import ConcretizationTypeError

COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("dtypes_", [(F32, F32), (I32, F32), (np.dtype(np.uint8), np.dtype(np.int8)),
                                     (BF16, I32), (np.dtype(bool), np.dtype(bool))], ids=str)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 1), (3,)), ((), (4,))], ids=str)
def test_comparisons(name: str, dtypes_: Any, shapes: Any) -> None:
    a = sample(shapes[0], dtypes_[0], seed=3, low=-2, high=2)
    b = sample(shapes[1], dtypes_[1], seed=4, low=-2, high=2)
    check(getattr(pnp, name), a, b, expected=getattr(np, name)(a.astype(float), b.astype(float)), dtype=bool)


def test_comparison_with_python_scalar_and_nan() -> None:
    x = np.array([1.0, np.nan, 3.0], np.float32)
    check(lambda v: pnp.less(v, 2), x, expected=x < 2)
    check(lambda v: pnp.not_equal(v, v), x, expected=x != x)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical(name: str) -> None:
    a = np.array([[0.0, 1.5, -2.0, 0.0]], np.float32)
    b = np.array([[0], [3]], np.int32)
    check(getattr(pnp, name), a, b, expected=getattr(np, name)(a, b), dtype=bool)
    check(pnp.logical_not, a, expected=np.logical_not(a), dtype=bool)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", [I32, np.dtype(np.uint8), np.dtype(np.int8), np.dtype(bool)], ids=str)
def test_bitwise(name: str, dtype: Any) -> None:
    a = sample((3, 4), dtype, seed=5, low=-100, high=100)
    b = sample((4,), dtype, seed=6, low=-100, high=100)
    check(getattr(pnp, name), a, b, expected=getattr(np, name)(a, b), dtype=dtype)
    check(pnp.invert, a, expected=np.invert(a), dtype=dtype)
    check(pnp.bitwise_not, a, expected=np.bitwise_not(a), dtype=dtype)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=5), st.integers(0, 31))
def test_shifts(xs: list[int], shift: int) -> None:
    a = np.array(xs, np.int32)
    check(lambda v: pnp.left_shift(v, shift), a, expected=np.left_shift(a, shift), dtype=I32)
    check(lambda v: pnp.right_shift(v, shift), a, expected=np.right_shift(a, shift), dtype=I32)
    u = a.astype(np.uint32)
    check(lambda v: pnp.right_shift(v, np.uint32(shift)), u, expected=np.right_shift(u, np.uint32(shift)),
          dtype=np.uint32)


def test_bitwise_errors() -> None:
    with pytest.raises(TypeError, match="bitwise_and does not accept float32 inputs; it needs integer or boolean"):
        pnp.bitwise_and(np.ones(2, np.float32), 1)
    with pytest.raises(TypeError, match="left_shift does not accept float32 inputs; it needs integer arrays"):
        pnp.left_shift(np.ones(2, np.float32), np.array([1], np.int32))
    # Booleans shift as int32, as in JAX.
    check(pnp.left_shift, np.array([True, False]), np.array([True, True]), expected=[2, 0], dtype=np.int32)
    with pytest.raises(TypeError, match="right_shift does not accept float32 inputs"):
        pnp.right_shift(np.ones(2, np.float32), 1)


@pytest.mark.parametrize("dtypes_", [(F32, F32), (I32, F32), (BF16, np.dtype(np.int8)), (I32, I32)], ids=str)
def test_where(dtypes_: Any) -> None:
    cond = sample((2, 1, 3), bool, seed=7)
    x = sample((4, 3), dtypes_[0], seed=8)
    y = sample((1,), dtypes_[1], seed=9)
    want = dtypes.result_type(x, y)
    check(pnp.where, cond, x, y, expected=np.where(cond, x.astype(float), y.astype(float)), dtype=want,
          rtol=1e-2, atol=1e-2)
    check(lambda c, v: pnp.where(c, v, 0), cond, x, expected=np.where(cond, x.astype(float), 0),
          dtype=x.dtype, rtol=1e-2, atol=1e-2)
    check(lambda c: pnp.where(c != 0, 1.5, -1), cond.astype(np.int32), expected=np.where(cond, 1.5, -1.0),
          dtype=F32)


def test_where_single_argument_and_errors() -> None:
    x = np.array([[0, 2], [3, 0]], np.int32)
    check(lambda: pnp.where(x), expected=tuple(np.where(x)), dtype=I32)
    with pytest.raises(ValueError, match="where: either both x and y must be given, or neither"):
        pnp.where(x, 1)
    with pytest.raises(ConcretizationTypeError, match="nonzero without size="):
        plait_core.make_jaxpr(lambda v: pnp.where(v))(x)


def test_select() -> None:
    x = np.arange(-3, 4, dtype=np.float32)
    conds, choices = [x < -1, x > 1], [x * 10, x * 100]
    check(lambda v: pnp.select([v < -1, v > 1], [v * 10, v * 100], -1.0), x,
          expected=np.select(conds, choices, -1.0))
    with pytest.raises(ValueError, match="select: condlist has 2 entries but choicelist has 1"):
        pnp.select([x > 0, x > 1], [x])


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (None, 0.5), (-0.5, None), (np.array([-1.0, 0.0, -2.0]), 1)],
                         ids=str)
@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
def test_clip(bounds: Any, dtype: Any) -> None:
    x = sample((2, 3), dtype, seed=10)
    lo, hi = bounds
    want = dtypes.result_type(x, *(b for b in bounds if b is not None))
    expected = np.clip(x.astype(float), lo if lo is not None else -np.inf, hi if hi is not None else np.inf)
    check(lambda v: pnp.clip(v, lo, hi), x, expected=expected, dtype=want)
    check(lambda v: pnp.clip(v, min=lo, max=hi), x, expected=expected, dtype=want)


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_allclose(equal_nan: bool) -> None:
    a = np.array([1.0, 1e10, np.inf, -np.inf, np.nan, 1e-9, 0.0], np.float32)
    b = np.array([1.0 + 1e-6, 1.0001e10, np.inf, np.inf, np.nan, 2e-9, 1e-7], np.float32)
    check(lambda x, y: pnp.isclose(x, y, equal_nan=equal_nan), a, b,
          expected=np.isclose(a, b, equal_nan=equal_nan), dtype=bool)
    check(lambda x, y: pnp.isclose(x, y, rtol=0.1, atol=0.0), a, b, expected=np.isclose(a, b, rtol=0.1, atol=0.0))
    check(lambda x: pnp.allclose(x, x + 1e-7), a[:2], expected=np.allclose(a[:2], a[:2] + 1e-7), dtype=bool)
    check(lambda x, y: pnp.allclose(x, y, equal_nan=equal_nan), a, a, expected=np.allclose(a, a, equal_nan=equal_nan))
    ints = np.array([1, 2, 3], np.int32)
    check(lambda x: pnp.isclose(x, 2), ints, expected=np.isclose(ints, 2))


def test_array_equal() -> None:
    a = np.array([1.0, np.nan], np.float32)
    check(lambda x: pnp.array_equal(x, x), a, expected=False)
    check(lambda x: pnp.array_equal(x, x, equal_nan=True), a, expected=True)
    check(lambda x: pnp.array_equal(x, x[:1]), a, expected=False)
