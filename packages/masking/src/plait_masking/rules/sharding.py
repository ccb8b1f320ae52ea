"""Masking rules of the sharding family.

``sharding_constraint`` only lays the (padded) value out: it passes through.
``shard_map`` is not supported inside ``mask``: its in specs split the padded
arrays, so a device's piece would mix logical data and padding in a way the
body cannot see (mask the body inside the shard_map instead).
"""

from __future__ import annotations

from plait_core.primitives.sharding import shard_map_p, sharding_constraint_p
from plait_masking.registry import masking_rules
from plait_masking.rules._common import register_passthrough

register_passthrough(sharding_constraint_p)
masking_rules.not_supported(
    shard_map_p,
    "shard_map splits the padded arrays over devices, so the pieces would mix logical data and padding "
    "that the body cannot tell apart; apply mask to the function inside shard_map instead",
)
