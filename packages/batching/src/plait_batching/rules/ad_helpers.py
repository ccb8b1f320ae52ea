"""Batching rules of the AD helpers: ``stop_gradient`` and ``zeros_like`` are
elementwise in one operand; ``add_any`` adds two operands of one shape."""

from __future__ import annotations

from plait_batching.factories import defbroadcasting, defvectorized
from plait_batching.registries import batching_rules
from plait_core.primitives.ad_helpers import (
    add_any_p,
    custom_lin_p,
    invertible_lin_p,
    stop_gradient_p,
    zeros_like_p,
)

defvectorized(stop_gradient_p, zeros_like_p)
defbroadcasting(add_any_p, scalar_ok=lambda i: False)

# The linear primitives autodiff builds appear only in linearized programs.
# Reverse mode transposes them without batching them; what would reach vmap is
# their forward evaluation (a linearized function applied to batched tangents).
batching_rules.not_supported(
    custom_lin_p,
    "it is the linear map of a custom_vjp function, which has no forward-mode rule; vmap the "
    "function before differentiating it",
)
batching_rules.not_supported(
    invertible_lin_p,
    "vmapping the linearized form of an invertible function is not supported; vmap the function "
    "before linearizing it (vmap(grad(f)) and grad(vmap(f)) both work)",
)
