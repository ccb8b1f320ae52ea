"""The cached jit call's memo of the last static signature and its inlined
donation (issue 17) give what the general path gives: values, dtypes,
traces, refusals and the donated Array's error."""

from __future__ import annotations

import numpy as np
import pytest

import plait_dispatch as pd
from plait_core import DeletedArrayError


def test_static_values_are_told_apart_by_value_and_class() -> None:
    x = pd.device_put(np.arange(4, dtype=np.float32))
    f = pd.jit(lambda a, n: a * n, static_argnums=1)
    seq = [2, 3, 2, 2, True, 1, 1.5, 1, True, 3]
    for n in seq * 2:
        out = f(x, n)
        np.testing.assert_array_equal(np.asarray(out), np.arange(4, dtype=np.float32) * n)
        assert out.dtype == np.float32
    assert f._cache_size() == 5  # 2, 3, True, 1 and 1.5: True and 1 are equal but of different classes


def test_unhashable_static_values_are_refused_every_time() -> None:
    x = pd.device_put(np.arange(4, dtype=np.float32))
    f = pd.jit(lambda a, n: a * 2.0, static_argnums=1)
    np.testing.assert_array_equal(np.asarray(f(x, 1)), np.arange(4) * 2.0)
    np.testing.assert_array_equal(np.asarray(f(x, 1)), np.arange(4) * 2.0)
    for _ in range(2):
        with pytest.raises(ValueError, match="unhashable"):
            f(x, np.ones(2))


def test_inlined_donation_marks_the_argument_donated() -> None:
    f = pd.jit(lambda a: a * 2.0, donate_argnums=0)
    x = pd.device_put(np.ones(4, np.float32))
    olds = []
    for _ in range(5):
        olds.append(x)
        x = f(x)
    np.testing.assert_array_equal(np.asarray(x), np.full(4, 32.0, np.float32))
    for old in olds:
        assert old.is_deleted()
        with pytest.raises(DeletedArrayError, match="donated"):
            np.asarray(old)


def test_a_donating_handler_serves_keyword_calls_too() -> None:
    f = pd.jit(lambda a: a + 1.0, donate_argnums=0)
    x = pd.device_put(np.zeros(3, np.float32))
    x = f(x)
    x = f(x)  # the inlined handler
    y = f(a=x)  # keyword: the tree path, the same handler called generally
    with pytest.raises(DeletedArrayError, match="donated"):
        np.asarray(x)
    y = f(y)
    np.testing.assert_array_equal(np.asarray(y), np.full(3, 4.0, np.float32))
