"""Lowering of the structural family: reshaping, slicing, padding,
concatenating, gathering and scattering, without arithmetic on elements.

Where XLA and core's semantics could part:

* ``dynamic_slice``/``dynamic_update_slice`` clamp each start into
  ``[0, dim - size]`` in XLA as in core; start indices of mixed integer types
  are converted to one (``i64`` when any is 64-bit or ``uint32``) first.
* ``gather`` in XLA clamps every window into bounds, which is core's ``CLIP``
  and ``PROMISE_IN_BOUNDS``; ``FILL_OR_DROP`` is lowered as the clamped gather
  followed by a select of ``fill_value`` wherever a window was not entirely in
  bounds.
* ``scatter`` in XLA skips every update window that is not entirely in
  bounds, which is core's ``FILL_OR_DROP`` and ``PROMISE_IN_BOUNDS``; ``CLIP``
  clamps the indices first.  With repeated indices XLA's CPU backend applies
  the updates in order, so for ``scatter`` (replace) the last update wins, as
  in core (XLA does not promise an order in general).  Boolean
  ``scatter_add``/``scatter_mul`` combine with or/and (as NumPy's ``add.at``
  on booleans).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    default_fill_value,
)
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import LoweringError, Value, concrete_shape, i64_array, int_list

I64 = np.dtype(np.int64)


def _ints(values: Any, what: str) -> list[int]:
    out = []
    for v in values:
        if type(v) is not int and not getattr(v, "is_constant", False):
            raise LoweringError(f"cannot lower {what}={tuple(values)}: StableHLO needs concrete sizes, not {v}")
        out.append(int(v))
    return out


# ---------------------------------------------------------------------------
# Shapes


@lowering_rules.register(st.broadcast_in_dim_p)
def _broadcast_in_dim(ctx: RuleContext, x: Value, *, shape: Any, broadcast_dimensions: tuple[int, ...]) -> list[Value]:
    out = concrete_shape(ctx.avals_out[0])
    return [ops.broadcast_in_dim(ctx, x, out, broadcast_dimensions)]


@lowering_rules.register(st.reshape_p)
def _reshape(ctx: RuleContext, x: Value, *, new_sizes: Any, dimensions: tuple[int, ...] | None) -> list[Value]:
    if dimensions is not None:
        x = ops.transpose(ctx, x, dimensions)
    return [ops.reshape(ctx, x, concrete_shape(ctx.avals_out[0]))]


def _to_out_shape(ctx: RuleContext, x: Value, **params: Any) -> list[Value]:
    return [ops.reshape(ctx, x, concrete_shape(ctx.avals_out[0]))]


lowering_rules[st.squeeze_p] = _to_out_shape
lowering_rules[st.expand_dims_p] = _to_out_shape


@lowering_rules.register(st.transpose_p)
def _transpose(ctx: RuleContext, x: Value, *, permutation: tuple[int, ...]) -> list[Value]:
    return [ops.transpose(ctx, x, permutation)]


@lowering_rules.register(st.rev_p)
def _rev(ctx: RuleContext, x: Value, *, dimensions: tuple[int, ...]) -> list[Value]:
    if not dimensions:
        return [x]
    return [ctx.op1("stablehlo.reverse", [x], x.aval, {"dimensions": i64_array(dimensions)})]


@lowering_rules.register(st.pad_p)
def _pad(ctx: RuleContext, x: Value, padding_value: Value, *, padding_config: Any) -> list[Value]:
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    attrs = {
        "edge_padding_low": i64_array(lo),
        "edge_padding_high": i64_array(hi),
        "interior_padding": i64_array(interior),
    }
    return [ctx.op1("stablehlo.pad", [x, padding_value], ops.like(x, shape=concrete_shape(ctx.avals_out[0])), attrs)]


@lowering_rules.register(st.concatenate_p)
def _concatenate(ctx: RuleContext, *xs: Value, dimension: int) -> list[Value]:
    return [ops.concatenate(ctx, xs, dimension)]


@lowering_rules.register(st.slice_p)
def _slice(
    ctx: RuleContext, x: Value, *, start_indices: Any, limit_indices: Any, strides: tuple[int, ...] | None
) -> list[Value]:
    starts = _ints(start_indices, "slice start_indices")
    limits = _ints(limit_indices, "slice limit_indices")
    return [ops.slice_(ctx, x, starts, limits, strides)]


def _index_dtype(indices: tuple[Value, ...]) -> np.dtype[Any]:
    """One integer type for start indices of possibly different types, wide
    enough for each (``i64`` when any is 64-bit or an unsigned 32-bit integer)."""
    wide = any(i.dtype.itemsize == 8 or (dtypes.is_unsigned_int(i.dtype) and i.dtype.itemsize == 4) for i in indices)
    return I64 if wide else ops.I32


def _start_indices(ctx: RuleContext, indices: tuple[Value, ...]) -> list[Value]:
    dt = _index_dtype(indices)
    return [ops.convert(ctx, i, dt) for i in indices]


@lowering_rules.register(st.dynamic_slice_p)
def _dynamic_slice(ctx: RuleContext, x: Value, *indices: Value, slice_sizes: Any) -> list[Value]:
    sizes = _ints(slice_sizes, "dynamic_slice slice_sizes")
    starts = _start_indices(ctx, indices)
    return [ctx.op1("stablehlo.dynamic_slice", [x, *starts], ops.like(x, shape=sizes), {"slice_sizes": i64_array(sizes)})]


@lowering_rules.register(st.dynamic_update_slice_p)
def _dynamic_update_slice(ctx: RuleContext, x: Value, update: Value, *indices: Value) -> list[Value]:
    starts = _start_indices(ctx, indices)
    return [ctx.op1("stablehlo.dynamic_update_slice", [x, update, *starts], x.aval)]


@lowering_rules.register(st.iota_p)
def _iota(ctx: RuleContext, *, dtype: Any, shape: Any, dimension: int) -> list[Value]:
    return [ops.iota(ctx, dtype, concrete_shape(ctx.avals_out[0]), dimension)]


@lowering_rules.register(st.copy_p)
def _copy(ctx: RuleContext, x: Value) -> list[Value]:
    return [x]  # HLO values are immutable: a copy is the value itself


def _dim_as_value(ctx: RuleContext, *, dim: Any) -> list[Value]:
    if type(dim) is not int and not getattr(dim, "is_constant", False):
        raise LoweringError(
            f"cannot lower dim_as_value of the symbolic size {dim}: its names take values only inside mask "
            "(from logical_env) or vmap over piles; evaluate it there before compiling"
        )
    return [ops.full(ctx, int(dim), ctx.avals_out[0].dtype)]


try:  # dim_as_value is a recent addition to core's catalog
    from plait_core.primitives.shapes import dim_as_value_p
except ImportError:  # pragma: no cover - an older plait-core
    pass
else:
    lowering_rules[dim_as_value_p] = _dim_as_value


# ---------------------------------------------------------------------------
# gather


def _gather_dnums(dn: GatherDimensionNumbers, index_vector_dim: int) -> str:
    fields = [
        f"offset_dims = {int_list(dn.offset_dims)}",
        f"collapsed_slice_dims = {int_list(dn.collapsed_slice_dims)}",
    ]
    if dn.operand_batching_dims:
        fields.append(f"operand_batching_dims = {int_list(dn.operand_batching_dims)}")
        fields.append(f"start_indices_batching_dims = {int_list(dn.start_indices_batching_dims)}")
    fields.append(f"start_index_map = {int_list(dn.start_index_map)}")
    fields.append(f"index_vector_dim = {index_vector_dim}")
    return "#stablehlo.gather<" + ", ".join(fields) + ">"


def _fill(ctx: RuleContext, value: Any, dtype: np.dtype[Any], shape: tuple[int, ...]) -> Value:
    with np.errstate(all="ignore"):
        v = np.asarray(value).astype(dtype)
    return ops.full(ctx, v, dtype, shape)


def _windows_in_bounds(
    ctx: RuleContext, indices: Value, index_map: tuple[int, ...], operand_shape: tuple[int, ...], window: list[int]
) -> Value:
    """For each index vector (all but the last dimension of ``indices``), whether
    every window it starts lies inside the operand: ``0 <= i_k <= dim - size``."""
    idx = ops.convert(ctx, indices, I64)
    k = len(index_map)
    upper = np.array([operand_shape[d] - window[d] for d in index_map], np.int64)
    upper_b = ops.broadcast_in_dim(ctx, ctx.constant(upper, I64, (k,)), idx.shape, (len(idx.shape) - 1,))
    ok = ops.logical(
        ctx, "and",
        ops.compare(ctx, idx, ops.full(ctx, 0, I64, idx.shape), "GE"),
        ops.compare(ctx, idx, upper_b, "LE"),
    )
    true = ops.full(ctx, True, ops.BOOL)
    last = len(idx.shape) - 1
    return ops.reduce(ctx, [ok], [true], [last], lambda r, a, b: [ops.logical(r, "and", a[0], b[0])])[0]


@lowering_rules.register(st.gather_p)
def _gather(
    ctx: RuleContext,
    operand: Value,
    indices: Value,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Any,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: GatherScatterMode,
    fill_value: Any,
) -> list[Value]:
    dn = dimension_numbers
    out = ctx.avals_out[0]
    out_shape = concrete_shape(out)
    sizes = _ints(slice_sizes, "gather slice_sizes")
    fill = default_fill_value(operand.dtype) if fill_value is None else fill_value
    fill_or_drop = mode is GatherScatterMode.FILL_OR_DROP
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    if any(sizes[d] == 0 for d in dropped) or 0 in out_shape:
        # an empty window collapsed away reads nothing (as core: the fill, or zeros)
        return [_fill(ctx, fill if fill_or_drop else 0, operand.dtype, out_shape)]
    attrs = {
        "dimension_numbers": _gather_dnums(dn, len(indices.shape) - 1),
        "slice_sizes": i64_array(sizes),
        "indices_are_sorted": "true" if indices_are_sorted else "false",
    }
    gathered = ctx.op1("stablehlo.gather", [operand, indices], ops.like(operand, shape=out_shape), attrs)
    if not fill_or_drop or not dn.start_index_map:
        return [gathered]
    ok = _windows_in_bounds(ctx, indices, dn.start_index_map, operand.shape, sizes)
    batch_dims = [i for i in range(len(out_shape)) if i not in dn.offset_dims]
    ok_b = ops.broadcast_in_dim(ctx, ok, out_shape, batch_dims)
    return [ops.select(ctx, ok_b, gathered, _fill(ctx, fill, operand.dtype, out_shape))]


# ---------------------------------------------------------------------------
# scatter


def _scatter_dnums(dn: ScatterDimensionNumbers, index_vector_dim: int) -> str:
    fields = [
        f"update_window_dims = {int_list(dn.update_window_dims)}",
        f"inserted_window_dims = {int_list(dn.inserted_window_dims)}",
    ]
    if dn.operand_batching_dims:
        fields.append(f"input_batching_dims = {int_list(dn.operand_batching_dims)}")
        fields.append(f"scatter_indices_batching_dims = {int_list(dn.scatter_indices_batching_dims)}")
    fields.append(f"scatter_dims_to_operand_dims = {int_list(dn.scatter_dims_to_operand_dims)}")
    fields.append(f"index_vector_dim = {index_vector_dim}")
    return "#stablehlo.scatter<" + ", ".join(fields) + ">"


def _scatter_window(operand: Value, updates: Value, dn: ScatterDimensionNumbers) -> list[int]:
    """The window size in each operand dimension (1 where the updates have none)."""
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    sizes = iter(updates.shape[u] for u in dn.update_window_dims)
    return [1 if d in dropped else next(sizes) for d in range(len(operand.shape))]


def _clip_indices(ctx: RuleContext, indices: Value, index_map: tuple[int, ...], shape: tuple[int, ...],
                  window: list[int]) -> Value:
    """Indices clamped so that every window lies inside the operand."""
    idx = ops.convert(ctx, indices, I64)
    upper = np.array([max(shape[d] - window[d], 0) for d in index_map], np.int64)
    upper_b = ops.broadcast_in_dim(ctx, ctx.constant(upper, I64, (len(index_map),)), idx.shape, (len(idx.shape) - 1,))
    lower = ops.full(ctx, 0, I64, idx.shape)
    return ctx.op1("stablehlo.clamp", [lower, idx, upper_b], idx.aval)


_COMBINE = {
    st.scatter_p: None,
    st.scatter_add_p: ("stablehlo.add", "stablehlo.or"),
    st.scatter_mul_p: ("stablehlo.multiply", "stablehlo.and"),
    st.scatter_min_p: ("stablehlo.minimum", "stablehlo.and"),
    st.scatter_max_p: ("stablehlo.maximum", "stablehlo.or"),
}


def _scatter_rule(combine: tuple[str, str] | None) -> Any:
    def rule(
        ctx: RuleContext,
        operand: Value,
        indices: Value,
        updates: Value,
        *,
        dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool,
        unique_indices: bool,
        mode: GatherScatterMode,
    ) -> list[Value]:
        dn = dimension_numbers
        if 0 in updates.shape:
            return [operand]  # no update at all
        if mode is GatherScatterMode.CLIP and dn.scatter_dims_to_operand_dims:
            window = _scatter_window(operand, updates, dn)
            indices = _clip_indices(ctx, indices, dn.scatter_dims_to_operand_dims, operand.shape, window)
        region = ctx.region([ops.scalar(operand.dtype)] * 2)
        old, new = region.args
        if combine is None:
            region.ret([new])
        else:
            op = combine[1] if operand.dtype == ops.BOOL else combine[0]
            region.ret([ops.binary(region, op, old, new)])
        attrs = {
            "scatter_dimension_numbers": _scatter_dnums(dn, len(indices.shape) - 1),
            "indices_are_sorted": "true" if indices_are_sorted else "false",
            "unique_indices": "true" if unique_indices else "false",
        }
        return [ctx.op1("stablehlo.scatter", [operand, indices, updates], operand.aval, attrs, [region])]

    return rule


for _prim, _combine in _COMBINE.items():
    lowering_rules[_prim] = _scatter_rule(_combine)
