"""Every accepted difference between plait and its oracle, in one place.

A fuzz failure that one of these entries matches is counted as excused, not
as a failure.  Each entry says what differs and why; ``status`` is
``"deviation"`` for a documented, intended difference from JAX and
``"known bug"`` for a bug that is tracked but not fixed yet (remove the
entry with the fix).  Nothing else in the fuzzer excuses a difference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .program import Program


@dataclass(frozen=True)
class Deviation:
    name: str
    status: str  # "deviation" or "known bug"
    reason: str
    matches: Callable[[Program, str, str], bool]  # (program, mode, failure message)


def _uses(program: Program, *fragments: str) -> bool:
    return any(f in s.expr or f in s.op for s in program.stmts for f in fragments)


DEVIATIONS: tuple[Deviation, ...] = ()


def excuse(program: Program, mode: str, message: str) -> Deviation | None:
    """The entry that excuses this failure, if any."""
    for d in DEVIATIONS:
        if d.matches(program, mode, message):
            return d
    return None
