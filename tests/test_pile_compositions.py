"""Piles (``vmap`` over ragged batches) composed with ``jit`` and ``grad``.

The oracle is NumPy (or plait without piles) on each element's true slice.
Under ``jit`` the lengths are traced values and the data has a static padded
size, so piles of one padded size share a compilation.  Under ``grad`` the
gradient with respect to the padded data is zero in the padding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import Pile, grad, nn, pile_axis, vmap
from plait_batching import ragged_dim
from plait_dispatch import jit, stats

P = pile_axis
D, H, F = 8, 2, 16
RNG = np.random.default_rng(0)


def params() -> dict[str, np.ndarray]:
    p = {k: (RNG.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32) for k in ("wq", "wk", "wv", "wo")}
    p["w1"] = (RNG.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
    p["w2"] = (RNG.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)
    return p


PARAMS = params()


def layer(x: Any, p: dict[str, Any]) -> Any:
    n = x.shape[0]

    def heads(y: Any) -> Any:
        return y.reshape(n, H, D // H).transpose(1, 0, 2)

    q, k, v = heads(x @ p["wq"]), heads(x @ p["wk"]), heads(x @ p["wv"])
    att = nn.softmax(pnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D // H), axis=-1)
    o = pnp.einsum("hqk,hkd->hqd", att, v).transpose(1, 0, 2).reshape(n, D)
    x = x + o @ p["wo"]
    x = (x - pnp.mean(x, -1, keepdims=True)) / pnp.sqrt(pnp.var(x, -1, keepdims=True) + 1e-5)
    return x + nn.gelu(x @ p["w1"]) @ p["w2"]


def elements(lengths: list[int]) -> list[np.ndarray]:
    return [RNG.standard_normal((n, D)).astype(np.float32) for n in lengths]


def close(a: Any, b: Any, tol: float = 2e-5) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


PILED = vmap(layer, in_axes=(P, None), out_axes=P)


def test_jit_of_vmap_over_a_pile() -> None:
    xs = elements([5, 9, 2, 7])
    pile = Pile.from_arrays(xs)
    out = jit(PILED)(pile, PARAMS)
    assert isinstance(out, Pile)
    np.testing.assert_array_equal(np.asarray(out.lengths), [5, 9, 2, 7])
    for got, x in zip(out.unpack(), xs):
        close(got, layer(x, PARAMS))


def test_piles_of_one_padded_size_share_a_compilation() -> None:
    f = jit(PILED)
    f(Pile.from_arrays(elements([3, 6, 4]), pad_to=8), PARAMS)
    before = stats.snapshot()
    xs = elements([8, 1, 5])
    out = f(Pile.from_arrays(xs, pad_to=8), PARAMS)
    after = stats.snapshot()
    assert after["traces"] == before["traces"] and after["compiles"] == before["compiles"]
    for got, x in zip(out.unpack(), xs):
        close(got, layer(x, PARAMS))


def test_pile_built_inside_jit() -> None:
    xs = elements([4, 2])
    pile = Pile.from_arrays(xs)

    @jit
    def f(data: Any, lengths: Any) -> Any:
        return vmap(lambda x: pnp.cumsum(x, axis=0) * 2, in_axes=P, out_axes=P)(Pile(data, lengths))

    out = f(pile.data, pile.lengths)
    for got, x in zip(out.unpack(), xs):
        close(got, np.cumsum(x, axis=0) * 2)


def _loss(data: Any, lengths: Any, p: dict[str, Any]) -> Any:
    out = PILED(Pile(data, lengths), p)
    return pnp.sum(pnp.tanh(out.data))


@pytest.mark.parametrize("jitted", [False, True])
def test_grad_with_respect_to_padded_data(jitted: bool) -> None:
    xs = elements([5, 1, 3])
    pile = Pile.from_arrays(xs)
    g = grad(_loss)
    g = jit(g) if jitted else g
    got = np.asarray(g(pile.data, pile.lengths, PARAMS))
    for i, x in enumerate(xs):
        n = x.shape[0]
        assert not got[i, n:].any(), "the gradient must be zero in the padding"
        close(got[i, :n], grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS))))(x), 1e-4)


def test_grad_with_respect_to_shared_parameters() -> None:
    xs = elements([4, 6, 2])
    pile = Pile.from_arrays(xs)
    got = jit(grad(_loss, argnums=2))(pile.data, pile.lengths, PARAMS)
    for k in PARAMS:
        expected = sum(np.asarray(grad(lambda p, x=x: pnp.sum(pnp.tanh(layer(x, p))))(PARAMS)[k]) for x in xs)
        close(got[k], expected, 1e-4)


def test_grad_through_a_nan_padded_pile() -> None:
    xs = elements([3, 5])
    pile = Pile.from_arrays(xs)
    data = np.array(pile.data)
    data[0, 3:] = np.nan
    got = np.asarray(grad(_loss)(data, pile.lengths, PARAMS))
    assert np.isfinite(got).all() and not got[0, 3:].any()
    close(got[1], grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS))))(xs[1]), 1e-4)


def test_vmap_of_grad_over_a_pile() -> None:
    xs = elements([4, 7, 1])
    pile = Pile.from_arrays(xs)
    per = jit(vmap(grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS)))), in_axes=P, out_axes=P))(pile)
    for got, x in zip(per.unpack(), xs):
        close(got, grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS))))(x), 1e-4)


def test_traced_sizes_under_jit_are_an_error() -> None:
    f = jit(vmap(lambda n: pnp.ones(ragged_dim(n)), out_axes=P))
    with pytest.raises(plait.ConcretizationTypeError, match="a size taken from a batched integer makes a ragged value"):
        f(np.array([1, 2], np.int32))

