"""The oracle of pile tests: NumPy applied to each element's true slice.

``check_pile(fun, oracle, args, in_axes, out_axes)`` runs ``vmap(fun)`` over
the arguments (piles, mapped arrays, unmapped values) eagerly and staged
(``make_jaxpr`` + ``check_jaxpr`` + ``eval_jaxpr``), and compares every
result with ``oracle`` (written with NumPy) applied to every element: piles
element by element (``unpack``), with their padding checked to be zero;
other results stacked.  Float piles are also given NaN padding, which
must not change any result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import plait_core as pc
from plait_batching import Pile, PileAxis, vmap
from plait_core.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten


def ragged_pile(rng: np.random.Generator, lengths: Sequence[int], tail: tuple[int, ...] = (), dtype: Any = np.float32,
                axis: int = 0, lo: float = -2, hi: float = 2) -> tuple[Pile, list[np.ndarray]]:  # fmt: skip
    """A pile of random elements with ``lengths`` along ``axis`` (other axes ``tail``), and its elements."""
    dt = np.dtype(dtype)
    elems = []
    for n in lengths:
        shape = (*tail[:axis], n, *tail[axis:])
        if dt == np.bool_:
            e = rng.random(shape) < 0.5
        elif np.issubdtype(dt, np.integer):
            e = rng.integers(int(lo), int(hi) + 1, shape).astype(dt)
        else:
            e = rng.uniform(lo, hi, shape).astype(dt)
        elems.append(e)
    return Pile.from_arrays(elems, ragged_axis=axis), elems


def element(arg: Any, axis: Any, i: int) -> Any:
    """Element ``i`` of a mapped argument, as NumPy."""
    if axis is None:
        return arg
    if isinstance(axis, PileAxis):
        return np.asarray(arg[i])
    return np.take(np.asarray(arg), i, axis=axis)


def nan_padded(p: Any) -> Any:
    """A float pile with NaN in its padding (other values unchanged): results must not see it."""
    if not isinstance(p, Pile) or np.asarray(p.data).dtype.kind != "f":
        return p
    data = np.array(p.data)
    for i, n in enumerate(np.asarray(p.lengths)):
        index: tuple[Any, ...] = (i, *(slice(None),) * p.ragged_axis, slice(int(n), None))
        data[index] = np.nan
    return Pile(data, p.lengths, p.ragged_axis)


def stage(fun: Callable[..., Any], args: Sequence[Any], like: Any) -> Any:
    """``fun(*args)`` staged, type-checked and evaluated; the result has ``like``'s structure."""
    closed = pc.make_jaxpr(fun)(*args)
    pc.check_jaxpr(closed)
    outs = pc.eval_jaxpr(closed.jaxpr, closed.consts, *tree_flatten(list(args))[0])
    return tree_unflatten(tree_structure(like), outs)


def close(actual: Any, expected: Any, what: str, rtol: float = 2e-5, atol: float = 1e-5) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"{what}: dtype {a.dtype} != {e.dtype}"
    if a.dtype.kind in "fcV" or a.dtype.name in ("bfloat16", "float16"):
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(a, e, err_msg=what)


def assert_padding_zero(p: Pile, what: str) -> None:
    data, lengths = np.asarray(p.data), np.asarray(p.lengths)
    for i, n in enumerate(lengths):
        pad = np.take(data[i], np.arange(int(n), data.shape[1 + p.ragged_axis]), axis=p.ragged_axis)
        assert not pad.astype(bool).any(), f"{what}: element {i} has nonzero padding"


def compare(got: Any, expected_per_elem: list[Any], what: str, **tol: float) -> None:
    """A result (pile or array leaves) against the oracle's result for every element."""
    got_leaves = tree_leaves(got, is_leaf=lambda x: isinstance(x, Pile))
    per = [tree_leaves(e) for e in expected_per_elem]
    assert all(len(p) == len(got_leaves) for p in per), f"{what}: {len(got_leaves)} results, oracle gave {len(per[0])}"
    for k, g in enumerate(got_leaves):
        exp = [np.asarray(p[k]) for p in per]
        if isinstance(g, Pile):
            assert g.num_elements == len(exp)
            assert_padding_zero(g, f"{what} result {k}")
            for i, (a, e) in enumerate(zip(g.unpack(), exp)):
                close(a, e, f"{what} result {k} element {i}", **tol)
            np.testing.assert_array_equal(np.asarray(g.lengths), [e.shape[g.ragged_axis] for e in exp])
            assert np.asarray(g.lengths).dtype == np.int32
        else:
            close(g, np.stack(exp), f"{what} result {k}", **tol)


def check_pile(
    fun: Callable[..., Any], oracle: Callable[..., Any], args: Sequence[Any], in_axes: Any, out_axes: Any = 0,
    *, staged: bool = True, **tol: float,
) -> Any:  # fmt: skip
    """vmap over piles equals NumPy per element, eagerly and staged; returns the eager result."""
    mapped = vmap(fun, in_axes=in_axes, out_axes=out_axes)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(len(a) if isinstance(ax, PileAxis) else np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    expected = [oracle(*[element(a, ax, i) for a, ax in zip(args, axes)]) for i in range(n)]
    got = mapped(*args)
    compare(got, expected, "eager", **tol)
    if any(isinstance(a, Pile) and np.asarray(a.data).dtype.kind == "f" for a in args):
        compare(mapped(*[nan_padded(a) for a in args]), expected, "eager with NaN padding", **tol)
    if staged:
        compare(stage(mapped, args, got), expected, "staged", **tol)
    return got
