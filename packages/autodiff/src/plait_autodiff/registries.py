"""The rule registries of plait-autodiff, keyed by core's primitives.

* :data:`jvp_rules`: ``rule(primals, tangents, **params) -> (primal_out,
  tangent_out)``.  ``tangents`` holds a :class:`~plait_autodiff.tangents.Zero`
  for every operand whose tangent is known to be zero; at least one is not.
  For ``multiple_results`` primitives both results are lists.  Rules run with
  the parent trace current, so what they bind is interpreted one level down.
* :data:`transpose_rules`: ``rule(ct, *operands, **params) -> cotangents``,
  one entry per operand (``None`` or a ``Zero`` for zero), where each operand
  is either its value or an :class:`~plait_autodiff.transpose.UndefinedPrimal`
  (the linear inputs).  ``ct`` is a list for ``multiple_results`` primitives;
  a single-result rule is never called with a zero cotangent.
* :data:`inverse_rules`: used by invertible AD.
* :data:`inverse_refusals`: ``refusal(in_avals, out_avals, i, **params) ->
  str | None``, why an inverse rule cannot solve for operand ``i`` given only
  the avals (``None`` when it can); consulted when planning what to keep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait_core import RuleRegistry

JvpRule = Callable[..., tuple[Any, Any]]
TransposeRule = Callable[..., Any]

jvp_rules: RuleRegistry[JvpRule] = RuleRegistry("autodiff (jvp)")
transpose_rules: RuleRegistry[TransposeRule] = RuleRegistry("autodiff (transpose)")
inverse_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("autodiff (inverse)")
inverse_refusals: dict[Any, Callable[..., str | None]] = {}

__all__ = ["JvpRule", "TransposeRule", "inverse_refusals", "inverse_rules", "jvp_rules", "transpose_rules"]
