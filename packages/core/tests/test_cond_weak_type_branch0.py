"""``cond``/``switch`` results are weakly typed exactly when branch 0's are (``cond``'s
false branch), whatever the other branches give, as JAX 0.10.2 (equinox's
``error_if`` returns its operand from branch 0 and a callback's result from branch 1;
diffrax's solutions keep a weak ``direction``)."""

from __future__ import annotations

import numpy as np

import plait_core as pc
from plait_core import lax


def _kinds(fn: object, *args: object) -> list[bool]:
    closed = pc.make_jaxpr(fn)(*args)  # type: ignore[arg-type]
    return [a.weak_type for a in closed.out_avals]


def test_branch_zero_decides_the_weak_type() -> None:
    strong = np.int32(2)
    assert _kinds(lambda p: lax.cond(p, lambda: strong, lambda: 3), True) == [True]  # false branch weak
    assert _kinds(lambda p: lax.cond(p, lambda: 3, lambda: strong), True) == [False]  # false branch strong
    assert _kinds(lambda i: lax.switch(i, [lambda: 3, lambda: strong, lambda: strong]), 0) == [True]
    assert _kinds(lambda i: lax.switch(i, [lambda: strong, lambda: 3]), 0) == [False]


def test_values_are_unchanged() -> None:
    f = lambda p: lax.cond(p, lambda: np.int32(2), lambda: 3)  # noqa: E731
    assert int(f(True)) == 2 and int(f(False)) == 3
