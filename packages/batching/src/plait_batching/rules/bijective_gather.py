"""Batching rule of ``bijective_gather``: both of its gathers get the batch the
same way, so the batched primitive is still a bijection with its inverse.

* When only the operand is batched, the batch is one more window dimension,
  taken whole and first in the result (and in the inverse's result).
* When any index array is batched, every operand is given the batch in front
  (broadcast if it had none) and it becomes an operand batching dimension of
  both gathers, paired with the indices' batch (element ``b`` of the indices
  reads element ``b`` of the operand, and back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim, moveaxis, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core.primitives.bijective_gather import bijective_gather_p
from plait_core.primitives.indexing_prims import GatherDimensionNumbers


def _plus1(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _window_first(dn: GatherDimensionNumbers) -> GatherDimensionNumbers:
    """A new leading operand dimension, taken whole, first in the result."""
    return GatherDimensionNumbers(
        offset_dims=(0,) + _plus1(dn.offset_dims),
        collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
        start_index_map=_plus1(dn.start_index_map),
        operand_batching_dims=_plus1(dn.operand_batching_dims),
        start_indices_batching_dims=dn.start_indices_batching_dims,
    )


def _paired(dn: GatherDimensionNumbers) -> GatherDimensionNumbers:
    """A new leading operand dimension paired with a new leading index batch dimension."""
    return GatherDimensionNumbers(
        offset_dims=_plus1(dn.offset_dims),
        collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
        start_index_map=_plus1(dn.start_index_map),
        operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _plus1(dn.start_indices_batching_dims),
    )


def _rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
    operand, *index_args = args
    if all(d is None for d in dims[1:]):
        op = moveaxis(operand, dims[0], 0)  # type: ignore[arg-type]
        new = dict(
            params,
            dimension_numbers=_window_first(params["dimension_numbers"]),
            slice_sizes=(axis.size, *params["slice_sizes"]),
            inverse_dimension_numbers=_window_first(params["inverse_dimension_numbers"]),
            inverse_slice_sizes=(axis.size, *params["inverse_slice_sizes"]),
        )
        return bijective_gather_p.bind(op, *index_args, **new), 0
    moved = [to_front(x, d, axis.size) for x, d in zip(args, dims)]
    new = dict(
        params,
        dimension_numbers=_paired(params["dimension_numbers"]),
        slice_sizes=(1, *params["slice_sizes"]),
        inverse_dimension_numbers=_paired(params["inverse_dimension_numbers"]),
        inverse_slice_sizes=(1, *params["inverse_slice_sizes"]),
        indices_are_sorted=False,  # sorted within each element, not across the batch
    )
    return bijective_gather_p.bind(*moved, **new), 0


batching_rules[bijective_gather_p] = _rule
