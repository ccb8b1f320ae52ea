"""Core's padded rules of concatenate, slice, reshape, dynamic slices, gather
and scatter on a NumPy environment of concrete logical sizes: the logical
part of each result equals the primitive applied to the logical slices,
whatever the padding holds (here: 99)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, SymbolicDim
from plait_core.padded import PaddedEnv, padded_rules
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)

N, M = SymbolicDim.var("n"), SymbolicDim.var("m")
F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


class NumpyEnv(PaddedEnv):
    """Logical sizes n = 4 (padded 6) and m = 2 (padded 5)."""

    def is_padded(self, d: Dim) -> bool:
        return isinstance(d, SymbolicDim) and not d.is_constant

    def padded_dim(self, d: Dim) -> int:
        return int(d.evaluate({"n": 6, "m": 5})) if isinstance(d, SymbolicDim) else int(d)

    def value(self, d: Dim, dtype: Any = None) -> Any:
        value = int(d.evaluate({"n": 4, "m": 2})) if isinstance(d, SymbolicDim) else int(d)
        return np.asarray(value, dtype or np.int32)


ENV = NumpyEnv()


def padded(logical: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``logical`` in front of a padding of 99 of ``shape``."""
    out = np.full(shape, 99, logical.dtype)
    out[tuple(slice(0, s) for s in logical.shape)] = logical
    return out


X = np.arange(8, dtype=np.float32).reshape(4, 2)  # the logical n x m value
XP = padded(X, (6, 5))
XA = ShapedArray((N, M), F32)


def test_concatenate_along_padded_axes() -> None:
    y = np.full((4, 3), -1.0, np.float32)
    out = np.asarray(padded_rules[st.concatenate_p](ENV, [XP, padded(y, (6, 3))], [XA, ShapedArray((N, 3), F32)],
                                                    dimension=1))  # fmt: skip
    np.testing.assert_array_equal(out[:4, :5], np.concatenate([X, y], 1))
    rows = np.asarray(padded_rules[st.concatenate_p](ENV, [XP, XP[:, :5]], [XA, XA], dimension=0))
    np.testing.assert_array_equal(rows[:8, :2], np.concatenate([X, X], 0))


@pytest.mark.parametrize(("start", "limit", "strides", "want"), [
    ((1, 0), (N, M), None, X[1:]),
    ((N - 1, 1), (N, M), None, X[-1:, 1:]),  # a padded start: a window at the logical start
    ((N - 3, 0), (N, M), (2, 1), X[1::2]),
    ((0, 0), (N, 1), (3, 1), X[::3, :1]),
])  # fmt: skip
def test_slice(start: Any, limit: Any, strides: Any, want: np.ndarray) -> None:
    out = np.asarray(padded_rules[st.slice_p](ENV, [XP], [XA], start_indices=start, limit_indices=limit,
                                              strides=strides))  # fmt: skip
    np.testing.assert_array_equal(out[: want.shape[0], : want.shape[1]], want)


def test_reshape_keeps_a_prefix_layout_and_gathers_any_other() -> None:
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.asarray(padded_rules[st.reshape_p](ENV, [padded(x, (6, 3))], [ShapedArray((N, 3), F32)],
                                                new_sizes=(3 * N,), dimensions=None))  # fmt: skip
    np.testing.assert_array_equal(out[:12], x.reshape(-1))
    merged = np.asarray(padded_rules[st.reshape_p](ENV, [XP], [XA], new_sizes=(N * M,), dimensions=None))
    np.testing.assert_array_equal(merged[:8], X.reshape(-1))
    transposed = np.asarray(padded_rules[st.reshape_p](ENV, [XP], [XA], new_sizes=(M * N,), dimensions=(1, 0)))
    np.testing.assert_array_equal(transposed[:8], X.T.reshape(-1))


@pytest.mark.parametrize("i", [-2, 0, 1, 3, 9])
def test_dynamic_slices_clamp_to_the_logical_size(i: int) -> None:
    idx = [np.int32(i), np.int32(0)]
    avals = [XA, ShapedArray((), I32), ShapedArray((), I32)]
    out = np.asarray(padded_rules[st.dynamic_slice_p](ENV, [XP, *idx], avals, slice_sizes=(2, M)))
    start = min(max(i, 0), 2)
    np.testing.assert_array_equal(out[:2, :2], X[start : start + 2])
    u = -np.ones((2, 1), np.float32)
    updated = np.asarray(padded_rules[st.dynamic_update_slice_p](
        ENV, [XP, padded(u, (2, 4)), *idx], [XA, ShapedArray((2, M - 1), F32), *avals[1:]]))  # fmt: skip
    want = X.copy()
    want[start : start + 2, :1] = u
    np.testing.assert_array_equal(updated[:4, :2], want)


@pytest.mark.parametrize("mode", [GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP])
def test_gather_rows_against_the_logical_size(mode: GatherScatterMode) -> None:
    idx = np.array([[0], [3], [4], [-1]], np.int32)  # 4 and -1: out of the logical rows
    dn = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    out = np.asarray(padded_rules[st.gather_p](
        ENV, [XP, idx], [XA, ShapedArray((4, 1), I32)], dimension_numbers=dn, slice_sizes=(1, M),
        indices_are_sorted=False, unique_indices=False, mode=mode, fill_value=-5.0))  # fmt: skip
    if mode is GatherScatterMode.CLIP:
        want = X[[0, 3, 3, 0]]
    else:
        want = np.array([X[0], X[3], [-5, -5], [-5, -5]], np.float32)
    np.testing.assert_array_equal(out[:, :2], want)


def test_scatter_writes_a_padded_window_entry_by_entry() -> None:
    """A window of m along an axis of n (shorter): its padding lands nowhere."""
    dn = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(0, 1))
    x = np.zeros((4, 3), np.float32)
    u = np.array([[10.0, 11.0]], np.float32)
    out = np.asarray(padded_rules[st.scatter_p](
        ENV, [padded(x, (6, 3)), np.array([[1, 2]], np.int32), padded(u, (1, 5))],
        [ShapedArray((N, 3), F32), ShapedArray((1, 2), I32), ShapedArray((1, M), F32)],
        dimension_numbers=dn, indices_are_sorted=True, unique_indices=True, mode=GatherScatterMode.FILL_OR_DROP))  # fmt: skip
    want = x.copy()
    want[1:3, 2] = u[0]
    np.testing.assert_array_equal(out[:4], want)


def test_scatter_add_drops_the_padding_of_its_indices() -> None:
    dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    ids = padded(np.array([[0], [3], [0], [1]], np.int32), (6, 1))  # padding 99: out of bounds anyway
    ids[4:] = 0  # in bounds: dropped only because it is padding
    vals = padded(np.array([1.0, 2.0, 3.0, 4.0], np.float32), (6,))
    out = np.asarray(padded_rules[st.scatter_add_p](
        ENV, [np.zeros(5, np.float32), ids, vals], [ShapedArray((5,), F32), ShapedArray((N, 1), I32),
                                                     ShapedArray((N,), F32)],
        dimension_numbers=dn, indices_are_sorted=False, unique_indices=False, mode=GatherScatterMode.FILL_OR_DROP))  # fmt: skip
    np.testing.assert_array_equal(out, [4.0, 4.0, 0.0, 2.0, 0.0])
