"""Piles with static lengths under grad and jit: buckets (plait_batching.buckets)
give the whole pile's values and gradients, and jit compiles per set of lengths."""

from __future__ import annotations

from typing import Any

import numpy as np
from bucket_cases import attention, random_seqs

import plait_core.numpy as pnp
from plait_autodiff import grad
from plait_batching import Pile, pile_axis, vmap
from plait_core.tree_util import tree_structure
from plait_dispatch import jit

LENGTHS = [5, 17, 3, 30, 12, 29, 8, 1, 22, 16, 30, 2]


def test_grad_through_buckets_and_mapped_arrays() -> None:
    seqs = random_seqs(LENGTHS, seed=3)
    scale = np.linspace(0.5, 2.0, len(LENGTHS)).astype(np.float32)
    w = np.random.default_rng(4).standard_normal((4, 4)).astype(np.float32)

    def loss(w: Any, p: Pile, scale: Any) -> Any:
        per = vmap(lambda x, s: s * pnp.sum(attention(x, w) ** 2), in_axes=(pile_axis, 0))(p, scale)
        return pnp.sum(per * pnp.arange(len(LENGTHS), dtype=np.float32))

    want = sum(float(i) * float(scale[i]) * pnp.sum(attention(x, w) ** 2) for i, x in enumerate(seqs))
    got = loss(w, Pile.from_arrays(seqs, static_lengths=True), scale)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5)
    g_static = grad(loss)(w, Pile.from_arrays(seqs, static_lengths=True), scale)
    g_whole = grad(loss)(w, Pile.from_arrays(seqs, static_lengths=False), scale)
    np.testing.assert_allclose(np.asarray(g_static), np.asarray(g_whole), rtol=1e-4, atol=1e-4)

def test_under_jit_the_lengths_are_structure() -> None:
    w = np.eye(4, dtype=np.float32)
    f = jit(vmap(attention, in_axes=(pile_axis, None), out_axes=pile_axis))
    for lengths in (LENGTHS, LENGTHS[::-1]):
        seqs = random_seqs(lengths, seed=5)
        out = f(Pile.from_arrays(seqs, static_lengths=True), w)
        for a, b in zip(out, seqs):
            np.testing.assert_allclose(np.asarray(a), np.asarray(attention(b, w)), rtol=1e-5, atol=1e-5)
    one, other = (Pile.from_arrays(random_seqs(x), static_lengths=True) for x in (LENGTHS, LENGTHS[::-1]))
    assert tree_structure(one) != tree_structure(other)
    assert one.static_lengths == tuple(LENGTHS)
    assert "(static)" in repr(one)

def test_grad_with_respect_to_the_piles_data() -> None:
    w = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)

    def total(p: Pile) -> Any:
        return pnp.sum(vmap(lambda x: pnp.sum(attention(x, w) ** 2), in_axes=pile_axis)(p))

    seqs = random_seqs(LENGTHS, seed=7)
    g_static = grad(total, allow_int=True)(Pile.from_arrays(seqs, static_lengths=True))
    g_whole = grad(total, allow_int=True)(Pile.from_arrays(seqs, static_lengths=False))
    assert g_static.static_lengths == tuple(LENGTHS)
    np.testing.assert_allclose(np.asarray(g_static.data), np.asarray(g_whole.data), rtol=1e-4, atol=1e-4)
