"""Batching rules of the AD helpers: ``stop_gradient`` and ``zeros_like`` are
elementwise in one operand; ``add_any`` adds two operands of one shape."""

from __future__ import annotations

from plait_batching.factories import defbroadcasting, defvectorized
from plait_core.primitives.ad_helpers import add_any_p, stop_gradient_p, zeros_like_p

defvectorized(stop_gradient_p, zeros_like_p)
defbroadcasting(add_any_p, scalar_ok=lambda i: False)
