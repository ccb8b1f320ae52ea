"""``lax.with_sharding_constraint`` (see :mod:`plait_core.shard_map`)."""

from plait_core.shard_map import with_sharding_constraint

__all__ = ["with_sharding_constraint"]
