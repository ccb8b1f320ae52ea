"""numpy.searchsorted: every method gives NumPy's answer (NaN sorted last),
on both sides, with a sorter, on empty and scalar queries."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import numpy as pnp

METHODS = ["scan", "scan_unrolled", "sort", "compare_all"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("side", ["left", "right"])
def test_matches_numpy(method: str, side: str) -> None:
    a = np.array([0.0, 1.0, 1.0, 2.5, 3.0, np.nan], np.float32)
    v = np.array([[-1.0, 1.0, 2.0, np.nan], [3.0, 3.5, 1.0, 0.0]], np.float32)
    got = pnp.searchsorted(a, v, side=side, method=method)
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, side=side))
    ints = np.arange(0, 14, 2, dtype=np.int32)
    q = np.array([3, -1, 20, 6, 0], np.int32)
    np.testing.assert_array_equal(np.asarray(pnp.searchsorted(ints, q, side=side, method=method)),
                                  np.searchsorted(ints, q, side=side))  # fmt: skip
    shuffled = np.array([0.5, 4.0, 1.0, 5.0], np.float32)
    perm = np.argsort(shuffled).astype(np.int32)
    np.testing.assert_array_equal(
        np.asarray(pnp.searchsorted(shuffled, np.float32(2.0), side=side, sorter=perm, method=method)),
        np.searchsorted(shuffled, np.float32(2.0), side=side, sorter=perm),
    )
    assert int(pnp.searchsorted(np.zeros(0, np.float32), np.float32(1.0), method=method)) == 0


def test_unknown_method() -> None:
    with pytest.raises(ValueError, match="method must be 'scan', 'scan_unrolled', 'sort' or 'compare_all', got 'bisect'"):
        pnp.searchsorted(np.arange(3), 1, method="bisect")
