"""JVP and transpose rules of the structural primitives.

Every structural primitive moves elements without arithmetic, so each is
linear in its array operands (not in its indices): the JVP applies the
primitive to the tangents and the transpose moves cotangents back
(``slice`` <-> ``pad``, ``gather`` -> ``scatter_add``, ``broadcast_in_dim``
-> ``reduce_sum``, ...).  ``scatter`` and its ``mul/min/max`` variants are
not linear; their JVPs are built from linear pieces (``select``,
``scatter_add``, ``gather``).

Sizes may be symbolic (``grad`` inside ``mask`` or ``vmap`` over piles): the
transpose of a slice is a ``pad`` when its amounts are constants
(``x[1:]``, ``x[:-1]``) and otherwise a ``dynamic_update_slice`` of the
cotangent into zeros at the start's value (``x[-1]`` starts at ``n - 1``).
Windows of static size along a symbolic axis (``x[:2]``), which core cannot
prove in range, are read from and written to grown tangents
(:mod:`plait_autodiff.rules.windows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import (
    declare_nonlinear,
    def_transpose,
    defjvp_zero,
    deflinear,
    linear_only_in,
)
from plait_autodiff.rules.windows import clamped_starts, grow, grows, indexed, shrink, window_margins
from plait_autodiff.tangents import Zero, add_tangents, instantiate, zeros_of
from plait_autodiff.transpose import NonlinearError, is_undefined
from plait_core import dtypes, ops
from plait_core.dims import definitely_equal, is_constant_dim, simplify
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import GatherDimensionNumbers, ScatterDimensionNumbers
from plait_core.primitives.linalg import dilated_size

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


def _slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    ans = st.slice_p.bind(x, **params)
    if type(t) is Zero:
        return ans, Zero.from_primal_value(ans)
    starts, limits = params["start_indices"], params["limit_indices"]
    margins = [window_margins(d, lo, hi, "slice") for d, lo, hi in zip(ops.aval(t).shape, starts, limits)]
    if grows(margins):  # a window core cannot prove in range (x[:2] of a ragged axis): see windows.py
        t = grow(t, margins)
        params = dict(
            params,
            start_indices=tuple(lo + b for lo, (b, _) in zip(starts, margins)),
            limit_indices=tuple(hi + b for hi, (b, _) in zip(limits, margins)),
        )
    return ans, st.slice_p.bind(t, **params)


def _slice_transpose(ct: Any, x: Any, *, start_indices: Any, limit_indices: Any, strides: Any) -> list[Any]:
    shape, ct_shape = x.aval.shape, ops.aval(ct).shape
    steps = strides or (1,) * len(shape)
    zero = ops.const(ct, 0)
    if any(k > 1 and not is_constant_dim(m) for m, k in zip(ct_shape, steps)):
        # A strided slice of symbolic length: spread the cotangent first (core's pad rule
        # says whether its span is known for every size).
        ct = ops.pad(ct, zero, [(0, 0, k - 1) for k in steps])
        ct_shape, steps = ops.aval(ct).shape, (1,) * len(shape)
    spans = [dilated_size(m, k) for m, k in zip(ct_shape, steps)]
    config = [(simplify(s), simplify(d - s - u), k - 1) for s, d, u, k in zip(start_indices, shape, spans, steps)]
    if all(type(lo) is int and type(hi) is int for lo, hi, _ in config):
        return [ops.pad(ct, zero, cast(list[tuple[int, int, int]], config))]
    # A start or an end at a symbolic offset (x[-1], x[:2] of an axis of size n): write the
    # cotangent, spread by the strides, into zeros at the start's value.
    ct = ops.pad(ct, zero, [(0, 0, k - 1) for k in steps])
    starts = [ops.dim_value(s, dtypes.int32) for s in start_indices]
    return [ops.dynamic_update_slice(zeros_of(x.aval), ct, starts)]


jvp_rules[st.slice_p] = _slice_jvp
def_transpose(st.slice_p)(_slice_transpose)


# ---------------------------------------------------------------------------
# dynamic_slice, dynamic_update_slice


def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, slice_sizes: Any) -> tuple[Any, Any]:
    x, *indices = primals
    t = tangents[0]
    ans = st.dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if type(t) is Zero:
        return ans, Zero.from_primal_value(ans)
    shape = ops.aval(t).shape
    margins = [window_margins(d, 0, s, "dynamic_slice") for d, s in zip(shape, slice_sizes)]
    if grows(margins):  # a window of static size along a ragged axis: see windows.py
        indices = clamped_starts(indices, shape, slice_sizes, margins)
        t = grow(t, margins)
    return ans, ops.dynamic_slice(t, indices, slice_sizes)


def _dynamic_slice_transpose(ct: Any, x: Any, *indices: Any, slice_sizes: Any) -> list[Any]:
    linear_only_in(st.dynamic_slice_p, (x, *indices), (0,))
    zeros = zeros_of(x.aval)
    return [st.dynamic_update_slice_p.bind(zeros, ct, *indices), *[None] * len(indices)]


jvp_rules[st.dynamic_slice_p] = _dynamic_slice_jvp
def_transpose(st.dynamic_slice_p)(_dynamic_slice_transpose)


def _dynamic_update_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, update, *indices = primals
    t_x, t_u = tangents[0], tangents[1]
    ans = st.dynamic_update_slice_p.bind(x, update, *indices)
    if type(t_x) is Zero and type(t_u) is Zero:
        return ans, Zero.from_primal_value(ans)
    t_x, t_u = instantiate(t_x), instantiate(t_u)
    shape, sizes = ops.aval(t_x).shape, ops.aval(t_u).shape
    margins = [window_margins(d, 0, s, "dynamic_update_slice") for d, s in zip(shape, sizes)]
    if grows(margins):  # an update of static size along a ragged axis: see windows.py
        indices = clamped_starts(indices, shape, sizes, margins)
        t_x = grow(t_x, margins)
    return ans, shrink(ops.dynamic_update_slice(t_x, t_u, indices), shape, margins)


def _dynamic_update_slice_transpose(ct: Any, x: Any, update: Any, *indices: Any) -> list[Any]:
    linear_only_in(st.dynamic_update_slice_p, (x, update, *indices), (0, 1))
    upd_aval = update.aval if is_undefined(update) else ops.aval(update)
    ct_x = st.dynamic_update_slice_p.bind(ct, zeros_of(upd_aval), *indices) if is_undefined(x) else None
    ct_u = st.dynamic_slice_p.bind(ct, *indices, slice_sizes=tuple(upd_aval.shape)) if is_undefined(update) else None
    return [ct_x, ct_u, *[None] * len(indices)]


jvp_rules[st.dynamic_update_slice_p] = _dynamic_update_slice_jvp
def_transpose(st.dynamic_update_slice_p)(_dynamic_update_slice_transpose)


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


def gather(x: Any, indices: Any, **params: Any) -> Any:
    """``gather`` of ``x``, also where core cannot prove its windows in range
    (a window of static size along a ragged axis: see windows.py)."""
    dn: GatherDimensionNumbers = params["dimension_numbers"]
    return indexed(st.gather_p, x, indices, None, params["slice_sizes"], dn.start_index_map, **params)


def scatter(prim: Any, x: Any, indices: Any, updates: Any, **params: Any) -> Any:
    """The scatter ``prim`` into ``x``, also where core cannot prove its windows in range."""
    dn: ScatterDimensionNumbers = params["dimension_numbers"]
    window = gather_slice_sizes(ops.aval(x).ndim, ops.aval(updates).shape, dn)
    return indexed(prim, x, indices, updates, window, dn.scatter_dims_to_operand_dims, **params)


def gather_windows(x: Any, indices: Any, updates_shape: Sequence[Any], params: dict[str, Any]) -> Any:
    """For a scatter with ``params``: the windows of ``x`` it writes to, shaped like its updates
    (windows the scatter drops read as 0)."""
    dn: ScatterDimensionNumbers = params["dimension_numbers"]
    return gather(
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
    return ans, gather(t, primals[1], **dict(params, fill_value=0))


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


def _scatter_add_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    operand, indices, updates = primals
    t_op, _, t_upd = tangents
    ans = st.scatter_add_p.bind(operand, indices, updates, **params)
    if type(t_op) is Zero and type(t_upd) is Zero:
        return ans, Zero.from_primal_value(ans)
    return ans, scatter(st.scatter_add_p, instantiate(t_op), indices, instantiate(t_upd), **params)


jvp_rules[st.scatter_add_p] = _scatter_add_jvp


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
        return ans, scatter(st.scatter_p, instantiate(t_op), indices, instantiate(t_upd), **params)
    # Find which update won each position, then scatter-add only the winners' tangents.
    ids = _update_ids(updates, params["dimension_numbers"])
    op_shape = ops.aval(operand).shape
    scattered = scatter(st.scatter_p, ops.full(op_shape, 0, dtypes.int32), indices, ids, **params)
    winners = ops.eq(ids, gather_windows(scattered, indices, ops.aval(updates).shape, params))
    kept_op = ops.select(ops.eq(scattered, np.int32(0)), instantiate(t_op), zeros_of(ops.aval(ans)))
    t_u = instantiate(t_upd)
    kept_upd = ops.select(winners, t_u, ops.zeros_like(t_u))
    return ans, scatter(st.scatter_add_p, kept_op, indices, kept_upd, **params)


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
# scatter_mul: ``out[p] = x[p] * prod(updates written to p)``.  Linear in the
# operand; in the updates, each update's tangent is scaled by the operand and
# by the product of the *other* updates of its position (1 with unique indices).


def _product_of_others(updates: Any, indices: Any, op_shape: Any, params: dict[str, Any]) -> Any:
    """For each update, the product of the other updates written to its position.

    Computed without dividing by zero: per position, the product of its nonzero
    updates and how many are zero; an update then sees that product divided by
    itself (no zero among the others), the product itself (it is the only zero)
    or 0 (another update is zero)."""
    u = ops.aval(updates)
    zero_u, one_u = ops.full(u.shape, 0, u.dtype), ops.full(u.shape, 1, u.dtype)
    is_zero = ops.eq(updates, zero_u)
    nonzero = ops.select(is_zero, one_u, updates)
    prod = scatter(st.scatter_mul_p, ops.full(op_shape, 1, u.dtype), indices, nonzero, **params)
    zeros = scatter(st.scatter_add_p, ops.full(op_shape, 0, dtypes.int32), indices,
                    ops.convert(is_zero, dtypes.int32), **params)
    prod_u = gather_windows(prod, indices, u.shape, params)
    zeros_u = gather_windows(zeros, indices, u.shape, params)
    others_zero = ops.sub(zeros_u, ops.convert(is_zero, dtypes.int32))
    none_zero = ops.eq(others_zero, ops.full(u.shape, 0, dtypes.int32))
    own_excluded = ops.select(is_zero, prod_u, ops.div(prod_u, nonzero))
    return ops.select(none_zero, own_excluded, zero_u)


def _scatter_mul_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    operand, indices, updates = primals
    t_op, _, t_upd = tangents
    ans = st.scatter_mul_p.bind(operand, indices, updates, **params)
    out: Any = Zero.from_primal_value(ans)
    if type(t_op) is not Zero:
        out = scatter(st.scatter_mul_p, t_op, indices, updates, **params)
    if type(t_upd) is not Zero:
        a = ops.aval(ans)
        if not params["unique_indices"]:
            t_upd = ops.mul(_product_of_others(updates, indices, a.shape, params), t_upd)
        spread = scatter(st.scatter_add_p, zeros_of(a), indices, t_upd, **params)
        out = add_tangents(out, ops.mul(operand, spread))
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
        # the operand wins where it equals the result, and wherever no update lands (a NaN there is
        # not equal to itself, but it is the operand's value all the same)
        touched = scatter(st.scatter_add_p, zero, indices, one_u, **params)
        op_wins = ops.logical_or(ops.eq(operand, ans), ops.eq(touched, zero))
        upd_wins = ops.eq(updates, gather_windows(ans, indices, upd_shape, params))
        upd_indicator = ops.select(upd_wins, one_u, zero_u)
        op_indicator = ops.select(op_wins, one, zero)
        hits = scatter(st.scatter_add_p, zero, indices, upd_indicator, **params)
        count = ops.add(op_indicator, hits)
        count = ops.select(ops.eq(count, zero), one, count)
        # Products with the indicators (not selects), as JAX: a NaN cotangent reaches
        # the losers as NaN (NaN * 0), not as 0.
        total: Any = Zero(a)
        if type(t_op) is not Zero:
            total = ops.mul(t_op, op_indicator)
        if type(t_upd) is not Zero:
            won = scatter(st.scatter_add_p, zero, indices, ops.mul(t_upd, upd_indicator), **params)
            total = add_tangents(total, won)
        return ans, ops.div(instantiate(total), count)

    return rule


jvp_rules[st.scatter_min_p] = _scatter_extremal_jvp(st.scatter_min_p)
jvp_rules[st.scatter_max_p] = _scatter_extremal_jvp(st.scatter_max_p)

declare_nonlinear(st.scatter_min_p, st.scatter_max_p, st.iota_p)
