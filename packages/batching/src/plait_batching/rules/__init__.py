"""Batching rules, one module per primitive family (as in core's catalog).

Importing this package registers every rule in
:data:`~plait_batching.registries.batching_rules`.
"""

from plait_batching.rules import (
    ad_helpers,
    calls,
    collectives,
    control_flow,
    elementwise,
    indexing,
    linalg,
    reductions,
    shapes,
    structural,
)

__all__ = [
    "ad_helpers",
    "calls",
    "collectives",
    "control_flow",
    "elementwise",
    "indexing",
    "linalg",
    "reductions",
    "shapes",
    "structural",
]
