"""JVP and transpose rules of the structural primitives.

Every structural primitive moves elements without arithmetic, so each is
linear in its array operands (not in its indices): the JVP applies the
primitive to the tangents and the transpose moves cotangents back
(``slice`` <-> ``pad``, ``gather`` -> ``scatter_add``, ``broadcast_in_dim``
-> ``reduce_sum``, ...).  ``scatter`` and its ``mul/min/max`` variants are
not linear; their JVPs are built from linear pieces (``select``,
``scatter_add``, ``gather``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_autodiff import ops
from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import (
    declare_nonlinear,
    def_transpose,
    defjvp_zero,
    deflinear,
    linear_only_in,
)
from plait_autodiff.tangents import Zero, add_tangents, instantiate, zeros_of
from plait_autodiff.transpose import NonlinearError, is_undefined
from plait_core import dtypes
from plait_core.dims import definitely_equal, dim_as_int
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import GatherDimensionNumbers, ScatterDimensionNumbers

defjvp_zero(st.iota_p)


# ---------------------------------------------------------------------------
# Shape changes


def _broadcast_in_dim_transpose(ct: Any, x: Any, *, shape: Any, broadcast_dimensions: tuple[int, ...]) -> list[Any]:
    xs = x.aval.shape
    new = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    stretched = [
        b for i, b in enumerate(broadcast_dimensions) if definitely_equal(xs[i], 1) and not definitely_equal(shape[b], 1)
    ]
    return [ops.reshape(ops.reduce_sum(ct, new + stretched), xs)]


deflinear(st.broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _reshape_transpose(ct: Any, x: Any, *, new_sizes: Any, dimensions: tuple[int, ...] | None) -> list[Any]:
    if dimensions is None:
        return [ops.reshape(ct, x.aval.shape)]
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    return [ops.transpose(ops.reshape(ct, permuted), tuple(np.argsort(dimensions)))]


deflinear(st.reshape_p, _reshape_transpose)
deflinear(st.squeeze_p, lambda ct, x, *, dimensions: [st.expand_dims_p.bind(ct, dimensions=dimensions)])
deflinear(st.expand_dims_p, lambda ct, x, *, dimensions: [st.squeeze_p.bind(ct, dimensions=dimensions)])
deflinear(st.transpose_p, lambda ct, x, *, permutation: [ops.transpose(ct, tuple(np.argsort(permutation)))])
deflinear(st.rev_p, lambda ct, x, *, dimensions: [ops.rev(ct, dimensions)])
deflinear(st.copy_p, lambda ct, x: [ct])


# ---------------------------------------------------------------------------
# pad, concatenate, slice


def _unpad(ct: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """The operand's cotangent of a ``pad``: crop the edges (growing back what
    negative padding cropped) and skip the interior padding."""
    unpadded = ops.pad(ct, ops.const(ct, 0), [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    shape = ops.aval(unpadded).shape
    return ops.slice_(unpadded, (0,) * len(shape), shape, tuple(i + 1 for _, _, i in padding_config))


def _pad_transpose(ct: Any, x: Any, padding_value: Any, *, padding_config: Any) -> list[Any]:
    ct_x = _unpad(ct, padding_config)
    ct_value = None
    if is_undefined(padding_value):
        everything = ops.reduce_sum(ct, range(ops.aval(ct).ndim))
        ct_value = ops.sub(everything, ops.reduce_sum(ct_x, range(ops.aval(ct_x).ndim)))
    return [ct_x if is_undefined(x) else None, ct_value]


deflinear(st.pad_p, _pad_transpose)


def _concatenate_transpose(ct: Any, *xs: Any, dimension: int) -> list[Any]:
    out: list[Any] = []
    shape = ops.aval(ct).shape
    start: Any = 0
    for x in xs:
        size = ops.aval(x).shape[dimension] if not is_undefined(x) else x.aval.shape[dimension]
        if is_undefined(x):
            lo = [0] * len(shape)
            hi = list(shape)
            lo[dimension], hi[dimension] = start, start + size
            out.append(ops.slice_(ct, lo, hi))
        else:
            out.append(None)
        start = start + size
    return out


deflinear(st.concatenate_p, _concatenate_transpose)


def _slice_transpose(ct: Any, x: Any, *, start_indices: Any, limit_indices: Any, strides: Any) -> list[Any]:
    xs = x.aval.shape
    ints = [dim_as_int(d, "the transpose of slice") for d in (*start_indices, *limit_indices, *xs)]
    n = len(xs)
    starts, dims = ints[:n], ints[2 * n :]
    steps = strides or (1,) * n
    out_shape = ops.aval(ct).shape
    config = []
    for s, d, k, m in zip(starts, dims, steps, out_shape):
        m = dim_as_int(m, "the transpose of slice")
        used = 0 if m == 0 else 1 + (m - 1) * k  # elements the strided slice spans
        config.append((s, d - s - used, k - 1) if m else (s, d - s, 0))
    return [ops.pad(ct, ops.const(ct, 0), config)]


deflinear(st.slice_p, _slice_transpose)


# ---------------------------------------------------------------------------
# dynamic_slice, dynamic_update_slice


def _dynamic_slice_transpose(ct: Any, x: Any, *indices: Any, slice_sizes: Any) -> list[Any]:
    linear_only_in(st.dynamic_slice_p, (x, *indices), (0,))
    zeros = zeros_of(x.aval)
    return [st.dynamic_update_slice_p.bind(zeros, ct, *indices), *[None] * len(indices)]


deflinear(st.dynamic_slice_p, _dynamic_slice_transpose, linear_argnums=(0,))


def _dynamic_update_slice_transpose(ct: Any, x: Any, update: Any, *indices: Any) -> list[Any]:
    linear_only_in(st.dynamic_update_slice_p, (x, update, *indices), (0, 1))
    upd_aval = update.aval if is_undefined(update) else ops.aval(update)
    ct_x = st.dynamic_update_slice_p.bind(ct, zeros_of(upd_aval), *indices) if is_undefined(x) else None
    ct_u = st.dynamic_slice_p.bind(ct, *indices, slice_sizes=tuple(upd_aval.shape)) if is_undefined(update) else None
    return [ct_x, ct_u, *[None] * len(indices)]


deflinear(st.dynamic_update_slice_p, _dynamic_update_slice_transpose, linear_argnums=(0, 1))


# ---------------------------------------------------------------------------
# gather and scatter_add: each other's transpose


def scatter_dnums_of(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    """The scatter that sends values back where a gather took them from."""
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )


def gather_dnums_of(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    """The gather that reads the operand windows a scatter writes to."""
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )


def gather_slice_sizes(operand_ndim: int, updates_shape: Sequence[Any], dn: ScatterDimensionNumbers) -> tuple[Any, ...]:
    """The window sizes of a scatter, in operand dimensions."""
    window = iter(updates_shape[d] for d in dn.update_window_dims)
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    return tuple(1 if d in dropped else next(window) for d in range(operand_ndim))


def gather_windows(x: Any, indices: Any, updates_shape: Sequence[Any], params: dict[str, Any]) -> Any:
    """For a scatter with ``params``: the windows of ``x`` it writes to, shaped like its updates
    (windows the scatter drops read as 0)."""
    dn: ScatterDimensionNumbers = params["dimension_numbers"]
    return st.gather_p.bind(
        x, indices,
        dimension_numbers=gather_dnums_of(dn),
        slice_sizes=gather_slice_sizes(ops.aval(x).ndim, updates_shape, dn),
        indices_are_sorted=params["indices_are_sorted"],
        unique_indices=params["unique_indices"],
        mode=params["mode"],
        fill_value=0,
    )  # fmt: skip


def _gather_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    ans = st.gather_p.bind(*primals, **params)
    t = tangents[0]
    if type(t) is Zero:
        return ans, Zero.from_primal_value(ans)
    return ans, st.gather_p.bind(t, primals[1], **dict(params, fill_value=0))


jvp_rules[st.gather_p] = _gather_jvp


@def_transpose(st.gather_p)
def _gather_transpose(ct: Any, operand: Any, indices: Any, **params: Any) -> list[Any]:
    linear_only_in(st.gather_p, (operand, indices), (0,))
    out = st.scatter_add_p.bind(
        zeros_of(operand.aval), indices, ct,
        dimension_numbers=scatter_dnums_of(params["dimension_numbers"]),
        indices_are_sorted=params["indices_are_sorted"],
        unique_indices=params["unique_indices"],
        mode=params["mode"],
    )  # fmt: skip
    return [out, None]


deflinear(st.scatter_add_p, None, linear_argnums=(0, 2))


@def_transpose(st.scatter_add_p)
def _scatter_add_transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> list[Any]:
    linear_only_in(st.scatter_add_p, (operand, indices, updates), (0, 2))
    ct_u = None
    if is_undefined(updates):
        ct_u = gather_windows(ct, indices, updates.aval.shape, params)
    return [ct if is_undefined(operand) else None, None, ct_u]


# ---------------------------------------------------------------------------
# scatter: the last update written to a position wins


def _update_ids(updates: Any, dn: ScatterDimensionNumbers) -> Any:
    """Each update window's number (from 1), broadcast over the window: int32 of the updates' shape."""
    shape = ops.aval(updates).shape
    batch = [d for d in range(len(shape)) if d not in dn.update_window_dims]
    count: Any = 1
    for d in batch:
        count = count * shape[d]
    ids = ops.add(ops.iota(dtypes.int32, (count,), 0), np.int32(1))
    ids = ops.reshape(ids, tuple(shape[d] for d in batch))
    return ops.broadcast_in_dim(ids, shape, batch)


def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    operand, indices, updates = primals
    t_op, _, t_upd = tangents
    ans = st.scatter_p.bind(operand, indices, updates, **params)
    if type(t_op) is Zero and type(t_upd) is Zero:
        return ans, Zero.from_primal_value(ans)
    if params["unique_indices"]:
        return ans, st.scatter_p.bind(instantiate(t_op), indices, instantiate(t_upd), **params)
    # Find which update won each position, then scatter-add only the winners' tangents.
    ids = _update_ids(updates, params["dimension_numbers"])
    op_shape = ops.aval(operand).shape
    scattered = st.scatter_p.bind(ops.full(op_shape, 0, dtypes.int32), indices, ids, **params)
    winners = ops.eq(ids, gather_windows(scattered, indices, ops.aval(updates).shape, params))
    kept_op = ops.select(ops.eq(scattered, np.int32(0)), instantiate(t_op), zeros_of(ops.aval(ans)))
    t_u = instantiate(t_upd)
    kept_upd = ops.select(winners, t_u, ops.zeros_like(t_u))
    return ans, st.scatter_add_p.bind(kept_op, indices, kept_upd, **params)


jvp_rules[st.scatter_p] = _scatter_jvp


@def_transpose(st.scatter_p)
def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> list[Any]:
    linear_only_in(st.scatter_p, (operand, indices, updates), (0, 2))
    if not params["unique_indices"]:
        raise NonlinearError(
            "cannot transpose scatter with unique_indices=False: overlapping updates make it not linear; "
            "differentiate it with grad/vjp instead"
        )
    upd_aval = updates.aval if is_undefined(updates) else ops.aval(updates)
    ct_op = st.scatter_p.bind(ct, indices, zeros_of(upd_aval), **params) if is_undefined(operand) else None
    ct_u = gather_windows(ct, indices, upd_aval.shape, params) if is_undefined(updates) else None
    return [ct_op, None, ct_u]


# ---------------------------------------------------------------------------
# scatter_mul: linear in the operand; in the updates only with unique indices


def _scatter_mul_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    operand, indices, updates = primals
    t_op, _, t_upd = tangents
    ans = st.scatter_mul_p.bind(operand, indices, updates, **params)
    out: Any = Zero.from_primal_value(ans)
    if type(t_op) is not Zero:
        out = st.scatter_mul_p.bind(t_op, indices, updates, **params)
    if type(t_upd) is not Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul can be differentiated with respect to its updates only with unique_indices=True "
                "(several updates of one position multiply together)"
            )
        zeros = zeros_of(ops.aval(ans))
        contrib = ops.mul(gather_windows(operand, indices, ops.aval(updates).shape, params), t_upd)
        out = add_tangents(out, st.scatter_add_p.bind(zeros, indices, contrib, **params))
    return ans, out


jvp_rules[st.scatter_mul_p] = _scatter_mul_jvp


@def_transpose(st.scatter_mul_p)
def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> list[Any]:
    if is_undefined(operand) and is_undefined(updates):
        raise NonlinearError("cannot transpose scatter_mul in both its operand and its updates: it is not linear")
    linear_only_in(st.scatter_mul_p, (operand, indices, updates), (0, 2))
    if is_undefined(operand):
        return [st.scatter_mul_p.bind(ct, indices, updates, **params), None, None]
    if not params["unique_indices"]:
        raise NonlinearError("cannot transpose scatter_mul in its updates unless unique_indices=True")
    prod = ops.mul(ct, operand)
    return [None, None, gather_windows(prod, indices, updates.aval.shape, params)]


# ---------------------------------------------------------------------------
# scatter_min / scatter_max: the tangent of whichever value wins (ties share)


def _scatter_extremal_jvp(prim: Any) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        t_op, _, t_upd = tangents
        ans = prim.bind(operand, indices, updates, **params)
        a = ops.aval(ans)
        upd_shape = ops.aval(updates).shape
        one_u, zero_u = ops.full(upd_shape, 1, a.dtype), ops.full(upd_shape, 0, a.dtype)
        one, zero = ops.full(a.shape, 1, a.dtype), ops.full(a.shape, 0, a.dtype)
        op_wins = ops.eq(operand, ans)
        upd_wins = ops.eq(updates, gather_windows(ans, indices, upd_shape, params))
        count = ops.add(ops.select(op_wins, one, zero), st.scatter_add_p.bind(zero, indices, ops.select(upd_wins, one_u, zero_u), **params))
        count = ops.select(ops.eq(count, zero), one, count)
        total: Any = Zero(a)
        if type(t_op) is not Zero:
            total = ops.select(op_wins, t_op, zero)
        if type(t_upd) is not Zero:
            total = add_tangents(total, st.scatter_add_p.bind(zero, indices, ops.select(upd_wins, t_upd, zero_u), **params))
        return ans, ops.div(instantiate(total), count)

    return rule


jvp_rules[st.scatter_min_p] = _scatter_extremal_jvp(st.scatter_min_p)
jvp_rules[st.scatter_max_p] = _scatter_extremal_jvp(st.scatter_max_p)

declare_nonlinear(st.scatter_min_p, st.scatter_max_p, st.iota_p)
