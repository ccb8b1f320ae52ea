"""``n x m`` values between two piles of different lengths, under ``jit`` and ``grad``.

The oracle is the same function on each pair of elements, in a Python loop
(plait on unpadded arrays, itself checked against NumPy by the package
tests): ``jit(vmap(grad(f)))`` over two piles equals ``grad(f)`` pair by
pair, and ``grad`` of a loss summed over the piles equals the sum of the
per-pair gradients, with zeros in the padding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait.numpy as pnp
from plait import Pile, grad, jit, nn, pile_axis, vmap

P = pile_axis
D = 3
RNG = np.random.default_rng(1616)
QS = [RNG.standard_normal((n, D)).astype(np.float32) for n in (3, 1, 5)]
KS = [RNG.standard_normal((m, D)).astype(np.float32) for m in (2, 4, 1)]


def loss(q: Any, k: Any) -> Any:
    s = pnp.einsum("nd,md->nm", q, k)  # (n, m): two ragged sizes
    attended = nn.softmax(s, axis=-1) @ k
    return pnp.sum(attended**2) + pnp.sum(pnp.where(s > 0, s, 0.0).max(0)) + pnp.sum(nn.logsumexp(s, axis=0))


def test_vmap_of_grad_over_two_piles_under_jit() -> None:
    q, k = Pile.from_arrays(QS), Pile.from_arrays(KS)
    gq, gk = jit(vmap(grad(loss, argnums=(0, 1)), in_axes=(P, P), out_axes=P))(q, k)
    per_pair = jit(grad(loss, argnums=(0, 1)))
    for i, (a, b) in enumerate(zip(QS, KS)):
        wq, wk = per_pair(a, b)
        np.testing.assert_allclose(np.asarray(gq.unpack()[i]), np.asarray(wq), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gk.unpack()[i]), np.asarray(wk), rtol=1e-5, atol=1e-6)


def test_grad_of_a_loss_over_two_piles() -> None:
    q, k = Pile.from_arrays(QS), Pile.from_arrays(KS)

    def total(q_data: Any, k_data: Any) -> Any:
        return pnp.sum(vmap(loss, in_axes=(P, P))(Pile(q_data, q.lengths), Pile(k_data, k.lengths)))

    gq, gk = (np.asarray(g) for g in jit(grad(total, argnums=(0, 1)))(q.data, k.data))
    per_pair = jit(grad(loss, argnums=(0, 1)))
    for i, (a, b) in enumerate(zip(QS, KS)):
        wq, wk = per_pair(a, b)
        np.testing.assert_allclose(gq[i, : len(a)], np.asarray(wq), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gk[i, : len(b)], np.asarray(wk), rtol=1e-5, atol=1e-6)
        assert not gq[i, len(a):].any() and not gk[i, len(b):].any()
