"""The one registry of padded rules (see :mod:`plait_core.padded`).

A padded rule is called as ``rule(env, vals, avals, **params)`` with the
trace it binds on current: ``env`` a :class:`~plait_core.padded.env.PaddedEnv`,
``vals`` the operands' padded data, ``avals`` their logical abstract values
(symbolic along padded axes) and ``params`` the primitive's params as
written in the logical program.  It returns the padded data of the result (a
list for primitives with several results), shaped as the logical result at
the padded sizes, whose logical part equals the primitive applied to the
logical parts of the operands.

A rule registered ``per_axis`` treats each padded axis on its own, by its own
dimension: right for operands whose padded axes have *different* logical
sizes (an ``n x m`` value between two piles).  A ``passthrough`` rule binds
the primitive on the padded operands with its padded sizes replaced by the
padded sizes and does nothing else (an interpreter may take a shortcut).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from plait_core.primitive import Primitive, RuleRegistry

__all__ = ["PaddedRule", "PaddedRules", "padded_rules"]

PaddedRule = Callable[..., Any]


class PaddedRules(RuleRegistry[PaddedRule]):
    """Padded rules keyed by primitive, with the ``per_axis`` flag of each."""

    def __init__(self) -> None:
        super().__init__("padded semantics (plait_core.padded)")
        self._per_axis: set[Primitive] = set()
        self._passthrough: set[Primitive] = set()

    def define(
        self, rule: PaddedRule, *prims: Primitive, per_axis: bool = False, passthrough: bool = False
    ) -> PaddedRule:
        """Register ``rule`` for ``prims`` (``per_axis``, ``passthrough``: see the module doc)."""
        for p in prims:
            self[p] = rule
            if per_axis:
                self._per_axis.add(p)
            if passthrough:
                self._passthrough.add(p)
        return rule

    def is_passthrough(self, prim: Primitive) -> bool:
        """Whether ``prim``'s rule binds it on the padded data with padded params and nothing more."""
        return prim in self._passthrough

    def is_per_axis(self, prim: Primitive) -> bool:
        """Whether ``prim``'s rule treats each padded axis on its own."""
        return prim in self._per_axis

    def items(self) -> Iterator[tuple[Primitive, PaddedRule]]:
        """Every primitive with a rule, and its rule."""
        return iter(list(self._rules.items()))


#: The padded rules of core's primitives.
padded_rules = PaddedRules()
