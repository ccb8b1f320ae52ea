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

from plait_batching.moves import BDim, broadcast_batch, merge_dims, moveaxis, split_dim, to_front
from plait_batching.registries import always_run, batching_rules
from plait_batching.trace import AxisData
from plait_core import ShapedArray, dtypes, get_aval
from plait_core.axes import axis_frame_size
from plait_core.dims import Dim
from plait_core.primitives import collectives as c
from plait_core.primitives.elementwise import add_p, convert_element_type_p, div_p, mul_p
from plait_core.primitives.reductions import reduce_max_p, reduce_min_p, reduce_sum_p
from plait_core.primitives.structural import broadcast_in_dim_p, concatenate_p, iota_p, slice_p, transpose_p


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



# ---------------------------------------------------------------------------
# ppermute, psum_scatter, all_to_all over this vmap's own axis act on the
# batch dimension (moved to the front); over other axes they go to the parent
# for every element.  Mixing this vmap's axis with others in one of these is
# not supported (their position numbering would mix the two).


def _own_only(prim: Any, axis: AxisData, names: tuple[Hashable, ...]) -> bool:
    mine, rest = _split_names(axis, names)
    if mine and rest:
        raise NotImplementedError(
            f"{prim.name} over the axes {names}: mixing a vmap axis ({axis.name!r}) with other axes in one "
            f"{prim.name} is not supported; apply it over each axis in turn"
        )
    return mine


def _check_element(prim: Any, x: Any, d: BDim, params: dict[str, Any]) -> None:
    """Abstract evaluation on one element (the primitive's own operand checks)."""
    aval = get_aval(x)
    shape = aval.shape if d is None else aval.shape[:d] + aval.shape[d + 1 :]
    prim.abstract_eval(ShapedArray(shape, aval.dtype, aval.weak_type), **params)


def _parent(prim: Any, x: Any, d: BDim, shift_params: tuple[str, ...], params: dict[str, Any]) -> tuple[Any, BDim]:
    """``prim`` applied by the parent to every element (batch kept in front)."""
    if d is None:
        return prim.bind(x, **params), None
    new = {k: (v + 1 if k in shift_params else v) for k, v in params.items()}
    return prim.bind(moveaxis(x, d, 0), **new), 0


def _ppermute_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    if not _own_only(c.ppermute_p, axis, c.axis_names(params["axis_name"])):
        return _parent(c.ppermute_p, x, d, (), params)
    _check_element(c.ppermute_p, x, d, params)
    x = to_front(x, d, axis.size)
    shape = get_aval(x).shape
    source = {dst: src for src, dst in params["perm"]}
    zero = broadcast_in_dim_p.bind(
        np.zeros((), get_aval(x).dtype), shape=(1, *shape[1:]), broadcast_dimensions=()
    )
    rows = []
    for dst in range(int(axis.size)):
        src = source.get(dst)
        if src is None:
            rows.append(zero)
        else:
            rows.append(slice_p.bind(
                x, start_indices=(src,) + (0,) * (len(shape) - 1), limit_indices=(src + 1, *shape[1:]), strides=None
            ))  # fmt: skip
    return (rows[0] if len(rows) == 1 else concatenate_p.bind(*rows, dimension=0)), 0


def _psum_scatter_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    if not _own_only(c.psum_scatter_p, axis, c.axis_names(params["axis_name"])):
        return _parent(c.psum_scatter_p, x, d, ("scatter_dimension",), params)
    _check_element(c.psum_scatter_p, x, d, params)
    summed = _own_sum(x, d, axis)
    dim = params["scatter_dimension"]
    if not params["tiled"]:
        return summed, dim  # element i keeps row i of the summed dimension
    n = get_aval(summed).shape[dim]
    return split_dim(summed, dim, (axis.size, n // axis.size)), dim


def _all_to_all_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    if not _own_only(c.all_to_all_p, axis, c.axis_names(params["axis_name"])):
        return _parent(c.all_to_all_p, x, d, ("split_axis", "concat_axis"), params)
    _check_element(c.all_to_all_p, x, d, params)
    x = to_front(x, d, axis.size)  # the sending element j in front
    split, concat, n = params["split_axis"], params["concat_axis"], axis.size
    elem = get_aval(x).ndim - 1
    if not params["tiled"]:
        # out[i][..., j at concat, ...] = x[j][... i at split ...]
        rest = [k + 1 for k in range(elem) if k != split]
        rest.insert(concat, 0)
        return transpose_p.bind(x, permutation=(split + 1, *rest)), 0
    size = get_aval(x).shape[split + 1]
    y = split_dim(x, split + 1, (n, size // n))  # [j] + s[:split] + [i, block] + s[split+1:]
    labels: list[Any] = ["j", *range(split), "i", "block", *range(split + 1, elem)]
    target: list[Any] = ["i"]
    for k in range(elem):
        label = "block" if k == split else k
        if k == concat:
            target.append("j")
        target.append(label)
    y = transpose_p.bind(y, permutation=tuple(labels.index(t) for t in target))
    return merge_dims(y, 1 + concat, 2), 0


batching_rules[c.ppermute_p] = _ppermute_rule
batching_rules[c.psum_scatter_p] = _psum_scatter_rule
batching_rules[c.all_to_all_p] = _all_to_all_rule

def _pvary_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, axes: tuple[Hashable, ...]) -> tuple[Any, BDim]:
    # pvary is the identity on values; over this vmap's own axis it says nothing
    # more (a value the same in every element is already every element's).
    (x,), (d,) = args, dims
    _, rest = _split_names(axis, axes)
    return (c.pvary_p.bind(x, axes=rest) if rest else x), d


batching_rules[c.pvary_p] = _pvary_rule

always_run.update({
    c.pvary_p,
    c.psum_p, c.pmax_p, c.pmin_p, c.pmean_p, c.all_gather_p, c.axis_index_p, c.ppermute_p, c.psum_scatter_p,
    c.all_to_all_p,
})
