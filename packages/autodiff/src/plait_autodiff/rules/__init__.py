"""plait-autodiff's rules for core's primitives, one module per family
(importing this package registers them all)."""

from plait_autodiff.rules import (
    ad_helpers,
    bijective_gather,
    callbacks,
    calls,
    collectives,
    complex_numbers,
    control_flow,
    custom_vmap,
    elementwise,
    factorizations,
    fft,
    inverse,
    inverse_fft,
    invertible,
    linalg,
    optimization_barrier,
    reduce_window,
    reductions,
    shapes,
    sharding,
    structural,
)

__all__ = ["ad_helpers", "bijective_gather", "callbacks", "calls", "collectives", "complex_numbers", "control_flow", "custom_vmap", "elementwise", "factorizations", "fft", "inverse", "inverse_fft", "invertible", "linalg", "optimization_barrier", "reduce_window", "reductions", "shapes", "sharding", "structural"]
