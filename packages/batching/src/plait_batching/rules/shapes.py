"""Batching rule of the shape family: ``dim_as_value`` has no operands, so
its value never depends on the batch (ragged sizes of piles are the piles'
business, in the ragged rules)."""

from __future__ import annotations

from plait_batching.factories import defunbatched
from plait_core.primitives.shapes import dim_as_value_p

defunbatched(dim_as_value_p)
