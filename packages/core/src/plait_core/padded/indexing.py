"""Padded rules of dynamic slicing, ``gather`` and the ``scatter`` family.

Their semantics depend on the operand's size through clamping and
out-of-bounds handling, which must use the *logical* size.  The rules clamp
(or test) the start indices against the logical bounds themselves, and grow
the operand at the end by the window's padded size wherever the window has a
padded size, so that the primitive's own clamping against the padded bounds
never moves a logically valid start.  Each padded axis is bounded by its own
size (``per_axis``: an ``n x m`` value indexed along either axis).

* ``dynamic_update_slice`` blends an update with padded sizes into the
  operand's current values, so its padding overwrites nothing.
* ``gather`` in ``FILL_OR_DROP`` mode gathers from clamped starts and fills
  the windows that are out of logical bounds.
* ``scatter``: updates at padding positions of the indices' batch
  dimensions, and windows out of logical bounds in drop mode, are given an
  out-of-bounds start and dropped.  The combining scatters fill the padding
  of padded update windows with their identity.  Plain ``scatter`` writes a
  padded window shorter than its operand axis (``x.at[:-1].set(y)``) as
  windows of size 1, one per entry, dropping the entries past the window's
  logical end; a window spanning the whole axis lands its padding in the
  operand's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, ops
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, definitely_equal
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitive import Primitive
from plait_core.primitives import reductions as red
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import (
    GatherScatterMode,
    ScatterDimensionNumbers,
    default_fill_value,
)

__all__: list[str] = []

DType = np.dtype[Any]


def _logical_max_start(env: PaddedEnv, d: Dim, s: Dim, dtype: DType) -> Any:
    """The largest in-bounds start of a window of size ``s`` in an axis of size
    ``d``, at the logical sizes, as a scalar of ``dtype``."""
    return ops.sub(env.size(d, dtype), env.size(s, dtype))


def _clamp_start(env: PaddedEnv, i: Any, d: Dim, s: Dim, dtype: DType) -> Any:
    return ops.clamp(np.zeros((), dtype), i, _logical_max_start(env, d, s, dtype))


def _shrink(x: Any, shape: Sequence[int]) -> Any:
    """``x`` cut back to ``shape`` (undoing growth at the end of its axes)."""
    for a, n in enumerate(shape):
        x = ops.slice_axis(x, a, 0, n)
    return x


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice


def _dynamic_slice(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, slice_sizes: Any) -> Any:
    x, idx = vals[0], list(vals[1:])
    aval = avals[0]
    for a, (d, s) in enumerate(zip(aval.shape, slice_sizes)):
        if env.is_padded(d) or env.is_padded(s):
            idx[a] = _clamp_start(env, idx[a], d, s, avals[1 + a].dtype)
        if env.is_padded(s):
            x = ops.pad_high(x, a, env.padded_dim(s))
    return st.dynamic_slice_p.bind(x, *idx, slice_sizes=env.padded_shape(slice_sizes))


def _dynamic_update_slice(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray]) -> Any:
    x, u, idx = vals[0], vals[1], list(vals[2:])
    xa, ua = avals[0], avals[1]
    moved = False
    for a, (d, s) in enumerate(zip(xa.shape, ua.shape)):
        if env.is_padded(d) or env.is_padded(s):
            idx[a] = _clamp_start(env, idx[a], d, s, avals[2 + a].dtype)
            moved = True
        if env.is_padded(s):
            x = ops.pad_high(x, a, env.padded_dim(s))
    if not moved:
        return st.dynamic_update_slice_p.bind(x, u, *idx)
    valid = env.valid(ua)
    if valid is not None:
        current = st.dynamic_slice_p.bind(x, *idx, slice_sizes=env.padded_shape(ua.shape))
        u = ops.select(valid, u, ops.as_dtype(current, xa.dtype, ua.weak_type))
    out = st.dynamic_update_slice_p.bind(x, u, *idx)
    return _shrink(out, env.padded_shape(xa.shape))


padded_rules.define(_dynamic_slice, st.dynamic_slice_p, per_axis=True)
padded_rules.define(_dynamic_update_slice, st.dynamic_update_slice_p, per_axis=True)


# ---------------------------------------------------------------------------
# Index vectors against logical bounds


def _max_starts(env: PaddedEnv, index_shape: Sequence[int], bounds: Sequence[tuple[Dim, Dim]], dtype: DType) -> Any:
    """An array of ``index_shape`` holding, along its last axis, the largest
    in-bounds start for each entry of the index vector."""
    batch = tuple(index_shape[:-1])
    parts = [ops.full((*batch, 1), _logical_max_start(env, d, s, dtype), dtype) for d, s in bounds]
    return ops.concatenate(parts, len(batch))


def _out_of_bounds(idx: Any, hi: Any, index_shape: Sequence[int], dtype: DType) -> Any:
    """Per batch position: whether any start of the index vector is out of ``[0, hi]``."""
    zero = ops.full(index_shape, 0, dtype)
    bad = ops.logical_or(ops.lt(idx, zero), ops.lt(hi, idx))
    return red.reduce_or_p.bind(bad, axes=(len(index_shape) - 1,))


# ---------------------------------------------------------------------------
# gather


def _gather(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension_numbers: Any, slice_sizes: Any,
    indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, fill_value: Any,
) -> Any:  # fmt: skip
    operand, idx = vals
    oaval, iaval = avals
    dn = dimension_numbers
    index_map = tuple(dn.start_index_map)
    sizes = env.padded_shape(slice_sizes)
    params = dict(dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, fill_value=fill_value)  # fmt: skip
    if not any(env.is_padded(oaval.shape[od]) or env.is_padded(slice_sizes[od]) for od in index_map):
        return st.gather_p.bind(operand, idx, mode=mode, **params)
    for od in index_map:
        if env.is_padded(slice_sizes[od]):
            operand = ops.pad_high(operand, od, sizes[od])
    dt = iaval.dtype
    ishape = env.padded_shape(iaval.shape)
    hi = _max_starts(env, ishape, [(oaval.shape[od], slice_sizes[od]) for od in index_map], dt)
    clamped = ops.clamp(ops.full(ishape, 0, dt), idx, hi)
    # Clamping may repeat indices and break their order.
    params.update(indices_are_sorted=False, unique_indices=False)
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return st.gather_p.bind(operand, clamped, mode=mode, **params)
    out = st.gather_p.bind(operand, clamped, mode=GatherScatterMode.CLIP, **params)
    oob = _out_of_bounds(idx, hi, ishape, dt)
    out_shape = tuple(ops.aval(out).shape)
    batch_dims = tuple(a for a in range(len(out_shape)) if a not in dn.offset_dims)
    oob = ops.broadcast_along(oob, out_shape, batch_dims)
    fill = default_fill_value(oaval.dtype) if fill_value is None else fill_value
    return ops.select(oob, ops.full(out_shape, fill, oaval.dtype, oaval.weak_type), out)


padded_rules.define(_gather, st.gather_p, per_axis=True)


# ---------------------------------------------------------------------------
# scatter


def _split_window(
    env: PaddedEnv, idx: Any, drop: Any, dn: ScatterDimensionNumbers, uaval: ShapedArray, od: int, u: int
) -> tuple[Any, Any, ScatterDimensionNumbers]:
    """The window along operand axis ``od`` (updates axis ``u``, padded) split
    into windows of size 1, one per entry: an index batch dimension more, whose
    index vectors start ``od`` at the window's start plus the entry; entries
    past the window's logical size are dropped (in ``drop``, true where an
    index vector is dropped, ``None`` for none)."""
    w = uaval.shape[u]
    scatter_dims = sorted([i for i in range(uaval.ndim) if i not in dn.update_window_dims] + [u])
    p = scatter_dims.index(u)  # the new batch dimension of the indices
    ishape = tuple(ops.aval(idx).shape)
    dt = ops.aval(idx).dtype
    batch = (*ishape[: p], env.padded_dim(w), *ishape[p:-1])
    keep_dims = tuple(i for i in range(len(batch) + 1) if i != p)
    idx = ops.broadcast_in_dim(idx, (*batch, ishape[-1]), keep_dims)
    index_map = tuple(dn.scatter_dims_to_operand_dims)
    if od in index_map:
        full = (*batch, ishape[-1])
        column = ops.eq(ops.iota(dt, full, len(batch)), np.asarray(index_map.index(od), dt))
        idx = ops.add(idx, ops.mul(ops.iota(dt, full, p), ops.convert(column, dt)))
    else:
        idx = ops.concatenate([idx, ops.iota(dt, (*batch, 1), p)], len(batch))
        index_map = (*index_map, od)
    past = ops.logical_not(ops.lt(ops.iota(dt, batch, p), env.size(w, dt)))
    if drop is not None:
        drop = ops.logical_or(ops.broadcast_in_dim(drop, batch, keep_dims[:-1]), past)
    else:
        drop = past
    new = ScatterDimensionNumbers(
        update_window_dims=tuple(x for x in dn.update_window_dims if x != u),
        inserted_window_dims=tuple(sorted((*dn.inserted_window_dims, od))),
        scatter_dims_to_operand_dims=index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=tuple(i + 1 if i >= p else i for i in dn.scatter_indices_batching_dims),
    )
    return idx, drop, new


def _scatter(prim: Primitive, identity: Callable[[DType], Any] | None) -> Callable[..., Any]:
    def rule(
        env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension_numbers: Any,
        indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
    ) -> Any:  # fmt: skip
        operand, idx, updates = vals
        oaval, iaval, uaval = avals
        dn = dimension_numbers
        index_map = tuple(dn.scatter_dims_to_operand_dims)
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        op_window = [d for d in range(oaval.ndim) if d not in dropped]
        window_of = dict(zip(op_window, dn.update_window_dims))  # operand dim -> updates dim

        def window(od: int) -> Dim:
            return uaval.shape[window_of[od]] if od in window_of else 1

        # Padded windows shorter than their axis would write their padding onto logical elements.
        split = [
            od for od, u in window_of.items()
            if env.is_padded(uaval.shape[u]) and not definitely_equal(uaval.shape[u], oaval.shape[od])
        ]  # fmt: skip
        padded_windows = [u for u in dn.update_window_dims if env.is_padded(uaval.shape[u])]
        if padded_windows and identity is not None:
            # Combining the identity changes nothing: no window needs splitting.
            updates = env.fill(updates, uaval, padded_windows, identity(uaval.dtype))
            split = []
        starts_move = any(env.is_padded(oaval.shape[od]) or env.is_padded(window(od)) for od in index_map)
        valid_batch = env.valid(ShapedArray(iaval.shape[:-1], dtypes.bool_))
        params = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)
        if not starts_move and valid_batch is None and not split:
            return prim.bind(operand, idx, updates, dimension_numbers=dn, mode=mode, **params)
        grown = env.padded_shape(oaval.shape)
        for od in index_map:
            if env.is_padded(window(od)):
                operand = ops.pad_high(operand, od, env.padded_dim(window(od)))
        dt = iaval.dtype
        ishape = env.padded_shape(iaval.shape)
        drop = None if valid_batch is None else ops.logical_not(valid_batch)
        if starts_move or split or mode is GatherScatterMode.CLIP:
            # (Clipping is redone here even when the bounds are not padded: the
            # dropping below switches the primitive to FILL_OR_DROP.)
            hi = _max_starts(env, ishape, [(oaval.shape[od], window(od)) for od in index_map], dt)
            if mode is GatherScatterMode.CLIP:
                idx = ops.clamp(ops.full(ishape, 0, dt), idx, hi)
            else:
                oob = _out_of_bounds(idx, hi, ishape, dt)
                drop = oob if drop is None else ops.logical_or(drop, oob)
        for od in split:
            idx, drop, dn = _split_window(env, idx, drop, dn, uaval, od, window_of[od])
        if drop is not None:
            # A start no window fits at: the primitive drops it.
            shape = tuple(ops.aval(idx).shape)
            nowhere = np.iinfo(dt).max if dtypes.is_unsigned_int(dt) else -1
            drop = ops.broadcast_along(drop, shape, tuple(range(len(shape) - 1)))
            idx = ops.select(drop, ops.full(shape, nowhere, dt), idx)
            mode = GatherScatterMode.FILL_OR_DROP
            params.update(indices_are_sorted=False, unique_indices=False)
        out = prim.bind(operand, idx, updates, dimension_numbers=dn, mode=mode, **params)
        return _shrink(out, grown)

    rule.__name__ = f"{prim.name}_padded_rule"
    return rule


for _p, _red in ((st.scatter_p, None), (st.scatter_add_p, red.reduce_sum_p), (st.scatter_mul_p, red.reduce_prod_p),
                 (st.scatter_min_p, red.reduce_min_p), (st.scatter_max_p, red.reduce_max_p)):  # fmt: skip
    padded_rules.define(_scatter(_p, None if _red is None else _red.identity), _p, per_axis=True)
