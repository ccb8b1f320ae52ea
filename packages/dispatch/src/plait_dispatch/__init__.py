"""plait-dispatch: plait programs on XLA through jaxlib: device arrays, jit, device_put, donation and eager execution.

This package depends on plait-core alone (and jaxlib).  Its rules for core's
primitives live in the registries below, keyed by primitive; the coverage
test walks core's catalog and names every primitive without a rule.  The
rules themselves land with issue #3.
"""

from collections.abc import Callable
from typing import Any

from plait_core import RuleRegistry

lowering_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("dispatch (StableHLO lowering)")

__version__ = "0.1.0"
