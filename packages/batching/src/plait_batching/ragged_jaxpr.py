"""Ragged sub-jaxprs: a called jaxpr mapped over piles, staged as a jaxpr.

The call primitives stay calls inside ``vmap`` over piles: their jaxpr is
staged anew on the padded data (:func:`stage_ragged`), evaluated under a
fresh :class:`~plait_batching.trace.BatchTrace` whose ragged sizes read their
lengths from the new jaxpr's leading inputs.  So the lengths may be traced,
and the rules of a custom-rule call, run later by a transformation outside
the ``vmap``, can be mapped the same way with the lengths passed to them.
This is how piles interpret the sub-programs of core's padded rules of
calls and loops (:meth:`~plait_batching.rules.ragged_padded.PileEnv.padded_jaxpr`):
the bodies of loops are mapped the same way, the lengths passed as loop consts.

Conventions (as :func:`~plait_batching.batch_jaxpr.batch_jaxpr`): batched
inputs and every output carry the batch as their leading dimension, ragged
ones padded to the padded size of their ragged size; unbatched inputs keep
their types.  A :class:`RaggedFrame` remembers what a rule needs to map a
jaxpr of the same call later: the axis, the ragged sizes (name, padded size,
concrete lengths) and the types of the call's leading operands, whose last
entries are the lengths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_batching.moves import broadcast_batch, moveaxis
from plait_batching.ragged import Operand, RaggedEnv, RaggedSize, env_of, fill_padding
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_core import ClosedJaxpr, ShapedArray, eval_jaxpr, extend_axis_env, get_aval, transformation
from plait_core.primitives.calls import hoist_consts
from plait_core.primitives.reductions import reduce_sum_p
from plait_core.primitives.structural import broadcast_in_dim_p
from plait_core.staging import trace_to_jaxpr

__all__ = ["RaggedFrame", "ragged_call_jaxpr"]


class RaggedFrame:
    """How to map jaxprs of one call over its piles later: ``axis``, the ragged
    ``sizes`` as ``(name, padded, concrete lengths, capacity, layout, full)`` (sorted by name), and the
    types of the call's leading operands (``lead_avals``: hoisted constants,
    then one ``int32[B]`` lengths vector per size)."""

    __slots__ = ("axis", "lead_avals", "sizes")

    def __init__(self, axis: AxisData, sizes: tuple[tuple[str, int, np.ndarray | None, int, str | None, bool], ...], lead_avals: tuple[ShapedArray, ...]) -> None:
        self.axis, self.sizes, self.lead_avals = axis, sizes, lead_avals

    @property
    def num_lead(self) -> int:
        return len(self.lead_avals)

    def lengths_of(self, lead: Sequence[Any]) -> list[Any]:
        """The lengths among the leading operands ``lead``."""
        return list(lead[self.num_lead - len(self.sizes) : self.num_lead])

    def env(self, lengths: Sequence[Any]) -> RaggedEnv:
        """The ragged sizes with these ``lengths`` (values of the current trace)."""
        env = RaggedEnv(self.axis)
        for (name, padded, concrete, capacity, layout, full), lens in zip(self.sizes, lengths):
            env.sizes[name] = RaggedSize(name, lens, padded, concrete, capacity, layout, full)
        return env

    def trace(self, lengths: Sequence[Any]) -> BatchTrace:
        """A fresh trace for the axis whose ragged sizes have these ``lengths``
        (enter it with :func:`~plait_core.transformation`)."""
        trace = BatchTrace(self.axis)
        trace.ragged = self.env(lengths)
        return trace

    def axis_frames(self) -> list[tuple[Any, Any]]:
        return [] if self.axis.name is None else [(self.axis.name, self.axis.size)]

    def padded_aval(self, aval: ShapedArray, batched: bool) -> ShapedArray:
        """The type of the padded data of a value of element type ``aval``."""
        if not batched:
            return aval
        shape = self.env([None] * len(self.sizes)).padded_shape(aval.shape)
        return ShapedArray((self.axis.size, *shape), aval.dtype, aval.weak_type)

    def zeros(self, aval: ShapedArray) -> Any:
        """Batched zeros of element type ``aval`` (padded)."""
        padded = self.padded_aval(aval, True)
        return broadcast_in_dim_p.bind(np.zeros((), aval.dtype), shape=padded.shape, broadcast_dimensions=())

    def enter(self, trace: BatchTrace, vals: Sequence[Any], avals: Sequence[ShapedArray], batched: Sequence[bool]) -> list[Any]:
        """Padded data (batch first) as values of ``trace``: ragged tracers where
        the element type is ragged; ``None`` stays ``None``."""
        env = env_of(trace)
        out: list[Any] = []
        for v, a, b in zip(vals, avals, batched):
            if v is None or not b:
                out.append(v)
            elif env.names_in_shape(a.shape):
                out.append(BatchTracer(trace, v, 0, a))
            else:
                out.append(BatchTracer(trace, v, 0))
        return out

    def leave(self, trace: BatchTrace, outs: Sequence[Any]) -> list[Any]:
        """Results of ``trace`` as padded data with the batch first (parent trace current)."""
        res = []
        for o in outs:
            val, d = trace.unpack(o)
            res.append(broadcast_batch(val, self.axis.size, 0) if d is None else moveaxis(val, d, 0))
        return res

    def cotangents(self, trace: BatchTrace, cts: Sequence[Any], avals: Sequence[ShapedArray], batched: Sequence[bool]) -> list[Any]:
        """Cotangents for operands of element types ``avals`` from a rule run
        under ``trace`` (parent trace current): batched ones with the batch
        first and zero padding, unbatched ones summed over the batch (the
        operand was in effect broadcast to every element)."""
        env = env_of(trace)
        out: list[Any] = []
        for ct, a, b in zip(cts, avals, batched):
            if ct is None:
                out.append(None)
                continue
            val, d = trace.unpack(ct)
            if not b:
                out.append(val if d is None else reduce_sum_p.bind(val, axes=(d,)))
                continue
            val = broadcast_batch(val, self.axis.size, 0) if d is None else moveaxis(val, d, 0)
            ragged = [i for i, dim in enumerate(a.shape) if env.is_ragged(dim)]
            out.append(fill_padding(env, Operand(val, 0, a), ragged, 0) if ragged else val)
        return out

    def stage(self, closed: ClosedJaxpr, batched: Sequence[bool], extra: Callable[[BatchTrace], list[Any]] | None = None) -> ClosedJaxpr:
        """``closed`` mapped over the piles, as a jaxpr over ``(*leading
        operands, *padded inputs)`` (inputs flagged ``batched`` carry the
        batch); ``extra(trace)`` adds outputs after the mapped ones."""
        return trace_to_jaxpr(self._mapped(closed, batched, extra), self._in_avals(closed, batched, self.lead_avals))

    def _in_avals(self, closed: ClosedJaxpr, batched: Sequence[bool], lead: Sequence[ShapedArray]) -> list[ShapedArray]:
        return [*lead, *(self.padded_aval(a, b) for a, b in zip(closed.in_avals, batched))]

    def _mapped(
        self, closed: ClosedJaxpr, batched: Sequence[bool], extra: Callable[[BatchTrace], list[Any]] | None
    ) -> Callable[..., list[Any]]:
        nl, k = self.num_lead, len(self.sizes)

        def mapped(*xs: Any) -> list[Any]:
            trace = self.trace(xs[nl - k : nl])
            with extend_axis_env(self.axis_frames()), transformation(trace):
                ins = self.enter(trace, xs[nl:], closed.in_avals, batched)
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
            res = self.leave(trace, outs)
            return res if extra is None else [*res, *extra(trace)]

        return mapped


def ragged_call_jaxpr(trace: BatchTrace, closed: ClosedJaxpr, batched: Sequence[bool]) -> tuple[ClosedJaxpr, list[Any], RaggedFrame]:
    """The jaxpr of a call mapped over the piles of ``trace`` (parent trace
    current): a const-free jaxpr over ``(*lead, *padded operands)`` returning
    every output batched, the ``lead`` values to pass (its hoisted constants,
    then the lengths) and the :class:`RaggedFrame` of the call."""
    env = env_of(trace)
    names = sorted(env.sizes)
    sizes = tuple(
        (n, env.sizes[n].padded, env.sizes[n].concrete, env.sizes[n].capacity, env.sizes[n].layout, env.sizes[n].full)
        for n in names
    )
    lengths = [env.sizes[n].lengths for n in names]
    length_avals = tuple(get_aval(x) for x in lengths)
    staging = RaggedFrame(trace.axis, sizes, length_avals)
    closed_with_consts = trace_to_jaxpr(
        staging._mapped(closed, batched, None), staging._in_avals(closed, batched, length_avals)
    )
    body, consts = hoist_consts(closed_with_consts)
    frame = RaggedFrame(trace.axis, sizes, tuple(body.in_avals[: len(consts) + len(lengths)]))
    return body, [*consts, *lengths], frame

