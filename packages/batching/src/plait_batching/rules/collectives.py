"""Batching rules of the named-axis collectives.

A collective names one or several axes.  The vmap whose ``axis_name`` is
among them computes its share over its own batch (``psum`` is a sum over
the batch dimension, ``axis_index`` an ``iota`` of the batch) and hands the
remaining names to its parent trace, where an enclosing vmap handles them
in turn.  A collective over names that are not this vmap's is applied to
the whole batch by the parent: collectives are elementwise with respect to
axes they do not name.

These rules run even when no operand is batched (``axis_index`` has none,
and ``psum`` of an unbatched value over the batch is that value times the
batch size), so they are registered in :data:`~plait_batching.registries.always_run`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from plait_batching.moves import BDim, broadcast_batch, merge_dims, moveaxis, split_dim
from plait_batching.registries import always_run, batching_rules
from plait_batching.trace import AxisData
from plait_core import dtypes, get_aval
from plait_core.axes import axis_frame_size
from plait_core.dims import Dim
from plait_core.primitives import collectives as c
from plait_core.primitives.elementwise import add_p, convert_element_type_p, div_p, mul_p
from plait_core.primitives.reductions import reduce_max_p, reduce_min_p, reduce_sum_p
from plait_core.primitives.structural import iota_p


def _split_names(axis: AxisData, names: tuple[Hashable, ...]) -> tuple[bool, tuple[Hashable, ...]]:
    """Whether this vmap's axis is among ``names``, and the other names."""
    if axis.name is None or axis.name not in names:
        return False, names
    return True, tuple(n for n in names if n != axis.name)


def _sizes(names: Sequence[Hashable], what: str) -> Dim:
    size: Dim = 1
    for n in names:
        size = size * axis_frame_size(n, what)
    return size


def _reduction(prim: Any, own: Any) -> Any:
    """The rule of ``psum``/``pmax``/``pmin``: ``own(x, bdim, axis)`` reduces over
    this vmap's batch; the other names go to the parent."""

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, axes: tuple[Hashable, ...]) -> tuple[Any, BDim]:
        (x,), (d,) = args, dims
        mine, rest = _split_names(axis, axes)
        if not mine:
            return prim.bind(x, axes=axes), d
        y = own(x, d, axis)
        return (prim.bind(y, axes=rest) if rest else y), None

    return rule


def _own_sum(x: Any, d: BDim, axis: AxisData) -> Any:
    if d is None:  # the same value in every element: broadcast, so integer sums wrap as they should
        x, d = broadcast_batch(x, axis.size, 0), 0
    return reduce_sum_p.bind(x, axes=(d,))


def _own_extreme(prim: Any) -> Any:
    def own(x: Any, d: BDim, axis: AxisData) -> Any:
        return x if d is None else prim.bind(x, axes=(d,))

    return own


batching_rules[c.psum_p] = _reduction(c.psum_p, _own_sum)
batching_rules[c.pmax_p] = _reduction(c.pmax_p, _own_extreme(reduce_max_p))
batching_rules[c.pmin_p] = _reduction(c.pmin_p, _own_extreme(reduce_min_p))


def _pmean_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, axes: tuple[Hashable, ...]) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    mine, rest = _split_names(axis, axes)
    if not mine:
        return c.pmean_p.bind(x, axes=axes), d
    aval = get_aval(x)
    if not dtypes.is_inexact(aval.dtype):  # pmean of integers is a float mean
        x = convert_element_type_p.bind(x, new_dtype=dtypes.default_float_dtype(), weak_type=False)
        aval = get_aval(x)
    if d is not None:
        x = div_p.bind(reduce_sum_p.bind(x, axes=(d,)), np.asarray(axis.size, aval.dtype))
    return (c.pmean_p.bind(x, axes=rest) if rest else x), None


batching_rules[c.pmean_p] = _pmean_rule


def all_gather_rule(axis_data: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
    """``all_gather``: this vmap's share stacks its batch at ``axis``; the other
    names are gathered by the parent and the pieces ordered as the names are."""
    (x,), (d,) = args, dims
    axis_name, at, tiled = params["axis_name"], params["axis"], params["tiled"]
    names = c.axis_names(axis_name)
    mine, rest = _split_names(axis_data, names)
    if not mine:  # gathered by the parent, for every element of the batch (kept in front)
        if d is None:
            return c.all_gather_p.bind(x, axis_name=axis_name, axis=at, tiled=tiled), None
        x = moveaxis(x, d, 0)
        return c.all_gather_p.bind(x, axis_name=axis_name, axis=at + 1, tiled=tiled), 0
    size = axis_data.size
    # Every element gets the whole batch, stacked at ``at`` (untiled for now).
    y = broadcast_batch(x, size, at) if d is None else moveaxis(x, d, at)
    if rest:
        pos = names.index(axis_data.name)
        before, after = names[:pos], tuple(n for n in names[pos + 1 :])
        y = c.all_gather_p.bind(y, axis_name=rest if len(rest) > 1 else rest[0], axis=at, tiled=False)
        # Now (rest, batch) at ``at``; order the gathered axis as the names are: (before, batch, after).
        if after:
            pre, post = _sizes(before, "all_gather"), _sizes(after, "all_gather")
            y = split_dim(y, at, (pre, post))  # (before, after, batch)
            y = moveaxis(y, at + 2, at + 1)  # (before, batch, after)
            y = merge_dims(y, at, 3)
        else:
            y = merge_dims(y, at, 2)
    if tiled:
        y = merge_dims(y, at, 2)
    return y, None


batching_rules[c.all_gather_p] = all_gather_rule


def _axis_index_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, axis_name: Any) -> tuple[Any, BDim]:
    names = c.axis_names(axis_name)
    mine, _rest = _split_names(axis, names)
    if not mine:
        return c.axis_index_p.bind(axis_name=axis_name), None
    own = iota_p.bind(dtype=dtypes.int32, shape=(axis.size,), dimension=0)
    pos = names.index(axis.name)
    before, after = names[:pos], names[pos + 1 :]
    if after:  # row-major over the names: later names vary fastest
        post = _sizes(after, "axis_index")
        own = mul_p.bind(own, np.int32(post))
        own = add_p.bind(own, c.axis_index_p.bind(axis_name=after if len(after) > 1 else after[0]))
    if before:
        stride = _sizes(after, "axis_index") * axis.size
        lead = mul_p.bind(c.axis_index_p.bind(axis_name=before if len(before) > 1 else before[0]), np.int32(stride))
        own = add_p.bind(own, lead)
    return own, 0


batching_rules[c.axis_index_p] = _axis_index_rule

always_run.update({c.psum_p, c.pmax_p, c.pmin_p, c.pmean_p, c.all_gather_p, c.axis_index_p})
