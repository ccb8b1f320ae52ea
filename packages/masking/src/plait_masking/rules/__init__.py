"""Masking rules for core's primitives, grouped by family as core's catalog is.

Importing this package registers every rule in
:data:`plait_masking.registry.masking_rules`.
"""

from plait_masking.rules import (
    ad_helpers,
    callbacks,
    calls,
    collectives,
    control_flow,
    custom_calls,
    elementwise,
    factorizations,
    fft,
    indexing,
    linalg,
    optimization_barrier,
    reduce_window,
    reductions,
    shapes,
    sharding,
    structural,
)
