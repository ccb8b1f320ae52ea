"""``lax.associative_scan``: inclusive prefix combinations with any
associative function, in ``O(log n)`` rounds of elementwise work (JAX's
name and signature).

The scan combines neighbouring pairs, scans the half-length result
recursively (giving the prefixes that end at odd positions), then combines
those with the even elements to get the prefixes that end at even positions,
and interleaves the two.  Built from slices, pads and the user's function,
so every transformation applies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import get_aval
from plait_core.dims import is_constant_dim
from plait_core.lax import elementwise as _ew
from plait_core.lax import structural as _st
from plait_core.tree_util import tree_flatten, tree_unflatten

__all__ = ["associative_scan"]


def _slice(x: Any, axis: int, start: int, stop: int, step: int = 1) -> Any:
    return _st.slice_in_dim(x, start, stop, step, axis)


def _interleave(evens: Any, odds: Any, axis: int) -> Any:
    """``evens[0], odds[0], evens[1], odds[1], ...`` along ``axis``
    (``evens`` has as many elements as ``odds`` or one more)."""
    n_even = int(get_aval(evens).shape[axis])
    n_odd = int(get_aval(odds).shape[axis])
    ndim = get_aval(evens).ndim
    dtype = get_aval(evens).dtype
    zero = np.zeros((), dtype)
    pad = _st.pad
    widths_even = [(0, 0, 0)] * ndim
    widths_odd = [(0, 0, 0)] * ndim
    widths_even[axis] = (0, 1 if n_even == n_odd else 0, 1)
    widths_odd[axis] = (1, 0 if n_even == n_odd else 1, 1)
    a, b = pad(evens, zero, widths_even), pad(odds, zero, widths_odd)
    combine = _ew.bitwise_or if dtypes.is_bool(dtype) else _ew.add
    return combine(a, b)


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations of ``elems`` along ``axis`` with the associative
    ``fn``: ``out[i] = fn(... fn(fn(e[0], e[1]), e[2]) ..., e[i])`` (grouped
    in whatever order the parallel algorithm likes, which is why ``fn`` must
    be associative).

    ``elems`` is an array or a pytree of arrays with the same length along
    ``axis``; ``fn(a, b)`` takes and returns pytrees of that structure and
    must work elementwise on stacks of elements (it receives slices of many
    elements at once).  ``reverse=True`` scans from the end (``out[i]``
    combines ``e[i:]``)."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        raise ValueError("lax.associative_scan: elems holds no arrays")
    avals = [get_aval(x) for x in leaves]
    ndim = avals[0].ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"lax.associative_scan: axis {axis} is out of range for elements of rank {ndim}")
    axis = axis % ndim
    n = avals[0].shape[axis]
    for a in avals[1:]:
        if a.ndim != ndim or a.shape[axis] != n:
            raise ValueError(
                f"lax.associative_scan: every array of elems must have the same length along axis {axis}, "
                f"got shapes {[tuple(b.shape) for b in avals]}"
            )
    if not is_constant_dim(n):
        raise NotImplementedError(
            f"not supported: lax.associative_scan along an axis of symbolic size {n} (the number of rounds "
            "depends on the size); use lax.scan"
        )
    rev = _st.rev

    def call(a: list[Any], b: list[Any]) -> list[Any]:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"lax.associative_scan: fn returned the structure {out_tree}, expected {tree}")
        return out

    def scan(xs: list[Any]) -> list[Any]:
        size = int(get_aval(xs[0]).shape[axis])
        if size < 2:
            return xs
        pairs = call([_slice(x, axis, 0, size - 1, 2) for x in xs], [_slice(x, axis, 1, size, 2) for x in xs])
        odds = scan(pairs)
        if size % 2 == 0:
            tail = call([_slice(o, axis, 0, size // 2 - 1) for o in odds], [_slice(x, axis, 2, size, 2) for x in xs])
        else:
            tail = call(odds, [_slice(x, axis, 2, size, 2) for x in xs])
        concat = _st.concatenate
        evens = [concat([_slice(x, axis, 0, 1), t], axis) for x, t in zip(xs, tail)]
        return [_interleave(e, o, axis) for e, o in zip(evens, odds)]

    if reverse:
        flipped = [rev(x, (axis,)) for x in leaves]
        result = [rev(y, (axis,)) for y in scan(flipped)]
    else:
        result = scan(leaves)
    return tree_unflatten(tree, result)

