"""Ragged rules of the elementwise and AD-helper families.

Elementwise primitives never move data between positions, so they run on the
padded data as they are (core's passthrough padded rules,
:mod:`plait_core.padded.structural`, run by :mod:`.ragged_padded`): the
padding of the result is computed from the padding of the operands and is
never read into a true entry.  Operands of one ragged size line up because
each size has one padded size; broadcasting against static shapes and
scalars works as the batching rules do.  The AD helpers ``stop_gradient``,
``zeros_like`` and ``add_any`` are elementwise too.  Operands may have ragged
axes of different sizes (an ``n x m`` value between two piles): each size
has its own padded size, so equal element shapes have equal padded shapes.
"""

from __future__ import annotations

from plait_batching.registries import ragged_rules
from plait_core.primitives.ad_helpers import custom_lin_p, invertible_lin_p

# The linearization helpers only appear in programs that reverse mode transposes.
ragged_rules.not_supported(
    custom_lin_p, "it only appears in linearized programs, which are transposed, never evaluated"
)
ragged_rules.not_supported(
    invertible_lin_p, "its forward evaluation differentiates the invertible body, which is not done on ragged values"
)
