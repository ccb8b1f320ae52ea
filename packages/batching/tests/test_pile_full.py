"""Full piles: every length is the padded size, so ``vmap`` over the pile
computes as over a dense batch (no masks, no fills, no packing).

What a pile records (``Pile.full``, inferred from concrete lengths, claimed
with ``full=True``, checked), the staged program (the dense ``vmap``'s plus
the output pile's lengths), values equal to the dense ``vmap`` and to the
masked pile (``full=False``), and the fact surviving ``jit`` (static: part of
the pytree structure), ``grad``, ``jacfwd``, nested ``vmap`` and
``out_axes=pile_axis``.  (This module runs under each layout: conftest.py.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, vmap
from plait_core import checkpoint, eval_jaxpr, lax, make_jaxpr, nn
from plait_core.tree_util import tree_flatten, tree_unflatten

B, N, D, H = 3, 6, 8, 2
RNG = np.random.default_rng(11)
X = RNG.standard_normal((B, N, D)).astype(np.float32)
W = {k: (RNG.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32) for k in ("q", "k", "v", "o")}
FULL = np.full(B, N, np.int32)


def layer(x: Any, w: dict[str, Any]) -> Any:
    """Self-attention with heads, a residual and a layer norm (shape from ``x``, as a pile's is symbolic)."""
    n = x.shape[0]

    def heads(y: Any) -> Any:
        return y.reshape(n, H, D // H).transpose(1, 0, 2)

    q, k, v = heads(x @ w["q"]), heads(x @ w["k"]), heads(x @ w["v"])
    att = nn.softmax(pnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D // H), axis=-1)
    y = x + pnp.einsum("hqk,hkd->hqd", att, v).transpose(1, 0, 2).reshape(n, D) @ w["o"]
    return (y - pnp.mean(y, -1, keepdims=True)) / pnp.sqrt(pnp.var(y, -1, keepdims=True) + 1e-5)


piled = vmap(layer, in_axes=(pile_axis, None), out_axes=pile_axis)
dense = vmap(layer, in_axes=(0, None))


def prims(fun: Any, *args: Any) -> list[str]:
    return [e.primitive.name for e in make_jaxpr(fun)(*args).jaxpr.eqns]


# -- what a pile records ------------------------------------------------------------


def test_full_is_inferred_from_concrete_lengths() -> None:
    assert Pile(X, FULL).full
    assert not Pile(X, [6, 5, 6]).full
    assert not Pile(X, FULL, full=False).full
    assert Pile.from_arrays([np.ones((4, 2)), np.ones((4, 2))]).full
    assert not Pile.from_arrays([np.ones((4, 2)), np.ones((4, 2))], pad_to=5).full
    assert not Pile.from_arrays([np.ones((4, 2)), np.ones((3, 2))]).full
    assert not Pile(np.zeros((0, 4)), np.zeros(0, np.int32)).full  # no elements: nothing says it is full
    assert repr(Pile(X[:, :2, :1], [2, 2, 2], static_lengths=False)) == "Pile[3] of f32[≤2, 1] lengths [2 2 2] (full)"


def test_a_false_claim_names_the_lengths() -> None:
    with pytest.raises(ValueError, match=r"full=True says every length is the padded size 6, but the lengths are \[6 4 6\]"):
        Pile(X, [6, 4, 6], full=True)
    with pytest.raises(ValueError, match=r"Pile.from_arrays: full=True .* padded size 5, but the lengths are \[4 4\]"):
        Pile.from_arrays([np.ones((4, 2)), np.ones((4, 2))], pad_to=5, full=True)
    with pytest.raises(ValueError, match="but the pile has no elements"):
        Pile(np.zeros((0, 4)), np.zeros(0, np.int32), full=True)
    with pytest.raises(TypeError, match=r"full must be True, False or None, got 'yes'"):
        Pile(X, FULL, full="yes")  # type: ignore[arg-type]


def test_capacity_of_a_claimed_full_pile_is_every_row() -> None:
    def build(d: Any, lengths: Any) -> Any:  # staged: the lengths are traced
        return Pile(d, lengths, full=True, capacity=B * N - 1).data

    with pytest.raises(ValueError, match=rf"capacity={B * N - 1} is less than .* \({B * N}\), which a full pile"):
        make_jaxpr(build)(X, FULL)


def test_traced_lengths_are_full_only_when_claimed() -> None:
    seen: list[bool] = []

    def build(d: Any, lengths: Any, claim: bool) -> Any:
        p = Pile(d, lengths, full=True) if claim else Pile(d, lengths)
        seen.append(p.full)
        return piled(p, W).data

    assert "select_n" in prims(lambda d, n: build(d, n, False), X, FULL)
    claimed = make_jaxpr(lambda d, n: build(d, n, True))(X, FULL)
    assert seen == [False, True]
    assert "select_n" not in [e.primitive.name for e in claimed.jaxpr.eqns]
    np.testing.assert_allclose(np.asarray(eval_jaxpr(claimed.jaxpr, claimed.consts, X, FULL)[0]),
                               np.asarray(dense(X, W)), rtol=1e-5, atol=1e-5)  # fmt: skip


@pytest.mark.whole_pile(reason="piles of different static lengths have different structures")
def test_full_is_static_structure() -> None:
    leaves_full, tree_full = tree_flatten(Pile(X, FULL))
    leaves_masked, tree_masked = tree_flatten(Pile(X, FULL, full=False))
    _, tree_other = tree_flatten(Pile(X, [6, 2, 4]))
    assert len(leaves_full) == len(leaves_masked) == 2 and tree_full != tree_masked and tree_masked == tree_other
    rebuilt = tree_unflatten(tree_full, leaves_full)
    assert rebuilt.full and rebuilt.capacity is None and rebuilt.layout is None


# -- the program and its values -------------------------------------------------------


def test_the_program_is_the_dense_one() -> None:
    want = make_jaxpr(dense)(X, W).jaxpr.eqns
    # The pile's program: the dense one, then the output pile's lengths (a constant), with traced
    # lengths claimed full as with concrete ones.
    for got in (make_jaxpr(lambda x, n, w: piled(Pile(x, n, full=True), w))(X, FULL, W).jaxpr.eqns,
                make_jaxpr(piled)(Pile(X, FULL), W).jaxpr.eqns):  # fmt: skip
        assert [e.primitive.name for e in got] == [*(e.primitive.name for e in want), "broadcast_in_dim"]
        assert [e.params for e in got[:-1]] == [e.params for e in want]
        assert got[-1].params["shape"] == (B,) and got[-1].invars[0].val == N
    whole = got
    # Without the static fact the scores are masked (the assertion above can fail).
    masked = prims(piled, Pile(X, FULL, full=False), W)
    assert "select_n" in masked and len(masked) > len(whole)


def test_values_equal_the_dense_vmap_and_the_masked_pile() -> None:
    out = piled(Pile(X, FULL), W)
    assert isinstance(out, Pile) and out.full and out.ragged_axis == 0
    np.testing.assert_array_equal(np.asarray(out.lengths), FULL)
    np.testing.assert_allclose(np.asarray(out.data), np.asarray(dense(X, W)), rtol=1e-6, atol=1e-6)
    masked = piled(Pile(X, FULL, full=False), W)
    assert not masked.full
    np.testing.assert_allclose(np.asarray(out.data), np.asarray(masked.data), rtol=1e-5, atol=1e-5)


def test_results_of_full_sizes_are_full_piles() -> None:
    def f(x: Any) -> Any:
        return x[1:] * 2.0, x.sum(0), pnp.concatenate([x, x], 0)

    tail, sums, twice = vmap(f, in_axes=pile_axis, out_axes=pile_axis)(Pile(X, FULL, ragged_axis=0))
    assert tail.full and sums.full and twice.full
    np.testing.assert_array_equal(np.asarray(tail.lengths), FULL - 1)
    np.testing.assert_array_equal(np.asarray(sums.lengths), np.full(B, D))
    np.testing.assert_array_equal(np.asarray(twice.lengths), 2 * FULL)
    np.testing.assert_allclose(np.asarray(tail.data), X[:, 1:] * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sums.data), X.sum(1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(twice.data), np.concatenate([X, X], 1), rtol=1e-6)
    # A full result fed to another vmap computes densely again.
    assert "select_n" not in prims(lambda p: vmap(lambda y: nn.softmax(y, axis=0), in_axes=pile_axis,
                                                  out_axes=pile_axis)(p).data, tail)  # fmt: skip


def test_a_ragged_axis_that_is_not_first() -> None:
    xt = np.ascontiguousarray(X.transpose(0, 2, 1))  # (B, D, N), ragged axis 1
    out = vmap(lambda y: nn.softmax(y, axis=1) * 3.0, in_axes=pile_axis, out_axes=pile_axis)(Pile(xt, FULL, 1))
    assert out.full and out.ragged_axis == 1
    e = np.exp(xt - xt.max(2, keepdims=True))
    np.testing.assert_allclose(np.asarray(out.data), 3 * e / e.sum(2, keepdims=True), rtol=1e-5, atol=1e-6)


# -- transformations (grad, jacfwd and jit: tests/test_pile_full.py of the meta-package) -------


def test_nested_vmap() -> None:
    stack = np.stack([X, X[::-1] * 0.5])

    def outer(x: Any) -> Any:
        return piled(Pile(x, FULL), W).data  # the lengths are concrete: full

    got = vmap(outer)(stack)
    want = vmap(lambda x: dense(x, W))(stack)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    assert "select_n" not in prims(vmap(outer), stack)
    # A plain vmap inside the mapped function (over the features of each row).
    inner = vmap(lambda x: vmap(lambda c: nn.softmax(c) * c, in_axes=1, out_axes=1)(x), in_axes=pile_axis,
                 out_axes=pile_axis)  # fmt: skip
    out = inner(Pile(X, FULL))
    e = np.exp(X - X.max(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(out.data), e / e.sum(1, keepdims=True) * X, rtol=1e-5, atol=1e-6)
    assert out.full and "select_n" not in prims(lambda p: inner(p).data, Pile(X, FULL))


def test_sub_programs_run_on_full_sizes() -> None:
    def f(x: Any) -> Any:
        y = checkpoint(lambda z: nn.softmax(z @ z.T, axis=-1) @ z)(x)
        return lax.fori_loop(0, 3, lambda i, c: c * 0.5 + pnp.cumsum(c, 0), y)

    out = vmap(f, in_axes=pile_axis, out_axes=pile_axis)(Pile(X, FULL))
    assert out.full
    want = vmap(f)(X)
    np.testing.assert_allclose(np.asarray(out.data), np.asarray(want), rtol=1e-5, atol=1e-5)
    masked = vmap(f, in_axes=pile_axis, out_axes=pile_axis)(Pile(X, FULL, full=False))
    np.testing.assert_allclose(np.asarray(out.data), np.asarray(masked.data), rtol=1e-5, atol=1e-5)


def test_a_full_pile_meets_a_ragged_one() -> None:
    keys = Pile.from_arrays([RNG.standard_normal((m, D)).astype(np.float32) for m in (2, 5, 3)])

    def cross(q: Any, k: Any) -> Any:
        return nn.softmax(q @ k.T, axis=-1) @ k

    out = vmap(cross, in_axes=(pile_axis, pile_axis), out_axes=pile_axis)(Pile(X, FULL), keys)
    assert out.full
    for i in range(B):
        k = np.asarray(keys[i])
        s = X[i] @ k.T
        e = np.exp(s - s.max(1, keepdims=True))
        np.testing.assert_allclose(np.asarray(out[i]), e / e.sum(1, keepdims=True) @ k, rtol=1e-5, atol=1e-5)


def test_a_full_pile_of_padded_size_zero() -> None:
    empty = Pile(np.zeros((2, 0, 3), np.float32), [0, 0], full=True)
    out = vmap(lambda x: (x * 2.0, x.sum(0)), in_axes=pile_axis, out_axes=pile_axis)(empty)
    assert out[0].full and np.asarray(out[0].data).shape == (2, 0, 3)
    np.testing.assert_array_equal(np.asarray(out[1].data), np.zeros((2, 3)))
