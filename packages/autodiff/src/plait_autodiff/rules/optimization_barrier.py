"""``optimization_barrier`` is the identity: its JVP puts the primals behind
one barrier and the nonzero tangents behind another, and its transpose puts
the cotangents behind a barrier (as JAX does)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import def_transpose
from plait_autodiff.tangents import Zero
from plait_autodiff.transpose import is_undefined
from plait_core.primitives.optimization_barrier import optimization_barrier_p


def _behind_barrier(values: Sequence[Any]) -> list[Any]:
    """``values`` with the non-Zero ones passed through one barrier."""
    live = [v for v in values if type(v) is not Zero]
    passed = iter(optimization_barrier_p.bind(*live) if live else [])
    return [v if type(v) is Zero else next(passed) for v in values]


def _jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    return list(optimization_barrier_p.bind(*primals)), _behind_barrier(tangents)


jvp_rules[optimization_barrier_p] = _jvp


@def_transpose(optimization_barrier_p)
def _transpose(cts: Sequence[Any], *args: Any) -> list[Any]:
    outs = _behind_barrier(list(cts))
    return [ct if is_undefined(x) else None for ct, x in zip(outs, args)]
