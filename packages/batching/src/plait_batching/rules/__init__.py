"""Batching rules, one module per primitive family (as in core's catalog).

Importing this package registers every rule in
:data:`~plait_batching.registries.batching_rules`, and the rules for ragged
values (piles) in :data:`~plait_batching.registries.ragged_rules` (the
``ragged_*`` modules; ``ragged_padded`` runs core's padded rules,
:mod:`plait_core.padded`: reductions, linear algebra, windows, control flow,
calls, ...).
"""

from plait_batching.rules import (
    ad_helpers,
    bijective_gather,
    callbacks,
    calls,
    collectives,
    complex_numbers,
    control_flow,
    elementwise,
    factorizations,
    fft,
    indexing,
    linalg,
    optimization_barrier,
    ragged_calls,
    ragged_custom_calls,
    ragged_elementwise,
    ragged_padded,
    ragged_structural,
    reduce_window,
    reductions,
    shapes,
    sharding,
    structural,
)

__all__ = [
    "ad_helpers",
    "bijective_gather",
    "callbacks",
    "calls",
    "collectives",
    "complex_numbers",
    "control_flow",
    "elementwise",
    "factorizations",
    "fft",
    "indexing",
    "linalg",
    "optimization_barrier",
    "ragged_calls",
    "ragged_custom_calls",
    "ragged_elementwise",
    "ragged_padded",
    "ragged_structural",
    "reduce_window",
    "reductions",
    "shapes",
    "sharding",
    "structural",
]
