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
the mask in the data's own layout, and is tracked per value: the padding of
a ragged value is unspecified, so once an operand is filled with a finite
value its filled data replaces it for every later use (``e`` filled with 0
for ``sum(e)`` is what ``e / sum(e)`` then reads, so XLA fuses the fill with
the producer of ``e``), and a fill the value already has is skipped (a pile
enters ``vmap`` with zero padding).  Non-finite fills (``-inf`` for ``max``)
replace nothing: a derivative taken outside the ``vmap`` computes with the
padded data, where ``0 * inf`` would be NaN.

Rules core registers ``per_axis`` let ragged axes of different sizes meet in
one equation (``n x m`` scores between two piles); the others involve one
ragged size at most (:func:`~plait_batching.ragged.check_one_size`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    RaggedRule,
    check_one_size,
    check_true_sizes,
    element_abstract_eval,
    env_of,
    fill_padding,
    is_filled,
    operands,
    padded_rule,
    ragged_axes,
    record_fill,
    several_size_types,
    wrap_results,
)
from plait_batching.registries import ragged_rules
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_core import Primitive, ShapedArray, Tracer, ops, set_current_trace
from plait_core.dims import Dim, is_constant_dim
from plait_core.padded import PaddedEnv, padded_rules
from plait_core.primitives.structural import pad_p
from plait_core.trace import transformation

__all__ = ["PileElementEnv", "from_padded_rule"]


class PileElementEnv(PaddedEnv):
    """The logical sizes of one element of a pile, seen from ``inner``, a plain
    batching trace over the pile's elements: a ragged size's logical value is
    its lengths, batched."""

    __slots__ = ("inner", "origin", "ragged")

    def __init__(self, ragged: RaggedEnv, inner: BatchTrace, origin: dict[int, BatchTracer]) -> None:
        #: The ragged operand of the equation each operand of the rule (by ``id``) stands for.
        self.ragged, self.inner, self.origin = ragged, inner, origin

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
        """The shortcut of :func:`~plait_batching.ragged.fill_padding`; a fill of
        an operand of the equation is skipped when its padding is known to hold
        ``value`` already, else the filled data replaces the operand's (see
        :func:`~plait_batching.ragged.record_fill`)."""
        val, bdim = self.inner.unpack(x)
        if bdim is None:  # the same for every element, so not ragged
            return x
        if isinstance(value, Tracer):  # a traced fill value (pad's): the generic fill
            return super().fill(x, aval, axes, value)
        which = [a for a in (range(aval.ndim) if axes is None else axes) if self.ragged.is_ragged(aval.shape[a])]
        if not which:
            return x
        outer = self.origin.get(id(x))
        if outer is not None and is_filled(outer, which, value):
            return x
        with set_current_trace(self.inner.parent_trace):
            out = fill_padding(self.ragged, Operand(val, bdim, aval), which, value)
        if outer is not None and outer.bdim == bdim:
            record_fill(outer, out, which, value)
        return BatchTracer(self.inner, out, bdim)


#: ``check(env, prim, operands, params, result types)``: refuse what the padded rule cannot do for piles.
Check = Callable[[RaggedEnv, Primitive, Sequence[Operand], dict[str, Any], Sequence[ShapedArray]], None]


def from_padded_rule(prim: Primitive, check: Check | None = None) -> RaggedRule:
    """The ragged rule of ``prim``: core's padded rule under a batching trace
    (see the module doc); ``check`` refuses layouts a pile cannot have (a
    result size that is wrong for some concrete lengths)."""
    core_rule = padded_rules[prim]
    per_axis = padded_rules.is_per_axis(prim)

    def rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        env = env_of(trace)
        ops_ = operands(trace, prim, args)
        if per_axis:
            out_avals = several_size_types(env, prim, ops_, params)
        else:
            out_avals = element_abstract_eval(env, prim, ops_, params, check_one_size(env, prim, ops_, params))
        if check is not None:
            check(env, prim, ops_, params, out_avals)
        inner = BatchTrace(AxisData(None, trace.axis.size), trace.parent_trace)
        origin: dict[int, BatchTracer] = {}
        with transformation(inner):
            vals: list[Any] = []
            for o, arg in zip(ops_, args):
                if o.bdim is None:
                    vals.append(o.val)
                    continue
                v = BatchTracer(inner, o.val, o.bdim)
                if type(arg) is BatchTracer and arg.ragged:
                    origin[id(v)] = arg
                vals.append(v)
            out = core_rule(PileElementEnv(env, inner, origin), vals, [o.aval for o in ops_], **params)
            results = [inner.unpack(v) for v in (out if prim.multiple_results else [out])]
        return wrap_results(trace, prim, [v for v, _ in results], [d for _, d in results], out_avals)

    rule.__name__ = f"{prim.name}_ragged_rule"
    return rule


_passthrough = padded_rule(several_sizes=True)


def _check_pad(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any], out: Sequence[ShapedArray]
) -> None:
    """A ragged axis of ``pad``'s result must have its polynomial size for every
    concrete length (interior or negative padding of an element of length 0
    is not what the polynomial says)."""
    x = ops[0]
    for a in ragged_axes(env, x.aval):
        lo, hi, interior = params["padding_config"][a]

        def size(n: int, lo: int = lo, hi: int = hi, interior: int = interior) -> int:
            return lo + hi + n + max(n - 1, 0) * interior

        check_true_sizes(env, prim, ops, x.aval.shape[a], out[0].shape[a], size, f"the ragged axis {a}")


_CHECKS: dict[Primitive, Check] = {pad_p: _check_pad}

for _prim, _ in padded_rules.items():
    # A passthrough rule is the batching rule on the padded data with padded params: run that directly.
    ragged_rules[_prim] = (
        _passthrough if padded_rules.is_passthrough(_prim) else from_padded_rule(_prim, _CHECKS.get(_prim))
    )
