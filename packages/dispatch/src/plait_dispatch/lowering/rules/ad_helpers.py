"""Lowering of the primitives autodiff relies on.

* ``stop_gradient`` is the identity, ``add_any`` an addition (of ``float0``
  values: the all-false value itself), ``zeros_like`` a constant.
* ``custom_lin`` and ``invertible_lin`` (the linear maps of linearized
  programs) are lowered through their implementation, traced into a jaxpr:
  ``invertible_lin``'s implementation, installed by plait-autodiff,
  differentiates the invertible body forwards with core primitives, which
  are then lowered as usual; ``custom_lin``'s implementation raises the same
  ``TypeError`` as evaluating it eagerly does (forward-mode differentiation of
  a ``custom_vjp`` function), and so does ``invertible_lin``'s when
  plait-autodiff is not installed.
"""

from __future__ import annotations

from typing import Any

from plait_core import Primitive, trace_to_jaxpr
from plait_core.primitives import ad_helpers as core_ad
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lower_closed_jaxpr, lowering_rules
from plait_dispatch.lowering.module import FLOAT0, Value, concrete_shape


@lowering_rules.register(core_ad.stop_gradient_p)
def _stop_gradient(ctx: RuleContext, x: Value) -> list[Value]:
    return [x]


@lowering_rules.register(core_ad.add_any_p)
def _add_any(ctx: RuleContext, x: Value, y: Value) -> list[Value]:
    if ctx.avals_out[0].dtype == FLOAT0:
        return [x]
    return [ops.binary(ctx, "stablehlo.add", x, y)]


@lowering_rules.register(core_ad.zeros_like_p)
def _zeros_like(ctx: RuleContext, x: Value) -> list[Value]:
    out = ctx.avals_out[0]
    return [ops.full(ctx, 0, out.dtype, concrete_shape(out))]


def lower_through_impl(prim: Primitive) -> Any:
    """A rule lowering ``prim`` by tracing its implementation (which must be
    written with primitives) into a jaxpr and inlining that."""

    def rule(ctx: RuleContext, *args: Value, **params: Any) -> list[Value]:
        def impl(*xs: Any) -> list[Any]:
            out = prim.impl(*xs, **params)
            return list(out) if prim.multiple_results else [out]

        return lower_closed_jaxpr(ctx, trace_to_jaxpr(impl, ctx.avals_in), args)

    return rule


for _name in ("custom_lin_p", "invertible_lin_p"):
    _prim = getattr(core_ad, _name, None)  # recent additions to core's catalog
    if _prim is not None:
        lowering_rules[_prim] = lower_through_impl(_prim)
