"""Full piles (every length the padded size) under ``jit``, ``grad`` and
``jacfwd``: they compute as a dense batch, with the values of the dense
``vmap`` and of the masked pile (``full=False``), and ``jit`` compiles a
full pile and a pile of the same shapes that is not full separately (the
fact is static).  The pile itself is tested in
packages/batching/tests/test_pile_full.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
import plait.numpy as pnp
from plait import Pile, grad, jacfwd, nn, pile_axis, vmap
from plait_dispatch import jit, stats

B, N, D = 4, 7, 8
RNG = np.random.default_rng(5)
X = RNG.standard_normal((B, N, D)).astype(np.float32)
WQ, WK = (RNG.standard_normal((2, D, D)) / np.sqrt(D)).astype(np.float32)
FULL = np.full(B, N, np.int32)


def attend(x: Any, wq: Any, wk: Any) -> Any:
    s = (x @ wq) @ (x @ wk).T / np.sqrt(D)
    y = x + nn.softmax(s, axis=-1) @ x
    return (y - pnp.mean(y, -1, keepdims=True)) / pnp.sqrt(pnp.var(y, -1, keepdims=True) + 1e-5)


piled = vmap(attend, in_axes=(pile_axis, None, None), out_axes=pile_axis)
dense = vmap(attend, in_axes=(0, None, None))


def selects(fun: Any, *args: Any) -> int:
    return sum(e.primitive.name == "select_n" for e in plait.make_jaxpr(fun)(*args).jaxpr.eqns)


def test_jit_specialises_on_full() -> None:
    f = jit(lambda p, wq, wk: piled(p, wq, wk))
    lengths = np.array([7, 3, 5, 1], np.int32)
    full = f(Pile(X, FULL), WQ, WK)
    before = stats.snapshot()
    ragged = f(Pile(X, lengths), WQ, WK)
    middle = stats.snapshot()
    again = f(Pile(X, FULL), WQ, WK)
    after = stats.snapshot()
    assert middle["traces"] == before["traces"] + 1  # not the full pile's program
    assert after["traces"] == middle["traces"] and after["compiles"] == middle["compiles"]
    assert full.full and again.full and not ragged.full
    np.testing.assert_allclose(np.asarray(full.data), np.asarray(dense(X, WQ, WK)), rtol=1e-5, atol=1e-5)
    for i, n in enumerate(lengths):
        np.testing.assert_allclose(np.asarray(ragged[i]), np.asarray(attend(X[i, :n], WQ, WK)), rtol=1e-5,
                                   atol=1e-5)  # fmt: skip


def test_jit_of_a_pile_claimed_full_inside() -> None:
    def f(x: Any, lengths: Any) -> Any:
        return piled(Pile(x, lengths, full=True), WQ, WK)

    assert selects(f, X, FULL) == 0
    assert selects(lambda x, n: piled(Pile(x, n), WQ, WK), X, FULL) > 0
    out = jit(f)(X, FULL)
    assert out.full
    np.testing.assert_array_equal(np.asarray(out.lengths), FULL)
    np.testing.assert_allclose(np.asarray(out.data), np.asarray(dense(X, WQ, WK)), rtol=1e-5, atol=1e-5)


def loss(wq: Any, wk: Any, full: bool) -> Any:
    return (piled(Pile(X, FULL, full=full), wq, wk).data ** 2).sum()


def dense_loss(wq: Any, wk: Any) -> Any:
    return (dense(X, wq, wk) ** 2).sum()


def test_grad_and_jit_of_grad() -> None:
    want = grad(dense_loss, argnums=(0, 1))(WQ, WK)
    masked = grad(loss, argnums=(0, 1))(WQ, WK, False)
    jitted = jit(grad(loss, argnums=(0, 1)), static_argnums=2)
    for got in (grad(loss, argnums=(0, 1))(WQ, WK, True), jitted(WQ, WK, True)):
        for g, w, m in zip(got, want, masked):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(np.asarray(g), np.asarray(m), rtol=1e-4, atol=1e-4)
    # The dense grad's selects (the derivative of max) and no more; the masked pile's has more.
    full = selects(lambda wq, wk: grad(loss)(wq, wk, True), WQ, WK)
    assert full == selects(grad(dense_loss), WQ, WK) < selects(lambda wq, wk: grad(loss)(wq, wk, False), WQ, WK)


def test_grad_with_respect_to_a_full_pile() -> None:
    g = grad(lambda p: (piled(p, WQ, WK).data ** 2).sum(), allow_int=True)(Pile(X, FULL))
    assert isinstance(g, Pile) and g.full
    want = grad(lambda x: (dense(x, WQ, WK) ** 2).sum())(X)
    np.testing.assert_allclose(np.asarray(g.data), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_jacfwd() -> None:
    got = jacfwd(lambda wq: piled(Pile(X, FULL), wq, WK).data.sum((1, 2)))(WQ)
    masked = jacfwd(lambda wq: piled(Pile(X, FULL, full=False), wq, WK).data.sum((1, 2)))(WQ)
    want = jacfwd(lambda wq: dense(X, wq, WK).sum((1, 2)))(WQ)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(got), np.asarray(masked), rtol=1e-4, atol=1e-4)


def test_vmap_of_grad_over_a_full_pile() -> None:
    per_row = vmap(grad(lambda x: (attend(x, WQ, WK) ** 2).sum()), in_axes=pile_axis, out_axes=pile_axis)
    got = per_row(Pile(X, FULL))
    want = vmap(grad(lambda x: (attend(x, WQ, WK) ** 2).sum()))(X)
    assert got.full and selects(lambda p: per_row(p).data, Pile(X, FULL)) == selects(vmap(grad(
        lambda x: (attend(x, WQ, WK) ** 2).sum())), X)  # fmt: skip
    np.testing.assert_allclose(np.asarray(got.data), np.asarray(want), rtol=1e-5, atol=1e-5)
