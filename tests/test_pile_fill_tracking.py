"""Piles track the fills of their padding (a fill replaces the value's data,
and one the value already has is skipped): under ``jit`` and ``grad`` the
results equal a loop over the elements, and the gradient with respect to the
padded data is zero in the padding, whatever the padding held."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import nn

LENGTHS = (3, 5, 1)


def _pile(garbage: float) -> plait.Pile:
    rng = np.random.default_rng(4)
    pile = plait.Pile.from_arrays([rng.standard_normal((n, 4)).astype(np.float32) for n in LENGTHS])
    data = np.asarray(pile.data).copy()
    for i, n in enumerate(LENGTHS):
        data[i, n:] = garbage
    return plait.Pile(data, np.asarray(pile.lengths))


def _loss(x: Any) -> Any:
    s = x @ x.T
    return (nn.softmax(s, axis=-1) @ x).sum() + x.max(0).sum() + pnp.cumsum(x[::-1], axis=0).sum()


@pytest.mark.parametrize("garbage", [0.0, 1e30])
@pytest.mark.parametrize("use_jit", [False, True])
def test_grad_through_tracked_fills(garbage: float, use_jit: bool) -> None:
    pile = _pile(garbage)
    lengths = np.asarray(pile.lengths)

    def total(data: Any) -> Any:
        return plait.vmap(_loss, in_axes=plait.pile_axis)(plait.Pile(data, lengths)).sum()

    fun = plait.jit(plait.value_and_grad(total)) if use_jit else plait.value_and_grad(total)
    value, g = fun(np.asarray(pile.data))
    g = np.asarray(g)
    elements = pile.unpack()
    np.testing.assert_allclose(float(value), sum(float(_loss(a)) for a in elements), rtol=1e-4)
    for i, a in enumerate(elements):
        want = np.asarray(plait.grad(_loss)(np.asarray(a)))
        np.testing.assert_allclose(g[i, : LENGTHS[i]], want, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(g[i, LENGTHS[i] :], 0)


def test_vmap_of_the_pile_map() -> None:
    """Two stacks of piles mapped by an outer vmap: each pile's results are its loop's."""
    piles = [_pile(0.0), _pile(1e30)]
    data = np.stack([np.asarray(p.data) for p in piles])
    lengths = np.asarray(piles[0].lengths)
    inner = plait.vmap(lambda x: nn.softmax(x @ x.T, axis=-1).sum(0).max(), in_axes=plait.pile_axis)
    out = np.asarray(plait.vmap(lambda d: inner(plait.Pile(d, lengths)))(data))
    for j, p in enumerate(piles):
        for i, a in enumerate(p.unpack()):
            a = np.asarray(a, np.float64)
            s = a @ a.T
            w = np.exp(s - s.max(-1, keepdims=True))
            np.testing.assert_allclose(out[j, i], (w / w.sum(-1, keepdims=True)).sum(0).max(), rtol=1e-5)
