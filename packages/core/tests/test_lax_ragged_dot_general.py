"""``lax.ragged_dot_general`` in its three modes against a NumPy loop over the
groups (and ``lax.ragged_dot``), and its refusals (JAX's ``TypeError``s)."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import lax

R = lax.RaggedDotDimensionNumbers
RNG = np.random.default_rng(0)
SIZES = np.array([2, 0, 3], np.int32)  # 5 of 6 rows / columns in groups


def _r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _bounds() -> list[tuple[int, int]]:
    ends = np.cumsum(SIZES)
    return [(int(e - s), int(e)) for s, e in zip(SIZES, ends)]


def test_mode1_ragged_rows_with_batch_and_group_dimension_inside() -> None:
    lhs, rhs = _r(2, 6, 3), _r(2, 4, 3, 3)  # lhs [b, m, k], rhs [b, n, g, k]
    dn = R((([2], [3]), ([0], [0])), [1], [2])
    got = np.asarray(lax.ragged_dot_general(lhs, rhs, SIZES, dn))
    want = np.zeros((2, 6, 4), np.float32)
    for i, (s, e) in enumerate(_bounds()):
        want[:, s:e] = np.einsum("bmk,bnk->bmn", lhs[:, s:e], rhs[:, :, i])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.all(got[:, 5] == 0)  # the row past the groups


def test_mode1_is_ragged_dot() -> None:
    lhs, rhs = _r(6, 3), _r(3, 3, 4)
    dn = R((([1], [1]), ([], [])), [0], [0])
    np.testing.assert_allclose(np.asarray(lax.ragged_dot_general(lhs, rhs, SIZES, dn)),
                               np.asarray(lax.ragged_dot(lhs, rhs, SIZES)), rtol=1e-6)


def test_mode2_ragged_contracting_dimension() -> None:
    lhs, rhs = _r(2, 4, 6), _r(2, 6, 5)
    dn = R((([2], [1]), ([0], [0])), [2], [])
    got = np.asarray(lax.ragged_dot_general(lhs, rhs, SIZES, dn))
    assert got.shape == (3, 2, 4, 5)
    for i, (s, e) in enumerate(_bounds()):
        np.testing.assert_allclose(got[i], np.einsum("bmk,bkn->bmn", lhs[:, :, s:e], rhs[:, s:e]), rtol=1e-5, atol=1e-6)


def test_mode3_ragged_batch_is_dot_general() -> None:
    lhs, rhs = _r(6, 4, 3), _r(6, 3, 2)
    dn = R((([2], [1]), ([0], [0])), [0], [])
    got = np.asarray(lax.ragged_dot_general(lhs, rhs, SIZES, dn, preferred_element_type=np.float32))
    np.testing.assert_allclose(got, np.einsum("bmk,bkn->bmn", lhs, rhs), rtol=1e-5, atol=1e-6)


def test_dimension_numbers_and_refusals() -> None:
    dn = R((([1], [1]), ([], [])), [0], [0])
    assert dn.dot_dimension_numbers == (((1,), (1,)), ((), ())) and dn == R((((1,), (1,)), ((), ())), (0,), (0,))
    assert hash(dn) == hash(R((([1], [1]), ([], [])), [0], [0]))
    lhs, rhs = _r(6, 3), _r(3, 3, 4)
    with pytest.raises(TypeError, match="exactly one group dimension"):
        lax.ragged_dot_general(lhs, rhs, SIZES, R((([1], [1]), ([], [])), [0], []))
    with pytest.raises(TypeError, match="exactly one ragged dimension"):
        lax.ragged_dot_general(lhs, rhs, SIZES, R((([1], [1]), ([], [])), [0, 1], [0]))
    with pytest.raises(TypeError, match="no group dimension"):
        lax.ragged_dot_general(_r(2, 6), _r(2, 6, 2), SIZES, R((([1], [1]), ([], [])), [1], [0]))
    with pytest.raises(NotImplementedError, match="group_sizes must have shape"):
        lax.ragged_dot_general(lhs, rhs, SIZES[None], dn)
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot_general(lhs, rhs, SIZES, dn, group_offset=np.array([0]))
