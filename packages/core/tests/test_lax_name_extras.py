"""plait_core.lax's compositions added for JAX coverage (lax/extras.py) against NumPy."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import lax


def close(a: object, b: object, tol: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=tol, atol=tol)


def test_builders() -> None:
    close(lax.full_like(pnp.ones(2), 3), [3.0, 3.0])
    assert lax.full_like(pnp.ones(2), 3, pnp.int32, (3,)).dtype == np.int32
    assert lax.empty((2, 3), pnp.float32).shape == (2, 3)
    close(lax.tile(pnp.arange(2), (2,)), [0, 1, 0, 1])
    parts = lax.split(pnp.arange(6), (2, 4))
    close(parts[0], [0, 1])
    close(parts[1], [2, 3, 4, 5])
    close(lax.stack([pnp.ones(2), pnp.zeros(2)], 1), [[1, 0], [1, 0]])
    close(lax.unstack(pnp.arange(4).reshape(2, 2), 1)[1], [1, 3])
    assert lax.broadcast_to_rank(pnp.ones(3), 3).shape == (1, 1, 3)
    close(lax.broadcast_like(1.0, pnp.ones((2, 2))), np.ones((2, 2)))
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    close(lax.shape_as_value((2, 3)), [2, 3])
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int64) == np.int32
    with pytest.raises(ValueError, match=r"lax\.split: sizes"):
        lax.split(pnp.arange(6), (2, 3))
    with pytest.raises(ValueError, match=r"lax\.tile: reps has 2 entries for an operand of rank 1"):
        lax.tile(pnp.arange(2), (2, 2))


def test_bits() -> None:
    x = np.array([7, -1, 0, 1 << 20], np.int32)
    close(lax.population_count(pnp.asarray(x)), [bin(int(v) & 0xFFFFFFFF).count("1") for v in x])
    close(lax.clz(pnp.asarray(x)), [32 - (int(v) & 0xFFFFFFFF).bit_length() for v in x])
    close(lax.clz(pnp.array([1, 0, 128], pnp.uint8)), [7, 8, 0])
    with pytest.raises(TypeError, match=r"lax\.clz: the operand must be an integer array"):
        lax.clz(pnp.ones(2))


def test_indexing_and_topk() -> None:
    src = np.arange(12).reshape(3, 4)
    close(lax.index_take(pnp.asarray(src), (pnp.array([0, 2]), pnp.array([1, 3])), (0, 1)), src[[0, 2], [1, 3]])
    v, i = lax.approx_max_k(pnp.array([3.0, 1.0, 4.0, 1.0, 5.0]), 2)
    close(v, [5.0, 4.0])
    close(i, [4, 2])
    v, i = lax.approx_min_k(pnp.array([[3.0, 1.0, 4.0], [1.0, 5.0, 0.0]]), 2)
    close(v, [[1.0, 3.0], [0.0, 1.0]])
    close(i, [[1, 0], [2, 0]])
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    close(lax.scatter_sub(pnp.ones(4), pnp.array([[1], [3]]), pnp.array([5.0, 6.0]), dn), [1, -4, 1, -5])
    close(lax.scatter_apply(pnp.arange(4.0), pnp.array([[1], [1], [3]]), pnp.exp, dn), [0, math.e, 2, math.exp(3)])


def test_ragged_dot() -> None:
    lhs, rhs = np.arange(8.0).reshape(4, 2), np.arange(12.0).reshape(3, 2, 2)
    sizes = [1, 2, 1]
    want = np.concatenate([lhs[0:1] @ rhs[0], lhs[1:3] @ rhs[1], lhs[3:4] @ rhs[2]])
    close(lax.ragged_dot(pnp.asarray(lhs), pnp.asarray(rhs), pnp.array(sizes)), want)
    short = lax.ragged_dot(pnp.asarray(lhs), pnp.asarray(rhs), pnp.array([1, 1, 1]))
    close(short[3], [0.0, 0.0])


def test_platform_dependent_composite_and_special() -> None:
    assert float(lax.platform_dependent(2.0, cpu=lambda x: x * 3, default=lambda x: x)) == 6.0
    assert float(lax.platform_dependent(2.0, tpu=lambda x: x * 3, default=lambda x: x)) == 2.0
    with pytest.raises(NotImplementedError, match="no branch for 'cpu' and no default"):
        lax.platform_dependent(2.0, tpu=lambda x: x)
    double = lax.composite(lambda x: x * 2, "my.double")
    assert double.__name__ == "my.double"
    close(double(pnp.ones(2)), [2.0, 2.0])
    close(lax.erfc(0.5), math.erfc(0.5))
    # P(2, x) = 1 - (1 + x) e^-x; I_x(1, 1) = x; polygamma(1, 1) = pi^2 / 6; zeta(2, 1) = pi^2 / 6.
    close(lax.igamma(2.0, 1.5), 1 - 2.5 * math.exp(-1.5), 1e-5)
    close(lax.igammac(2.0, 1.5), 2.5 * math.exp(-1.5), 1e-5)
    close(lax.betainc(1.0, 1.0, 0.3), 0.3, 1e-5)
    close(lax.polygamma(1.0, 1.0), math.pi ** 2 / 6, 1e-5)
    close(lax.zeta(2.0, 1.0), math.pi ** 2 / 6, 1e-5)
    close(lax.bessel_i0e(pnp.array([0.0])), [1.0])
    close(lax.bessel_i1e(pnp.array([0.0])), [0.0])


def test_mulhi_and_reduce_xor() -> None:
    a = np.array([2**30, -5, 7, -(2**31), 123456789], np.int32)
    b = np.array([8, 3, -9, -(2**31), -987654321], np.int32)
    close(lax.mulhi(pnp.asarray(a), pnp.asarray(b)), (a.astype(object) * b.astype(object)) >> 32)
    ua = np.array([2**31 + 5, 7, 2**32 - 1], np.uint32)
    ub = np.array([2**31 + 7, 3, 2**32 - 1], np.uint32)
    close(lax.mulhi(pnp.asarray(ua), pnp.asarray(ub)), (ua.astype(object) * ub.astype(object)) >> 32)
    close(lax.mulhi(pnp.array([100, -100], pnp.int8), pnp.array([100, 3], pnp.int8)), [39, -2])
    x = np.array([[-1, 2, 5], [3, -7, 1]], np.int32)
    close(lax.reduce_xor(pnp.asarray(x), (0,)), np.bitwise_xor.reduce(x, axis=0))
    close(lax.reduce_xor(pnp.asarray(x), (0, 1)), np.bitwise_xor.reduce(x.ravel()))
    assert bool(lax.reduce_xor(pnp.array([True, True, True]), (0,)))


def test_conv_permutations_and_patches() -> None:
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_general_permutations(("NWHC", "WHIO", "CNHW")) == ((0, 3, 1, 2), (3, 2, 0, 1), (1, 0, 3, 2))
    with pytest.raises(TypeError, match="invalid spec 'NHW'"):
        lax.conv_general_permutations(("NHW", "HWIO", "NHWC"))
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    p = np.asarray(lax.conv_general_dilated_patches(pnp.asarray(x), (2, 3), (1, 1), "VALID"))
    assert p.shape == (2, 18, 3, 3)
    for c in range(3):
        for i in range(2):
            for j in range(3):
                np.testing.assert_array_equal(p[:, c * 6 + i * 3 + j], x[:, c, i:i + 3, j:j + 3])
    q = np.asarray(lax.conv_general_dilated_patches(pnp.asarray(x.transpose(0, 2, 3, 1)), (2, 3), (1, 1), "VALID",
                                                    dimension_numbers=("NHWC", "HWIO", "NHWC")))
    np.testing.assert_array_equal(q, p.transpose(0, 2, 3, 1))


def test_reduce_precision_matches_narrow_float_rounding() -> None:
    rng = np.random.default_rng(0)
    x = (rng.normal(size=200) * np.exp(rng.normal(size=200) * 3)).astype(np.float32)
    bf = np.asarray(lax.reduce_precision(pnp.asarray(x), 8, 7))
    np.testing.assert_array_equal(bf, x.astype(ml_dtypes.bfloat16).astype(np.float32))
    normal = x[(np.abs(x) > 6.2e-5) & (np.abs(x) < 65000)]
    half = np.asarray(lax.reduce_precision(pnp.asarray(normal), 5, 10))
    np.testing.assert_array_equal(half, normal.astype(np.float16).astype(np.float32))
    edges = np.asarray(lax.reduce_precision(pnp.array([1e-30, -1e30, 7e4, -0.0, np.nan], pnp.float32), 5, 10))
    np.testing.assert_array_equal(edges[:4], [0.0, -np.inf, np.inf, -0.0])
    assert np.isnan(edges[4]) and np.signbit(edges[3])
    with pytest.raises(TypeError, match=r"lax\.reduce_precision: the operand must be a float array"):
        lax.reduce_precision(pnp.arange(3), 5, 10)


def test_conv_general_dilated_local() -> None:
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5) / 10
    w = np.arange(4 * 27 * 3 * 3, dtype=np.float32).reshape(4, 27, 3, 3) / 100
    got = np.asarray(lax.conv_general_dilated_local(pnp.asarray(x), pnp.asarray(w), (1, 1), "VALID", (3, 3)))
    want = np.zeros((2, 4, 3, 3))
    for i in range(3):
        for j in range(3):
            patch = x[:, :, i:i + 3, j:j + 3].reshape(2, 27).astype(np.float64)  # (c, ky, kx) row-major
            want[:, :, i, j] = patch @ w[:, :, i, j].T.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    nhwc = lax.conv_general_dilated_local(pnp.asarray(x.transpose(0, 2, 3, 1)), pnp.asarray(w.transpose(2, 3, 1, 0)),
                                          (1, 1), "VALID", (3, 3), dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(np.asarray(nhwc), want.transpose(0, 2, 3, 1), rtol=1e-5)
