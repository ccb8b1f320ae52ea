"""The custom-rule calls under ``mask``: bound again, rules and all.

``custom_jvp_call``, ``custom_vjp_call`` and ``custom_ivjp_call`` are
core's padded rules (:mod:`plait_core.padded.calls`); this module gives them
masking's :class:`MaskFrame`, and binds ``custom_vmap_call`` itself.  Each
is bound again around its masked function, with the
leading operands every masked call takes (the masked body's constants, then
the logical sizes), and with *masked rules*: each runs the user's rule on the
padded data under a fresh mask trace whose logical sizes are those leading
operands.  So a transformation applied outside ``mask`` still uses the
user's rule:

* ``custom_jvp_call``: ``jvp_jaxpr_fun`` gives the masked JVP jaxpr;
* ``custom_vjp_call``: ``fwd_jaxpr_thunk`` gives the masked forward jaxpr,
  which also returns the logical sizes as extra residuals, so that ``bwd``
  can run the user's backward rule under ``mask`` later;
* ``custom_ivjp_call``: ``ivjp`` runs the user's rule under ``mask`` (the
  logical sizes are among its operands);
* ``custom_vmap_call``: the batching rule runs the user's rule under
  ``mask``.

The first three are wrapped by :mod:`plait_core.rebound_rules`, for the
:class:`MaskFrame` of the call; the last one here.

Cotangents that a masked rule returns have their padding set to zero: the
padding of an input never reaches the logical part of a result, so its
cotangent is zero there.  Values past the logical end of the other results
are unspecified, as always under ``mask``.

What cannot be done raises an error rather than bypassing the rule:

* a ``vmap`` outside ``mask`` that batches the logical sizes (one size per
  element) cannot use a ``custom_vmap`` rule, which expects a batch of
  values of one logical shape: ``NotImplementedError``;
* differentiating with respect to a value the custom function closes over
  is a ``TypeError``, as without ``mask``.

A rule that receives symbolic zeros (``symbolic_zeros=True``) gets
``SymbolicZero`` values of symbolic shape under ``mask``; their
``instantiate()`` makes the zeros on the mask trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_core import ClosedJaxpr, ShapedArray, ops, transformation
from plait_core.primitives.calls import custom_vmap_call_p
from plait_core.rebound_rules import ReboundRule, RuleFrame, rebind_custom_call
from plait_core.staging import trace_to_jaxpr
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules
from plait_masking.trace import MaskTrace, eval_masked, mask_jaxpr

__all__ = ["MaskFrame", "MaskedVmapRule"]


class MaskFrame(RuleFrame[MaskTrace]):
    """The rules of one masked call: its padded sizes (``env``) and the types
    of its leading operands (the masked body's constants, then the logical
    sizes, in the order of ``env.names``)."""

    __slots__ = ("env", "lead_avals")

    label, where, sizes_noun = "masked", "mask", "the logical sizes"

    def __init__(self, env: MaskEnv, lead_avals: Sequence[ShapedArray]) -> None:
        super().__init__(len(lead_avals), len(env.names))
        self.env, self.lead_avals = env, tuple(lead_avals)

    def stage(self, closed: ClosedJaxpr, origin: Sequence[int | None], with_sizes: bool) -> ClosedJaxpr:
        def flat(*xs: Any) -> list[Any]:
            env = self.env.rebind(self.sizes_of(xs))
            outs = eval_masked(env, closed, xs[self.num_lead :])
            return [*outs, *env.logical_values()] if with_sizes else outs

        return trace_to_jaxpr(flat, [*self.lead_avals, *(self.env.padded_aval(a) for a in closed.in_avals)])

    def run(
        self, sizes: Sequence[Any], fun: Callable[..., Any], values: Sequence[Any], avals: Sequence[ShapedArray],
        origin: Sequence[int | None],
    ) -> tuple[MaskTrace, Any]:  # fmt: skip
        trace = MaskTrace(self.env.rebind(list(sizes)))
        with transformation(trace):
            return trace, fun(*(None if v is None else trace.wrap(v, a) for v, a in zip(values, avals)))

    def zeros(self, aval: ShapedArray) -> Any:
        return ops.full(self.env.padded_shape(aval.shape), 0, aval.dtype)

    def operand_values(self, trace: MaskTrace, xs: Sequence[Any]) -> list[Any]:
        return [None if x is None else trace.unwrap(x) for x in xs]

    def cotangents(self, trace: MaskTrace, cts: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
        return [None if ct is None else trace.env.fill(trace.unwrap(ct), a, None, 0) for ct, a in zip(cts, avals)]


class MaskedVmapRule(ReboundRule):
    """``rule`` of a masked ``custom_vmap_call``: the user's batching rule under
    ``mask``.  The logical sizes must be the same for every element."""

    __slots__ = ()

    frame: MaskFrame

    def __call__(self, axis_size: Any, in_batched: Sequence[bool], *ops: Any) -> tuple[list[Any], list[bool]]:
        frame = self.frame
        nl, k = frame.num_lead, frame.num_sizes
        if any(in_batched[nl - k : nl]):
            batched = [n for n, b in zip(frame.env.names, in_batched[nl - k : nl]) if b]
            raise NotImplementedError(
                f"mask: the custom_vmap function {self.name} is batched by a vmap outside mask that gives each "
                f"element its own logical size ({', '.join(batched)}); its batching rule expects a batch of "
                "values of one logical shape, so it cannot be used. Batch with the same logical sizes for "
                "every element, or apply vmap inside mask"
            )
        if any(in_batched[: nl - k]):
            raise TypeError(
                f"The custom_vmap function {self.name} closes over a value that vmap batches; that is not "
                "supported (its batching rule only sees the explicit arguments). Pass the value as an argument"
            )
        flags = [bool(b) for b in in_batched[nl:]]
        avals = [a.update(shape=(axis_size, *a.shape)) if b else a for a, b in zip(self.in_avals, flags)]

        def fun(*xs: Any) -> Any:
            return self.inner(axis_size, flags, *xs)

        trace, (outs, out_batched) = frame.run(frame.sizes_of(ops), fun, ops[nl:], avals, range(len(avals)))
        return [trace.unwrap(o) for o in outs], list(out_batched)


def _custom_vmap_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> list[Any]:
    closed: ClosedJaxpr = params["call_jaxpr"]
    body, lead = mask_jaxpr(env, closed)
    frame = MaskFrame(env, body.in_avals[: len(lead)])
    rule = MaskedVmapRule(params["rule"], frame, closed.in_avals, closed.out_avals)
    return rebind_custom_call(custom_vmap_call_p, frame, body, lead, vals, params, {"rule": rule})


# custom_jvp_call, custom_vjp_call and custom_ivjp_call are core's padded rules
# (plait_core.padded.calls), which reach MaskFrame through MaskEnv.rule_frame;
# custom_vmap_call's rule only exists under mask (vmap over piles refuses it:
# a pile is not a rectangular batch), so it stays here.
masking_rules[custom_vmap_call_p] = _custom_vmap_rule
