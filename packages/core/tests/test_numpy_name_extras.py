"""The plait_core.numpy names added for JAX coverage (math_extras, nan_extras,
index_tricks, editing, polynomial_extras, misc_extras) against NumPy float64
and closed forms, with JAX 0.10.2's documented differences (immutable arrays,
``-1`` for all-NaN arg-reductions, sizes for data-dependent shapes)."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp

NAN = np.nan


def close(a: Any, b: Any, tol: float = 1e-5) -> None:
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=tol, atol=tol)


# (plait expression, NumPy expression): evaluated with p = plait_core.numpy, n = numpy.
CASES = [
    ("p.fabs(p.array([-2, 3]))", "n.fabs(n.array([-2, 3]))"),
    ("p.gcd(p.array([12, -18, 0, 7]), p.array([8, 12, 0, 0]))", "n.gcd(n.array([12, -18, 0, 7]), n.array([8, 12, 0, 0]))"),
    ("p.lcm(p.array([4, -6, 0]), p.array([6, 4, 5]))", "n.lcm(n.array([4, -6, 0]), n.array([6, 4, 5]))"),
    ("p.ldexp(p.array([1.5, -2.0]), p.array([3, -2]))", "n.ldexp(n.array([1.5, -2.0]), n.array([3, -2]))"),
    ("p.frexp(p.array([0.0, 8.0, -3.0, 0.3, 1e30]))", "n.frexp(n.array([0.0, 8.0, -3.0, 0.3, 1e30], n.float32))"),
    ("p.modf(p.array([-2.5, 3.25, 0.0]))", "n.modf(n.array([-2.5, 3.25, 0.0]))"),
    ("p.spacing(p.array([1.0, -1.0, 100.0]))", "n.spacing(n.array([1.0, -1.0, 100.0], n.float32))"),
    ("p.i0(p.array([0.0, 1.0, 14.9, 15.1, 20.0, -5.0]))", "n.i0(n.array([0.0, 1.0, 14.9, 15.1, 20.0, -5.0]))"),
    ("p.bitwise_count(p.array([-1, 7, 0, 255], p.int32))", "n.bitwise_count(n.array([-1, 7, 0, 255], n.int32))"),
    ("p.unwrap(p.array([0.0, 3.0, 6.5, 1.0, -4.0]))", "n.unwrap(n.array([0.0, 3.0, 6.5, 1.0, -4.0]))"),
    ("p.unwrap(p.array([[0.0, 3.0], [6.5, 1.0]]), axis=0, period=4.0)", "n.unwrap(n.array([[0.0, 3.0], [6.5, 1.0]]), axis=0, period=4.0)"),
    ("p.geomspace(1, 1000, 4)", "n.geomspace(1, 1000, 4)"),
    ("p.geomspace(-2.0, -32.0, 5, endpoint=False)", "n.geomspace(-2.0, -32.0, 5, endpoint=False)"),
    ("p.matvec(p.ones((2, 2, 3)), p.arange(3.0))", "n.matvec(n.ones((2, 2, 3)), n.arange(3.0))"),
    ("p.vecmat(p.arange(2.0), p.ones((2, 3)))", "n.vecmat(n.arange(2.0), n.ones((2, 3)))"),
    ("p.nanargmax(p.array([NAN, 1.0, 3.0]))", "n.nanargmax(n.array([NAN, 1.0, 3.0]))"),
    ("p.nanargmin(p.array([[5.0, NAN], [2.0, 1.0]]), axis=1)", "n.nanargmin(n.array([[5.0, NAN], [2.0, 1.0]]), axis=1)"),
    ("p.nancumsum(p.array([1.0, NAN, 2.0]))", "n.nancumsum(n.array([1.0, NAN, 2.0]))"),
    ("p.nancumprod(p.array([2.0, NAN, 2.0]))", "n.nancumprod(n.array([2.0, NAN, 2.0]))"),
    ("p.nanvar(p.array([1.0, NAN, 3.0, 7.0]))", "n.nanvar(n.array([1.0, NAN, 3.0, 7.0]))"),
    ("p.nanstd(p.array([[1.0, NAN, 3.0, 4.0]]), ddof=1, axis=1)", "n.nanstd(n.array([[1.0, NAN, 3.0, 4.0]]), ddof=1, axis=1)"),
    ("p.nanmedian(p.array([[1.0, NAN, 3.0, 8.0], [4.0, 2.0, NAN, NAN]]), axis=1)",
     "n.nanmedian(n.array([[1.0, NAN, 3.0, 8.0], [4.0, 2.0, NAN, NAN]]), axis=1)"),
    ("tuple(p.unique_all(p.array([3, 1, 3, 2])))", "tuple(n.unique_all(n.array([3, 1, 3, 2])))"),
    ("tuple(p.unique_inverse(p.array([[3, 1], [3, 2]])))", "tuple(n.unique_inverse(n.array([[3, 1], [3, 2]])))"),
    ("tuple(p.unique_counts(p.array([3, 1, 3, 2])))", "tuple(n.unique_counts(n.array([3, 1, 3, 2])))"),
    ("p.unique_values(p.array([3, 1, 3, 2]))", "n.unique(n.array([3, 1, 3, 2]))"),
    ("p.r_[1:4, [7, 8], 0]", "n.r_[1:4, [7, 8], 0]"),
    ("p.r_['0,2', [1, 2], [3, 4]]", "n.r_['0,2', [1, 2], [3, 4]]"),
    ("p.r_[0:1:5j]", "n.r_[0:1:5j]"),
    ("p.r_['-1', p.ones((2, 2)), p.zeros((2, 1))]", "n.r_['-1', n.ones((2, 2)), n.zeros((2, 1))]"),
    ("p.r_['r', [1, 2]]", "n.array([[1, 2]])"),
    ("p.r_['c', [1, 2]]", "n.array([[1], [2]])"),
    ("p.c_[p.array([1, 2]), p.array([3, 4])]", "n.c_[n.array([1, 2]), n.array([3, 4])]"),
    ("p.c_[p.ones((2, 2)), p.zeros((2, 1))]", "n.c_[n.ones((2, 2)), n.zeros((2, 1))]"),
    ("p.mgrid[0:2, 0:3]", "n.mgrid[0:2, 0:3]"),
    ("p.mgrid[0:1:3j]", "n.mgrid[0:1:3j]"),
    ("tuple(p.ogrid[0:2, 0:3])", "tuple(n.ogrid[0:2, 0:3])"),
    ("p.ix_(p.array([0, 1]), p.array([False, True, True]))", "n.ix_(n.array([0, 1]), n.array([False, True, True]))"),
    ("p.diag_indices(3, 3)", "n.diag_indices(3, 3)"),
    ("p.diag_indices_from(p.ones((2, 2)))", "n.diag_indices_from(n.ones((2, 2)))"),
    ("p.tril_indices(3, k=-1, m=4)", "n.tril_indices(3, k=-1, m=4)"),
    ("p.triu_indices(4, 1)", "n.triu_indices(4, 1)"),
    ("p.tril_indices_from(p.ones((3, 2)))", "n.tril_indices_from(n.ones((3, 2)))"),
    ("p.triu_indices_from(p.ones((3, 3)), 1)", "n.triu_indices_from(n.ones((3, 3)), 1)"),
    ("p.mask_indices(3, p.triu, 1)", "n.mask_indices(3, n.triu, 1)"),
    ("p.delete(p.arange(6), p.array([1, 3]))", "n.delete(n.arange(6), [1, 3])"),
    ("p.delete(p.arange(6).reshape(2, 3), 1, axis=1)", "n.delete(n.arange(6).reshape(2, 3), 1, axis=1)"),
    ("p.delete(p.arange(6), slice(1, 4))", "n.delete(n.arange(6), slice(1, 4))"),
    ("p.insert(p.arange(4), 1, 9)", "n.insert(n.arange(4), 1, 9)"),
    ("p.insert(p.arange(4), p.array([1, 3]), p.array([7, 8]))", "n.insert(n.arange(4), [1, 3], [7, 8])"),
    ("p.insert(p.arange(6).reshape(2, 3), 1, 5, axis=1)", "n.insert(n.arange(6).reshape(2, 3), 1, 5, axis=1)"),
    ("p.insert(p.arange(6).reshape(2, 3), 1, p.array([7, 8, 9]), axis=0)", "n.insert(n.arange(6).reshape(2, 3), 1, [7, 8, 9], axis=0)"),
    ("p.insert(p.arange(4), 4, p.array([7, 8]))", "n.insert(n.arange(4), 4, [7, 8])"),
    ("p.insert(p.arange(6).reshape(2, 3), -1, 0)", "n.insert(n.arange(6).reshape(2, 3), -1, 0)"),
    ("p.compress(p.array([True, False, True]), p.arange(3) * 2)", "n.compress([True, False, True], n.arange(3) * 2)"),
    ("p.compress(p.array([True, False]), p.arange(6).reshape(2, 3), axis=0)", "n.compress([True, False], n.arange(6).reshape(2, 3), axis=0)"),
    ("p.extract(p.arange(4) > 1, p.arange(4) * 3)", "n.extract(n.arange(4) > 1, n.arange(4) * 3)"),
    ("p.choose(p.array([0, 1, 0]), [p.array([1, 2, 3]), p.array([10, 20, 30])])", "n.choose([0, 1, 0], [[1, 2, 3], [10, 20, 30]])"),
    ("p.choose(p.array([0, 3]), [p.array([1, 2]), p.array([3, 4])], mode='clip')", "n.choose([0, 3], [[1, 2], [3, 4]], mode='clip')"),
    ("p.choose(p.array([0, 3]), [p.array([1, 2]), p.array([3, 4])], mode='wrap')", "n.choose([0, 3], [[1, 2], [3, 4]], mode='wrap')"),
    ("p.resize(p.arange(3), (2, 4))", "n.resize(n.arange(3), (2, 4))"),
    ("p.rollaxis(p.ones((2, 3, 4)), 2)", "n.rollaxis(n.ones((2, 3, 4)), 2)"),
    ("p.rollaxis(p.ones((2, 3, 4)), 0, 2)", "n.rollaxis(n.ones((2, 3, 4)), 0, 2)"),
    ("p.unstack(p.arange(6).reshape(2, 3), axis=1)", "n.unstack(n.arange(6).reshape(2, 3), axis=1)"),
    ("p.block([[p.ones((2, 2)), p.zeros((2, 1))], [p.zeros((1, 3))]])", "n.block([[n.ones((2, 2)), n.zeros((2, 1))], [n.zeros((1, 3))]])"),
    ("p.block([1, p.array([2, 3])])", "n.block([1, n.array([2, 3])])"),
    ("p.apply_over_axes(p.sum, p.arange(24.0).reshape(2, 3, 4), [0, 2])", "n.apply_over_axes(n.sum, n.arange(24.0).reshape(2, 3, 4), [0, 2])"),
    ("p.trim_zeros(p.array([0, 0, 1, 2, 0]))", "n.trim_zeros(n.array([0, 0, 1, 2, 0]))"),
    ("p.trim_zeros(p.array([0, 0, 1, 2, 0]), 'b')", "n.trim_zeros(n.array([0, 0, 1, 2, 0]), 'b')"),
    ("p.polyadd(p.array([1, 2]), p.array([1, 2, 3]))", "n.polyadd([1, 2], [1, 2, 3])"),
    ("p.polysub(p.array([1, 2]), p.array([3]))", "n.polysub([1, 2], [3])"),
    ("p.polymul(p.array([1.0, 2]), p.array([1.0, 2, 3]))", "n.polymul([1.0, 2], [1.0, 2, 3])"),
    # JAX keeps the remainder at the dividend's length (leading zeros); NumPy trims it.
    ("p.polydiv(p.array([1.0, 3, 2, 5]), p.array([2.0, 1]))", "(n.polydiv([1.0, 3, 2, 5], [2.0, 1])[0], n.pad(n.polydiv([1.0, 3, 2, 5], [2.0, 1])[1], (3, 0)))"),
    ("p.polyder(p.array([1.0, 2, 3, 4]), 2)", "n.polyder([1.0, 2, 3, 4], 2)"),
    ("p.polyint(p.array([3.0, 2, 1]))", "n.polyint([3.0, 2, 1])"),
    ("p.polyint(p.array([3.0, 2, 1]), m=2, k=p.array([1.0, 2]))", "n.polyint([3.0, 2, 1], m=2, k=[1.0, 2])"),
    ("p.poly(p.array([1.0, 2.0, -3.0]))", "n.poly([1.0, 2.0, -3.0])"),
    ("p.polyfit(p.arange(6.0), p.arange(6.0) ** 2 - 3 * p.arange(6.0), 2)", "n.polyfit(n.arange(6.0), n.arange(6.0) ** 2 - 3 * n.arange(6.0), 2)"),
    ("p.sort(p.roots(p.array([1.0, -6, 11, -6])))", "n.sort(n.roots([1.0, -6, 11, -6]))"),
    ("p.packbits(p.array([1, 0, 1, 1, 0, 0, 0, 0, 1], p.uint8))", "n.packbits(n.array([1, 0, 1, 1, 0, 0, 0, 0, 1], n.uint8))"),
    ("p.packbits(p.array([[1, 0, 1], [0, 1, 1]]), axis=1, bitorder='little')", "n.packbits(n.array([[1, 0, 1], [0, 1, 1]]), axis=1, bitorder='little')"),
    ("p.unpackbits(p.array([160, 7], p.uint8))", "n.unpackbits(n.array([160, 7], n.uint8))"),
    ("p.unpackbits(p.array([160], p.uint8), bitorder='little', count=4)", "n.unpackbits(n.array([160], n.uint8), bitorder='little', count=4)"),
    ("p.kaiser(6, 3.0)", "n.kaiser(6, 3.0)"),
    ("p.hanning(5)", "n.hanning(5)"),
    ("p.hamming(6)", "n.hamming(6)"),
    ("p.blackman(7)", "n.blackman(7)"),
    ("p.bartlett(5)", "n.bartlett(5)"),
    ("p.hamming(1)", "n.hamming(1)"),
    ("p.histogram2d(p.array([0.0, 1, 2, 3]), p.array([0.0, 0, 1, 1]), bins=2)", "n.histogram2d(n.array([0.0, 1, 2, 3]), n.array([0.0, 0, 1, 1]), bins=2)"),
    ("p.histogram2d(p.array([0.0, 1, 2, 3]), p.array([0.0, 0, 1, 1]), bins=2, weights=p.array([1.0, 2, 3, 4]), density=True)",
     "n.histogram2d(n.array([0.0, 1, 2, 3]), n.array([0.0, 0, 1, 1]), bins=2, weights=[1.0, 2, 3, 4], density=True)"),
    ("p.histogramdd(p.array([[0.0, 0], [1, 0], [2, 1], [3, 1]]), bins=[2, 3])", "n.histogramdd(n.array([[0.0, 0], [1, 0], [2, 1], [3, 1]]), bins=[2, 3])"),
    ("p.fromfunction(lambda i, j: i + 2 * j, (2, 3), dtype=int)", "n.fromfunction(lambda i, j: i + 2 * j, (2, 3), dtype=int)"),
    ("p.frombuffer(n.arange(3, dtype=n.float32).tobytes(), dtype=p.float32)", "n.arange(3, dtype=n.float32)"),
    ("p.fromstring('1 2 3', dtype=int, sep=' ')", "n.array([1, 2, 3])"),
    ("p.astype(p.arange(3), p.float32)", "n.arange(3).astype(n.float32)"),
    ("p.fill_diagonal(p.zeros((3, 4)), p.array([1.0, 2.0]), inplace=False)", "_filled()"),
    ("p.place(p.arange(5), p.arange(5) > 1, p.array([7, 8]), inplace=False)", "_placed()"),
    ("p.put(p.arange(5), p.array([0, 7]), p.array([9, 8]), mode='clip', inplace=False)", "_put()"),
    ("p.put_along_axis(p.zeros((2, 3)), p.array([[0], [2]]), 5.0, axis=1, inplace=False)", "_put_along()"),
]


def _filled() -> Any:
    a = np.zeros((3, 4))
    np.fill_diagonal(a, [1.0, 2.0])
    return a


def _placed() -> Any:
    a = np.arange(5)
    np.place(a, a > 1, [7, 8])
    return a


def _put() -> Any:
    a = np.arange(5)
    np.put(a, [0, 7], [9, 8], mode="clip")
    return a


def _put_along() -> Any:
    a = np.zeros((2, 3))
    np.put_along_axis(a, np.array([[0], [2]]), 5.0, axis=1)
    return a


@pytest.mark.parametrize(("expr", "ref"), CASES, ids=[c[0][:60] for c in CASES])
def test_against_numpy(expr: str, ref: str) -> None:
    env = {"p": pnp, "n": np, "NAN": NAN, "_filled": _filled, "_placed": _placed, "_put": _put,
           "_put_along": _put_along}
    close(eval(expr, env), eval(ref, env), 2e-5)


def test_jax_specific_values_and_dtypes() -> None:
    assert np.asarray(pnp.nanargmax(pnp.array([NAN, NAN]))) == -1  # NumPy raises; JAX gives -1
    assert pnp.bitwise_count(pnp.array([3], pnp.int32)).dtype == np.uint8
    assert pnp.frexp(pnp.array([8.0]))[1].dtype == np.int32
    assert pnp.fabs(pnp.array([1])).dtype == np.float32
    assert pnp.isscalar(1.0) and pnp.isscalar(pnp.array(1.0)) and pnp.isscalar("a") and not pnp.isscalar(pnp.ones(2))
    assert pnp.isdtype(pnp.float32, "real floating") and pnp.isdtype(pnp.int32, ("bool", "numeric"))
    assert not pnp.isdtype(pnp.uint8, "signed integer") and pnp.isdtype(pnp.int8, pnp.int8)
    assert bool(pnp.array_equiv(pnp.ones(3), pnp.ones((2, 3)))) and not bool(pnp.array_equiv(pnp.ones(3), pnp.zeros(3)))
    close(pnp.roots(pnp.array([0.0, 1.0, -1.0, 0.0])), np.array([0.0, 1.0]))
    assert pnp.iterable([1]) and not pnp.iterable(1)
    assert pnp.cdouble is pnp.complex128 and pnp.csingle is pnp.complex64 and pnp.object_ is np.object_
    assert pnp.array_str(pnp.arange(3.0)) == np.array_str(np.arange(3.0, dtype=np.float32))
    assert "array([0, 1, 2]" in pnp.array_repr(pnp.arange(3))


def test_errors() -> None:
    with pytest.raises(TypeError, match="gcd: arguments must be integers"):
        pnp.gcd(pnp.array([1.0]), pnp.array([2.0]))
    with pytest.raises(TypeError, match="ldexp: x2 must be an integer array"):
        pnp.ldexp(1.0, 2.0)
    with pytest.raises(ValueError, match="isdtype: unknown kind 'floaty'"):
        pnp.isdtype(pnp.float32, "floaty")
    with pytest.raises(TypeError, match="delete: obj must be an int, a slice or an array, got a list"):
        pnp.delete(pnp.arange(3), [1])
    with pytest.raises(ValueError, match="compress: size must be positive and at most the axis length 3"):
        pnp.compress(pnp.array([True, False, True]), pnp.arange(3), size=4)
    with pytest.raises(ValueError, match="choose: invalid entry"):
        pnp.choose(pnp.array([0, 2]), [pnp.array([1, 2]), pnp.array([3, 4])])
    with pytest.raises(ValueError, match="place: JAX arrays are immutable; pass inplace=False"):
        pnp.place(pnp.arange(3), pnp.arange(3) > 0, pnp.array([1]))
    with pytest.raises(NotImplementedError, match="fill_diagonal: JAX arrays are immutable"):
        pnp.fill_diagonal(pnp.zeros((2, 2)), 1.0)
    with pytest.raises(NotImplementedError, match="fromfile is not implemented because reading a file is not pure"):
        pnp.fromfile("x")
    with pytest.raises(NotImplementedError, match="fromiter is not implemented"):
        pnp.fromiter(iter([1]), float)
    with pytest.raises(ValueError, match="vectorize: not a valid gufunc signature"):
        pnp.vectorize(lambda x: x, signature="(n->)")(pnp.ones(2))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        pnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(pnp.ones(2), pnp.ones(3))
    with pytest.raises(ValueError, match="block: list depths are mismatched"):
        pnp.block([[1], 2])


def test_vectorize_and_ufunc() -> None:
    dot = pnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    close(dot(pnp.ones((3, 4)), pnp.arange(4.0)), np.full(3, 6.0))
    close(pnp.vectorize(lambda a, s: a * s, excluded={1})(pnp.arange(3.0), 2.0), np.array([0.0, 2.0, 4.0]))
    pair = pnp.vectorize(lambda a: (a, 2 * a))(pnp.arange(3.0))
    close(pair, (np.arange(3.0), 2 * np.arange(3.0)))
    close(pnp.vectorize(lambda x, y=1.0: x + y)(pnp.arange(2.0), y=pnp.array([[1.0], [2.0]])), np.array([[1, 2], [2, 3]]))
    add = pnp.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
    assert isinstance(add, pnp.ufunc) and add.nin == 2 and add.nout == 1 and add.identity == 0
    close(add(pnp.arange(3), 1), np.array([1, 2, 3]))
    close(add.reduce(pnp.arange(4)), 6)
    close(add.reduce(pnp.arange(6).reshape(2, 3), axis=1), np.array([3, 12]))
    close(add.outer(pnp.arange(2), pnp.arange(3)), np.add.outer(np.arange(2), np.arange(3)))
    mul = pnp.frompyfunc(lambda a, b: a * b, 2, 1)
    close(mul.accumulate(pnp.arange(1, 5)), np.cumprod(np.arange(1, 5)))
    close(add.reduceat(pnp.arange(8), [0, 4, 5]), np.add.reduceat(np.arange(8), [0, 4, 5]))
    close(add.at(pnp.arange(4), pnp.array([1, 3]), 10, inplace=False), np.array([0, 11, 2, 13]))


def test_host_io(tmp_path: Any) -> None:
    path = tmp_path / "a.npy"
    pnp.save(path, np.arange(3.0))
    close(pnp.load(path), np.arange(3.0))
    buf = io.BytesIO()
    pnp.savez(buf, a=np.ones(2))
    buf.seek(0)
    assert list(pnp.load(buf).keys()) == ["a"]
    close(pnp.from_dlpack(np.arange(4.0)), np.arange(4.0))
    with pnp.printoptions(precision=2):
        assert pnp.get_printoptions()["precision"] == 2
    assert math.isclose(float(pnp.i0(0.5)), float(np.i0(0.5)), rel_tol=1e-6)
