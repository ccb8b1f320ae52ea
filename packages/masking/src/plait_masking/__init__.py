"""plait-masking: mask and shapecheck over polymorphic shapes.

This package depends on plait-core alone.  Its rules for core's
primitives live in the registries below, keyed by primitive; the coverage
test walks core's catalog and names every primitive without a rule.  The
rules themselves land with issue #6.
"""

from collections.abc import Callable
from typing import Any

from plait_core import RuleRegistry

masking_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("masking")

__version__ = "0.1.0"
