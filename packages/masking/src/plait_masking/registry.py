"""The masking rules, keyed by primitive.

A rule is called as ``rule(env, vals, avals, **params)`` with the parent
trace current: ``env`` is the :class:`~plait_masking.env.MaskEnv`, ``vals``
the operands' padded data and ``avals`` their logical abstract values (with
symbolic shapes).  It returns the padded data of the result (a list for
primitives with several results), shaped as the logical result evaluated at
the padded sizes, whose logical part equals the primitive applied to the
logical parts of the operands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait_core import RuleRegistry

MaskingRule = Callable[..., Any]

masking_rules: RuleRegistry[MaskingRule] = RuleRegistry("plait_masking")

__all__ = ["MaskingRule", "masking_rules"]
