"""Derivatives through piles' packed layout: the conversions between the
padded and the packed layout are ``bijective_gather`` equations whose
transposes are gathers (no ``scatter_add`` in a gradient), and ``grad``,
``jacfwd``, ``jvp`` and ``vmap`` of ``grad`` give what the padded layout and
a loop over the elements give."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait.numpy as pnp
from plait import Pile, grad, jacfwd, jvp, make_jaxpr, nn, pile_axis, pile_layout, vmap
from plait_dispatch import jit

D, F = 8, 16
RNG = np.random.default_rng(5)
W1 = (RNG.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
W2 = (RNG.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)
LENGTHS = [3, 9, 1, 0, 6]
XS = [RNG.standard_normal((n, D)).astype(np.float32) for n in LENGTHS]


def block(x: Any, w1: Any) -> Any:
    """Dense layers (packed) around attention (padded): conversions both ways."""
    h = nn.gelu(x @ w1) @ W2
    att = nn.softmax(h @ x.T, axis=-1)
    y = x + att @ h
    return (y - pnp.mean(y, -1, keepdims=True)) / pnp.sqrt(pnp.var(y, -1, keepdims=True) + 1e-5)


def loss_one(w1: Any, x: Any) -> Any:
    return pnp.sum(pnp.tanh(block(x, w1)))


def loss_pile(w1: Any, pile: Pile) -> Any:
    return pnp.sum(vmap(lambda x: loss_one(w1, x), in_axes=pile_axis)(pile))


def pile_of(layout: str | None, capacity: int | None = None, static_lengths: bool | None = None) -> Pile:
    base = Pile.from_arrays(XS)
    return Pile(base.data, base.lengths, layout=layout, capacity=capacity or base.capacity,
                static_lengths=static_lengths)  # fmt: skip


def looped(f: Any) -> np.ndarray:
    return sum((np.asarray(f(W1, x)) for x in XS if len(x)), np.zeros((D, F), np.float32))


def close(a: Any, b: Any, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def names(jaxpr: Any) -> list[str]:
    return [e.primitive.name for e in jaxpr.jaxpr.eqns]


def test_the_gradient_has_no_scatter() -> None:
    # The whole pile's program (static lengths would sort the elements into buckets, with gathers).
    packed = make_jaxpr(grad(loss_pile))(W1, pile_of("packed", static_lengths=False))
    assert "bijective_gather" in names(packed)
    assert not [n for n in names(packed) if n.startswith("scatter") or n == "gather"], names(packed)
    masked = [e.params["masked"] for e in packed.jaxpr.eqns if e.primitive.name == "bijective_gather"]
    assert 0 < masked.count(True) <= masked.count(False)  # the transposes of (some of) the forward conversions
    padded = make_jaxpr(grad(loss_pile))(W1, pile_of("padded", static_lengths=False))
    assert "bijective_gather" not in names(padded)


@pytest.mark.parametrize("layout", ["packed", "padded", None])
@pytest.mark.parametrize("jitted", [False, True])
def test_grad_matches_the_loop(layout: str | None, jitted: bool) -> None:
    g = jit(grad(loss_pile)) if jitted else grad(loss_pile)
    close(g(W1, pile_of(layout)), looped(grad(loss_one)))


@pytest.mark.parametrize("layout", ["packed", "padded"])
def test_jacfwd_matches_grad(layout: str) -> None:
    close(jacfwd(loss_pile)(W1, pile_of(layout)), looped(grad(loss_one)))


def test_jvp_through_packed_values() -> None:
    t = RNG.standard_normal((D, F)).astype(np.float32)
    _, packed = jvp(lambda w: loss_pile(w, pile_of("packed")), (W1,), (t,))
    _, padded = jvp(lambda w: loss_pile(w, pile_of("padded")), (W1,), (t,))
    close(packed, padded)
    close(packed, float((looped(grad(loss_one)) * t).sum()), 1e-3)


def test_grad_with_respect_to_the_data_is_zero_in_the_padding() -> None:
    pile = pile_of("packed")

    def f(data: Any) -> Any:
        return loss_pile(W1, Pile(data, pile.lengths, layout="packed", capacity=pile.capacity))

    got = np.asarray(jit(grad(f))(pile.data))
    for i, x in enumerate(XS):
        assert not got[i, len(x):].any()
        if len(x):
            close(got[i, : len(x)], grad(lambda x: loss_one(W1, x))(x))


def test_rows_past_the_capacity_and_nan_padding_do_not_reach_the_gradient() -> None:
    """With a capacity above the sum of the lengths (a promise for traced
    lengths) the packed buffer has rows that are no element's; they repeat the
    last true row, so NaN padding in the pile's data reaches nothing."""
    base = pile_of("packed")
    data = np.array(base.data)
    for i, x in enumerate(XS):
        data[i, len(x):] = np.nan

    @jit
    def g(w1: Any, data: Any, lengths: Any) -> Any:
        return grad(loss_pile)(w1, Pile(data, lengths, layout="packed", capacity=sum(LENGTHS) + 5))

    close(g(W1, data, base.lengths), looped(grad(loss_one)))


def test_vmap_of_grad_over_packed_piles() -> None:
    """A batch of weights: the batching rule of the conversions' transposes."""
    ws = np.stack([W1, 2 * W1])
    with pile_layout("packed"):
        got = vmap(grad(loss_pile), in_axes=(0, None))(ws, pile_of(None))
    close(got[0], looped(grad(loss_one)))
    close(got[1], sum((np.asarray(grad(loss_one)(2 * W1, x)) for x in XS if len(x)), np.zeros((D, F), np.float32)))
