"""Piles of ``n x n`` matrices: a pile whose ragged axes share one length
per element (attention maps, pairwise distances), made by ``vmap`` and
mapped again, under ``jit`` and ``grad``, against a loop over the elements."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp

LENGTHS = (4, 1, 3)
RNG = np.random.default_rng(0)
SEQS = [RNG.standard_normal((k, 3)).astype(np.float32) for k in LENGTHS]


def _attention_map(x: Any) -> Any:
    return plait.nn.softmax(x @ x.T / np.float32(np.sqrt(3.0)), axis=-1)


def _np_attention_map(x: np.ndarray) -> np.ndarray:
    s = x @ x.T / np.sqrt(3.0)
    e = np.exp(s - s.max(-1, keepdims=True))
    return np.asarray(e / e.sum(-1, keepdims=True))


def test_attention_maps_come_back_as_a_pile_of_matrices() -> None:
    maps = plait.jit(plait.vmap(_attention_map, in_axes=plait.pile_axis, out_axes=plait.pile_axis))(
        plait.Pile.from_arrays(SEQS)
    )
    assert maps.ragged_axes == (0, 1) and np.asarray(maps.lengths).tolist() == list(LENGTHS)
    assert repr(maps) == "Pile[3] of f32[≤4, ≤4] lengths [4 1 3]"
    for got, x in zip(maps.unpack(), SEQS):
        np.testing.assert_allclose(np.asarray(got), _np_attention_map(x), rtol=1e-5, atol=1e-6)
    padding = np.asarray(maps.data)[1]  # element 1 has length 1: everything but [0, 0] is padding, zero
    assert padding[0, 0] == pytest.approx(1.0) and not padding.ravel()[1:].any()


def test_a_pile_of_matrices_is_mapped_and_differentiated() -> None:
    mats = plait.Pile.from_arrays([_np_attention_map(x) for x in SEQS])
    assert mats.ragged_axis == (0, 1)

    def loss(data: Any) -> Any:
        pile = plait.Pile(data, mats.lengths, mats.ragged_axis)
        entropy = plait.vmap(lambda p: -pnp.sum(p * pnp.log(p)), in_axes=plait.pile_axis)(pile)
        return entropy.sum()

    value, grad = plait.jit(plait.value_and_grad(loss))(mats.data)
    want = sum(-np.sum(m * np.log(m)) for m in (_np_attention_map(x) for x in SEQS))
    np.testing.assert_allclose(float(value), want, rtol=1e-5)
    g = np.asarray(grad)
    for i, x in enumerate(SEQS):
        k, m = len(x), _np_attention_map(x)
        np.testing.assert_allclose(g[i, :k, :k], -np.log(m) - 1, rtol=1e-4, atol=1e-5)
        assert not g[i, k:].any() and not g[i, :, k:].any()


def test_ragged_axes_must_share_one_padded_size() -> None:
    with pytest.raises(ValueError, match=r"Pile: the ragged axes \(0, 1\) share the elements' lengths, so they "
                       r"must have one padded size, got \[3, 4\]"):
        plait.Pile(np.zeros((2, 3, 4), np.float32), [1, 2], (0, 1))
    with pytest.raises(ValueError, match=r"ragged_axis \(1, -1\) names an axis twice"):
        plait.Pile(np.zeros((2, 3, 3), np.float32), [1, 2], (1, -1))
