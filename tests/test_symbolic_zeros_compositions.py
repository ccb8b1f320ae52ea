"""Custom rules with ``symbolic_zeros=True`` where sizes are symbolic.

Under ``mask`` and ``vmap`` over piles a rule sees the element's types, whose
sizes are symbolic, so the ``SymbolicZero`` values it receives have a
symbolic shape.  ``SymbolicZero.instantiate()`` then makes the zeros on the
current trace (which knows the size) instead of failing; the oracle is the
same rule applied to each element's true data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait.custom_derivatives import SymbolicZero, custom_jvp, custom_vjp
from plait_autodiff import grad, jvp
from plait_batching import Pile, pile_axis, vmap
from plait_masking import mask

LENGTHS = (3, 1, 5)
RNG = np.random.default_rng(7)
SEQS = [RNG.standard_normal(n).astype(np.float32) for n in LENGTHS]


def _scaled_sin() -> tuple[Any, list[tuple[Any, ...]]]:
    """``f(x, y) = sin(x) * y`` whose JVP rule instantiates its symbolic zeros."""
    seen: list[tuple[Any, ...]] = []

    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return pnp.sin(x) * y

    def rule(primals: Any, tangents: Any) -> Any:
        x, y = primals
        tx, ty = tangents
        seen.append((type(tx), type(ty), tuple(str(d) for d in ty.shape)))
        tx = tx.instantiate() if isinstance(tx, SymbolicZero) else tx
        ty = ty.instantiate() if isinstance(ty, SymbolicZero) else ty
        return f(x, y), pnp.cos(x) * y * tx + pnp.sin(x) * ty

    f.defjvp(rule, symbolic_zeros=True)
    return f, seen


def test_custom_jvp_symbolic_zero_of_ragged_shape_instantiates() -> None:
    f, seen = _scaled_sin()

    def tangent(x: Any) -> Any:
        return jvp(lambda x: pnp.sum(f(x, 2.0 * pnp.ones_like(x))), (x,), (pnp.ones_like(x),))[1]

    got = np.asarray(vmap(tangent, in_axes=pile_axis)(Pile.from_arrays(SEQS)))
    assert seen[-1][1] is SymbolicZero and seen[-1][2][0].startswith("_pile")
    np.testing.assert_allclose(got, [np.sum(2.0 * np.cos(s)) for s in SEQS], rtol=1e-5)


def test_custom_jvp_symbolic_zero_of_masked_shape_instantiates() -> None:
    f, seen = _scaled_sin()

    def tangent(x: Any) -> Any:
        return jvp(lambda x: pnp.sum(f(x, 3.0 * pnp.ones_like(x))), (x,), (pnp.ones_like(x),))[1]

    masked = mask(tangent, ["n"], "")
    padded = np.full(8, np.nan, np.float32)
    for s in SEQS:
        padded[: s.size] = s
        got = masked([padded], {"n": np.int32(s.size)})
        np.testing.assert_allclose(np.asarray(got), np.sum(3.0 * np.cos(s)), rtol=1e-5)
    assert seen[-1][1] is SymbolicZero and seen[-1][2] == ("n",)


def test_custom_vjp_symbolic_zero_cotangent_under_piles() -> None:
    seen: list[type] = []

    @custom_vjp
    def two(x: Any) -> Any:
        return x * x, pnp.sin(x)

    def fwd(x: Any) -> Any:
        return two(x.value), x.value

    def bwd(x: Any, cts: Any) -> Any:
        a, b = cts
        seen.append(type(a))
        a = a.instantiate() if isinstance(a, SymbolicZero) else a
        b = b.instantiate() if isinstance(b, SymbolicZero) else b
        return (2.0 * x * a + pnp.cos(x) * b,)

    two.defvjp(fwd, bwd, symbolic_zeros=True)
    # Only the second output reaches the loss: the first output's cotangent
    # is a symbolic zero of the element's ragged shape.
    g = vmap(grad(lambda x: pnp.sum(two(x)[1])), in_axes=pile_axis, out_axes=pile_axis)
    got = g(Pile.from_arrays(SEQS))
    assert SymbolicZero in seen
    for i, s in enumerate(SEQS):
        np.testing.assert_allclose(np.asarray(got[i]), np.cos(s), rtol=1e-5)
