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

A ``nested`` rule has sub-programs (the jaxprs of calls, loops, ``cond``)
interpreted through :meth:`~plait_core.padded.env.PaddedEnv.padded_jaxpr`;
its values are in the interpreter's representation of padded data (see
:mod:`plait_core.padded.env`), which an interpreter may choose per rule.

A rule may come with a ``check(env, avals, params)`` that raises
:meth:`~plait_core.padded.env.PaddedEnv.unsupported` for layouts padded data
cannot compute (a window along a padded axis).  It runs before the rule; an
interpreter may run it earlier still, before its own shape checks, whose
error would say less (:meth:`PaddedRules.check_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.primitive import Primitive, RuleRegistry

__all__ = ["PaddedCheck", "PaddedRule", "PaddedRules", "padded_rules"]

PaddedRule = Callable[..., Any]
#: ``check(env, avals, params)``: raise ``env.unsupported(...)`` for what padded data cannot compute.
PaddedCheck = Callable[[Any, Sequence[ShapedArray], dict[str, Any]], None]


class PaddedRules(RuleRegistry[PaddedRule]):
    """Padded rules keyed by primitive, with the ``per_axis`` flag of each."""

    def __init__(self) -> None:
        super().__init__("padded semantics (plait_core.padded)")
        self._per_axis: set[Primitive] = set()
        self._passthrough: set[Primitive] = set()
        self._checks: dict[Primitive, PaddedCheck] = {}
        self._nested: set[Primitive] = set()

    def define(
        self, rule: PaddedRule, *prims: Primitive, per_axis: bool = False, passthrough: bool = False,
        check: PaddedCheck | None = None, nested: bool = False,
    ) -> PaddedRule:  # fmt: skip
        """Register ``rule`` for ``prims`` (``per_axis``, ``passthrough``, ``check``,
        ``nested``: see the module doc)."""
        registered = rule if check is None else _checked(rule, check)
        for p in prims:
            if check is not None:
                self._checks[p] = check
            self[p] = registered
            if per_axis:
                self._per_axis.add(p)
            if nested:
                self._nested.add(p)
            if passthrough:
                self._passthrough.add(p)
        return rule

    def is_passthrough(self, prim: Primitive) -> bool:
        """Whether ``prim``'s rule binds it on the padded data with padded params and nothing more."""
        return prim in self._passthrough

    def check_of(self, prim: Primitive) -> PaddedCheck | None:
        """``prim``'s check, if it has one (its rule runs it too)."""
        return self._checks.get(prim)

    def is_nested(self, prim: Primitive) -> bool:
        """Whether ``prim``'s rule interprets sub-programs (see the module doc)."""
        return prim in self._nested

    def is_per_axis(self, prim: Primitive) -> bool:
        """Whether ``prim``'s rule treats each padded axis on its own."""
        return prim in self._per_axis

    def items(self) -> Iterator[tuple[Primitive, PaddedRule]]:
        """Every primitive with a rule, and its rule."""
        return iter(list(self._rules.items()))


def _checked(rule: PaddedRule, check: PaddedCheck) -> PaddedRule:
    def checked(env: Any, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        check(env, avals, params)
        return rule(env, vals, avals, **params)

    checked.__name__ = getattr(rule, "__name__", "padded_rule")
    return checked


#: The padded rules of core's primitives.
padded_rules = PaddedRules()
