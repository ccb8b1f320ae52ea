"""plait_core.numpy's signal, statistics, histogram, set, ordering, product,
polynomial and functional helpers against NumPy, eagerly and staged."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from test_numpy_util import F32, I32, check, sample

import plait_core
import plait_core.numpy as pnp

F16 = np.dtype(np.float16)


# ---------------------------------------------------------------------------
# diff, ediff1d


@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(bool)], ids=str)
@pytest.mark.parametrize("n,axis", [(1, -1), (2, 0), (3, 1), (0, 0), (9, 1)], ids=str)
def test_diff(dtype: Any, n: int, axis: int) -> None:
    x = sample((4, 5), dtype, seed=n)
    check(lambda v: pnp.diff(v, n, axis), x, expected=np.diff(x, n, axis), dtype=dtype)


def test_diff_prepend_append() -> None:
    x = sample((3, 4), F32)
    extra = sample((3, 2), F32, seed=1)
    check(lambda v, e: pnp.diff(v, 2, 1, prepend=1.5, append=e), x, extra,
          expected=np.diff(x, 2, 1, prepend=1.5, append=extra))
    i = sample((5,), I32)
    check(lambda v: pnp.diff(v, prepend=0), i, expected=np.diff(i, prepend=0), dtype=I32)


def test_ediff1d() -> None:
    x = sample((2, 3), I32)
    check(lambda v: pnp.ediff1d(v), x, expected=np.ediff1d(x))
    check(lambda v: pnp.ediff1d(v, to_end=np.array([7, 8]), to_begin=-1), x,
          expected=np.ediff1d(x, to_end=[7, 8], to_begin=-1), dtype=I32)


# ---------------------------------------------------------------------------
# convolve, correlate


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(6, 3), (5, 4), (2, 5), (3, 6), (4, 4), (1, 1)], ids=str)
def test_convolve_correlate(mode: str, n: int, m: int) -> None:
    a, v = sample((n,), F32, seed=n), sample((m,), F32, seed=m + 10)
    check(lambda x, y: pnp.convolve(x, y, mode), a, v, expected=np.convolve(a, v, mode), dtype=F32, rtol=1e-5)
    check(lambda x, y: pnp.correlate(x, y, mode), a, v, expected=np.correlate(a, v, mode), dtype=F32, rtol=1e-5)


def test_convolve_promotes_integers() -> None:
    a, v = sample((5,), I32), sample((3,), I32, seed=1)
    check(lambda x, y: pnp.convolve(x, y), a, v, expected=np.convolve(a, v), dtype=F32)
    check(lambda x, y: pnp.correlate(x, y, "same"), a, v, expected=np.correlate(a, v, "same"), dtype=F32)


# ---------------------------------------------------------------------------
# gradient, trapezoid, interp


@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
def test_gradient_uniform(dtype: Any) -> None:
    f = sample((4, 5), dtype, seed=3)
    check(lambda v: pnp.gradient(v), f, expected=tuple(np.gradient(f.astype(np.float32))), dtype=F32)
    check(lambda v: pnp.gradient(v, 0.5, axis=1), f, expected=np.gradient(f.astype(np.float32), 0.5, axis=1))
    check(lambda v: pnp.gradient(v, 2.0, 0.5), f, expected=tuple(np.gradient(f.astype(np.float32), 2.0, 0.5)))
    assert isinstance(pnp.gradient(f), list)


def test_gradient_coordinates() -> None:
    f = sample((4, 5), F32, seed=4)
    xs = np.array([0.0, 1.0, 3.0, 3.5, 6.0], np.float32)
    check(lambda v, c: pnp.gradient(v, 2.0, c), f, xs, expected=tuple(np.gradient(f, 2.0, xs)), rtol=1e-5,
          atol=1e-5)
    check(lambda v, c: pnp.gradient(v, c, axis=-1), f, xs, expected=np.gradient(f, xs, axis=-1), atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_trapezoid(axis: int) -> None:
    y = sample((4, 5), F32, seed=5)
    check(lambda v: pnp.trapezoid(v, axis=axis), y, expected=np.trapezoid(y, axis=axis), dtype=F32)
    check(lambda v: pnp.trapezoid(v, dx=0.25, axis=axis), y, expected=np.trapezoid(y, dx=0.25, axis=axis))
    xs = np.cumsum(sample((y.shape[axis],), F32, seed=6, low=0.1, high=1.0))
    check(lambda v, c: pnp.trapezoid(v, c, axis=axis), y, xs, expected=np.trapezoid(y, xs, axis=axis))
    full = sample((4, 5), F32, seed=7)
    check(lambda v, c: pnp.trapezoid(v, c, axis=axis), y, full, expected=np.trapezoid(y, full, axis=axis))
    ints = sample((6,), I32)
    check(lambda v: pnp.trapezoid(v), ints, expected=np.trapezoid(ints), dtype=F32)


def test_interp() -> None:
    xp = np.sort(sample((7,), F32, seed=8))
    fp = sample((7,), F32, seed=9)
    x = sample((3, 4), F32, seed=10, low=-4, high=4)
    check(lambda a, b, c: pnp.interp(a, b, c), x, xp, fp, expected=np.interp(x, xp, fp), dtype=F32)
    check(lambda a, b, c: pnp.interp(a, b, c, left=-7.0, right=9.0), x, xp, fp,
          expected=np.interp(x, xp, fp, left=-7.0, right=9.0))
    xq = sample((9,), F32, seed=11, low=-500, high=500)
    xpp = sample((5,), F32, seed=12, low=0, high=360)
    check(lambda a, b, c: pnp.interp(a, b, c, period=360.0), xq, xpp, fp[:5],
          expected=np.interp(xq, xpp, fp[:5], period=360), rtol=1e-4, atol=1e-4)
    # Repeated sample points and the integer inputs JAX promotes.
    check(lambda a: pnp.interp(a, np.array([0, 1, 1, 2]), np.array([0, 1, 5, 6])), np.array([0.5, 1.0, 1.5]),
          expected=np.interp([0.5, 1.0, 1.5], [0, 1, 1, 2], [0, 1, 5, 6]), dtype=F32)


def test_interp_extrapolate() -> None:
    xp, fp = np.array([0.0, 1.0, 3.0], np.float32), np.array([1.0, 3.0, 2.0], np.float32)
    x = np.array([-1.0, 0.5, 4.0], np.float32)
    check(lambda a: pnp.interp(a, xp, fp, left="extrapolate", right="extrapolate"), x,
          expected=np.array([-1.0, 2.0, 1.5], np.float32))


# ---------------------------------------------------------------------------
# quantiles


METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantile(method: str, axis: Any, keepdims: bool) -> None:
    a = sample((3, 4, 5), F32, seed=13)
    q = np.array([0.0, 0.3, 0.5, 1.0], np.float32)
    check(lambda v, w: pnp.quantile(v, w, axis=axis, method=method, keepdims=keepdims), a, q,
          expected=np.quantile(a, q, axis=axis, method=method, keepdims=keepdims), dtype=F32)
    check(lambda v: pnp.percentile(v, 40.0, axis=axis, method=method, keepdims=keepdims), a,
          expected=np.percentile(a, 40.0, axis=axis, method=method, keepdims=keepdims), rtol=1e-5)


def test_quantile_nearest_ties_to_even() -> None:
    x = np.arange(6.0, dtype=np.float32)
    q = np.array([0.1, 0.3, 0.5, 0.7, 0.9], np.float32)
    check(lambda v: pnp.quantile(v, q, method="nearest"), x, expected=np.quantile(x, q, method="nearest"))


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile(method: str) -> None:
    a = sample((3, 4, 5), F32, seed=14)
    a[0, 1, 2] = np.nan
    a[1, :, 3] = np.nan
    q = np.array([[0.2, 0.9]], np.float32)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning, match="All-NaN slice"):
        expected = np.nanquantile(a, q, axis=1, method=method)
    check(lambda v: pnp.nanquantile(v, q, axis=1, method=method), a, expected=expected)
    check(lambda v: pnp.quantile(v, q, axis=1, method=method), a, expected=np.quantile(a, q, axis=1, method=method))
    check(lambda v: pnp.nanpercentile(v, 75.0, axis=(0, 1), method=method), a,
          expected=np.nanpercentile(a, 75.0, axis=(0, 1), method=method))


def test_quantile_integer_input() -> None:
    x = sample((7,), I32, seed=15)
    check(lambda v: pnp.percentile(v, 30), x, expected=np.percentile(x, 30), dtype=F32)


# ---------------------------------------------------------------------------
# cov, corrcoef


def test_cov() -> None:
    x = sample((3, 6), F32, seed=16)
    y = sample((6,), F32, seed=17)
    fw = np.array([1, 2, 1, 3, 1, 1])
    aw = sample((6,), F32, seed=18, low=0.1, high=1.0)
    check(lambda v: pnp.cov(v), x, expected=np.cov(x), dtype=F32, atol=1e-5)
    check(lambda v, w: pnp.cov(v, w), x, y, expected=np.cov(x, y), atol=1e-5)
    check(lambda v: pnp.cov(v, rowvar=False, ddof=2), x.T, expected=np.cov(x.T, rowvar=False, ddof=2), atol=1e-5)
    check(lambda v, f, a: pnp.cov(v, fweights=f, aweights=a), x, fw, aw,
          expected=np.cov(x, fweights=fw, aweights=aw), atol=1e-5)
    check(lambda v: pnp.cov(v, bias=True), y, expected=np.cov(y, bias=True))
    check(lambda v: pnp.cov(v), sample((5,), I32), expected=np.cov(sample((5,), I32)), dtype=F32)


def test_corrcoef() -> None:
    x = sample((3, 6), F32, seed=19)
    y = sample((6,), F32, seed=20)
    check(lambda v, w: pnp.corrcoef(v, w), x, y, expected=np.corrcoef(x, y), atol=1e-5)
    check(lambda v: pnp.corrcoef(v, rowvar=False), x.T, expected=np.corrcoef(x.T, rowvar=False), atol=1e-5)
    check(lambda v: pnp.corrcoef(v), y, expected=np.corrcoef(y))


# ---------------------------------------------------------------------------
# bincount, digitize, histogram


def test_bincount() -> None:
    x = sample((20,), I32, seed=21, low=0, high=6)
    w = sample((20,), F32, seed=22)
    assert np.array_equal(pnp.bincount(x), np.bincount(x))
    assert np.array_equal(pnp.bincount(x, minlength=10), np.bincount(x, minlength=10))
    np.testing.assert_allclose(pnp.bincount(x, w), np.bincount(x, w), rtol=1e-6)
    check(lambda v: pnp.bincount(v, length=9), x, expected=np.bincount(x, minlength=9), dtype=I32)
    check(lambda v, u: pnp.bincount(v, u, length=4), x, w, expected=np.bincount(x, w)[:4], dtype=F32)
    # As JAX: negative values count into bin 0.
    check(lambda v: pnp.bincount(v, length=3), np.array([-2, 0, 2, 1]), expected=np.array([2, 1, 1]))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [np.array([-2.0, -1, 0, 0, 1, 3], np.float32),
                                  np.array([3.0, 1, 0, -1, -2], np.float32)], ids=["rising", "falling"])
def test_digitize(right: bool, bins: np.ndarray) -> None:
    x = np.concatenate([sample((10,), F32, seed=23), bins])  # the edges themselves too
    check(lambda v, b: pnp.digitize(v, b, right), x, bins, expected=np.digitize(x, bins, right), dtype=I32)


HIST_CASES: list[dict[str, Any]] = [
    {},
    {"bins": 5},
    {"bins": np.array([-1.0, 0.0, 0.5, 2.0], np.float32)},
    {"bins": 7, "range": (-1.0, 1.0)},
    {"bins": 4, "density": True},
    {"bins": np.array([-1.0, 0.0, 0.5, 2.0], np.float32), "density": True},
]


@pytest.mark.parametrize("kw", HIST_CASES, ids=str)
def test_histogram(kw: dict[str, Any]) -> None:
    a = sample((4, 25), F32, seed=24)
    counts, edges = np.histogram(a, **kw)
    check(lambda v: pnp.histogram(v, **kw), a, expected=(counts, edges), rtol=1e-5, atol=1e-6)
    check(lambda v: pnp.histogram_bin_edges(v, kw.get("bins", 10), kw.get("range")), a,
          expected=np.histogram_bin_edges(a, kw.get("bins", 10), kw.get("range")))


def test_histogram_weights_and_edges() -> None:
    a = sample((30,), F32, seed=25)
    w = sample((30,), F32, seed=26, low=0, high=2)
    counts, edges = np.histogram(a, bins=6, weights=w, density=True)
    check(lambda v, u: pnp.histogram(v, 6, weights=u, density=True), a, w, expected=(counts, edges))
    # The last bin includes its right edge; a constant input gets a unit range.
    ones = np.ones(3, np.float32)
    check(lambda v: pnp.histogram(v, 2), ones, expected=tuple(np.histogram(ones, 2)))
    ints = sample((12,), I32, seed=27)
    check(lambda v: pnp.histogram(v, 3), ints, expected=tuple(np.histogram(ints, 3)), dtype=F32)


# ---------------------------------------------------------------------------
# set operations


SETOPS = [("union1d", np.union1d), ("intersect1d", np.intersect1d), ("setdiff1d", np.setdiff1d),
          ("setxor1d", np.setxor1d)]


@pytest.mark.parametrize("name,oracle", SETOPS, ids=[s[0] for s in SETOPS])
@pytest.mark.parametrize("dtype", [I32, F32], ids=str)
def test_setops_eager(name: str, oracle: Any, dtype: Any) -> None:
    a = sample((3, 4), dtype, seed=28, low=0, high=8).round()
    b = sample((7,), dtype, seed=29, low=3, high=11).round()
    out = getattr(pnp, name)(a, b)
    np.testing.assert_array_equal(out, oracle(a, b))
    assert np.asarray(out).dtype == dtype


@pytest.mark.parametrize("name,oracle", SETOPS, ids=[s[0] for s in SETOPS])
def test_setops_sized(name: str, oracle: Any) -> None:
    a = sample((3, 4), I32, seed=30, low=0, high=8)
    b = sample((7,), I32, seed=31, low=3, high=11)
    want = oracle(a, b)
    fn = getattr(pnp, name)
    size = len(want) + 3
    default_fill = 0 if name == "setdiff1d" or len(want) == 0 else want.min()
    check(lambda x, y: fn(x, y, size=size), a, b,
          expected=np.concatenate([want, np.full(3, default_fill, want.dtype)]), dtype=I32)
    check(lambda x, y: fn(x, y, size=size, fill_value=-1), a, b,
          expected=np.concatenate([want, np.full(3, -1, want.dtype)]))
    check(lambda x, y: fn(x, y, size=max(len(want) - 1, 0)), a, b, expected=want[:max(len(want) - 1, 0)])


def test_intersect1d_indices() -> None:
    a = sample((10,), I32, seed=32, low=0, high=6)
    b = sample((8,), I32, seed=33, low=2, high=9)
    values, i1, i2 = np.intersect1d(a, b, return_indices=True)
    out = pnp.intersect1d(a, b, return_indices=True)
    for got, want in zip(out, (values, i1, i2)):
        np.testing.assert_array_equal(got, want)
    pad = 2
    expected = (np.concatenate([values, np.full(pad, values.min())]), np.concatenate([i1, np.full(pad, len(a))]),
                np.concatenate([i2, np.full(pad, len(b))]))
    check(lambda x, y: pnp.intersect1d(x, y, return_indices=True, size=len(values) + pad), a, b,
          expected=expected)


def test_setops_nan() -> None:
    a = np.array([1.0, np.nan, 2.0, np.nan], np.float32)
    b = np.array([np.nan, 2.0, 3.0], np.float32)
    for name, oracle in SETOPS[:3]:
        np.testing.assert_array_equal(getattr(pnp, name)(a, b), oracle(a, b))


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert: bool) -> None:
    e = sample((3, 4), I32, seed=34, low=0, high=8)
    t = sample((2, 3), I32, seed=35, low=3, high=10)
    check(lambda x, y: pnp.isin(x, y, invert=invert), e, t, expected=np.isin(e, t, invert=invert))
    f = np.array([1.0, np.nan, 2.5], np.float32)
    check(lambda x: pnp.isin(x, np.array([np.nan, 1.0, 2.0])), f, expected=np.isin(f, [np.nan, 1.0, 2.0]))


# ---------------------------------------------------------------------------
# lexsort, partition


@pytest.mark.parametrize("axis", [0, -1])
def test_lexsort(axis: int) -> None:
    keys = [sample((4, 6), I32, seed=36, low=0, high=2), sample((4, 6), F32, seed=37).round(),
            sample((4, 6), I32, seed=38, low=0, high=2)]
    check(lambda *k: pnp.lexsort(k, axis=axis), *keys, expected=np.lexsort(keys, axis=axis), dtype=I32)
    stacked = np.stack([keys[0], keys[2]])
    check(lambda k: pnp.lexsort(k, axis=axis), stacked, expected=np.lexsort(stacked, axis=axis))


@pytest.mark.parametrize("kth", [0, 3, -1])
@pytest.mark.parametrize("axis", [0, 1])
def test_partition(kth: int, axis: int) -> None:
    x = sample((6, 5), F32, seed=39)
    out = check(lambda v: pnp.partition(v, kth, axis), x, expected=np.sort(x, axis))[0]
    want = np.partition(x, kth, axis)
    np.testing.assert_array_equal(np.take(out, [kth], axis), np.take(want, [kth], axis))
    idx = check(lambda v: pnp.argpartition(v, kth, axis), x, expected=np.argsort(x, axis, kind="stable"))[0]
    np.testing.assert_array_equal(np.take_along_axis(x, idx, axis), out)


# ---------------------------------------------------------------------------
# cross, kron, polyval, vander


@pytest.mark.parametrize("na,nb", [(3, 3), (2, 3), (3, 2), (2, 2)], ids=str)
def test_cross(na: int, nb: int) -> None:
    a, b = sample((4, na), F32, seed=40), sample((nb,), F32, seed=41)
    with warnings.catch_warnings():  # NumPy 2 deprecates 2-vectors in cross
        warnings.simplefilter("ignore", DeprecationWarning)
        want = np.cross(a, b)
    check(lambda x, y: pnp.cross(x, y), a, b, expected=want, dtype=F32, atol=1e-5)
    c = sample((3, 4, 2), F32, seed=42)
    check(lambda x: pnp.cross(x, x[::-1], axisa=0, axisb=0, axisc=1), c,
          expected=np.cross(c, c[::-1], axisa=0, axisb=0, axisc=1), atol=1e-5)
    i = sample((2, 3), I32, seed=43)
    check(lambda x: pnp.cross(x, x[::-1], axis=0), i.T.copy(), expected=np.cross(i.T, i.T[::-1], axis=0), dtype=I32)


@pytest.mark.parametrize("sa,sb", [((3,), (2,)), ((2, 3), (3,)), ((2,), (3, 2)), ((2, 2), (1, 3, 2))], ids=str)
def test_kron(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = sample(sa, I32, seed=44), sample(sb, F32, seed=45)
    check(lambda x, y: pnp.kron(x, y), a, b, expected=np.kron(a, b), dtype=F32)


def test_polyval_vander() -> None:
    p = sample((4,), F32, seed=46)
    x = sample((2, 3), F32, seed=47)
    check(lambda c, v: pnp.polyval(c, v), p, x, expected=np.polyval(p, x), dtype=F32)
    check(lambda c, v: pnp.polyval(c, v), sample((3,), I32), np.array(2), expected=np.polyval(sample((3,), I32), 2),
          dtype=I32)
    v = sample((4,), I32, seed=48)
    check(lambda u: pnp.vander(u), v, expected=np.vander(v), dtype=I32)
    f = sample((3,), F32, seed=49)
    check(lambda u: pnp.vander(u, 5, increasing=True), f, expected=np.vander(f, 5, increasing=True))
    check(lambda u: pnp.vander(u, 0), f, expected=np.vander(f, 0))


# ---------------------------------------------------------------------------
# piecewise, apply_along_axis


def test_piecewise() -> None:
    x = np.linspace(-2, 2, 9).astype(np.float32)
    funcs = [lambda v: -v, 7, lambda v: v * 10]
    check(lambda v: pnp.piecewise(v, [v < 0, v > 1], funcs), x,
          expected=np.piecewise(x, [x < 0, x > 1], funcs), dtype=F32)
    check(lambda v: pnp.piecewise(v, v < 0, [lambda u: -u]), x, expected=np.piecewise(x, x < 0, [lambda u: -u]))
    # A later true condition wins; results take x's dtype.
    i = np.arange(-3, 4, dtype=np.int32)
    check(lambda v: pnp.piecewise(v, [v < 2, v < 0], [1.7, lambda u: u * 2]), i,
          expected=np.piecewise(i, [i < 2, i < 0], [1.7, lambda u: u * 2]), dtype=I32)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis(axis: int) -> None:
    m = sample((2, 3, 4), F32, seed=50)
    check(lambda v: pnp.apply_along_axis(lambda r: pnp.sum(pnp.multiply(r, r)), axis, v), m,
          expected=np.apply_along_axis(lambda r: np.sum(r * r), axis, m))
    check(lambda v: pnp.apply_along_axis(lambda r, k: pnp.outer(r, r) * k, axis, v, 2.0), m,
          expected=np.apply_along_axis(lambda r, k: np.outer(r, r) * k, axis, m, 2.0))


# ---------------------------------------------------------------------------
# Traced data-dependent sizes, and errors


def test_data_dependent_sizes_need_static_size() -> None:
    x = np.array([1, 2, 2], np.int32)
    with pytest.raises(plait_core.ConcretizationTypeError, match="bincount without length="):
        plait_core.make_jaxpr(lambda v: pnp.bincount(v))(x)
    with pytest.raises(plait_core.ConcretizationTypeError, match="union1d without size="):
        plait_core.make_jaxpr(lambda v: pnp.union1d(v, v))(x)
    with pytest.raises(plait_core.ConcretizationTypeError, match="intersect1d without size="):
        plait_core.make_jaxpr(lambda v: pnp.intersect1d(v, v))(x)


def test_errors() -> None:
    f = np.ones((3, 4), np.float32)
    v = np.ones(3, np.float32)
    cases: list[tuple[Any, type[Exception], str]] = [
        (lambda: pnp.diff(f, -1), ValueError, "diff: the order n must be non-negative, got -1"),
        (lambda: pnp.diff(np.float32(1)), ValueError, "diff: a must be at least 1-D"),
        (lambda: pnp.diff(f, axis=2), ValueError, "diff: axis 2 is out of bounds"),
        (lambda: pnp.convolve(f, v), ValueError, r"convolve: a must be 1-D, got shape \(3, 4\)"),
        (lambda: pnp.correlate(v, v, "middle"), ValueError, "correlate: mode must be 'full', 'same' or 'valid'"),
        (lambda: pnp.convolve(v, np.ones(0)), ValueError, "convolve: v cannot be empty"),
        (lambda: pnp.gradient(np.ones(1)), ValueError, "gradient: axis 0 has length 1"),
        (lambda: pnp.gradient(f, edge_order=2), NotImplementedError, "gradient: edge_order=2 is not supported"),
        (lambda: pnp.gradient(f, 1.0, 2.0, 3.0), TypeError, "gradient: expected 0, 1 or 2 spacing arguments"),
        (lambda: pnp.gradient(f, np.ones(5), 1.0), ValueError, "gradient: the spacing for axis 0 must be a scalar"),
        (lambda: pnp.trapezoid(f, np.ones(2)), ValueError, "trapezoid: x has 2 sample points but y has 4"),
        (lambda: pnp.interp(v, f, f), ValueError, r"interp: xp must be 1-D, got shape \(3, 4\)"),
        (lambda: pnp.interp(v, v, np.ones(2)), ValueError, "interp: xp and fp must have the same length"),
        (lambda: pnp.interp(v, v, v, left=1.0, period=2.0), ValueError, "interp: left and right must be None"),
        (lambda: pnp.interp(v, v, v, left="clip"), ValueError, "interp: left must be a scalar, None or"),
        (lambda: pnp.quantile(f, 1.5), ValueError, r"quantile: q must be in the range \[0, 1\], got 1.5"),
        (lambda: pnp.percentile(f, -3), ValueError, r"percentile: q must be in the range \[0, 100\], got -3"),
        (lambda: pnp.quantile(f, 0.5, method="hazen"), ValueError, "quantile: method must be one of"),
        (lambda: pnp.quantile(f, 0.5, weights=f), NotImplementedError, "quantile: weights are not supported"),
        (lambda: pnp.quantile(np.ones((0, 2)), 0.5, axis=0), ValueError, "quantile: cannot take quantiles over an empty"),
        (lambda: pnp.cov(np.ones((2, 2, 2))), ValueError, "cov: m must be 1-D or 2-D"),
        (lambda: pnp.cov(f, fweights=np.ones(4, np.float32)), TypeError, "cov: fweights must be integers"),
        (lambda: pnp.cov(f, aweights=np.ones(3)), ValueError, "cov: aweights has 3 entries but there are 4"),
        (lambda: pnp.cov(f, aweights=-np.ones(4)), ValueError, "cov: aweights must be non-negative"),
        (lambda: pnp.bincount(v), TypeError, "bincount: x must have an integer dtype, got float32"),
        (lambda: pnp.bincount(np.ones((2, 2), np.int32)), ValueError, r"bincount: x must be 1-D"),
        (lambda: pnp.bincount(np.ones(2, np.int32), minlength=-1), ValueError, "bincount: minlength must be"),
        (lambda: pnp.bincount(np.ones(2, np.int32), np.ones(3)), ValueError, "bincount: weights must have the shape"),
        (lambda: pnp.digitize(v, f), ValueError, "digitize: bins must be 1-D"),
        (lambda: pnp.digitize(v, v, method="fast"), ValueError, "digitize: method must be one of"),
        (lambda: pnp.histogram(v, 0), ValueError, "histogram_bin_edges: bins must be a positive int, got 0"),
        (lambda: pnp.histogram(v, np.array([1.0, 0.0])), ValueError, "the bin edges must increase monotonically"),
        (lambda: pnp.histogram(v, 3, range=(2, 1)), ValueError, r"range must have low <= high"),
        (lambda: pnp.histogram(v, 3, range=(1,)), ValueError, r"range must be a pair \(low, high\)"),
        (lambda: pnp.histogram(v, 3, weights=f), ValueError, "histogram: weights must have the shape of a"),
        (lambda: pnp.isin(v, v, method="hash"), ValueError, "isin: method must be one of"),
        (lambda: pnp.union1d(v, v, fill_value=0), ValueError, "union1d: fill_value is only used with size="),
        (lambda: pnp.setdiff1d(v, v, size=-1), ValueError, "setdiff1d: size must be non-negative"),
        (lambda: pnp.lexsort([]), TypeError, "lexsort: needs a sequence of at least one key"),
        (lambda: pnp.lexsort([v, f]), ValueError, r"lexsort: all keys must have the same shape"),
        (lambda: pnp.partition(v, 3), ValueError, "partition: kth=3 is out of bounds for axis 0 of length 3"),
        (lambda: pnp.argpartition(v, 1.5), TypeError, "argpartition: kth must be an integer"),
        (lambda: pnp.cross(f, f), ValueError, "cross: the vectors along axisa must have 2 or 3 components"),
        (lambda: pnp.polyval(np.float32(1), v), ValueError, "polyval: p must be at least 1-D"),
        (lambda: pnp.vander(f), ValueError, r"vander: x must be 1-D, got shape \(3, 4\)"),
        (lambda: pnp.vander(v, -2), ValueError, "vander: N must be non-negative"),
        (lambda: pnp.piecewise(v, [v > 0], [1, 2, 3]), ValueError, "piecewise: with 1 conditions funclist must have"),
        (lambda: pnp.piecewise(v, [v], [1]), TypeError, r"piecewise: condlist\[0\] must be boolean"),
        (lambda: pnp.apply_along_axis(pnp.sum, 0, np.float32(1)), ValueError,
         "apply_along_axis: arr must be at least 1-D"),
        (lambda: pnp.apply_along_axis(pnp.sum, 1, np.ones((0, 2))), ValueError,
         "apply_along_axis: cannot apply along axis 1 when another axis has length 0"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
            pytest.fail(f"no error for {msg!r}")
