"""Joining many operands: ``stack``, ``concatenate`` and ``array`` of a long list
go through chunks of at most 32 (one XLA concatenate of thousands of operands
compiles for minutes); the results, dtypes and weak types are those of one join."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest

import plait_core
import plait_core.numpy as pnp
from plait_core.abstract import get_aval

shape_module = importlib.import_module("plait_core.numpy.shape")


@pytest.mark.parametrize("n", [33, 100, 32 * 32 + 5])
def test_stack_of_many_equals_numpy(n: int) -> None:
    xs = [np.full((2, 3), i, np.float32) for i in range(n)]
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(np.asarray(pnp.stack(xs, axis=axis)), np.stack(xs, axis=axis))
    np.testing.assert_array_equal(np.asarray(pnp.concatenate(xs, axis=1)), np.concatenate(xs, axis=1))
    np.testing.assert_array_equal(np.asarray(pnp.array(xs)), np.array(xs))


def test_many_operands_are_joined_in_chunks() -> None:
    xs = [np.full(3, i, np.float32) for i in range(100)]
    closed = plait_core.make_jaxpr(lambda *a: pnp.stack(a))(*xs)
    calls = [e for e in closed.jaxpr.eqns if e.primitive.name == "closed_call"]
    assert [len(e.invars) for e in calls] == [32, 32, 32, 4]
    assert all(len(e.invars) <= shape_module._CHUNK for e in closed.jaxpr.eqns)
    assert closed.out_avals[0].shape == (100, 3)


def test_promotion_and_weak_types_match_a_single_join() -> None:
    ints = [np.int32(i) for i in range(40)]
    out, few = pnp.stack([*ints, 1.5]), pnp.stack([*ints[:3], 1.5])
    assert (get_aval(out).dtype, get_aval(out).weak_type) == (get_aval(few).dtype, get_aval(few).weak_type)
    assert get_aval(out).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.array([*range(40), 1.5], np.float32))
    weak = plait_core.make_jaxpr(lambda *a: pnp.stack(a))(*[1.0] * 40)
    assert weak.out_avals[0].dtype == np.float32 and weak.out_avals[0].weak_type
    typed = pnp.stack([np.float32(1)] * 40, dtype=np.float16)
    assert get_aval(typed).dtype == np.float16



def test_asarray_of_a_bfloat16_numpy_array() -> None:
    """bfloat16 (NumPy kind 'V', from ml_dtypes) is an array dtype; structured data is not."""
    raw = np.array([0.5, -1.25, 3.0], ml_dtypes.bfloat16)
    x = pnp.asarray(raw)
    assert get_aval(x).dtype == raw.dtype
    np.testing.assert_array_equal(np.asarray(x).astype(np.float32), raw.astype(np.float32))
    with pytest.raises(TypeError, match=r"array: cannot make an array of \[\('a', '<i4'\)\] data"):
        pnp.asarray(np.zeros(2, dtype=[("a", "i4")]))
