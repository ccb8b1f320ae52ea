"""checkify's automatic division check and its failure messages, as JAX
0.10.2's (chex's chexify assertions match these messages): a division
check for every dtype and none for ``rem``; a check's formatting arguments
appear as Arrays (weakly typed where they were), whether ``f`` runs
eagerly, under ``jit`` inside ``checkify`` or ``checkify`` under ``jit``."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
from plait import lax
from plait.experimental import checkify

pnp = plait.numpy


def test_division_by_zero_is_checked_for_floats_and_ints_not_for_rem() -> None:
    cases = [
        (lambda x, y: x / y, (pnp.float32(5.0), pnp.float32(0.0)), "division by zero"),
        (lambda x, y: x / y, (pnp.ones(3), pnp.array([1.0, 0.0, 2.0])), "division by zero"),
        (lambda x, y: lax.div(x, y), (pnp.int32(5), pnp.int32(0)), "division by zero"),
        (lambda x, y: lax.rem(x, y), (pnp.float32(5.0), pnp.float32(0.0)), None),
        (lambda x, y: x / y, (pnp.float32(5.0), pnp.float32(2.0)), None),
    ]
    for f, args, expected in cases:
        for g in (f, plait.jit(f)):
            err, _ = checkify.checkify(g, errors=checkify.div_checks)(*args)
            assert err.get() == expected, (args, expected)


def _finite(x: Any, w: Any) -> Any:
    checkify.check(pnp.all(pnp.isfinite(x)), "bad: {}", {"x": x, "s": pnp.sum(x), "w": w * 1.0})
    return x


def test_check_arguments_are_formatted_as_arrays() -> None:
    expected = ("bad: {'s': Array(nan, dtype=float32), 'w': Array(2., dtype=float32, weak_type=True), "
                "'x': Array([ 1., nan], dtype=float32)} (`check` failed)")
    x = pnp.array([1.0, np.nan])
    for g in (checkify.checkify(plait.jit(_finite)), plait.jit(checkify.checkify(_finite)), checkify.checkify(_finite)):
        err, _ = g(x, 2.0)
        assert err.get() == expected
    err, _ = checkify.checkify(_finite)(pnp.array([1.0, 2.0]), 2.0)
    assert err.get() is None
