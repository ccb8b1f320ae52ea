"""Ragged rules of the custom-rule calls: bound again, rules and all.

Inside ``vmap`` over piles, ``custom_jvp_call``, ``custom_vjp_call`` and
``custom_ivjp_call`` on ragged values are bound again (core's padded rules,
:mod:`plait_core.padded.calls`, run by :mod:`.ragged_padded`) around their
function mapped over the piles (:func:`~plait_batching.ragged_jaxpr.ragged_call_jaxpr`),
with the lengths among their leading operands, and with their rules mapped
the same way (:mod:`plait_core.rebound_rules`, for the :class:`PileFrame` of
the call), so that a transformation applied outside the ``vmap`` still uses
the user's rule:

* ``custom_jvp_call``: ``jvp_jaxpr_fun`` maps the user's JVP jaxpr (tangents
  ragged like their primals);
* ``custom_vjp_call``: ``fwd_jaxpr_thunk`` maps the forward jaxpr, which
  also returns the lengths after the residuals, and ``bwd`` runs the user's
  backward rule over the piles with those lengths;
* ``custom_ivjp_call``: ``ivjp`` runs the user's rule over the piles.

Every output is batched; cotangents of ragged operands get zero padding and
those of unbatched operands are summed over the batch.  ``custom_vmap_call``
on ragged values is refused (see the reason registered below): its rule
expects a rectangular batch.

A rule that receives symbolic zeros (``symbolic_zeros=True``) gets
``SymbolicZero`` values of the element's ragged shape; their
``instantiate()`` makes the zeros on the trace of the ``vmap``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_batching.ragged import env_of
from plait_batching.ragged_jaxpr import RaggedFrame
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import ClosedJaxpr, ShapedArray, extend_axis_env, get_aval, transformation
from plait_core.primitives.calls import custom_vmap_call_p
from plait_core.primitives.structural import slice_p, squeeze_p
from plait_core.rebound_rules import RuleFrame

__all__ = ["PileFrame"]


class PileFrame(RuleFrame[BatchTrace]):
    """The rules of one call over piles: the :class:`RaggedFrame` of the call
    (``ragged``) and which of its original operands are batched; values the
    call made are always batched."""

    __slots__ = ("batched", "ragged")

    label, where, sizes_noun = "over_piles", "vmap over piles", "the lengths of the piles"

    def __init__(self, ragged: RaggedFrame, batched: Sequence[bool]) -> None:
        super().__init__(ragged.num_lead, len(ragged.sizes))
        self.ragged, self.batched = ragged, tuple(batched)

    def _flags(self, origin: Sequence[int | None]) -> list[bool]:
        return [True if i is None else self.batched[i] for i in origin]

    def stage(self, closed: ClosedJaxpr, origin: Sequence[int | None], with_sizes: bool) -> ClosedJaxpr:
        names = [n for n, *_ in self.ragged.sizes]

        def lengths(trace: BatchTrace) -> list[Any]:
            env = env_of(trace)
            return [env.sizes[n].lengths for n in names]

        return self.ragged.stage(closed, self._flags(origin), lengths if with_sizes else None)

    def run(
        self, sizes: Sequence[Any], fun: Callable[..., Any], values: Sequence[Any], avals: Sequence[ShapedArray],
        origin: Sequence[int | None],
    ) -> tuple[BatchTrace, Any]:  # fmt: skip
        trace = self.ragged.trace(sizes)
        with extend_axis_env(self.ragged.axis_frames()), transformation(trace):
            return trace, fun(*self.ragged.enter(trace, values, avals, self._flags(origin)))

    def zeros(self, aval: ShapedArray) -> Any:
        return self.ragged.zeros(aval)

    def operand_values(self, trace: BatchTrace, xs: Sequence[Any]) -> list[Any]:
        return [
            None if x is None else self.ragged.leave(trace, [x])[0] if b else _first(trace, x)
            for x, b in zip(xs, self.batched)
        ]

    def cotangents(self, trace: BatchTrace, cts: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
        return self.ragged.cotangents(trace, cts, avals, self.batched)


def _first(trace: BatchTrace, x: Any) -> Any:
    """An unbatched operand rebuilt by a mapped rule: its first element."""
    val, d = trace.unpack(x)
    if d is None:
        return val
    shape = tuple(get_aval(val).shape)
    limits = tuple(1 if i == d else s for i, s in enumerate(shape))
    first = slice_p.bind(val, start_indices=(0,) * len(shape), limit_indices=limits, strides=None)
    return squeeze_p.bind(first, dimensions=(d,))


ragged_rules.not_supported(
    custom_vmap_call_p,
    "a custom_vmap function's batching rule expects a rectangular batch, and the elements of a pile have "
    "different lengths, so vmap over piles cannot use it (and does not silently batch the function's body "
    "instead); call the custom_vmap function on equal-length batches, outside the vmap over piles",
)
