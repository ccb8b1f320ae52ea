"""Batching a closed jaxpr: the generic mechanism behind every higher-order rule.

:func:`batch_jaxpr` stages a new jaxpr that evaluates the given one under a
fresh :class:`~plait_batching.trace.BatchTrace` for the same axis.  Batched
inputs and outputs of the new jaxpr carry the batch as their *leading*
dimension; unbatched ones keep their types.  Results are memoised per
(jaxpr, axis, flags), so a ``scan`` or ``while`` body is batched once however
often its rule runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_batching.moves import broadcast_batch, moveaxis
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_core import ClosedJaxpr, ShapedArray, eval_jaxpr, extend_axis_env, trace_to_jaxpr, transformation
from plait_core.primitives.calls import StagingCache, hashable_key

_cache = StagingCache(256)


def batched_aval(aval: ShapedArray, axis: AxisData) -> ShapedArray:
    """The type of ``axis.size`` values of type ``aval`` stacked in front."""
    return ShapedArray((axis.size, *aval.shape), aval.dtype, aval.weak_type)


def _flags(flags: bool | Sequence[bool], n: int, what: str) -> tuple[bool, ...]:
    if isinstance(flags, bool):
        return (flags,) * n
    out = tuple(bool(f) for f in flags)
    if len(out) != n:
        raise ValueError(f"batch_jaxpr: {what} has {len(out)} flags for {n} values")
    return out


def batch_fun(
    fun: Callable[..., Sequence[Any]],
    axis: AxisData,
    in_batched: Sequence[bool],
    instantiate: Sequence[bool],
    out_batched: list[bool],
) -> Callable[..., list[Any]]:
    """A flat function that runs ``fun`` batched: inputs flagged in
    ``in_batched`` carry the batch in front, and so do the outputs it returns
    batched (every output flagged in ``instantiate`` is).  ``out_batched`` is
    filled with one flag per output when it runs."""

    def batched(*args: Any) -> list[Any]:
        trace = BatchTrace(axis)
        with transformation(trace):
            ins = [BatchTracer(trace, a, 0) if b else a for a, b in zip(args, in_batched)]
            outs = [trace.unpack(o) for o in fun(*ins)]
        if len(outs) != len(instantiate):
            raise ValueError(f"batch_fun: {len(instantiate)} instantiate flags for {len(outs)} outputs")
        res: list[Any] = []
        out_batched.clear()
        for (val, d), inst in zip(outs, instantiate):
            if d is not None:
                res.append(moveaxis(val, d, 0))
            elif inst:
                res.append(broadcast_batch(val, axis.size, 0))
            else:
                res.append(val)
            out_batched.append(d is not None or inst)
        return res

    return batched


def batch_jaxpr(
    closed: ClosedJaxpr,
    axis: AxisData,
    in_batched: Sequence[bool],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[ClosedJaxpr, list[bool]]:
    """Batch ``closed`` over ``axis``.

    ``in_batched`` flags the inputs that carry the batch (as their leading
    dimension); ``instantiate`` (one flag, or one per output) forces outputs
    to be batched even when they do not depend on the batch.  Returns the
    batched closed jaxpr and which of its outputs are batched (leading
    dimension)."""
    ins = _flags(list(in_batched), len(closed.in_avals), "in_batched")
    inst = _flags(instantiate, len(closed.out_avals), "instantiate")
    key = hashable_key(closed, axis.name, axis.size, ins, inst)
    hit: tuple[ClosedJaxpr, list[bool]] | None = _cache.get(key)
    if hit is not None:
        return hit[0], list(hit[1])
    out_batched: list[bool] = []
    fun = batch_fun(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), axis, ins, inst, out_batched)
    avals = [batched_aval(a, axis) if b else a for a, b in zip(closed.in_avals, ins)]
    frames = [] if axis.name is None else [(axis.name, axis.size)]
    with extend_axis_env(frames):
        batched = trace_to_jaxpr(fun, avals)
    _cache.put(key, (batched, list(out_batched)), batched.consts)
    return batched, out_batched
