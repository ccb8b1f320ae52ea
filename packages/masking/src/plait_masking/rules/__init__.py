"""Masking rules for core's primitives, grouped by family as core's catalog is.

Importing this package registers every rule in
:data:`plait_masking.registry.masking_rules`: masking's own, and core's
padded rules (:data:`plait_core.padded.padded_rules`: reductions, linear
algebra, windows, control flow, calls, ...), which masking runs as they are,
with its :class:`~plait_masking.env.MaskEnv` of scalar sizes (whose
``padded_jaxpr`` masks the sub-programs of calls and loops).
"""

from plait_core.padded import padded_rules
from plait_masking.registry import masking_rules
from plait_masking.rules import (
    ad_helpers,
    callbacks,
    collectives,
    custom_calls,
    optimization_barrier,
    sharding,
)

for _prim, _rule in padded_rules.items():
    masking_rules[_prim] = _rule
