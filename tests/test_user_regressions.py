"""Regressions found by porting JAX programs to plait, across packages.

A symbolic size used as a number (``x.shape[0] * 0.5``, ``1 / x.shape[0]``)
or as a ``dynamic_slice`` start, inside ``mask`` and inside ``vmap`` over
piles; the oracle is NumPy on each element's true part.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait.numpy as pnp
from plait import Pile, grad, jit, lax, mask, pile_axis, vmap

LENGTHS = [2, 5, 3]
X = np.random.default_rng(5).standard_normal(8).astype(np.float32)

# (plait function of one vector -> scalar, its NumPy twin)
PROGRAMS: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], Any]]] = {
    "n*0.5": (lambda x: x.shape[0] * 0.5, lambda x: len(x) * 0.5),
    "0.5*n": (lambda x: 0.5 * x.shape[0], lambda x: 0.5 * len(x)),
    "n+0.5": (lambda x: x.shape[0] + 0.5, lambda x: len(x) + 0.5),
    "1.5-n": (lambda x: 1.5 - x.shape[0], lambda x: 1.5 - len(x)),
    "n/2": (lambda x: x.shape[0] / 2, lambda x: len(x) / 2),
    "1/n": (lambda x: 1 / x.shape[0], lambda x: 1 / len(x)),
    "sum*(1/n)": (lambda x: pnp.sum(x) * (1.0 / x.shape[0]), lambda x: np.mean(x)),
    "var unbiased": (
        lambda x: pnp.sum((x - pnp.mean(x)) ** 2) / (x.shape[0] - 1 + 1e-9),
        lambda x: np.sum((x - x.mean()) ** 2) / (len(x) - 1 + 1e-9),
    ),
    "last two": (
        lambda x: pnp.sum(lax.dynamic_slice(pnp.concatenate([x, x]), (x.shape[0] - 2,), (2,))),
        lambda x: np.concatenate([x, x])[len(x) - 2 : len(x)].sum(),
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_symbolic_size_as_a_number_under_mask(name: str) -> None:
    f, ref = PROGRAMS[name]
    masked = mask(f, ["n"], "")
    for n in LENGTHS:
        np.testing.assert_allclose(np.asarray(masked([X], {"n": n})), ref(X[:n]), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(jit(masked)([X], {"n": n})), ref(X[:n]), rtol=1e-5)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_symbolic_size_as_a_number_in_a_pile(name: str) -> None:
    f, ref = PROGRAMS[name]
    pile = Pile.from_arrays([X[:n] for n in LENGTHS])
    got = vmap(f, in_axes=pile_axis)(pile)
    np.testing.assert_allclose(np.asarray(got), [ref(X[:n]) for n in LENGTHS], rtol=1e-5)


def test_gradient_through_a_size_scaled_loss_in_a_pile() -> None:
    pile = Pile.from_arrays([X[:n] for n in LENGTHS])

    def loss(w: Any) -> Any:
        per = vmap(lambda x: pnp.sum((w * x) ** 2) * (1.0 / x.shape[0]), in_axes=pile_axis)(pile)
        return pnp.sum(per)

    want = sum(2 * 1.5 * np.sum(X[:n] ** 2) / n for n in LENGTHS)
    np.testing.assert_allclose(np.asarray(grad(loss)(np.float32(1.5))), want, rtol=1e-5)


def test_gradient_and_jit_through_a_stack_of_many_arrays() -> None:
    """A stack of more than 32 operands is joined in chunks; derivatives and jit see one stack."""
    weights = np.arange(50, dtype=np.float32)

    def total(xs: list[Any]) -> Any:
        return pnp.sum(pnp.stack(xs) ** 2 * weights)

    xs = [pnp.asarray(np.float32(i)) for i in range(50)]
    grads = grad(total)(xs)
    np.testing.assert_allclose(np.array([float(g) for g in grads]), 2 * np.arange(50) * weights)
    np.testing.assert_allclose(float(jit(total)(xs)), float(np.sum(np.arange(50.0) ** 2 * weights)))
