"""Minimise a failing program: fewer statements, an earlier output, fewer inputs.

Greedy rounds: every candidate one step smaller is tried (in one batch, so
the JAX worker is asked once per round), and the smallest that still fails
the same way becomes the new program, until no candidate fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from .modes import applicable
from .program import Program, Stmt

#: Given candidates, the index of one that still fails the same way (or None).
Predicate = Callable[[Sequence[Program]], "int | None"]


def _size(p: Program) -> tuple[int, int]:
    return len(p.stmts), len(p.inputs)


def _earlier_outputs(p: Program) -> list[Program]:
    return [replace(p, out=s.target.name).dce() for s in p.stmts[:-1]]


def _bypasses(p: Program) -> list[Program]:
    """Drop one statement, its uses read another value of the same shape and kind."""
    out: list[Program] = []
    defined = list(p.inputs)
    for k, s in enumerate(p.stmts):
        for alt in defined:
            if alt.shape != s.target.shape or alt.kind != s.target.kind:
                continue
            rest: list[Stmt] = [
                replace(t, args=tuple(alt.name if a == s.target.name else a for a in t.args)) for t in p.stmts[k + 1 :]
            ]
            new_out = alt.name if p.out == s.target.name else p.out
            out.append(replace(p, stmts=(*p.stmts[:k], *rest), out=new_out).dce())
            break
        defined.append(s.target)
    return out


def _drop_inputs(p: Program) -> list[Program]:
    used = {a for s in p.stmts for a in s.args} | {p.out}
    unused = [v for v in p.inputs if v.name not in used]
    if not unused:
        return []
    return [replace(p, inputs=tuple(v for v in p.inputs if v.name in used))]


def candidates(p: Program, mode: str) -> list[Program]:
    found = [*_drop_inputs(p), *_earlier_outputs(p), *_bypasses(p)]
    unique: dict[str, Program] = {}
    for c in found:
        if _size(c) < _size(p) and c.inputs and applicable(c, mode):
            unique.setdefault(c.source() + c.out, c)
    return sorted(unique.values(), key=_size)


def shrink(program: Program, mode: str, still_fails: Predicate, max_rounds: int = 30) -> Program:
    """The smallest program reached from ``program`` that ``still_fails``."""
    for _ in range(max_rounds):
        cands = candidates(program, mode)
        if not cands:
            return program
        hit = still_fails(cands)
        if hit is None:
            return program
        program = cands[hit]
    return program
