"""Ragged rules from core's padded semantics: ``vmap`` of the masked rule.

Core defines what a primitive does on padded data once
(:data:`plait_core.padded.padded_rules`: reductions fill the padding with
their identity, ``dot_general`` zeroes a contracted padded axis, ``sort``
puts the padding last, ...), against an environment of logical sizes.  A
pile's environment, :class:`PileElementEnv`, has one logical size per
element: the rule runs on one element's padded data under a plain batching
trace of this ``vmap``'s size, where each logical size is the batched
lengths, so the ordinary batching rules make the rule's operations act on
every element at once.  Filling the padding (the commonest operation) takes
the shortcut of :func:`~plait_batching.ragged.fill_padding`, which builds
the mask in the data's own layout.

Rules core registers ``per_axis`` let ragged axes of different sizes meet in
one equation (``n x m`` scores between two piles); the others involve one
ragged size at most (:func:`~plait_batching.ragged.check_one_size`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    RaggedRule,
    check_one_size,
    element_abstract_eval,
    env_of,
    fill_padding,
    operands,
    several_size_types,
    wrap_results,
)
from plait_batching.registries import ragged_rules
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_core import Primitive, ShapedArray, ops, set_current_trace
from plait_core.dims import Dim, is_constant_dim
from plait_core.padded import PaddedEnv, padded_rules
from plait_core.trace import transformation

__all__ = ["PileElementEnv", "from_padded_rule"]


class PileElementEnv(PaddedEnv):
    """The logical sizes of one element of a pile, seen from ``inner``, a plain
    batching trace over the pile's elements: a ragged size's logical value is
    its lengths, batched."""

    __slots__ = ("inner", "ragged")

    def __init__(self, ragged: RaggedEnv, inner: BatchTrace) -> None:
        self.ragged, self.inner = ragged, inner

    def is_padded(self, d: Dim) -> bool:
        return self.ragged.is_ragged(d)

    def padded_dim(self, d: Dim) -> int:
        return self.ragged.padded(d)  # type: ignore[return-value]  # symbolic only under an enclosing mask

    def size(self, d: Dim, dtype: Any = None) -> Any:
        if is_constant_dim(d):
            return int(d) if dtype is None else np.asarray(int(d), dtype)
        with set_current_trace(self.inner.parent_trace):
            lengths = self.ragged.lengths(d)
            if dtype is not None:
                lengths = ops.convert(lengths, np.dtype(dtype))
        return BatchTracer(self.inner, lengths, 0)

    def valid_vector(self, n: int, d: Dim) -> Any:
        with set_current_trace(self.inner.parent_trace):
            mask = self.ragged.mask(d, True)  # (B, n), memoised for the whole vmap
        return BatchTracer(self.inner, mask, 0)

    def fill(self, x: Any, aval: ShapedArray, axes: Sequence[int] | None, value: Any) -> Any:
        val, bdim = self.inner.unpack(x)
        if bdim is None:  # the same for every element, so not ragged
            return x
        which = range(aval.ndim) if axes is None else axes
        with set_current_trace(self.inner.parent_trace):
            out = fill_padding(self.ragged, Operand(val, bdim, aval), which, value)
        return x if out is val else BatchTracer(self.inner, out, bdim)


def from_padded_rule(prim: Primitive) -> RaggedRule:
    """The ragged rule of ``prim``: core's padded rule under a batching trace
    (see the module doc)."""
    core_rule = padded_rules[prim]
    per_axis = padded_rules.is_per_axis(prim)

    def rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        env = env_of(trace)
        ops_ = operands(trace, prim, args)
        if per_axis:
            out_avals = several_size_types(env, prim, ops_, params)
        else:
            out_avals = element_abstract_eval(env, prim, ops_, params, check_one_size(env, prim, ops_, params))
        inner = BatchTrace(AxisData(None, trace.axis.size), trace.parent_trace)
        with transformation(inner):
            vals = [o.val if o.bdim is None else BatchTracer(inner, o.val, o.bdim) for o in ops_]
            out = core_rule(PileElementEnv(env, inner), vals, [o.aval for o in ops_], **params)
            results = [inner.unpack(v) for v in (out if prim.multiple_results else [out])]
        return wrap_results(trace, prim, [v for v, _ in results], [d for _, d in results], out_avals)

    rule.__name__ = f"{prim.name}_ragged_rule"
    return rule


for _prim, _ in padded_rules.items():
    ragged_rules[_prim] = from_padded_rule(_prim)
