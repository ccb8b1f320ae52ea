"""``plait.experimental.shard_map``: JAX's older home of ``shard_map`` (now
``plait.shard_map``); the same function."""

from __future__ import annotations

from plait_core.shard_map import shard_map

__all__ = ["shard_map"]
