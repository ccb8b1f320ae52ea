"""Batching rules of the structural family (without gather and scatter, which
live in :mod:`plait_batching.rules.indexing`).

Most rules keep the batch where it is and rewrite the dimension params
around it; those whose params describe the whole result shape
(``reshape``, ``expand_dims``, ``concatenate``) put the batch in front.  A
batched ``padding_value`` pads with zeros and selects the padding value
where a mask of the padding says so.  ``dynamic_slice`` and
``dynamic_update_slice`` with batched start indices become a ``gather`` /
``scatter`` over the batch (see :mod:`plait_batching.rules.indexing`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from plait_batching.factories import defunbatched, defvectorized
from plait_batching.moves import BDim, moveaxis, shift, shift_all, to_front
from plait_batching.registries import batching_rules
from plait_batching.rules.indexing import dynamic_slice_as_gather, dynamic_update_slice_as_scatter
from plait_batching.trace import AxisData
from plait_core import Primitive, get_aval
from plait_core.dims import Dim
from plait_core.primitives import structural as st
from plait_core.primitives.elementwise import select_n_p

R = TypeVar("R", bound=Callable[..., tuple[Any, BDim]])

defvectorized(st.copy_p)
defunbatched(st.iota_p)


def _rule(prim: Primitive) -> Callable[[R], R]:
    """Register the decorated function as ``prim``'s rule."""

    def deco(rule: R) -> R:
        batching_rules[prim] = rule
        return rule

    return deco


@_rule(st.broadcast_in_dim_p)
def _broadcast_in_dim(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, shape: tuple[Dim, ...],
    broadcast_dimensions: tuple[int, ...],
) -> tuple[Any, BDim]:  # fmt: skip
    (x,), (d,) = args, dims
    assert d is not None
    # The batch goes right after the result dimension of the operand dimension before it.
    p = 0 if d == 0 else broadcast_dimensions[d - 1] + 1
    new_dims = broadcast_dimensions[:d] + (p,) + tuple(b + 1 for b in broadcast_dimensions[d:])
    new_shape = shape[:p] + (get_aval(x).shape[d],) + shape[p:]
    return st.broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_dims), p


@_rule(st.reshape_p)
def _reshape(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, new_sizes: tuple[Dim, ...],
    dimensions: tuple[int, ...] | None,
) -> tuple[Any, BDim]:  # fmt: skip
    (x,), (d,) = args, dims
    assert d is not None
    if dimensions is not None:
        x = st.transpose_p.bind(x, permutation=(d,) + shift_all(dimensions, d))
    else:
        x = moveaxis(x, d, 0)
    size = get_aval(x).shape[0]
    return st.reshape_p.bind(x, new_sizes=(size, *new_sizes), dimensions=None), 0


@_rule(st.squeeze_p)
def _squeeze(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimensions: tuple[int, ...]) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    assert d is not None
    out = st.squeeze_p.bind(x, dimensions=shift_all(dimensions, d))
    return out, d - sum(1 for a in dimensions if a < d)


@_rule(st.expand_dims_p)
def _expand_dims(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimensions: tuple[int, ...]) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    assert d is not None
    x = moveaxis(x, d, 0)
    return st.expand_dims_p.bind(x, dimensions=tuple(a + 1 for a in dimensions)), 0


@_rule(st.transpose_p)
def _transpose(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, permutation: tuple[int, ...]) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    assert d is not None
    return st.transpose_p.bind(x, permutation=(d,) + shift_all(permutation, d)), 0


@_rule(st.rev_p)
def _rev(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimensions: tuple[int, ...]) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    assert d is not None
    return st.rev_p.bind(x, dimensions=shift_all(dimensions, d)), d


@_rule(st.pad_p)
def _pad(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, padding_config: Any) -> tuple[Any, BDim]:
    (x, pv), (dx, dv) = args, dims
    if dv is None:
        assert dx is not None
        config = padding_config[:dx] + ((0, 0, 0),) + padding_config[dx:]
        return st.pad_p.bind(x, pv, padding_config=config), dx
    # A padding value per element: pad with zeros, then select it where the mask says "padding".
    aval = get_aval(x)
    elem = aval.shape if dx is None else aval.shape[:dx] + aval.shape[dx + 1 :]
    xf = to_front(x, dx, axis.size)
    padded = st.pad_p.bind(xf, np.zeros((), aval.dtype), padding_config=((0, 0, 0), *padding_config))
    full = get_aval(padded).shape
    inside = st.broadcast_in_dim_p.bind(np.True_, shape=elem, broadcast_dimensions=())
    mask = st.pad_p.bind(inside, np.False_, padding_config=padding_config)
    mask = st.broadcast_in_dim_p.bind(mask, shape=full, broadcast_dimensions=tuple(range(1, len(full))))
    values = st.broadcast_in_dim_p.bind(moveaxis(pv, dv, 0), shape=full, broadcast_dimensions=(0,))
    return select_n_p.bind(mask, values, padded), 0


@_rule(st.concatenate_p)
def _concatenate(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimension: int) -> tuple[Any, BDim]:
    d0 = dims[0]
    if d0 is not None and all(d == d0 for d in dims):
        return st.concatenate_p.bind(*args, dimension=shift(dimension, d0)), d0
    ops = [to_front(x, d, axis.size) for x, d in zip(args, dims)]
    return st.concatenate_p.bind(*ops, dimension=dimension + 1), 0


@_rule(st.slice_p)
def _slice(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, start_indices: tuple[Dim, ...],
    limit_indices: tuple[Dim, ...], strides: tuple[int, ...] | None,
) -> tuple[Any, BDim]:  # fmt: skip
    (x,), (d,) = args, dims
    assert d is not None
    size = get_aval(x).shape[d]
    return st.slice_p.bind(
        x,
        start_indices=start_indices[:d] + (0,) + start_indices[d:],
        limit_indices=limit_indices[:d] + (size,) + limit_indices[d:],
        strides=None if strides is None else strides[:d] + (1,) + strides[d:],
    ), d


@_rule(st.dynamic_slice_p)
def _dynamic_slice(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, slice_sizes: tuple[Dim, ...]) -> tuple[Any, BDim]:
    x, *idx = args
    dx, *didx = dims
    if all(d is None for d in didx):
        assert dx is not None
        size = get_aval(x).shape[dx]
        starts = [*idx[:dx], np.int32(0), *idx[dx:]]
        return st.dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes[:dx] + (size,) + slice_sizes[dx:]), dx
    return dynamic_slice_as_gather(axis, x, dx, idx, didx, slice_sizes), 0


@_rule(st.dynamic_update_slice_p)
def _dynamic_update_slice(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /) -> tuple[Any, BDim]:
    x, upd, *idx = args
    dx, du, *didx = dims
    if all(d is None for d in didx):
        if dx is not None and du == dx:
            starts = [*idx[:dx], np.int32(0), *idx[dx:]]
            return st.dynamic_update_slice_p.bind(x, upd, *starts), dx
        xf, uf = to_front(x, dx, axis.size), to_front(upd, du, axis.size)
        return st.dynamic_update_slice_p.bind(xf, uf, np.int32(0), *idx), 0
    return dynamic_update_slice_as_scatter(axis, x, dx, upd, du, idx, didx), 0
