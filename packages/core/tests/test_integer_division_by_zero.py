"""Integer division by zero as JAX 0.10.2 computes it (a wrong number otherwise:
found while running chex's suite): ``x // 0`` is XLA's truncated -1 corrected as a
negative quotient (-2; unsigned: the largest value), and ``x % 0``, ``fmod(x, 0)``
and ``divmod``'s remainder are 0.  Floats keep IEEE's inf and nan."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import numpy as pnp
from plait_core.staging import make_jaxpr

X = np.array([5, -5, 7, 0, -8, 9], np.int32)
Y = np.array([0, 0, 0, 0, 3, -4], np.int32)


def _floor_div_as_jax(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # XLA: x / 0 == -1 for signed integers; then floor's fix-up where the signs differ and
    # the truncated remainder (x itself, for a zero divisor) is non-zero.
    safe = np.where(y == 0, 1, y)
    trunc = np.where(y == 0, -1, np.trunc(x / safe).astype(x.dtype))
    rem = np.where(y == 0, x, np.fmod(x, safe))
    return np.where((np.sign(x) != np.sign(y)) & (rem != 0), trunc - 1, trunc)


def test_signed_division_by_zero() -> None:
    want_div = _floor_div_as_jax(X, Y)
    np.testing.assert_array_equal(np.asarray(pnp.floor_divide(X, Y)), want_div)
    np.testing.assert_array_equal(want_div[:4], [-2, -2, -2, -1])
    want_mod = np.where(Y == 0, 0, np.mod(X, np.where(Y == 0, 1, Y)))
    np.testing.assert_array_equal(np.asarray(pnp.remainder(X, Y)), want_mod)
    np.testing.assert_array_equal(np.asarray(pnp.fmod(X, Y)), np.where(Y == 0, 0, np.fmod(X, np.where(Y == 0, 1, Y))))
    q, r = pnp.divmod(X, Y)
    np.testing.assert_array_equal(np.asarray(q), want_div)
    np.testing.assert_array_equal(np.asarray(r), want_mod)


def test_unsigned_division_by_zero() -> None:
    x, y = np.array([5, 7], np.uint8), np.array([0, 2], np.uint8)
    np.testing.assert_array_equal(np.asarray(pnp.floor_divide(x, y)), [255, 3])
    np.testing.assert_array_equal(np.asarray(pnp.remainder(x, y)), [0, 1])
    np.testing.assert_array_equal(np.asarray(pnp.fmod(x, y)), [0, 1])


@pytest.mark.parametrize("fn", [pnp.floor_divide, pnp.remainder, pnp.fmod])
def test_nonzero_divisors_are_pythons(fn: object) -> None:
    x = np.arange(-7, 8, dtype=np.int32)
    y = np.array([3, -3, 2, -2, 5] * 3, np.int32)
    oracle = {pnp.floor_divide: np.floor_divide, pnp.remainder: np.remainder, pnp.fmod: np.fmod}[fn]  # type: ignore[index]
    np.testing.assert_array_equal(np.asarray(fn(x, y)), oracle(x, y))  # type: ignore[operator]


def test_floats_keep_ieee() -> None:
    assert np.isnan(float(pnp.remainder(np.float32(5.0), np.float32(0.0))))
    assert float(pnp.floor_divide(np.float32(5.0), np.float32(0.0))) == np.inf


def test_staged_the_same() -> None:
    jaxpr = make_jaxpr(pnp.remainder)(X, Y)
    assert "rem" in str(jaxpr) and "select_n" in str(jaxpr)
