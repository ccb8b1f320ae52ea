"""``plait.experimental``: ``io_callback``, a host callback with side effects
and results (JAX's ``jax.experimental.io_callback``)."""

from __future__ import annotations

from plait_core.host_callbacks import io_callback

__all__ = ["io_callback"]
