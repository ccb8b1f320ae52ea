"""plait-masking: ``mask`` and ``shapecheck`` over polymorphic shapes.

``mask(fun, in_shapes, out_shape)`` runs ``fun`` on padded arrays for any
logical sizes at or below the padded ones; under ``jit`` one compilation
serves every logical size.  ``shapecheck(in_shapes, out_shape)(fun)``
checks ``fun``'s shapes symbolically.

This package depends on plait-core alone.  Its rules for core's primitives
live in :data:`masking_rules`, keyed by primitive (one module per family in
:mod:`plait_masking.rules`); the coverage test walks core's catalog and
names every primitive without a rule.
"""

from plait_masking import rules as _rules
from plait_masking.api import mask, shapecheck
from plait_masking.env import MaskEnv
from plait_masking.errors import ShapeError
from plait_masking.registry import masking_rules
from plait_masking.specs import WILDCARD, parse_spec
from plait_masking.trace import MaskTrace, MaskTracer

__version__ = "0.1.0"

__all__ = [
    "WILDCARD",
    "MaskEnv",
    "MaskTrace",
    "MaskTracer",
    "ShapeError",
    "mask",
    "masking_rules",
    "parse_spec",
    "shapecheck",
]
