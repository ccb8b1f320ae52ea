"""``plait.custom_derivatives``: the names JAX users import from
``jax.custom_derivatives``: the decorators, and the values rules defined
with ``symbolic_zeros=True`` receive."""

from __future__ import annotations

from plait_core.custom_derivatives import CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp

__all__ = ["CustomVJPPrimal", "SymbolicZero", "custom_jvp", "custom_vjp"]
