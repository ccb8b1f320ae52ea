"""lax.associative_scan against a sequential loop over the elements, for
commutative and non-commutative (matrix product) combinations, pytrees,
any axis, and reverse scans."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_core import lax
from plait_core import numpy as pnp


def sequential(fn: Any, xs: np.ndarray, reverse: bool = False) -> np.ndarray:
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    out, acc = [None] * len(xs), None
    for i in order:
        acc = xs[i] if acc is None else fn(acc, xs[i])
        out[i] = acc
    return np.stack(out)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("reverse", [False, True])
def test_matches_a_loop(n: int, reverse: bool) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_allclose(np.asarray(lax.associative_scan(pnp.add, x, reverse=reverse)),
                               sequential(np.add, x, reverse), rtol=1e-5, atol=1e-6)  # fmt: skip
    m = rng.standard_normal((n, 2, 2)).astype(np.float32)
    got = lax.associative_scan(pnp.matmul, m, reverse=reverse)
    np.testing.assert_allclose(np.asarray(got), sequential(np.matmul, m, reverse), rtol=1e-4, atol=1e-5)


def test_pytrees_axis_and_bool() -> None:
    y = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    s, mx = lax.associative_scan(lambda a, b: (a[0] + b[0], pnp.maximum(a[1], b[1])), (y, -y), axis=1)
    np.testing.assert_allclose(np.asarray(s), np.cumsum(y, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(mx), np.maximum.accumulate(-y, axis=1))
    np.testing.assert_array_equal(np.asarray(lax.associative_scan(pnp.logical_or, y > 0.5, axis=-1)),
                                  np.logical_or.accumulate(y > 0.5, axis=-1))  # fmt: skip


def test_errors() -> None:
    with pytest.raises(ValueError, match="same length along axis 0"):
        lax.associative_scan(lambda a, b: a, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        lax.associative_scan(pnp.add, np.ones((2, 2)), axis=2)
    with pytest.raises(TypeError, match="fn returned the structure"):
        lax.associative_scan(lambda a, b: (a, b), np.ones(3))
