"""Primitives: the instructions of plait's language, and the catalog of them all.

A :class:`Primitive` has a name, a NumPy reference implementation (``impl``)
and an abstract evaluation rule.  ``bind`` hands it to the current trace,
which either evaluates it (the eager trace), stages it into a jaxpr, or
transforms it.  Interpreters keep their own rules in a :class:`RuleRegistry`
keyed by the primitive object; the catalog lists every primitive so that each
interpreter's coverage test can name what it is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from plait_core import trace as _trace
from plait_core.abstract import ShapedArray

AbstractEval = Callable[..., Any]

_state = _trace._state  # the per-thread current trace, read by every bind
_EvalTrace = _trace.EvalTrace
_eager_backend = _trace._backend  # a one-element list: set_eager_backend replaces its item


class Primitive:
    """An operation of the language.

    ``multiple_results`` primitives return a list from ``bind``.  ``family``
    groups primitives as DESIGN.md's catalog does (``elementwise``,
    ``structural``, ``reduction``, ``linalg``, ``control_flow``, ``call``,
    ``collective``, ``ad``, ``random``).

    A reduction (and a cumulative reduction) also knows its monoid's
    ``identity``: a function from the operand's dtype to the scalar that
    changes no result (0 for sums, the lowest value for maxima, ...), which
    interpreters computing on padded data fill the padding with.
    """

    __slots__ = (
        "__weakref__", "abstract_eval", "family", "fold_literals", "identity", "impl", "multiple_results", "name",
    )  # fmt: skip

    def __init__(self, name: str, *, family: str, multiple_results: bool = False) -> None:
        self.name = name
        self.family = family
        self.multiple_results = multiple_results
        self.impl: Callable[..., Any] = _missing_impl(name)
        self.abstract_eval: AbstractEval = _missing_abstract_eval(name)
        #: Staging evaluates this primitive right away when every input is a literal.
        self.fold_literals = False
        #: For a reduction: the identity of its monoid, per operand dtype (else ``None``).
        self.identity: Callable[[Any], Any] | None = None
        _catalog.add(self)

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive to ``args`` on the current trace."""
        trace = _state.trace
        if trace.__class__ is _EvalTrace:
            # Eager evaluation, the commonest case, goes straight to the
            # backend (what EvalTrace.process_primitive does, one call less).
            return _eager_backend[0](self, args, params)
        return trace.process_primitive(self, args, params)

    def get_bind_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """JAX's ``Primitive.get_bind_params``: the keyword arguments with which
        ``bind`` applies an equation of this primitive with ``params`` again
        (an interpreter walking a jaxpr calls ``p.bind(*ins, **p.get_bind_params(eqn.params))``).
        In plait an equation's params are exactly ``bind``'s, calls and custom
        derivatives included, so this is a copy of them (JAX 0.10.2 also returns a
        dict)."""
        return dict(params)

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """Set the NumPy reference implementation (decorator)."""
        self.impl = impl
        return impl

    def def_abstract_eval(self, rule: AbstractEval) -> AbstractEval:
        """Set the abstract evaluation rule (decorator). It receives avals and params
        and returns an aval (a list of avals for ``multiple_results`` primitives)."""
        self.abstract_eval = rule
        return rule

    def __repr__(self) -> str:
        return self.name


def _missing_impl(name: str) -> Callable[..., Any]:
    def impl(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"primitive {name} has no implementation")

    return impl


def _missing_abstract_eval(name: str) -> AbstractEval:
    def rule(*avals: ShapedArray, **params: Any) -> Any:
        raise NotImplementedError(f"primitive {name} has no abstract evaluation rule")

    return rule


class _Catalog:
    def __init__(self) -> None:
        self._by_name: dict[str, Primitive] = {}

    def add(self, prim: Primitive) -> None:
        if prim.name in self._by_name:
            raise ValueError(f"a primitive named {prim.name!r} already exists")
        self._by_name[prim.name] = prim

    def __iter__(self) -> Iterator[Primitive]:
        return iter(list(self._by_name.values()))

    def get(self, name: str) -> Primitive:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no primitive named {name!r}") from None


_catalog = _Catalog()


def all_primitives() -> list[Primitive]:
    """Every primitive of the language, in definition order (for coverage tests).
    The catalog is complete once ``plait_core`` is imported, which importing this
    module does first (the package's ``__init__`` imports the primitives)."""
    return list(_catalog)


def primitive_by_name(name: str) -> Primitive:
    """Look up a primitive of the catalog by its name."""
    return _catalog.get(name)


R = TypeVar("R")


class RuleRegistry(Generic[R]):
    """An interpreter's rules, keyed by primitive.

    Besides rules, a registry records primitives the interpreter deliberately
    does not support, each with the reason (``not_supported``).  Looking up a
    primitive without a rule raises ``NotImplementedError`` naming the
    interpreter and the primitive, or the recorded reason.
    """

    def __init__(self, interpreter: str) -> None:
        self.interpreter = interpreter
        self._rules: dict[Primitive, R] = {}
        self._unsupported: dict[Primitive, str] = {}

    def __setitem__(self, prim: Primitive, rule: R) -> None:
        self._rules[prim] = rule

    def register(self, *prims: Primitive) -> Callable[[R], R]:
        """Decorator registering one rule for several primitives."""

        def deco(rule: R) -> R:
            for p in prims:
                self._rules[p] = rule
            return rule

        return deco

    def not_supported(self, prim: Primitive, reason: str) -> None:
        """Record that ``prim`` is deliberately not supported, and why."""
        self._unsupported[prim] = reason

    def get(self, prim: Primitive) -> R | None:
        """The rule, or None."""
        return self._rules.get(prim)

    def __contains__(self, prim: object) -> bool:
        return prim in self._rules

    def __getitem__(self, prim: Primitive) -> R:
        rule = self._rules.get(prim)
        if rule is not None:
            return rule
        reason = self._unsupported.get(prim)
        if reason is not None:
            raise NotImplementedError(f"{self.interpreter} does not support {prim.name}: {reason}")
        raise NotImplementedError(f"{self.interpreter} has no rule for the primitive {prim.name}")

    def unsupported_reason(self, prim: Primitive) -> str | None:
        """The documented reason ``prim`` is not supported, if any."""
        return self._unsupported.get(prim)

    def missing(self) -> list[Primitive]:
        """Catalog primitives with neither a rule nor a documented not-supported entry."""
        return [p for p in all_primitives() if p not in self._rules and p not in self._unsupported]
