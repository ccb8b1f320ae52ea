"""JVP and transpose rules of reductions, cumulative scans and ``sort``.

``reduce_sum`` and ``cumsum`` are linear.  ``reduce_max``/``reduce_min``
share the tangent equally among the elements that attain the extreme;
``reduce_prod`` multiplies each tangent by the product of the other elements
(computed without division, so zeros are fine).  ``cumprod``, ``cummax`` and
``cummin`` are differentiated through an equivalent associative scan built
from slices (along an axis of symbolic size, under ``mask`` or ``vmap`` over
piles, a ``scan`` loop instead); ``sort`` carries a permutation and applies
it to the tangents with another ``sort`` (whose transpose sorts by the
inverse permutation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff.jvp import jvp_flat
from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import declare_nonlinear, def_transpose, defjvp_zero, deflinear
from plait_autodiff.tangents import Zero, instantiate
from plait_autodiff.transpose import NonlinearError, is_undefined
from plait_core import all_primitives, dtypes, ops
from plait_core.dims import is_constant_dim
from plait_core.lax.control_flow import scan
from plait_core.primitives import elementwise as ew
from plait_core.primitives import reductions as red

for _p in (red.reduce_and_p, red.reduce_or_p, red.argmax_p, red.argmin_p):
    defjvp_zero(_p)


# ---------------------------------------------------------------------------
# reduce_sum and cumsum: linear


def _reduce_sum_transpose(ct: Any, x: Any, *, axes: tuple[int, ...]) -> list[Any]:
    shape = x.aval.shape
    kept = [d for d in range(len(shape)) if d not in axes]
    return [ops.broadcast_in_dim(ct, shape, kept)]


deflinear(red.reduce_sum_p, _reduce_sum_transpose)
deflinear(red.cumsum_p, lambda ct, x, *, axis, reverse: [red.cumsum_p.bind(ct, axis=axis, reverse=not reverse)])


# ---------------------------------------------------------------------------
# reduce_max / reduce_min


def _extremum_jvp(prim: Any) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], *, axes: tuple[int, ...]) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        a = ops.aval(x)
        kept = [d for d in range(a.ndim) if d not in axes]
        at_extreme = ops.eq(x, ops.broadcast_in_dim(ans, a.shape, kept))
        one, zero = ops.full(a.shape, 1, a.dtype), ops.full(a.shape, 0, a.dtype)
        indicator = ops.select(at_extreme, one, zero)
        count = ops.reduce_sum(indicator, axes)
        # A product with the indicator (not a select), as JAX: where the extremum is
        # NaN nothing matches, and the derivative is NaN (0 * inf), not 0.
        share = ops.reduce_sum(ops.mul(t, indicator), axes)
        return ans, ops.div(share, count)

    return rule


jvp_rules[red.reduce_max_p] = _extremum_jvp(red.reduce_max_p)
jvp_rules[red.reduce_min_p] = _extremum_jvp(red.reduce_min_p)


# ---------------------------------------------------------------------------
# reduce_prod


def _to_last_axis(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with the reduced ``axes`` moved to the end and merged into one."""
    a = ops.aval(x)
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = ops.transpose(x, (*kept, *axes))
    n: Any = 1
    for d in axes:
        n = n * a.shape[d]
    return ops.reshape(moved, (*(a.shape[d] for d in kept), n))


def _exclusive_products(x: Any) -> Any:
    """For each element along the last axis, the product of all the others."""
    a = ops.aval(x)
    last = a.ndim - 1
    one = ops.const(x, 1)
    keep = [(0, 0, 0)] * last
    before = ops.pad(red.cumprod_p.bind(x, axis=last, reverse=False), one, [*keep, (1, -1, 0)])
    after = ops.pad(red.cumprod_p.bind(x, axis=last, reverse=True), one, [*keep, (-1, 1, 0)])
    return ops.mul(before, after)


def _reduce_prod_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axes: tuple[int, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    ans = red.reduce_prod_p.bind(x, axes=axes)
    if not axes:
        return ans, t
    xs, ts = _to_last_axis(x, axes), _to_last_axis(t, axes)
    last = ops.aval(xs).ndim - 1
    return ans, ops.reduce_sum(ops.mul(ts, _exclusive_products(xs)), (last,))


jvp_rules[red.reduce_prod_p] = _reduce_prod_jvp


# ---------------------------------------------------------------------------
# cumprod / cummax / cummin through an associative scan


def associative_scan(op: Callable[[Any, Any], Any], x: Any, axis: int, reverse: bool) -> Any:
    """The inclusive scan of ``op`` along ``axis`` from slices and ``op``,
    differentiable with the rules of its pieces: the work-efficient parallel
    prefix (Blelloch, "Prefix sums and their applications", 1990), the tree
    of pairwise ``op``s JAX differentiates too, so that ties of ``cummax`` /
    ``cummin`` share their tangent as JAX's do (each pairwise ``max``/``min``
    halves it between equal operands, so the split depends on the tree).
    Along an axis of symbolic size the tree is unknown, so the scan is a
    sequential loop (:func:`sequential_scan`) instead."""
    a = ops.aval(x)
    if not is_constant_dim(a.shape[axis]):
        return sequential_scan(op, x, axis, reverse)
    if reverse:
        return ops.rev(associative_scan(op, ops.rev(x, (axis,)), axis, False), (axis,))
    return _prefix_tree(op, x, axis, int(a.shape[axis]))


def _prefix_tree(op: Callable[[Any, Any], Any], x: Any, axis: int, n: int) -> Any:
    """The inclusive scan of the ``n`` entries of ``x`` along ``axis``: scan the
    ``op`` of neighbouring pairs (the odd outputs), then combine each of those
    with the next entry (the even outputs) and interleave the two."""
    if n < 2:
        return x
    pairs = op(ops.slice_axis(x, axis, 0, n - 1, 2), ops.slice_axis(x, axis, 1, n, 2))
    odd = _prefix_tree(op, pairs, axis, n // 2)
    even = ops.slice_axis(x, axis, 0, 1)
    if n > 2:
        prev = odd if n % 2 else ops.slice_axis(odd, axis, 0, n // 2 - 1)
        even = ops.concatenate([even, op(prev, ops.slice_axis(x, axis, 2, n, 2))], axis)
    return _interleave(even, odd, axis, n)


def _interleave(even: Any, odd: Any, axis: int, n: int) -> Any:
    """Entries ``even[0], odd[0], even[1], ...`` along ``axis`` (``n`` of them;
    ``even`` has ``(n + 1) // 2``), without arithmetic, so signed zeros stay."""
    half = (n + 1) // 2
    if n % 2:  # give odd a last entry (any) to pair with even's, then drop it
        odd = ops.concatenate([odd, ops.slice_axis(even, axis, half - 1, half)], axis)
    shape = list(ops.aval(even).shape)
    pair_shape = [*shape[: axis + 1], 1, *shape[axis + 1 :]]
    both = ops.concatenate([ops.reshape(even, pair_shape), ops.reshape(odd, pair_shape)], axis + 1)
    out = ops.reshape(both, [*shape[:axis], 2 * half, *shape[axis + 1 :]])
    return ops.slice_axis(out, axis, 0, n) if n % 2 else out


def sequential_scan(op: Callable[[Any, Any], Any], x: Any, axis: int, reverse: bool) -> Any:
    """The inclusive scan of ``op`` along ``axis`` as a ``scan`` loop over the
    axis, whose length may be symbolic (``mask`` and ``vmap`` over piles run it
    for the logical length).  Differentiable with the rules of ``scan``,
    ``select_n`` and ``op``.  Ties of ``cummax``/``cummin`` share the tangent
    as ``max``/``min`` do, pairwise in loop order, which may split it
    differently from the doubling scan (a choice among subgradients)."""
    a = ops.aval(x)
    rest = [d for d in range(a.ndim) if d != axis]
    moved = ops.transpose(x, (axis, *rest))
    row = tuple(a.shape[d] for d in rest)

    def step(carry: tuple[Any, Any], v: Any) -> tuple[tuple[Any, Any], Any]:
        count, acc = carry
        first = ops.broadcast_to(ops.eq(count, np.int32(0)), row)
        out = ops.select(first, v, op(acc, v))  # the first step takes its element as it is
        return (ops.add(count, np.int32(1)), out), out

    _, ys = scan(step, (np.int32(0), ops.full(row, 0, a.dtype)), moved, reverse=reverse)
    back = [0] * a.ndim
    for k, d in enumerate((axis, *rest)):
        back[d] = k
    return ops.transpose(ys, back)


def _cumulative_jvp(prim: Any, op: Callable[[Any, Any], Any]) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int, reverse: bool) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        _, (t_out,) = jvp_flat(lambda v: [associative_scan(op, v, axis, reverse)], [x], [t])
        return ans, t_out

    return rule


jvp_rules[red.cumprod_p] = _cumulative_jvp(red.cumprod_p, ops.mul)
jvp_rules[red.cummax_p] = _cumulative_jvp(red.cummax_p, ew.max_p.bind)
jvp_rules[red.cummin_p] = _cumulative_jvp(red.cummin_p, ew.min_p.bind)


# ---------------------------------------------------------------------------
# sort


def _sort_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, dimension: int, is_stable: bool, num_keys: int
) -> tuple[list[Any], list[Any]]:
    shape = ops.aval(primals[0]).shape
    iota = ops.iota(dtypes.int32, shape, dimension)
    *ans, perm = red.sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    moving = [instantiate(t) for t in tangents if type(t) is not Zero]
    # Sorting by the inverse permutation applies the permutation (and is linear in the values).
    inverse = red.sort_p.bind(perm, iota, dimension=dimension, is_stable=True, num_keys=1)[1]
    moved = iter(red.sort_p.bind(inverse, *moving, dimension=dimension, is_stable=True, num_keys=1)[1:])
    out = [t if type(t) is Zero else next(moved) for t in tangents]
    return ans, out


jvp_rules[red.sort_p] = _sort_jvp


@def_transpose(red.sort_p)
def _sort_transpose(cts: Sequence[Any], *operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list[Any]:
    keys = operands[:num_keys]
    if any(is_undefined(k) for k in keys):
        raise NonlinearError("cannot transpose sort with respect to its sort keys: the order depends on them")
    linear = [i for i, x in enumerate(operands) if is_undefined(x)]
    shape = ops.aval(keys[0]).shape
    iota = ops.iota(dtypes.int32, shape, dimension)
    perm = red.sort_p.bind(*keys, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)[-1]
    moving = [instantiate(cts[i]) for i in linear]
    back = red.sort_p.bind(perm, *moving, dimension=dimension, is_stable=True, num_keys=1)[1:]
    out: list[Any] = [None] * len(operands)
    for i, ct in zip(linear, back):
        out[i] = ct
    return out

declare_nonlinear(*(p for p in all_primitives() if p.family == "reduction"))
