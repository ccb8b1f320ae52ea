"""Elementwise primitives: the padded data goes through as it is.

The logical part of an elementwise result only reads the logical parts of its
operands (rank-0 operands are never padded), so applying the primitive to
the padded data is exact; whatever the padding holds stays in the padding.
"""

from __future__ import annotations

from plait_core import all_primitives
from plait_masking.rules._common import register_passthrough

register_passthrough(*[p for p in all_primitives() if p.family == "elementwise"])
