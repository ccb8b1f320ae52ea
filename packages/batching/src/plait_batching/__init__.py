"""plait-batching: vmap, named-axis collectives, custom_vmap and ragged piles.

This package depends on plait-core alone.  Its rules for core's
primitives live in the registries below, keyed by primitive; the coverage
test walks core's catalog and names every primitive without a rule.  The
rules themselves land with issue #5.
"""

from collections.abc import Callable
from typing import Any

from plait_core import RuleRegistry

batching_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("batching")
ragged_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("batching (ragged piles)")

__version__ = "0.1.0"
