"""plait-autodiff: forward and reverse mode (jvp, linearize, vjp, grad), custom rules, checkpoint and invertible AD.

This package depends on plait-core alone.  Its rules for core's
primitives live in the registries below, keyed by primitive; the coverage
test walks core's catalog and names every primitive without a rule.  The
rules themselves land with issue #4.
"""

from collections.abc import Callable
from typing import Any

from plait_core import RuleRegistry

jvp_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("autodiff (jvp)")
transpose_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("autodiff (transpose)")
inverse_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("autodiff (inverse)")

__version__ = "0.1.0"
