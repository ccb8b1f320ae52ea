"""plait_core.numpy reductions and scans against NumPy, eager and staged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_numpy_util import BF16, F16, F32, I32, check, sample, tol

import plait_core
import plait_core.numpy as pnp
from plait_core.dims import symbolic_dims

AXES = [None, 0, 1, -1, (0, 2), (2, 0, 1), ()]
SHAPE = (2, 3, 4)


def _np_sum_dtype(dt: np.dtype[Any]) -> np.dtype[Any]:
    if dt == np.bool_ or (dt.kind == "i" and dt.itemsize < 4):
        return I32
    if dt.kind == "u" and dt.itemsize < 4:
        return np.dtype(np.uint32)
    return dt


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(np.int8), np.dtype(np.uint8), np.dtype(bool), BF16], ids=str)
def test_sum_prod(axis: Any, keepdims: bool, dtype: Any) -> None:
    x = sample(SHAPE, dtype, low=-2, high=2)
    want = _np_sum_dtype(dtype)
    check(lambda v: pnp.sum(v, axis, keepdims=keepdims), x,
          expected=np.sum(x.astype(np.float64), axis, keepdims=keepdims), dtype=want, **tol(dtype))
    check(lambda v: pnp.prod(v, axis, keepdims=keepdims), x,
          expected=np.prod(x.astype(np.float64), axis, keepdims=keepdims), dtype=want, **tol(dtype))


def test_sum_options() -> None:
    x = sample(SHAPE, I32)
    check(lambda v: pnp.sum(v, 1, dtype=np.float32), x, expected=np.sum(x, 1), dtype=F32)
    check(lambda v: pnp.sum(v.astype(np.int8), 1, promote_integers=False), x, expected=np.sum(x, 1), dtype=np.int8)
    check(lambda v: pnp.sum(v, 0, initial=10), x, expected=np.sum(x, 0, initial=10), dtype=I32)
    mask = sample(SHAPE, bool, seed=3)
    check(lambda v, m: pnp.sum(v, (0, 1), where=m), x, mask, expected=np.sum(x, (0, 1), where=mask))
    check(lambda v, m: pnp.prod(v, -1, where=m), x, mask, expected=np.prod(x, -1, where=mask))
    check(lambda v: pnp.sum(v > 0, dtype=bool), x, expected=np.sum(x > 0, dtype=bool), dtype=bool)
    with pytest.raises(TypeError, match="sum: the out argument is not supported"):
        pnp.sum(x, out=np.zeros(3))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
@pytest.mark.parametrize("axis", AXES[:-1], ids=str)
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(bool), F16], ids=str)
def test_max_min(name: str, axis: Any, dtype: Any) -> None:
    x = sample(SHAPE, dtype, seed=1)
    check(lambda v: getattr(pnp, name)(v, axis), x, expected=getattr(np, name)(x, axis), dtype=dtype)
    check(lambda v: getattr(pnp, name)(v, axis, keepdims=True), x,
          expected=getattr(np, name)(x, axis, keepdims=True), dtype=dtype)


def test_max_min_initial_where_nan_and_errors() -> None:
    x = sample(SHAPE, F32, seed=2)
    mask = sample(SHAPE, bool, seed=4)
    check(lambda v: pnp.max(v, 0, initial=2.0), x, expected=np.max(x, 0, initial=2.0))
    check(lambda v, m: pnp.min(v, 1, initial=0.0, where=m), x, mask, expected=np.min(x, 1, initial=0.0, where=mask))
    check(lambda v: pnp.max(v, 0, initial=-1.0), np.zeros((0, 3), np.float32), expected=np.full(3, -1.0))
    y = x.copy()
    y[0, 1, 2] = np.nan
    check(lambda v: pnp.max(v, -1), y, expected=np.max(y, -1))
    check(lambda v: pnp.min(v), y, expected=np.nan)
    with pytest.raises(ValueError, match=r"max: zero-size array to a reduction with no identity \(axis 0 of shape"):
        pnp.max(np.zeros((0, 3)), 0)
    with pytest.raises(ValueError, match="min: a where mask needs an initial value"):
        pnp.min(x, where=mask)


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("axis", [None, 0, (1, 2)], ids=str)
@pytest.mark.parametrize("dtype", [np.dtype(bool), I32, F32], ids=str)
def test_any_all(name: str, axis: Any, dtype: Any) -> None:
    x = sample(SHAPE, dtype, seed=5, low=-1, high=1)
    if dtype == F32:
        x = np.round(x)
    check(lambda v: getattr(pnp, name)(v, axis), x, expected=getattr(np, name)(x, axis), dtype=bool)
    mask = sample(SHAPE, bool, seed=6)
    check(lambda v, m: getattr(pnp, name)(v, axis, where=m), x, mask,
          expected=getattr(np, name)(x, axis, where=mask), dtype=bool)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(bool), BF16, F16], ids=str)
def test_mean_var_std(axis: Any, dtype: Any) -> None:
    x = sample(SHAPE, dtype, seed=7)
    want = dtype if dtype in (F32, BF16, F16) else F32
    xf = x.astype(np.float64)
    check(lambda v: pnp.mean(v, axis), x, expected=np.mean(xf, axis), dtype=want, **tol(dtype))
    check(lambda v: pnp.var(v, axis), x, expected=np.var(xf, axis), dtype=want, **tol(dtype))
    check(lambda v: pnp.std(v, axis, ddof=1, keepdims=True), x, expected=np.std(xf, axis, ddof=1, keepdims=True),
          dtype=want, **tol(dtype))


def test_mean_var_where_dtype_correction() -> None:
    x = sample(SHAPE, F32, seed=8)
    mask = sample(SHAPE, bool, seed=9)
    mask[:, 0, :] = True
    check(lambda v, m: pnp.mean(v, 1, where=m), x, mask, expected=np.mean(x, 1, where=mask))
    check(lambda v, m: pnp.var(v, 1, where=m), x, mask, expected=np.var(x, 1, where=mask), rtol=1e-4)
    check(lambda v: pnp.var(v, 0, correction=1), x, expected=np.var(x, 0, ddof=1))
    check(lambda v: pnp.mean(v, dtype=np.float16), x, expected=np.mean(x), dtype=F16, **tol(F16))


def test_mean_divides_by_a_symbolic_size() -> None:
    (n,) = symbolic_dims("n")
    spec = plait_core.ShapeDtypeStruct((n, 3), np.float32)
    closed = plait_core.make_jaxpr(lambda v: pnp.sum(v, 0))(spec)
    assert closed.out_avals[0].shape == (3,)
    closed = plait_core.make_jaxpr(lambda v: pnp.mean(v, 1))(spec)
    assert closed.out_avals[0].shape == (n,)
    closed = plait_core.make_jaxpr(lambda v: pnp.mean(v, 0))(spec)
    names = [e.primitive.name for e in closed.eqns]
    assert "dim_as_value" in names and names[-1] == "div"
    assert [e.params["dim"] for e in closed.eqns if e.primitive.name == "dim_as_value"] == [n]


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(bool)], ids=str)
def test_argmax_argmin(name: str, axis: Any, dtype: Any) -> None:
    x = sample(SHAPE, dtype, seed=10, low=-2, high=2)
    check(lambda v: getattr(pnp, name)(v, axis), x, expected=getattr(np, name)(x, axis), dtype=I32)
    check(lambda v: getattr(pnp, name)(v, axis, keepdims=True), x,
          expected=getattr(np, name)(x, axis, keepdims=True), dtype=I32)


def test_argmax_nan_and_errors() -> None:
    x = np.array([1.0, np.nan, 5.0, np.nan], np.float32)
    check(pnp.argmax, x, expected=np.argmax(x))
    check(pnp.argmin, x, expected=np.argmin(x))
    with pytest.raises(ValueError, match="argmax: attempt to get argmax of an empty sequence"):
        pnp.argmax(np.zeros((0,)))
    with pytest.raises(ValueError, match=r"argmin: attempt to get argmin of an empty sequence \(axis 1"):
        pnp.argmin(np.zeros((2, 0)), axis=1)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(np.int8), np.dtype(bool)], ids=str)
def test_cumulative(name: str, axis: Any, dtype: Any) -> None:
    x = sample(SHAPE, dtype, seed=11, low=-2, high=2)
    want = I32 if dtype == np.dtype(bool) else dtype  # as JAX: integers keep their dtype
    check(lambda v: getattr(pnp, name)(v, axis), x, expected=getattr(np, name)(x.astype(np.float64), axis),
          dtype=want)
    check(lambda v: getattr(pnp, name)(v, axis, dtype=np.float32), x,
          expected=getattr(np, name)(x.astype(np.float64), axis), dtype=F32)


def test_cummax_cummin() -> None:
    x = sample((3, 5), F32, seed=12)
    check(lambda v: pnp.cummax(v, 1), x, expected=np.maximum.accumulate(x, 1))
    check(lambda v: pnp.cummin(v), x, expected=np.minimum.accumulate(x.ravel()))


def test_ptp_count_nonzero_average_median() -> None:
    x = sample(SHAPE, I32, seed=13)
    check(lambda v: pnp.ptp(v, 1), x, expected=np.ptp(x, 1), dtype=I32)
    check(lambda v: pnp.count_nonzero(v, (0, 2), keepdims=True), x,
          expected=np.count_nonzero(x, (0, 2), keepdims=True), dtype=I32)
    f = sample(SHAPE, F32, seed=14)
    w = np.arange(1, 5, dtype=np.float32)
    check(lambda v: pnp.average(v, -1, weights=w), f, expected=np.average(f, -1, weights=w))
    check(lambda v: pnp.average(v, 1), f, expected=np.average(f, 1))
    check(lambda v: pnp.average(v, None, weights=v * 0 + 2, returned=True), f,
          expected=np.average(f, None, weights=f * 0 + 2, returned=True))
    for axis in (None, 0, 1, 2):
        check(lambda v, axis=axis: pnp.median(v, axis), f, expected=np.median(f, axis))
    check(lambda v: pnp.median(v, 1, keepdims=True), x, expected=np.median(x, 1, keepdims=True), dtype=F32)
    g = f.copy()
    g[0, 0, 0] = np.nan
    check(lambda v: pnp.median(v, -1), g, expected=np.median(g, -1))
    with pytest.raises(ValueError, match="average: 1-D weights must have the length of axis 2"):
        pnp.average(f, 2, weights=np.ones(3))


def test_nan_reductions() -> None:
    x = sample((3, 4), F32, seed=15)
    x[0, 1] = np.nan
    x[2, :] = np.nan
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = (np.nansum(x, 1), np.nanprod(x, 0), np.nanmean(x, 1), np.nanmax(x, 1), np.nanmin(x, 1))
    check(lambda v: (pnp.nansum(v, 1), pnp.nanprod(v, 0), pnp.nanmean(v, 1), pnp.nanmax(v, 1), pnp.nanmin(v, 1)), x,
          expected=expected)
