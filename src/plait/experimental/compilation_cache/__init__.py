"""``plait.experimental.compilation_cache``: JAX's older entry point of the
persistent compilation cache (its ``compilation_cache`` module)."""

from __future__ import annotations

from plait.experimental.compilation_cache import compilation_cache as compilation_cache

__all__ = ["compilation_cache"]
