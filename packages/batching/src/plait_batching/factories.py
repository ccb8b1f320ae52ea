"""The shapes batching rules come in, each written once.

* :func:`defvectorized`: one operand, elementwise: the batch dimension
  passes through unchanged.
* :func:`defbroadcasting`: several operands, elementwise: operands batched
  at the same place are used as they are; otherwise batch dimensions are
  moved to the front and unbatched operands broadcast to the batch.  Rank-0
  unbatched operands stay scalars wherever the primitive lets scalars
  broadcast.
* :func:`defreducer`: one operand, an ``axes`` (or ``axis``) param naming
  dimensions of one element: those are shifted past the batch dimension.
* :func:`defunbatched`: primitives without operands (``iota``): never batched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_core import Primitive, get_aval
from plait_core.primitives.structural import broadcast_in_dim_p

from plait_batching.moves import BDim, moveaxis, shift, shift_all
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData


def vectorized_rule(prim: Primitive) -> Callable[..., tuple[Any, BDim]]:
    """The rule of a one-operand elementwise primitive."""

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], **params: Any) -> tuple[Any, BDim]:
        (x,), (d,) = args, dims
        return prim.bind(x, **params), d

    return rule


def defvectorized(*prims: Primitive) -> None:
    """Register :func:`vectorized_rule` for each primitive."""
    for p in prims:
        batching_rules[p] = vectorized_rule(p)


def broadcast_operands(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], scalar_ok: Callable[[int], bool]
) -> tuple[list[Any], BDim]:
    """Operands of an elementwise primitive made to agree on the batch.

    Returns the operands and the batch dimension of the result.  When every
    batched operand is batched at the same place and has the result's rank,
    and every unbatched operand is a scalar where ``scalar_ok`` allows one,
    they are returned as they are; otherwise the batch goes in front."""
    avals = [get_aval(x) for x in args]
    ranks = [a.ndim - (d is not None) for a, d in zip(avals, dims)]
    out_rank = max(ranks)
    first = next(d for d in dims if d is not None)
    if all(
        (d is None and r == 0 and scalar_ok(i)) or (d == first and r == out_rank)
        for i, (d, r) in enumerate(zip(dims, ranks))
    ):
        return list(args), first
    k = ranks.index(out_rank)
    ref, rd = avals[k].shape, dims[k]
    elem_shape = ref if rd is None else ref[:rd] + ref[rd + 1 :]
    full = (axis.size, *elem_shape)
    out: list[Any] = []
    for i, (x, d, r) in enumerate(zip(args, dims, ranks)):
        if d is None:
            if r == 0 and scalar_ok(i):
                out.append(x)
            else:
                out.append(broadcast_in_dim_p.bind(x, shape=full, broadcast_dimensions=tuple(range(1, r + 1))))
        else:
            x = moveaxis(x, d, 0)
            if r < out_rank:  # a batched scalar against full-rank operands
                x = broadcast_in_dim_p.bind(x, shape=full, broadcast_dimensions=(0,))
            out.append(x)
    return out, 0


def _any_position(i: int) -> bool:
    return True


def broadcasting_rule(
    prim: Primitive, scalar_ok: Callable[[int], bool] = _any_position
) -> Callable[..., tuple[Any, BDim]]:
    """The rule of an n-ary elementwise primitive (see :func:`broadcast_operands`)."""

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], **params: Any) -> tuple[Any, BDim]:
        ops, d = broadcast_operands(axis, args, dims, scalar_ok)
        return prim.bind(*ops, **params), d

    return rule


def defbroadcasting(*prims: Primitive, scalar_ok: Callable[[int], bool] = _any_position) -> None:
    """Register :func:`broadcasting_rule` for each primitive; ``scalar_ok(i)``
    says whether operand ``i`` may be a rank-0 value next to full-rank ones."""
    for p in prims:
        batching_rules[p] = broadcasting_rule(p, scalar_ok)


def reducer_rule(prim: Primitive, param: str = "axes") -> Callable[..., tuple[Any, BDim]]:
    """The rule of a one-operand primitive whose ``param`` names dimensions of
    one element: a tuple (reductions: those dimensions disappear) or an int
    (cumulative operations: the shape is kept)."""

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], **params: Any) -> tuple[Any, BDim]:
        (x,), (d,) = args, dims
        assert d is not None
        which = params[param]
        if isinstance(which, tuple):
            params[param] = shift_all(which, d)
            return prim.bind(x, **params), d - sum(1 for a in which if a < d)
        params[param] = shift(which, d)
        return prim.bind(x, **params), d

    return rule


def defreducer(*prims: Primitive, param: str = "axes") -> None:
    """Register :func:`reducer_rule` for each primitive."""
    for p in prims:
        batching_rules[p] = reducer_rule(p, param)


def unbatched_rule(prim: Primitive) -> Callable[..., tuple[Any, BDim]]:
    """The rule of a primitive without operands: its result never depends on the batch."""

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], **params: Any) -> tuple[Any, BDim]:
        return prim.bind(*args, **params), None

    return rule


def defunbatched(*prims: Primitive) -> None:
    """Register :func:`unbatched_rule` for each primitive."""
    for p in prims:
        batching_rules[p] = unbatched_rule(p)
