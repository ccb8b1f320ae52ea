"""Batching rules of ``gather`` and the ``scatter`` family, and the conversion
of ``dynamic_slice``/``dynamic_update_slice`` with batched starts into them.

Both primitives already know about batches: ``operand_batching_dims`` pairs
operand dimensions with index batch dimensions, so element ``b`` of the
indices reads (or writes) element ``b`` of the operand.  The rules put the
batch in front and:

* when only the operand is batched, make the batch one more *window*
  dimension (taken whole, placed first in the result);
* when the indices are batched, make the batch one more *index batch*
  dimension, paired with the operand's batch (the operand is broadcast if it
  was not batched; a gather from an unbatched operand just gets one more index
  batch dimension).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim, moveaxis, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core import dtypes, get_aval
from plait_core.dims import Dim
from plait_core.primitives.elementwise import convert_element_type_p
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
)
from plait_core.primitives.structural import broadcast_in_dim_p, concatenate_p


def _plus1(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _gather_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimension_numbers: GatherDimensionNumbers,
    slice_sizes: tuple[Dim, ...], **params: Any,
) -> tuple[Any, BDim]:  # fmt: skip
    (operand, indices), (do, di) = args, dims
    dn = dimension_numbers
    if di is None:  # the batch is one more window dimension, first in the result
        assert do is not None
        op = moveaxis(operand, do, 0)
        new_dn = GatherDimensionNumbers(
            offset_dims=(0,) + _plus1(dn.offset_dims),
            collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
            start_index_map=_plus1(dn.start_index_map),
            operand_batching_dims=_plus1(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        sizes = (get_aval(op).shape[0], *slice_sizes)
        return gather_p.bind(op, indices, dimension_numbers=new_dn, slice_sizes=sizes, **params), 0
    idx = moveaxis(indices, di, 0)
    if do is None:  # one more index batch dimension, first in the result
        new_dn = dn._replace(
            offset_dims=_plus1(dn.offset_dims), start_indices_batching_dims=_plus1(dn.start_indices_batching_dims)
        )
        return gather_p.bind(operand, idx, dimension_numbers=new_dn, slice_sizes=slice_sizes, **params), 0
    op = moveaxis(operand, do, 0)
    new_dn = GatherDimensionNumbers(
        offset_dims=_plus1(dn.offset_dims),
        collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
        start_index_map=_plus1(dn.start_index_map),
        operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _plus1(dn.start_indices_batching_dims),
    )
    return gather_p.bind(op, idx, dimension_numbers=new_dn, slice_sizes=(1, *slice_sizes), **params), 0


batching_rules[gather_p] = _gather_rule


def _scatter_rule(prim: Any) -> Any:
    def rule(
        axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimension_numbers: ScatterDimensionNumbers,
        **params: Any,
    ) -> tuple[Any, BDim]:  # fmt: skip
        (operand, indices, updates), (do, di, du) = args, dims
        dn = dimension_numbers
        op = to_front(operand, do, axis.size)
        upd = to_front(updates, du, axis.size)
        if di is None:  # the batch is one more window dimension of the updates
            new_dn = ScatterDimensionNumbers(
                update_window_dims=(0,) + _plus1(dn.update_window_dims),
                inserted_window_dims=_plus1(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_plus1(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
            )
            return prim.bind(op, indices, upd, dimension_numbers=new_dn, **params), 0
        idx = moveaxis(indices, di, 0)
        new_dn = ScatterDimensionNumbers(
            update_window_dims=_plus1(dn.update_window_dims),
            inserted_window_dims=_plus1(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
            scatter_indices_batching_dims=(0,) + _plus1(dn.scatter_indices_batching_dims),
        )
        return prim.bind(op, idx, upd, dimension_numbers=new_dn, **params), 0

    return rule


for _p in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    batching_rules[_p] = _scatter_rule(_p)


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice with batched start indices


def _index_vectors(axis: AxisData, idx: Sequence[Any], dims: Sequence[BDim], /) -> Any:
    """Scalar start indices (some batched) as one int32 array of shape (batch, n)."""
    cols = []
    for i, d in zip(idx, dims):
        if get_aval(i).dtype != dtypes.int32:
            i = convert_element_type_p.bind(i, new_dtype=dtypes.int32, weak_type=False)
        col = to_front(i, d, axis.size)
        cols.append(broadcast_in_dim_p.bind(col, shape=(axis.size, 1), broadcast_dimensions=(0,)))
    return cols[0] if len(cols) == 1 else concatenate_p.bind(*cols, dimension=1)


def dynamic_slice_as_gather(
    axis: AxisData, x: Any, dx: BDim, idx: Sequence[Any], didx: Sequence[BDim], slice_sizes: tuple[Dim, ...]
) -> Any:
    """``dynamic_slice`` with batched starts as a clamping gather; the result is batched in front."""
    n = len(idx)
    indices = _index_vectors(axis, idx, didx)
    window = tuple(range(1, n + 1))
    if dx is None:
        dn = GatherDimensionNumbers(offset_dims=window, collapsed_slice_dims=(), start_index_map=tuple(range(n)))
        sizes = slice_sizes
    else:
        x = moveaxis(x, dx, 0)
        dn = GatherDimensionNumbers(
            offset_dims=window, collapsed_slice_dims=(), start_index_map=window,
            operand_batching_dims=(0,), start_indices_batching_dims=(0,),
        )  # fmt: skip
        sizes = (1, *slice_sizes)
    return gather_p.bind(
        x, indices, dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=False, unique_indices=False,
        mode=GatherScatterMode.CLIP, fill_value=None,
    )  # fmt: skip


def dynamic_update_slice_as_scatter(
    axis: AxisData, x: Any, dx: BDim, upd: Any, du: BDim, idx: Sequence[Any], didx: Sequence[BDim]
) -> Any:
    """``dynamic_update_slice`` with batched starts as a clamping scatter; the result is batched in front."""
    n = len(idx)
    indices = _index_vectors(axis, idx, didx)
    window = tuple(range(1, n + 1))
    dn = ScatterDimensionNumbers(
        update_window_dims=window, inserted_window_dims=(), scatter_dims_to_operand_dims=window,
        operand_batching_dims=(0,), scatter_indices_batching_dims=(0,),
    )  # fmt: skip
    return scatter_p.bind(
        to_front(x, dx, axis.size), indices, to_front(upd, du, axis.size), dimension_numbers=dn,
        indices_are_sorted=True, unique_indices=True, mode=GatherScatterMode.CLIP,
    )  # fmt: skip
