"""Dynamic slicing, ``gather`` and the ``scatter`` family.

Their semantics depend on the operand's size through clamping and
out-of-bounds handling, which must use the *logical* size.  The rules clamp
(or test) the start indices against the logical bounds themselves, and grow
the operand at the end by the window's padded size wherever the window has a
symbolic size, so that the primitive's own clamping against the padded
bounds never moves a logically valid start.

* ``dynamic_update_slice`` blends an update with symbolic sizes into the
  operand's current values, so its padding overwrites nothing.
* ``gather`` in ``FILL_OR_DROP`` mode gathers from clamped starts and fills
  the windows that are out of logical bounds.
* ``scatter``: updates at padding positions of the indices' batch dimensions,
  and windows out of logical bounds in drop mode, are given an
  out-of-bounds start and dropped.  The combining scatters fill the padding of
  symbolic update windows with their identity; plain ``scatter`` accepts a
  symbolic window only where it spans the whole operand axis (as
  ``x.at[i].set(row)`` does), whose padding then lands in the operand's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import Primitive, ShapedArray, dtypes, ops
from plait_core.dims import Dim, definitely_equal
from plait_core.primitives import elementwise as ew
from plait_core.primitives import reductions as red
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import GatherScatterMode, default_fill_value
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules

DType = np.dtype[Any]


def _logical_max_start(env: MaskEnv, d: Dim, s: Dim, dtype: DType) -> Any:
    """The largest in-bounds start of a window of size ``s`` in an axis of size
    ``d``, at the logical sizes, as a scalar of ``dtype``."""
    return ew.sub_p.bind(env.size(d, dtype), env.size(s, dtype))


def _clamp_start(env: MaskEnv, i: Any, d: Dim, s: Dim, dtype: DType) -> Any:
    return ops.clamp(np.zeros((), dtype), i, _logical_max_start(env, d, s, dtype))


def _shrink(x: Any, shape: Sequence[int]) -> Any:
    """``x`` cut back to ``shape`` (undoing growth at the end of its axes)."""
    for a, n in enumerate(shape):
        x = ops.slice_axis(x, a, 0, n)
    return x


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice


def _dynamic_slice_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, slice_sizes: Any) -> Any:
    x, idx = vals[0], list(vals[1:])
    aval = avals[0]
    for a, (d, s) in enumerate(zip(aval.shape, slice_sizes)):
        if is_ragged(d) or is_ragged(s):
            idx[a] = _clamp_start(env, idx[a], d, s, avals[1 + a].dtype)
        if is_ragged(s):
            x = ops.pad_high(x, a, env.padded_dim(s))
    return st.dynamic_slice_p.bind(x, *idx, slice_sizes=env.padded_shape(slice_sizes))


def _dynamic_update_slice_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray]) -> Any:
    x, u, idx = vals[0], vals[1], list(vals[2:])
    xa, ua = avals[0], avals[1]
    moved = False
    for a, (d, s) in enumerate(zip(xa.shape, ua.shape)):
        if is_ragged(d) or is_ragged(s):
            idx[a] = _clamp_start(env, idx[a], d, s, avals[2 + a].dtype)
            moved = True
        if is_ragged(s):
            x = ops.pad_high(x, a, env.padded_dim(s))
    if not moved:
        return st.dynamic_update_slice_p.bind(x, u, *idx)
    valid = env.valid(ua)
    if valid is not None:
        current = st.dynamic_slice_p.bind(x, *idx, slice_sizes=env.padded_shape(ua.shape))
        u = ops.select(valid, u, ops.as_dtype(current, xa.dtype, ua.weak_type))
    out = st.dynamic_update_slice_p.bind(x, u, *idx)
    return _shrink(out, env.padded_shape(xa.shape))


masking_rules[st.dynamic_slice_p] = _dynamic_slice_rule
masking_rules[st.dynamic_update_slice_p] = _dynamic_update_slice_rule


# ---------------------------------------------------------------------------
# Index vectors against logical bounds


def _max_starts(env: MaskEnv, index_shape: Sequence[int], bounds: Sequence[tuple[Dim, Dim]], dtype: DType) -> Any:
    """An array of ``index_shape`` holding, along its last axis, the largest
    in-bounds start for each entry of the index vector."""
    batch = tuple(index_shape[:-1])
    parts = [
        st.broadcast_in_dim_p.bind(_logical_max_start(env, d, s, dtype), shape=(*batch, 1), broadcast_dimensions=())
        for d, s in bounds
    ]
    return parts[0] if len(parts) == 1 else st.concatenate_p.bind(*parts, dimension=len(batch))


def _out_of_bounds(idx: Any, hi: Any, index_shape: Sequence[int], dtype: DType) -> Any:
    """Per batch position: whether any start of the index vector is out of ``[0, hi]``."""
    zero = ops.full(index_shape, 0, dtype)
    bad = ops.logical_or(ops.lt(idx, zero), ops.lt(hi, idx))
    return red.reduce_or_p.bind(bad, axes=(len(index_shape) - 1,))


# ---------------------------------------------------------------------------
# gather


def _gather_rule(
    env: MaskEnv,
    vals: Sequence[Any],
    avals: Sequence[ShapedArray],
    *,
    dimension_numbers: Any,
    slice_sizes: Any,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: GatherScatterMode,
    fill_value: Any,
) -> Any:
    operand, idx = vals
    oaval, iaval = avals
    dn = dimension_numbers
    index_map = tuple(dn.start_index_map)
    sizes = env.padded_shape(slice_sizes)
    params = dict(dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, fill_value=fill_value)
    if not any(is_ragged(oaval.shape[od]) or is_ragged(slice_sizes[od]) for od in index_map):
        return st.gather_p.bind(operand, idx, mode=mode, **params)
    for od in index_map:
        if is_ragged(slice_sizes[od]):
            operand = ops.pad_high(operand, od, sizes[od])
    dt = iaval.dtype
    ishape = env.padded_shape(iaval.shape)
    hi = _max_starts(env, ishape, [(oaval.shape[od], slice_sizes[od]) for od in index_map], dt)
    clamped = ops.clamp(ops.full(ishape, 0, dt), idx, hi)
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return st.gather_p.bind(operand, clamped, mode=mode, **params)
    out = st.gather_p.bind(operand, clamped, mode=GatherScatterMode.CLIP, **params)
    oob = _out_of_bounds(idx, hi, ishape, dt)
    out_aval = st.gather_p.abstract_eval(oaval, iaval, mode=mode, **dict(params, slice_sizes=slice_sizes))
    out_shape = env.padded_shape(out_aval.shape)
    batch_dims = tuple(a for a in range(len(out_shape)) if a not in dn.offset_dims)
    oob = ops.broadcast_along(oob, out_shape, batch_dims)
    fill = default_fill_value(oaval.dtype) if fill_value is None else fill_value
    return ops.select(oob, ops.full(out_shape, fill, oaval.dtype, oaval.weak_type), out)


masking_rules[st.gather_p] = _gather_rule


# ---------------------------------------------------------------------------
# scatter


def _scatter_rule(prim: Primitive, identity: Callable[[DType], Any] | None) -> Callable[..., Any]:
    def rule(
        env: MaskEnv,
        vals: Sequence[Any],
        avals: Sequence[ShapedArray],
        *,
        dimension_numbers: Any,
        indices_are_sorted: bool,
        unique_indices: bool,
        mode: GatherScatterMode,
    ) -> Any:
        operand, idx, updates = vals
        oaval, iaval, uaval = avals
        dn = dimension_numbers
        index_map = tuple(dn.scatter_dims_to_operand_dims)
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        op_window = [d for d in range(oaval.ndim) if d not in dropped]
        window_of = dict(zip(op_window, dn.update_window_dims))  # operand dim -> updates dim

        def window(od: int) -> Dim:
            return uaval.shape[window_of[od]] if od in window_of else 1

        ragged_windows = [u for u in dn.update_window_dims if is_ragged(uaval.shape[u])]
        if ragged_windows and identity is None:
            for od, u in window_of.items():
                w = uaval.shape[u]
                if is_ragged(w) and not definitely_equal(w, oaval.shape[od]):
                    raise NotImplementedError(
                        f"mask: {prim.name} with an update window of symbolic size {w} (updates "
                        f"{uaval.str_short()}) into dimension {od} of size {oaval.shape[od]} of the operand "
                        f"{oaval.str_short()} is not supported: the window's padding would overwrite "
                        "logical elements. A window spanning the whole axis is supported"
                    )
        elif ragged_windows and identity is not None:
            updates = env.fill(updates, uaval, ragged_windows, identity(uaval.dtype))
        ragged_starts = any(is_ragged(oaval.shape[od]) or is_ragged(window(od)) for od in index_map)
        valid_batch = env.valid(ShapedArray(iaval.shape[:-1], dtypes.bool_))
        params = dict(dimension_numbers=dn, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)
        if not ragged_starts and valid_batch is None:
            return prim.bind(operand, idx, updates, mode=mode, **params)
        grown = env.padded_shape(oaval.shape)
        for od in index_map:
            if is_ragged(window(od)):
                operand = ops.pad_high(operand, od, env.padded_dim(window(od)))
        dt = iaval.dtype
        ishape = env.padded_shape(iaval.shape)
        drop = None if valid_batch is None else ew.not_p.bind(valid_batch)
        if ragged_starts or mode is GatherScatterMode.CLIP:
            # (Clipping is redone here even when the bounds are not symbolic: the
            # dropping below switches the primitive to FILL_OR_DROP.)
            hi = _max_starts(env, ishape, [(oaval.shape[od], window(od)) for od in index_map], dt)
            if mode is GatherScatterMode.CLIP:
                idx = ops.clamp(ops.full(ishape, 0, dt), idx, hi)
            else:
                oob = _out_of_bounds(idx, hi, ishape, dt)
                drop = oob if drop is None else ops.logical_or(drop, oob)
        if drop is not None:
            # A start no window fits at: the primitive drops it.
            nowhere = np.iinfo(dt).max if dtypes.is_unsigned_int(dt) else -1
            drop = ops.broadcast_along(drop, ishape, tuple(range(len(ishape) - 1)))
            idx = ops.select(drop, ops.full(ishape, nowhere, dt), idx)
            mode = GatherScatterMode.FILL_OR_DROP
        out = prim.bind(operand, idx, updates, mode=mode, **params)
        return _shrink(out, grown)

    return rule


masking_rules[st.scatter_p] = _scatter_rule(st.scatter_p, None)
masking_rules[st.scatter_add_p] = _scatter_rule(st.scatter_add_p, red.reduce_sum_p.identity)
masking_rules[st.scatter_mul_p] = _scatter_rule(st.scatter_mul_p, red.reduce_prod_p.identity)
masking_rules[st.scatter_min_p] = _scatter_rule(st.scatter_min_p, red.reduce_min_p.identity)
masking_rules[st.scatter_max_p] = _scatter_rule(st.scatter_max_p, red.reduce_max_p.identity)
