"""Indexing into ragged axes inside vmap over piles, against NumPy on every
element's true entries: out-of-range indices clamp, fill or drop relative to
each element's own length, and no update's padding is ever written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pile_checks import check_pile, ragged_pile

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, vmap
from plait_core import lax
from plait_core.numpy.updates import IndexUpdateHelper

P = pile_axis
# Elements of length 1 and as long as the padded size; the last set is padded past its longest element.
LENGTH_SETS = [[5, 1, 3, 4], [3, 3, 3], [1, 6], [2, 4]]
LONG_SETS = [[5, 2, 3, 4], [3, 3, 3], [2, 6]]  # for windows of 2
DTYPES = [np.float32, np.int32]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def pile(lengths: list[int], tail: tuple[int, ...] = (2,), dtype: Any = np.float32, seed: int = 0) -> Pile:
    p, _ = ragged_pile(rng(seed), lengths, tail, dtype, lo=-9, hi=9)
    if lengths == [2, 4]:  # padded beyond every element
        return Pile.from_arrays(p.unpack(), pad_to=7)
    return p


def at(x: Any) -> Any:
    """``x.at`` for values that may be NumPy constants (``pnp.zeros`` without a backend)."""
    return IndexUpdateHelper(x)


def wrap(i: Any, n: int) -> Any:
    """Core's normalisation of negative indices (against the element's true length)."""
    i = np.asarray(i)
    return np.where(i < 0, i + n, i)


def fill_value(dtype: Any) -> Any:
    return np.nan if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


def positions(count: int, seed: int = 1) -> np.ndarray:
    """One index per element: in range, counted from the end, or out of range
    either way (for the shorter elements)."""
    return np.roll(np.array([1, -1, 7, -9, 0, 2, -2, 4], np.int32), seed)[:count]


# ---------------------------------------------------------------------------
# Reading: x[-1], x[i], take, dynamic slices


@pytest.mark.parametrize("lengths", LENGTH_SETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_last_entry(lengths: list[int], dtype: Any) -> None:
    p = pile(lengths, dtype=dtype)
    check_pile(lambda x: x[-1], lambda x: x[-1], [p], P)
    check_pile(lambda x: x[x.shape[0] - 1], lambda x: x[-1], [p], P)
    check_pile(lambda x: x[-1, 1], lambda x: x[-1, 1], [p], P)
    check_pile(lambda x: x[:, -1][-1], lambda x: x[-1, -1], [p], P)


@pytest.mark.parametrize("lengths", LENGTH_SETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_entry_at_a_traced_index(lengths: list[int], dtype: Any) -> None:
    p = pile(lengths, dtype=dtype)
    i = positions(len(lengths))

    def oracle(x: np.ndarray, i: Any) -> np.ndarray:  # dynamic_slice: wrapped, then clamped into range
        return x[np.clip(wrap(i, len(x)), 0, len(x) - 1)]

    check_pile(lambda x, i: x[i], oracle, [p, i], (P, 0))
    check_pile(lambda x, i: lax.dynamic_index_in_dim(x, i, 0, keepdims=False), oracle, [p, i], (P, 0))


@pytest.mark.parametrize("lengths", LENGTH_SETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_take_clamps_or_fills_relative_to_the_true_length(lengths: list[int], dtype: Any) -> None:
    p = pile(lengths, dtype=dtype)
    idx = rng(2).integers(-7, 8, (len(lengths), 6)).astype(np.int32)

    def fill(x: np.ndarray, i: np.ndarray, value: Any = None) -> np.ndarray:
        value = fill_value(dtype) if value is None else value
        j = wrap(i, len(x))
        inside = (j >= 0) & (j < len(x))
        return np.where(inside[:, None], x[np.clip(j, 0, len(x) - 1)], np.asarray(value, dtype))

    def clip(x: np.ndarray, i: np.ndarray) -> np.ndarray:
        return x[np.clip(wrap(i, len(x)), 0, len(x) - 1)]

    check_pile(lambda x, i: pnp.take(x, i, axis=0), fill, [p, idx], (P, 0))
    check_pile(lambda x, i: pnp.take(x, i, axis=0, mode="clip"), clip, [p, idx], (P, 0))
    check_pile(lambda x, i: x.at[i].get(mode="fill", fill_value=5), lambda x, i: fill(x, i, 5), [p, idx], (P, 0))
    # a static index array (non-negative: core wraps negative constants only against static sizes)
    static = np.array([0, 3, 1, 9], np.int32)
    check_pile(lambda x: x[static], lambda x: clip(x, static), [p], P)


@pytest.mark.parametrize("lengths", LENGTH_SETS)
def test_ragged_indices_into_a_ragged_axis(lengths: list[int]) -> None:
    p = pile(lengths, (), np.int32)
    check_pile(lambda t: t[t % t.shape[0]], lambda t: t[t % len(t)], [p], P, P)
    check_pile(lambda t: pnp.take(t, t, mode="clip"), lambda t: t[np.clip(wrap(t, len(t)), 0, len(t) - 1)], [p], P, P)
    q = pile(lengths, (3,), np.float32)
    check_pile(lambda x: pnp.take_along_axis(x, pnp.argsort(x[:, :1], axis=0), axis=0),
               lambda x: np.take_along_axis(x, np.argsort(x[:, :1], axis=0, kind="stable"), axis=0),
               [q], P, P)  # fmt: skip


@pytest.mark.parametrize("lengths", LONG_SETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_windows_smaller_than_the_ragged_axis(lengths: list[int], dtype: Any) -> None:
    p = pile(lengths, dtype=dtype)
    starts = positions(len(lengths), 3)

    def window(x: np.ndarray, s: Any, size: int = 2) -> np.ndarray:
        s = min(max(int(wrap(s, len(x))), 0), len(x) - size)
        return x[s : s + size]

    check_pile(lambda x, s: lax.dynamic_slice_in_dim(x, s, 2), window, [p, starts], (P, 0))
    check_pile(lambda x: lax.dynamic_slice_in_dim(x, 1, 2), lambda x: window(x, 1), [p], P)
    check_pile(lambda x, s: lax.dynamic_slice(x, (s, 1), (2, 1)), lambda x, s: window(x, s)[:, 1:], [p, starts], (P, 0))
    check_pile(lambda x: x[-2:], lambda x: x[-2:], [p], P)
    check_pile(lambda x: x[1], lambda x: x[1], [p], P)
    check_pile(lambda x: x[0:2], lambda x: x[0:2], [p], P)


def test_windows_spanning_the_ragged_axis() -> None:
    p = pile([5, 1, 3])
    check_pile(lambda x, s: lax.dynamic_slice(x, (s, 0), (x.shape[0], 1)), lambda x, s: x[:, :1],
               [p, positions(3)], (P, 0), P)  # fmt: skip
    check_pile(lambda x, s: lax.dynamic_update_slice(x, x[:, :1] * 2, (s, 1)),
               lambda x, s: np.stack([x[:, 0], x[:, 0] * 2], 1), [p, positions(3)], (P, 0), P)  # fmt: skip
    q = pile([5, 2, 3])
    check_pile(lambda x, s: lax.dynamic_slice(x, (s, 0), (x.shape[0] - 1, 2)),
               lambda x, s: x[min(max(int(wrap(s, len(x))), 0), 1):][: len(x) - 1], [q, positions(3)], (P, 0), P)  # fmt: skip


def test_a_static_table_indexed_by_ragged_ids_and_clamped_lookups() -> None:
    table = rng().uniform(-1, 1, (6, 3)).astype(np.float32)
    ids = pile([4, 1, 3], (), np.int32)  # -9..9: out of range of the table too
    check_pile(lambda t: pnp.take(table, t, axis=0, mode="clip"), lambda t: table[np.clip(wrap(t, 6), 0, 5)], [ids], P, P)


def test_wrap_and_promise_in_bounds_modes() -> None:
    p = pile([5, 1, 3, 4])
    i = np.array([3, -1, 0, 9], np.int32)
    check_pile(lambda x, i: pnp.take(x, i, axis=0, mode="wrap"), lambda x, i: x[i % len(x)], [p, i], (P, 0))
    inside = np.array([3, -1, 0, 2], np.int32)

    def bumped(x: np.ndarray, i: Any) -> np.ndarray:
        out = x.copy()
        out[i] += 1
        return out

    check_pile(lambda x, i: x.at[i].add(1.0, mode="promise_in_bounds"), bumped, [p, inside], (P, 0), P)
    check_pile(lambda x, i: x.at[i].get(mode="promise_in_bounds"), lambda x, i: x[i], [p, inside], (P, 0))


def test_two_ragged_axes_and_an_inner_vmap() -> None:
    p = pile([5, 1, 3, 4])
    i = np.array([1, 0, -2, 7], np.int32)  # in range, in range, wrapped, out of range

    def row(x: np.ndarray, i: Any) -> np.ndarray:
        return x[min(max(int(wrap(i, len(x))), 0), len(x) - 1)]

    def zeroed(x: np.ndarray, i: Any) -> np.ndarray:  # scores[i, -1] = 0, dropped when i is out of range
        scores = x @ x.T
        if -len(x) <= i < len(x):
            scores[i, -1] = 0
        return scores.sum(1)

    check_pile(lambda x, i: (x @ x.T)[i, -1], lambda x, i: row(x @ x.T, i)[-1], [p, i], (P, 0))
    check_pile(lambda x, i: (x @ x.T).at[i, x.shape[0] - 1].set(0.0).sum(1), zeroed, [p, i], (P, 0), P)
    # an inner vmap over a static axis makes gathers with batching dimensions
    check_pile(lambda x, i: vmap(lambda col: col[i], in_axes=0)(x.T), row, [p, i], (P, 0))
    check_pile(lambda x, i: vmap(lambda col, j: col[j], in_axes=(1, 0))(x, pnp.stack([i, i - 1])),
               lambda x, i: np.array([row(x, i)[0], row(x, i - 1)[1]]), [p, i], (P, 0))  # fmt: skip


# ---------------------------------------------------------------------------
# Writing: dynamic_update_slice, x.at[...], segment sums


@pytest.mark.parametrize("lengths", LONG_SETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dynamic_update_slice_clamps_to_the_true_length(lengths: list[int], dtype: Any) -> None:
    p = pile(lengths, dtype=dtype)
    starts = positions(len(lengths), 4)
    upd = np.arange(4, dtype=dtype).reshape(2, 2) + 100

    def oracle(x: np.ndarray, s: Any) -> np.ndarray:
        out = x.copy()
        s = min(max(int(wrap(s, len(x))), 0), len(x) - 2)
        out[s : s + 2] = upd
        return out

    check_pile(lambda x, s: lax.dynamic_update_slice_in_dim(x, upd, s, 0), oracle, [p, starts], (P, 0), P)
    one = upd[:1, :1]

    def oracle_one(x: np.ndarray, s: Any) -> np.ndarray:
        out = x.copy()
        out[min(max(int(wrap(s, len(x))), 0), len(x) - 1), 1] = one[0, 0]
        return out

    check_pile(lambda x, s: lax.dynamic_update_slice(x, one, (s, 1)), oracle_one, [p, starts], (P, 0), P)


@pytest.mark.parametrize("lengths", LENGTH_SETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_ragged_updates_never_write_their_padding(lengths: list[int], dtype: Any) -> None:
    p = pile(lengths, dtype=dtype)

    def shifted(x: np.ndarray) -> np.ndarray:
        out = np.zeros_like(x)
        out[1:] = x[:-1]
        return out

    check_pile(lambda x: pnp.zeros_like(x).at[1:].set(x[:-1]), shifted, [p], P, P)
    check_pile(lambda x: lax.dynamic_update_slice_in_dim(pnp.zeros_like(x), x[:-1], 1, 0), shifted, [p], P, P)
    check_pile(lambda x: x.at[:-1].add(x[1:]), lambda x: np.concatenate([x[:-1] + x[1:], x[-1:]]), [p], P, P)
    check_pile(lambda x: x.at[:-1].set(x[1:]), lambda x: np.concatenate([x[1:], x[-1:]]), [p], P, P)
    check_pile(lambda x: x.at[:-1].max(x[1:]), lambda x: np.concatenate([np.maximum(x[:-1], x[1:]), x[-1:]]),
               [p], P, P)  # fmt: skip
    check_pile(lambda x: x.at[:, 0].set(x[:, 1]), lambda x: np.stack([x[:, 1], x[:, 1]], 1), [p], P, P)


@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_ragged_windows_that_do_not_fit_are_dropped_or_clamped_whole(mode: str) -> None:
    p = pile([5, 2, 3, 4])
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))

    def oracle(x: np.ndarray, s: Any) -> np.ndarray:  # the window x[:-1] written at s: it fits at 0 and 1
        out, n = x.copy(), len(x)
        s = min(max(int(s), 0), 1) if mode == "clip" else int(s)  # (lax.scatter does not wrap negative starts)
        if 0 <= s <= 1:
            out[s : s + n - 1] = -x[:-1]
        return out

    for s in (-1, 0, 1, 2):
        starts = np.full(4, s, np.int32)
        check_pile(lambda x, s: lax.scatter(x, s.reshape(1, 1), -x[:-1][None], dn, mode=mode), oracle,
                   [p, starts], (P, 0), P)  # fmt: skip


def _scatter_oracle(kind: str, mode: str) -> Callable[..., np.ndarray]:
    """``x.at[idx].<kind>(v)`` for one element: negative indices wrapped by its
    true length, out-of-range ones dropped or clamped."""
    ufunc = {"set": None, "add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[kind]

    def oracle(x: np.ndarray, idx: np.ndarray, v: np.ndarray) -> np.ndarray:
        out, n = x.copy(), len(x)
        j = wrap(idx, n)
        keep = (j >= 0) & (j < n) if mode == "drop" else np.ones(len(j), bool)
        j = np.clip(j, 0, n - 1)
        for k in np.flatnonzero(keep):
            out[j[k]] = v[k] if ufunc is None else ufunc(out[j[k]], v[k])
        return out

    return oracle


@pytest.mark.parametrize("lengths", LENGTH_SETS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_scatter_into_a_ragged_axis(lengths: list[int], dtype: Any, kind: str, mode: str) -> None:
    p = pile(lengths, dtype=dtype)
    count = len(lengths)
    if kind == "set":  # distinct positions after wrapping and clamping: the winner among repeats is unspecified
        drop = [[0, -1, n, -n - 1] if n > 1 else [0, 1, -2, 5] for n in lengths]
        idx = np.array(drop if mode == "drop" else [[-1], [0], [5], [3]][:count], np.int32)
    else:
        idx = rng(5).integers(-7, 8, (count, 5)).astype(np.int32)
    v = rng(6).integers(-3, 4, (count, idx.shape[1], 2)).astype(dtype)
    method = {"mul": "multiply"}.get(kind, kind)
    oracle = _scatter_oracle(kind, mode)

    def fun(x: Any, i: Any, v: Any) -> Any:
        return getattr(x.at[i], method)(v, mode=mode)

    check_pile(fun, oracle, [p, idx, v], (P, 0, 0), P)


@pytest.mark.parametrize("lengths", LENGTH_SETS)
def test_scatter_at_traced_positions(lengths: list[int]) -> None:
    p = pile(lengths)
    i = positions(len(lengths), 7)
    oracle = _scatter_oracle("add", "drop")
    check_pile(lambda x, i: x.at[i].add(10.0), lambda x, i: oracle(x, np.array([i]), np.full((1, 2), 10, np.float32)),
               [p, i], (P, 0), P)  # fmt: skip
    last = _scatter_oracle("set", "drop")
    check_pile(lambda x: x.at[x.shape[0] - 1].set(0.0), lambda x: last(x, np.array([-1]), np.zeros((1, 2), np.float32)),
               [p], P, P)  # fmt: skip


@pytest.mark.parametrize("lengths", LENGTH_SETS)
@pytest.mark.parametrize("kind", ["add", "max", "min", "mul"])
def test_segment_reductions_with_ragged_ids(lengths: list[int], kind: str) -> None:
    ids = pile(lengths, (), np.int32, seed=8)  # -9..9: some dropped, some wrapped
    k = 6
    init = {"add": 0.0, "mul": 1.0, "min": 50.0, "max": -50.0}[kind]
    method = {"mul": "multiply"}.get(kind, kind)

    def fun(t: Any) -> Any:
        return getattr(at(pnp.full(k, init, np.float32))[t], method)(t * 0.5 + 1)

    def oracle(t: np.ndarray) -> np.ndarray:
        out = np.full(k, init, np.float32)
        ufunc = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}[kind]
        for i, v in zip(np.where(t < 0, t + k, t), t * np.float32(0.5) + 1):
            if 0 <= i < k:
                out[i] = ufunc(out[i], v)
        return out

    check_pile(fun, oracle, [ids], P)


def test_segment_sum_of_a_second_pile_with_the_same_lengths() -> None:
    lengths = [4, 1, 3]
    ids = pile(lengths, (), np.int32)
    vals = pile(lengths, (2,), np.float32, seed=9)

    def oracle(t: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = np.zeros((5, 2), np.float32)
        for i, row in zip(np.where(t < 0, t + 5, t), v):
            if 0 <= i < 5:
                out[i] += row
        return out

    # staged, two piles' lengths are traced separately and cannot be compared
    check_pile(lambda t, v: at(pnp.zeros((5, 2), np.float32))[t].add(v), oracle, [ids, vals], P, staged=False)


def test_scatter_with_ragged_ids_into_a_ragged_axis() -> None:
    ids = pile([5, 1, 3, 4], (), np.int32)

    def oracle(t: np.ndarray) -> np.ndarray:
        out = np.zeros(len(t), np.int32)
        for i in wrap(t, len(t)):
            if 0 <= i < len(t):
                out[i] += 1
        return out

    check_pile(lambda t: pnp.zeros_like(t).at[t].add(1), oracle, [ids], P, P)


# ---------------------------------------------------------------------------
# Refused, with the reason


def test_windows_longer_than_an_element_are_refused() -> None:
    p = pile([3, 1, 2])
    with pytest.raises(ValueError, match=r"vmap over piles: dynamic_slice takes the entries \[0, 2\) of the ragged axis 0, which the elements of lengths \[1\] do not have"):
        vmap(lambda x: lax.dynamic_slice_in_dim(x, 0, 2), in_axes=P)(p)
    # A static integer past an element's end reads clamped, as JAX reads each element (x[2] of a length-1 x is x[0]).
    got = np.asarray(vmap(lambda x: x[2], in_axes=P)(p))
    np.testing.assert_array_equal(got, np.stack([e[min(2, len(e) - 1)] for e in p.unpack()]))
    with pytest.raises(ValueError, match=r"vmap over piles: slice takes the entries \[_pile\d+ - 2, _pile\d+\) of the ragged axis 0, which the elements of lengths \[1\] do not have"):
        vmap(lambda x: x[-2:], in_axes=P)(p)
    with pytest.raises(ValueError, match=r"vmap over piles: dynamic_update_slice takes the entries \[0, 2\) of the ragged axis 0, which the elements of lengths \[1\] do not have"):
        vmap(lambda x: lax.dynamic_update_slice_in_dim(x, np.ones((2, 2), np.float32), 0, 0), in_axes=P, out_axes=P)(p)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    with pytest.raises(ValueError, match=r"vmap over piles: scatter_add takes the entries \[0, 2\) of the ragged axis 0, which the elements of lengths \[1\] do not have"):
        vmap(lambda x: lax.scatter_add(x, np.zeros((1, 1), np.int32), np.ones((1, 2, 2), np.float32), dn),
             in_axes=P, out_axes=P)(p)  # fmt: skip


# ---------------------------------------------------------------------------
# Strided slices (core's slice rule; piles used to refuse them)


@pytest.mark.parametrize("lengths", LENGTH_SETS)
def test_strided_slices_along_and_across_a_ragged_axis(lengths: list[int]) -> None:
    p = pile(lengths)

    def last_row_every_other_column(x: Any) -> Any:  # a ragged start, a stride along a static axis
        return lax.slice(x, (x.shape[0] - 1, 0), (x.shape[0], 2), (1, 2))

    def every_other(x: Any) -> Any:  # a stride along a ragged axis of size 2n - 1: n entries
        return lax.slice(pnp.arange(2 * x.shape[0]) * 1.5, (0,), (2 * x.shape[0] - 1,), (2,)) + x[:, 0]

    got = vmap(last_row_every_other_column, in_axes=P)(p)
    for g, e in zip(np.asarray(got), p.unpack()):
        np.testing.assert_array_equal(g, np.asarray(e)[-1:, ::2])
    for g, e in zip(vmap(every_other, in_axes=P, out_axes=P)(p).unpack(), p.unpack()):
        e = np.asarray(e)
        np.testing.assert_allclose(np.asarray(g), np.arange(2 * len(e))[: 2 * len(e) - 1 : 2] * 1.5 + e[:, 0])
