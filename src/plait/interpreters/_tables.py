"""JAX's rule tables (``ad.primitive_jvps``, ``batching.primitive_batchers``, ...)
as views of plait's rule registries.

Setting ``table[p] = rule`` for an extension primitive ``p`` registers, in
the plait registry behind the table, an adapter that calls ``rule`` the way
JAX calls it and checks what it returns.  Reading ``table[p]`` gives the rule
last set through the table, or, for a primitive with no such rule, plait's
own rule when its calling convention is JAX's (``primitive_jvps`` and
``primitive_transposes``: plait's JVP and transpose rules are called as
JAX's are).

As in JAX, a library may also set the rule of one of plait's own primitives
(lineax gives ``stop_gradient`` a transpose rule at import): the adapter then
replaces plait's rule, for every program of the process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from plait.extend._primitive import is_extension
from plait_core import Primitive as CorePrimitive
from plait_core import RuleRegistry, all_primitives

__all__ = ["RuleTable", "check_primitive"]

Adapter = Callable[[CorePrimitive, Callable[..., Any]], Callable[..., Any]]

#: Per (registry, primitive), the table whose rule is in the registry now
#: (JAX's three batching tables share plait's one batching registry).
_owner: dict[tuple[int, CorePrimitive], RuleTable] = {}


def check_primitive(prim: Any, where: str) -> CorePrimitive:
    """``prim`` if it is a primitive (made with ``plait.extend.core.Primitive``,
    or one of plait's own); a ``TypeError`` naming ``where`` else."""
    if isinstance(prim, CorePrimitive):
        return prim
    raise TypeError(f"{where}: expected a primitive (plait.extend.core.Primitive), got {prim!r}")


class RuleTable(Mapping[CorePrimitive, Callable[..., Any]]):
    """One of JAX's rule tables over the plait registry ``registry``.

    ``adapter(prim, rule)`` makes the plait rule from a JAX rule;
    ``shares_convention`` says whether plait's own rules in ``registry`` are
    called as the table's rules are (then reading them is allowed)."""

    def __init__(
        self, name: str, registry: RuleRegistry[Any], adapter: Adapter, shares_convention: bool
    ) -> None:
        self.name = name
        self._registry = registry
        self._adapter = adapter
        self._shares = shares_convention
        self._given: dict[CorePrimitive, Callable[..., Any]] = {}
        #: Per primitive, the rule a set entry replaced and the table that had set it (or None).
        self._replaced: dict[CorePrimitive, tuple[Any, RuleTable | None]] = {}

    def __setitem__(self, prim: CorePrimitive, rule: Callable[..., Any]) -> None:
        prim = check_primitive(prim, f"{self.name}[...] = rule")
        if not callable(rule):
            raise TypeError(f"{self.name}[{prim.name}]: the rule must be callable, got {type(rule).__name__}")
        if _owner.get((id(self._registry), prim)) is not self:
            self._replaced[prim] = (self._registry.get(prim), _owner.get((id(self._registry), prim)))
        self._given[prim] = rule
        self._registry[prim] = self._adapter(prim, rule)
        _owner[(id(self._registry), prim)] = self

    def __delitem__(self, prim: CorePrimitive) -> None:
        if prim not in self._given or _owner.get((id(self._registry), prim)) is not self:
            raise KeyError(prim)
        del self._given[prim]
        key = (id(self._registry), prim)
        before, owner = self._replaced.pop(prim)
        self._registry[prim] = before if before is not None else _deleted(self.name, self._registry, prim)
        if owner is None:
            del _owner[key]
        else:
            _owner[key] = owner

    def __getitem__(self, prim: Any) -> Callable[..., Any]:
        rule = self._given.get(prim)
        if rule is not None and _owner.get((id(self._registry), prim)) is self:
            return rule
        if self._shares and not is_extension(prim) and isinstance(prim, CorePrimitive):
            own: Callable[..., Any] | None = self._registry.get(prim)
            if own is not None:
                return own
        raise KeyError(prim)

    def __iter__(self) -> Iterator[CorePrimitive]:
        mine = [p for p in self._given if _owner.get((id(self._registry), p)) is self]
        yield from mine
        if self._shares:
            yield from (p for p in all_primitives() if p in self._registry and p not in mine)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<{self.name}: a view of plait's registry {self._registry.interpreter!r}>"


def _deleted(table: str, registry: RuleRegistry[Any], prim: CorePrimitive) -> Callable[..., Any]:
    def rule(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"{registry.interpreter} does not support {prim.name}: its rule was deleted from {table}"
        )

    return rule
