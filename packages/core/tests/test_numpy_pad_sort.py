"""plait_core.numpy pad, sort, argsort and searchsorted against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_numpy_util import F32, I32, check, sample

import plait_core
import plait_core.numpy as pnp
from plait_core.dims import symbolic_dims

MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean", "empty"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(MODES), st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_pad_modes_match_numpy(mode: str, shape: list[int], data: Any) -> None:
    x = sample(tuple(shape), F32, seed=len(shape))
    widths = [(data.draw(st.integers(0, 9)), data.draw(st.integers(0, 9))) for _ in shape]
    expected = np.pad(x, widths, mode=mode) if mode != "empty" else np.pad(x, widths)  # type: ignore[call-overload]
    check(lambda v: pnp.pad(v, widths, mode=mode), x, expected=expected, dtype=F32, rtol=1e-6)


@pytest.mark.parametrize("pad_width", [2, (1,), (1, 2), ((1, 2),), ((0, 1), (2, 0))], ids=str)
def test_pad_width_forms(pad_width: Any) -> None:
    x = sample((2, 3), I32)
    check(lambda v: pnp.pad(v, pad_width), x, expected=np.pad(x, pad_width), dtype=I32)
    check(lambda v: pnp.pad(v, pad_width, constant_values=7), x, expected=np.pad(x, pad_width, constant_values=7))
    check(lambda v: pnp.pad(v, pad_width, mode="mean"), x, expected=np.pad(x, pad_width, mode="mean"), dtype=I32)


def test_pad_constant_values_per_side() -> None:
    x = sample((2, 3), F32)
    cv = ((1.0, 2.0), (3.0, 4.5))
    check(lambda v: pnp.pad(v, ((1, 2), (2, 1)), constant_values=cv), x,
          expected=np.pad(x, ((1, 2), (2, 1)), constant_values=cv))
    i = sample((3,), I32)
    check(lambda v: pnp.pad(v, 1, constant_values=2.7), i, expected=np.pad(i, 1, constant_values=2.7), dtype=I32)


def test_pad_symbolic_constant() -> None:
    (n,) = symbolic_dims("n")
    closed = plait_core.make_jaxpr(lambda v: pnp.pad(v, (1, 2)))(plait_core.ShapeDtypeStruct((n,), np.float32))
    assert closed.out_avals[0].shape == (n + 3,)


def test_pad_errors() -> None:
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="pad: unsupported mode 'linear_ramp'"):
        pnp.pad(x, 1, mode="linear_ramp")
    with pytest.raises(ValueError, match="pad: pad_width must be non-negative"):
        pnp.pad(x, -1)
    with pytest.raises(ValueError, match=r"pad: pad_width \(1, 2, 3\) cannot be broadcast to \(2, 2\)"):
        pnp.pad(x, (1, 2, 3))
    with pytest.raises(TypeError, match="pad: pad_width must be integers, got float64"):
        pnp.pad(x, 1.5)
    with pytest.raises(ValueError, match="pad: can't extend the empty axis 0"):
        pnp.pad(np.ones((0, 2)), 1, mode="edge")
    with pytest.raises(ValueError, match=r"pad: unsupported keyword arguments for mode 'edge': \['constant_values'\]"):
        pnp.pad(x, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="pad: only reflect_type='even' is supported"):
        pnp.pad(x, 1, mode="reflect", reflect_type="odd")


@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(bool), np.dtype(np.uint8)], ids=str)
def test_sort_argsort(axis: Any, dtype: Any) -> None:
    x = sample((3, 5), dtype, seed=2, low=-3, high=3)
    check(lambda v: pnp.sort(v, axis), x, expected=np.sort(x, axis), dtype=dtype)
    check(lambda v: pnp.argsort(v, axis), x, expected=np.argsort(x, axis, kind="stable"), dtype=I32)
    check(lambda v: pnp.sort(v, axis, descending=True), x, expected=np.flip(np.sort(x, axis), axis))
    negated = ~x if dtype == np.dtype(bool) else -x.astype(np.float64)
    expected = np.argsort(negated, axis, kind="stable")
    check(lambda v: pnp.argsort(v, axis, descending=True), x, expected=expected, dtype=I32)


def test_sort_nan_last_and_errors() -> None:
    x = np.array([3.0, np.nan, -1.0, np.nan, 2.0], np.float32)
    check(pnp.sort, x, expected=np.sort(x))
    check(pnp.argsort, x, expected=np.argsort(x, kind="stable"))
    check(lambda v: pnp.sort(v, axis=None), np.float32(3), expected=[3.0])
    with pytest.raises(np.exceptions.AxisError, match="sort: axis -1 is out of bounds for an array of rank 0"):
        pnp.sort(np.float32(3))
    with pytest.raises(ValueError, match="sort: the order argument \\(structured arrays\\) is not supported"):
        pnp.sort(x, order="a")


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side: str) -> None:
    a = np.array([0.0, 1.0, 1.0, 2.5, 4.0], np.float32)
    v = np.array([[-1.0, 1.0], [2.5, 9.0]], np.float32)
    check(lambda x, y: pnp.searchsorted(x, y, side=side), a, v, expected=np.searchsorted(a, v, side=side), dtype=I32)  # type: ignore[call-overload]
    perm = np.array([4, 0, 3, 1, 2])
    shuffled = a[np.argsort(perm)]
    order = np.argsort(shuffled, kind="stable").astype(np.int32)
    check(lambda x, y: pnp.searchsorted(x, y, side=side, sorter=order), shuffled, v,
          expected=np.searchsorted(shuffled, v, side=side, sorter=order))  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="searchsorted: side must be 'left' or 'right', got 'middle'"):
        pnp.searchsorted(a, v, side="middle")
