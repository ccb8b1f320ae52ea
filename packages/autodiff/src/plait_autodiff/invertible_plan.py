"""Which operands the backward pass of an invertible function keeps.

The backward pass rebuilds what it can from the function's outputs and keeps
the rest (:func:`kept_operands`).  Keeping an argument is never an error; it
costs memory, and keeping the wrong one costs a lot: a kept activation lets
the backward pass recompute the body forwards from it, every intermediate
live at once.  So the choice is made by a symbolic walk that mirrors
:func:`~plait_autodiff.invertible.reconstruct` on "known / unknown" flags
instead of values:

1. an argument that no chain of invertible equations connects to an output
   (a weight only ever multiplied by ``dot_general``, an unused argument) is
   kept from the start;
2. the walk goes over the equations in reverse order; where it gets stuck (an
   equation with two unknown operands, one without an inverse rule, a call
   whose body gets stuck), it asks for the smallest set of arguments (in
   bytes, then undifferentiated before differentiated ones) whose values
   would unblock it, keeps them, and walks again.

A ``custom_ivjp`` function is planned as its body would be, so its rule
receives as values every argument the generic inversion could not rebuild
(its weights), and ``None`` for the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff.registries import inverse_refusals, inverse_rules
from plait_core import Jaxpr, JaxprEqn, Literal, Var
from plait_core.abstract import ShapedArray
from plait_core.dce import dce_jaxpr
from plait_core.primitives.calls import CALL_PRIMITIVES, called_jaxpr, custom_ivjp_call_p

__all__ = ["PlanError", "plan_kept"]


class PlanError(Exception):
    """The walk is stuck and no argument would help (the reason)."""


class _Need(Exception):
    """The walk needs these variables of the jaxpr it walks to be known."""

    def __init__(self, needed: set[Var], where: str) -> None:
        super().__init__(where)
        self.needed, self.where = needed, where


def _nbytes(aval: Any) -> int:
    size = 1
    for d in getattr(aval, "shape", ()):
        size *= d if isinstance(d, int) else 1 << 20  # a symbolic size: large
    return size * np.dtype(getattr(aval, "dtype", np.float32)).itemsize


def _rebuildable_candidates(jaxpr: Jaxpr) -> set[Var]:
    """Variables connected to an output by a chain of equations that may be
    inverted for them (a rule exists, or a call whose body may)."""
    cand: set[Var] = {v for v in jaxpr.outvars if type(v) is Var}
    for eqn in reversed(jaxpr.eqns):
        prim = eqn.primitive
        if any(v in cand for v in eqn.outvars) and (prim in CALL_PRIMITIVES or inverse_rules.get(prim) is not None):
            cand.update(a for a in eqn.invars if type(a) is Var)
    return cand


class _Walk:
    """One symbolic backward walk over a body (see the module docstring)."""

    def __init__(self, jaxpr: Jaxpr, known_invars: Sequence[bool], cost: Callable[[Var], tuple[int, int]]) -> None:
        self.jaxpr, self.cost = jaxpr, cost
        self.known: set[Var] = set(jaxpr.constvars)
        self.known.update(v for v, k in zip(jaxpr.invars, known_invars) if k)
        self.known.update(v for v in jaxpr.outvars if type(v) is Var)
        self.producer = {v: e for e in jaxpr.eqns for v in e.outvars}
        self.invars = set(jaxpr.invars)
        self.failed: dict[int, int] = {}

    def is_known(self, a: Any) -> bool:
        return type(a) is Literal or a in self.known

    def ensure(self, a: Any, visiting: set[int]) -> bool:
        if self.is_known(a):
            return True
        eqn = self.producer.get(a)
        if eqn is None or id(eqn) in visiting or self.failed.get(id(eqn)) == len(self.known):
            return False
        visiting.add(id(eqn))
        ok = all(self.ensure(b, visiting) for b in eqn.invars)
        visiting.discard(id(eqn))
        if not ok:
            self.failed[id(eqn)] = len(self.known)
            return False
        self.known.update(eqn.outvars)
        return True

    def missing(self, atoms: Sequence[Any]) -> set[Var]:
        """The unknown arguments that ``atoms`` are computed from."""
        out: set[Var] = set()
        seen: set[Var] = set()
        stack = [a for a in atoms if type(a) is Var]
        while stack:
            v = stack.pop()
            if v in seen or v in self.known:
                continue
            seen.add(v)
            if v in self.invars:
                out.add(v)
            elif v in self.producer:
                stack.extend(b for b in self.producer[v].invars if type(b) is Var)
        return out

    def need(self, atoms: Sequence[Any], where: str) -> _Need:
        return _Need(self.missing(atoms), where)

    def cheapest(self, unknown: Sequence[Var], where: str) -> _Need:
        """Several operands are unknown: solve for one, keep what the others need."""
        best: tuple[Any, ...] | None = None
        for u in unknown:
            keep = self.missing([w for w in unknown if w is not u])
            costs = [self.cost(v) for v in keep]
            key = (sum(c[0] for c in costs), sum(c[1] for c in costs), sorted(self.jaxpr.invars.index(v) for v in keep))
            if best is None or key < best[0]:
                best = (key, keep)
        assert best is not None
        return _Need(best[1], where)

    def run(self) -> None:
        cand = _rebuildable_candidates(self.jaxpr)
        never = [v for v in self.jaxpr.invars if v not in cand and v not in self.known]
        if never:
            raise _Need(set(never), "arguments no chain of invertible equations connects to an output")
        for k in range(len(self.jaxpr.eqns) - 1, -1, -1):
            self.step(k, self.jaxpr.eqns[k])
        rest = [v for v in self.jaxpr.invars if v not in self.known]
        if rest:
            raise self.need(rest, "arguments the outputs do not determine")

    def step(self, k: int, eqn: JaxprEqn) -> None:
        where = f"equation {k} `{eqn!r}`"
        outs = [v for v in eqn.outvars if not self.ensure(v, set())]
        if outs:
            raise self.need(outs, f"{where}: its results are not determined by the outputs")
        unknown = [a for a in eqn.invars if not self.ensure(a, set())]
        if not unknown:
            return
        if len(set(unknown)) < len(unknown):
            raise self.need(unknown, f"{where}: the value to rebuild is used by more than one operand")
        prim = eqn.primitive
        if prim in CALL_PRIMITIVES:
            self.call(eqn, where)
        elif len(unknown) > 1:
            raise self.cheapest([a for a in unknown if type(a) is Var], f"{where}: {len(unknown)} operands are unknown")
        else:
            i = eqn.invars.index(unknown[0])
            refusal = inverse_refusals.get(prim)
            in_avals = [a.aval for a in eqn.invars]
            reason = "no inverse rule" if inverse_rules.get(prim) is None else None
            if reason is None and refusal is not None:
                reason = refusal(in_avals, [v.aval for v in eqn.outvars], i, **eqn.params)
            if reason is not None:
                raise self.need(unknown, f"{where}: {reason}")
        self.known.update(a for a in unknown if type(a) is Var)

    def call(self, eqn: JaxprEqn, where: str) -> None:
        body = called_jaxpr(eqn.primitive, eqn.params)
        flags = [self.is_known(a) for a in eqn.invars]
        if eqn.primitive is custom_ivjp_call_p:
            consts = [a for a in eqn.invars[: eqn.params["num_consts"]] if not self.is_known(a)]
            if consts:
                raise self.need(consts, f"{where}: the constants of a custom_ivjp function are passed through")
        inner, _ = dce_jaxpr(body.jaxpr)

        def inner_cost(v: Var) -> tuple[int, int]:
            outer = eqn.invars[inner.invars.index(v)]
            return (sum(self.cost(w)[0] for w in self.missing([outer])), sum(self.cost(w)[1] for w in self.missing([outer])))

        try:
            _Walk(inner, flags, inner_cost).run()
        except _Need as n:
            atoms = [eqn.invars[inner.invars.index(v)] for v in n.needed]
            raise self.need(atoms, f"{where}, inside: {n.where}") from None


def plan_kept(
    jaxpr: Jaxpr, known: Sequence[bool], differentiated: Sequence[bool], on_keep: Callable[[str], None] | None = None
) -> tuple[bool, ...]:
    """The arguments to keep (flags per ``jaxpr.invars``), starting from
    ``known`` (constants); see the module docstring.  Raises
    :class:`PlanError` when the walk is stuck and no argument would help."""
    body, _ = dce_jaxpr(jaxpr)
    flags = list(known)
    position = {v: i for i, v in enumerate(body.invars)}

    def cost(v: Var) -> tuple[int, int]:
        aval: ShapedArray = v.aval
        return _nbytes(aval), int(bool(differentiated[position[v]]))

    while True:
        try:
            _Walk(body, flags, cost).run()
            return tuple(flags)
        except _Need as n:
            new = [position[v] for v in n.needed if not flags[position[v]]]
            if not new:
                raise PlanError(n.where) from None
            for i in new:
                flags[i] = True
            if on_keep is not None:
                on_keep(n.where)
