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

from plait_batching.moves import BDim, moveaxis, shift, shift_all
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core import Primitive, ShapedArray, get_aval
from plait_core.primitives.structural import broadcast_in_dim_p


def vectorized_rule(prim: Primitive) -> Callable[..., tuple[Any, BDim]]:
    """The rule of a one-operand elementwise primitive."""

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
        (x,), (d,) = args, dims
        return prim.bind(x, **params), d

    return rule


def defvectorized(*prims: Primitive) -> None:
    """Register :func:`vectorized_rule` for each primitive."""
    for p in prims:
        batching_rules[p] = vectorized_rule(p)


def broadcast_operands(
    prim: Primitive, axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], scalar_ok: Callable[[int], bool],
    params: dict[str, Any],
) -> tuple[list[Any], BDim]:
    """Operands of an elementwise primitive made to agree on the batch.

    Returns the operands and the batch dimension of the result.  When every
    batched operand is batched at the same place and has the result's rank,
    and every unbatched operand is a scalar where ``scalar_ok`` allows one,
    they are returned as they are; otherwise every operand is brought to the
    result's full shape with the batch where a full-rank batched operand has
    it."""
    avals = [get_aval(x) for x in args]
    ranks = [a.ndim - (d is not None) for a, d in zip(avals, dims)]
    out_rank = max(ranks)
    if any(0 < r < out_rank for r in ranks):  # shapes that do not agree: the primitive says how
        prim.abstract_eval(*[a if d is None else _element(a, d) for a, d in zip(avals, dims)], **params)
    first = next(d for d in dims if d is not None)
    if all(
        (d is None and r == 0 and scalar_ok(i)) or (d == first and r == out_rank)
        for i, (d, r) in enumerate(zip(dims, ranks))
    ):
        return list(args), first
    k = ranks.index(out_rank)
    ref, rd = avals[k].shape, dims[k]
    elem_shape = ref if rd is None else ref[:rd] + ref[rd + 1 :]
    # Keep the batch where a full-rank batched operand has it (fewer transposes), else in front.
    at = next((d for d, r in zip(dims, ranks) if d is not None and r == out_rank), 0)
    full = elem_shape[:at] + (axis.size,) + elem_shape[at:]
    rest = tuple(i for i in range(out_rank + 1) if i != at)
    out: list[Any] = []
    for i, (x, d, r) in enumerate(zip(args, dims, ranks)):
        if d is None:
            if r == 0 and scalar_ok(i):
                out.append(x)
            else:
                dims_in = rest if r else ()
                out.append(broadcast_in_dim_p.bind(x, shape=full, broadcast_dimensions=dims_in))
        elif r < out_rank:  # a batched scalar against full-rank operands
            out.append(broadcast_in_dim_p.bind(x, shape=full, broadcast_dimensions=(at,)))
        else:
            out.append(moveaxis(x, d, at))
    return out, at


def _element(aval: ShapedArray, bdim: int) -> ShapedArray:
    """The abstract value of one element of a value batched at ``bdim``."""
    return aval.update(shape=aval.shape[:bdim] + aval.shape[bdim + 1 :])


def _any_position(i: int) -> bool:
    return True


def broadcasting_rule(
    prim: Primitive, scalar_ok: Callable[[int], bool] = _any_position
) -> Callable[..., tuple[Any, BDim]]:
    """The rule of an n-ary elementwise primitive (see :func:`broadcast_operands`)."""

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
        ops, d = broadcast_operands(prim, axis, args, dims, scalar_ok, params)
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

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
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

    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
        return prim.bind(*args, **params), None

    return rule


def defunbatched(*prims: Primitive) -> None:
    """Register :func:`unbatched_rule` for each primitive."""
    for p in prims:
        batching_rules[p] = unbatched_rule(p)
