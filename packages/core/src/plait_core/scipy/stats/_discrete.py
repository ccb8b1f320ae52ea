"""What the discrete distributions share: ``k - loc`` checked to be a
non-negative integer (optionally at most ``n``)."""

from __future__ import annotations

from plait_core import numpy as pnp
from plait_core.scipy.stats._common import Array


def support(k: Array, low: float = 0, high: Array | None = None) -> tuple[Array, Array]:
    """``(valid, safe_k)``: where ``k`` is an integer in ``[low, high]``, and ``k`` with
    invalid entries replaced by ``low`` (so every branch stays finite)."""
    valid = (k >= low) & (k == pnp.floor(k))
    if high is not None:
        valid = valid & (k <= high)
    return valid, pnp.where(valid, k, low)
