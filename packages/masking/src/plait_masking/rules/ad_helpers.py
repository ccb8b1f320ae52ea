"""``stop_gradient``, ``add_any`` and ``zeros_like``: elementwise, so they pass through."""

from __future__ import annotations

from plait_core.primitives.ad_helpers import add_any_p, stop_gradient_p, zeros_like_p

from plait_masking.rules._common import register_passthrough

register_passthrough(stop_gradient_p, add_any_p, zeros_like_p)
