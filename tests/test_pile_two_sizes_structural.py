"""``rev`` and ``pad`` of an ``n x m`` value between two piles of different
lengths (issue 16): core's padded rules treat each padded axis by its own
size, so piles take them along either ragged axis.  The oracle is the same
function on each pair of elements in a Python loop, under ``jit``, ``grad``
and ``vmap`` of the pile map."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait.numpy as pnp
from plait import Pile, grad, jit, lax, pile_axis, vmap

P = pile_axis
RNG = np.random.default_rng(1617)
QS = [RNG.standard_normal((n, 3)).astype(np.float32) for n in (3, 1, 5)]
KS = [RNG.standard_normal((m, 3)).astype(np.float32) for m in (2, 4, 1)]


def _scores(q: Any, k: Any) -> Any:
    return pnp.einsum("nd,md->nm", q, k)  # (n, m): two ragged sizes


FUNS = {
    "rev both": lambda q, k: pnp.flip(_scores(q, k), (0, 1)) * (pnp.arange(k.shape[0]) + 1.0),
    "rev rows": lambda q, k: pnp.flip(_scores(q, k), 0).cumsum(0) * (pnp.arange(q.shape[0]) + 1.0)[:, None],
    "rev cols": lambda q, k: pnp.flip(_scores(q, k), 1).cumsum(1) ** 2,
    "pad high": lambda q, k: lax.pad(_scores(q, k), 0.5, ((0, 2, 0), (0, 1, 0))).cumsum(1),
    "pad both sides": lambda q, k: lax.cummax(lax.pad(_scores(q, k), -1.0, ((1, 1, 0), (2, 1, 0))), axis=0),
}


def _reduce(fun: Any) -> Any:
    return lambda q, k: pnp.sum(fun(q, k) ** 2)


@pytest.mark.parametrize("name", list(FUNS))
def test_sum_over_the_n_x_m_result(name: str) -> None:
    f = _reduce(FUNS[name])
    got = np.asarray(jit(vmap(f, in_axes=(P, P)))(Pile.from_arrays(QS), Pile.from_arrays(KS)))
    want = [float(f(a, b)) for a, b in zip(QS, KS)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", list(FUNS))
def test_reduced_rows_as_a_pile(name: str) -> None:
    """Summing away the ``m`` axis (or the ``n`` axis) leaves one ragged axis: a pile."""
    fun = FUNS[name]
    rows = jit(vmap(lambda q, k: fun(q, k).sum(1), in_axes=(P, P), out_axes=P))(Pile.from_arrays(QS), Pile.from_arrays(KS))
    for got, a, b in zip(rows.unpack(), QS, KS):
        np.testing.assert_allclose(np.asarray(got), np.asarray(fun(a, b)).sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", list(FUNS))
def test_grad_with_respect_to_both_piles(name: str) -> None:
    f = _reduce(FUNS[name])
    q, k = Pile.from_arrays(QS), Pile.from_arrays(KS)

    def total(qd: Any, kd: Any) -> Any:
        return pnp.sum(vmap(f, in_axes=(P, P))(Pile(qd, q.lengths), Pile(kd, k.lengths)))

    gq, gk = (np.asarray(g) for g in jit(grad(total, argnums=(0, 1)))(q.data, k.data))
    per_pair = jit(grad(f, argnums=(0, 1)))
    for i, (a, b) in enumerate(zip(QS, KS)):
        wq, wk = per_pair(a, b)
        np.testing.assert_allclose(gq[i, : len(a)], np.asarray(wq), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(gk[i, : len(b)], np.asarray(wk), rtol=1e-4, atol=1e-4)
        assert not gq[i, len(a):].any() and not gk[i, len(b):].any()


def test_vmap_of_the_pile_map() -> None:
    """An outer vmap over two stacks of piles (same lengths, different data)."""
    f = _reduce(FUNS["rev both"])
    q, k = Pile.from_arrays(QS), Pile.from_arrays(KS)
    qd = np.stack([np.asarray(q.data), 2 * np.asarray(q.data)])
    kd = np.stack([np.asarray(k.data), -np.asarray(k.data)])
    inner = vmap(f, in_axes=(P, P))
    got = np.asarray(vmap(lambda a, b: inner(Pile(a, q.lengths), Pile(b, k.lengths)))(qd, kd))
    for j, (sq, sk) in enumerate(((1, 1), (2, -1))):
        want = [float(f(sq * a, sk * b)) for a, b in zip(QS, KS)]
        np.testing.assert_allclose(got[j], want, rtol=1e-5, atol=1e-4)
