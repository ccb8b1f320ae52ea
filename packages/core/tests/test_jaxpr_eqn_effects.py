"""``JaxprEqn.effects`` as JAX's ``eqn.effects``: empty for an equation without
effects, ``EFFECTS`` for one that dead-code elimination must keep (a side-effecting
host callback, or a call whose body holds one); equinox compares it between jaxprs."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core as pc
from plait_core.host_callbacks import io_callback
from plait_core.jaxpr import EFFECTS, Effect
from plait_core.lax import named_call


def _log(x: Any) -> None:
    return None


def test_pure_equations_have_no_effects() -> None:
    closed = pc.make_jaxpr(lambda x: x * 2 + 1)(np.float32(1.0))
    assert [e.effects for e in closed.jaxpr.eqns] == [frozenset(), frozenset()]


def test_a_side_effecting_callback_and_a_call_holding_one_have_effects() -> None:
    def f(x: Any) -> Any:
        io_callback(_log, None, x)
        return x + 1

    closed = pc.make_jaxpr(f)(np.float32(1.0))
    by_name = {e.primitive.name: e.effects for e in closed.jaxpr.eqns}
    assert by_name["callback"] == EFFECTS and by_name["add"] == frozenset()
    assert all(isinstance(k, Effect) for k in EFFECTS) and len(EFFECTS) == 1
    called = pc.make_jaxpr(lambda x: named_call(f, name="inner")(x))(np.float32(1.0))
    assert [e.effects for e in called.jaxpr.eqns] == [EFFECTS]
