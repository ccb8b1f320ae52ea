"""The gradient of attention over a pile with an empty element, padded layout:
a maximum leaves the rows of the padding finite, so the derivative is finite
and equals a loop over the elements (it was NaN for the query and key weights)."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_autodiff import grad
from plait_batching import Pile, pile_axis, pile_layout, vmap
from plait_core import nn


def _pile(lengths: tuple[int, ...], seed: int = 0, garbage: float = np.nan, width: int = 4) -> Pile:
    """A pile whose padding holds ``garbage`` (which the computation must never read into a result)."""
    rng = np.random.default_rng(seed)
    pile = Pile.from_arrays([rng.standard_normal((n, width)).astype(np.float32) for n in lengths])
    data = np.asarray(pile.data).copy()
    for i, n in enumerate(lengths):
        data[i, n:] = garbage
    return Pile(data, np.asarray(pile.lengths))


def _attention(x: Any) -> Any:
    return nn.softmax(x @ x.T / 2.0, axis=-1) @ x


def test_attention_with_an_empty_element_is_the_loop_and_its_gradient_is_finite() -> None:
    lengths = (3, 0, 5)
    pile = _pile(lengths, seed=1, garbage=0.0)
    w = np.random.default_rng(2).standard_normal((4, 4)).astype(np.float32)

    def loss(w: Any, p: Pile) -> Any:
        return pnp.sum(vmap(lambda x: pnp.sum(_attention(x @ w) ** 2), in_axes=pile_axis)(p))

    def one(w: Any, a: Any) -> Any:
        return pnp.sum(_attention(a @ w) ** 2)

    arrays = [a for a in pile.unpack()]
    want_loss = sum(float(one(w, a)) for a in arrays if a.shape[0])
    want = sum(np.asarray(grad(one)(w, a)) for a in arrays if a.shape[0])
    with pile_layout("padded"):  # the padded layout reads the padding of the empty element
        np.testing.assert_allclose(float(loss(w, pile)), want_loss, rtol=1e-5)
        got = np.asarray(grad(loss)(w, pile))
    assert np.isfinite(got).all(), got
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
