"""Piles with a plan of buckets (``static_lengths="plan"``) under jit and grad:
one compilation serves every batch of one plan, with the unbucketed pile's
values and gradients (plait_batching.length_plan, plait_batching.buckets)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bucket_cases import attention, random_seqs

import plait_core.numpy as pnp
from plait_autodiff import grad
from plait_batching import Pile, pile_axis, vmap
from plait_batching.length_plan import LengthPlan
from plait_core.tree_util import tree_flatten, tree_structure, tree_unflatten
from plait_dispatch import device_put, jit, stats

# Two batches of one plan (padded to 32: 4 elements ≤32, 4 ≤24, 4 ≤8), in different orders.
ONE = [5, 17, 3, 30, 12, 29, 8, 1, 22, 16, 30, 2]
# Other lengths, each in the same cell of the plans' grid (steps of 8 for the padded size 32) as ONE's: one plan.
OTHER = [4, 18, 6, 31, 9, 25, 7, 2, 20, 13, 26, 1][::-1]


W = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)


def test_one_compilation_serves_two_batches_of_one_plan() -> None:
    calls: list[int] = []

    def f(p: Pile, w: Any) -> Any:
        calls.append(1)  # a Python side effect: runs once per trace
        return vmap(attention, in_axes=(pile_axis, None), out_axes=pile_axis)(p, w)

    g = jit(f)
    piles = [Pile.from_arrays(random_seqs(x, seed=i), pad_to=32, static_lengths="plan") for i, x in enumerate((ONE, OTHER))]
    assert piles[0].static_lengths == piles[1].static_lengths == LengthPlan([(4, 32), (4, 24), (4, 8)])
    assert tree_structure(piles[0]) == tree_structure(piles[1])
    g(piles[0], W)
    before = stats.snapshot()
    outs = [g(p, W) for p in piles]
    after = stats.snapshot()
    assert after["traces"] == before["traces"] and after["compiles"] == before["compiles"]
    assert len(calls) == 1  # one trace
    for i, (out, lengths) in enumerate(zip(outs, (ONE, OTHER))):
        whole = f(Pile.from_arrays(random_seqs(lengths, seed=i), pad_to=32, static_lengths=False), W)
        np.testing.assert_array_equal(np.asarray(out.lengths), lengths)
        for a, b, x in zip(out, whole, random_seqs(lengths, seed=i)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(np.asarray(a), np.asarray(attention(x, W)), rtol=1e-5, atol=1e-5)


def test_grad_through_a_plan_under_jit() -> None:
    def loss(w: Any, p: Pile) -> Any:
        per = vmap(lambda x: pnp.sum(attention(x, w) ** 2), in_axes=pile_axis)(p)
        return pnp.sum(per * pnp.arange(len(ONE), dtype=np.float32))

    g = jit(grad(loss))
    for i, lengths in enumerate((ONE, OTHER)):
        seqs = random_seqs(lengths, seed=10 + i)
        got = g(W, Pile.from_arrays(seqs, pad_to=32, static_lengths="plan"))
        want = grad(loss)(W, Pile.from_arrays(seqs, pad_to=32, static_lengths=False))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    gp = grad(lambda p: pnp.sum(vmap(lambda x: pnp.sum(attention(x, W) ** 2), in_axes=pile_axis)(p)),
              allow_int=True)(Pile.from_arrays(random_seqs(ONE, seed=3), pad_to=32, static_lengths="plan"))  # fmt: skip
    whole = grad(lambda p: pnp.sum(vmap(lambda x: pnp.sum(attention(x, W) ** 2), in_axes=pile_axis)(p)),
                 allow_int=True)(Pile.from_arrays(random_seqs(ONE, seed=3), pad_to=32, static_lengths=False))  # fmt: skip
    assert gp.static_lengths == LengthPlan([(4, 32), (4, 24), (4, 8)])
    np.testing.assert_allclose(np.asarray(gp.data), np.asarray(whole.data), rtol=1e-4, atol=1e-4)


def test_a_plan_cannot_be_made_from_traced_lengths() -> None:
    p = Pile.from_arrays(random_seqs(ONE), static_lengths=False)
    with pytest.raises(TypeError, match=r"static_lengths='plan' needs concrete lengths, but the lengths are traced"):
        jit(lambda d, n: Pile(d, n, static_lengths="plan").data)(p.data, p.lengths)


def test_lengths_that_do_not_fit_the_plan_are_refused_when_concrete() -> None:
    planned = Pile.from_arrays(random_seqs(ONE), pad_to=32, static_lengths="plan")
    leaves, tree = tree_flatten(planned)
    longer = np.array([30] * 6 + [1] * 6, np.int32)  # position 4 of the sorted lengths is 30 > its bucket's 24
    why = (r"LengthPlan\(4 ≤32, 4 ≤24, 4 ≤8\) \(bucket 1 holds the sorted elements from position 4 on, padded "
           r"to 24, but the length there is 30\)")  # fmt: skip
    # NumPy lengths: when the pile is rebuilt.
    with pytest.raises(ValueError, match=r"Pile: rebuilt with lengths \[30 .* that do not fit its plan " + why):
        tree_unflatten(tree, [leaves[0], longer])
    # Device arrays: when the pile is mapped (under jit they are traced: the plan is the builder's claim).
    swapped = tree_unflatten(tree, [leaves[0], device_put(longer)])
    with pytest.raises(ValueError, match=r"vmap: a pile's lengths \[30 .* do not fit its plan " + why):
        vmap(lambda x: pnp.sum(x), in_axes=pile_axis)(swapped)
    fits = tree_unflatten(tree, [leaves[0], np.array(ONE[::-1], np.int32)])  # another order of the same lengths
    got = vmap(lambda x: pnp.sum(x), in_axes=pile_axis)(fits)
    padded = np.asarray(leaves[0])
    want = [padded[i, :n].sum() for i, n in enumerate(ONE[::-1])]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_a_packed_pile_with_a_plan() -> None:
    seqs = random_seqs(ONE, seed=5)
    packed = Pile.from_arrays(seqs, pad_to=32, storage="packed", static_lengths="plan")
    assert packed.storage == "packed" and packed.static_lengths == LengthPlan([(4, 32), (4, 24), (4, 8)])
    f = vmap(attention, in_axes=(pile_axis, None), out_axes=pile_axis)
    exact = Pile.from_arrays(seqs, pad_to=32, storage="packed", static_lengths=True)
    for out in (f(packed, W), jit(f)(packed, W), f(exact, W)):
        # Results of the pile's ragged size are stored packed in its capacity, as vmap gives them unbucketed.
        rows = packed.capacity
        assert out.storage == "packed" and out.capacity == rows and np.shape(out.values) == (rows, 4)
        np.testing.assert_array_equal(np.asarray(out.lengths), ONE)
        for a, x in zip(out, seqs):
            np.testing.assert_allclose(np.asarray(a), np.asarray(attention(x, W)), rtol=1e-5, atol=1e-5)
