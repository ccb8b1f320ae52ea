"""A transformer encoder layer (multi-head attention + MLP, layer norms) on a
ragged batch of sequences, against NumPy on each sequence's true length."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pile_checks import check_pile, ragged_pile

import plait_core.numpy as pnp
from plait_batching import pile_axis
from plait_core import nn

D, H, F = 16, 4, 32


def params(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = {k: (rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32) for k in ("wq", "wk", "wv", "wo")}
    p["w1"] = (rng.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
    p["b1"] = rng.standard_normal(F).astype(np.float32) * 0.1
    p["w2"] = (rng.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)
    p["g1"], p["g2"] = np.ones(D, np.float32) * 1.1, np.ones(D, np.float32) * 0.9
    return p


def layer(x: Any, p: dict[str, Any]) -> Any:
    """One encoder layer on a sequence ``x`` of shape (n, D), written with plait.numpy."""
    n = x.shape[0]

    def heads(y: Any) -> Any:
        return y.reshape(n, H, D // H).transpose(1, 0, 2)

    def norm(y: Any, g: Any) -> Any:
        mu = pnp.mean(y, axis=-1, keepdims=True)
        return (y - mu) / pnp.sqrt(pnp.var(y, axis=-1, keepdims=True) + 1e-5) * g

    q, k, v = heads(x @ p["wq"]), heads(x @ p["wk"]), heads(x @ p["wv"])
    att = nn.softmax(pnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D // H), axis=-1)
    o = pnp.einsum("hqk,hkd->hqd", att, v).transpose(1, 0, 2).reshape(n, D)
    x = norm(x + o @ p["wo"], p["g1"])
    return norm(x + nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"], p["g2"])


def np_layer(x: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    """The same layer in NumPy (float64 inside, float32 out)."""
    x = x.astype(np.float64)
    n = x.shape[0]

    def heads(y: np.ndarray) -> np.ndarray:
        return y.reshape(n, H, D // H).transpose(1, 0, 2)

    def norm(y: np.ndarray, g: np.ndarray) -> np.ndarray:
        return (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-5) * g

    def gelu(y: np.ndarray) -> np.ndarray:
        return 0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y**3)))

    q, k, v = heads(x @ p["wq"]), heads(x @ p["wk"]), heads(x @ p["wv"])
    s = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D // H)
    e = np.exp(s - s.max(-1, keepdims=True))
    o = np.einsum("hqk,hkd->hqd", e / e.sum(-1, keepdims=True), v).transpose(1, 0, 2).reshape(n, D)
    x = norm(x + o @ p["wo"], p["g1"])
    return norm(x + gelu(x @ p["w1"] + p["b1"]) @ p["w2"], p["g2"]).astype(np.float32)


@pytest.mark.parametrize("lengths", [[7, 12, 1, 9], [5, 5, 5], [16]])
def test_transformer_layer_on_a_pile(lengths: list[int]) -> None:
    rng = np.random.default_rng(1)
    x, _ = ragged_pile(rng, lengths, (D,))
    p = params()
    out = check_pile(layer, np_layer, [x, p], (pile_axis, None), pile_axis, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(out.lengths), lengths)


def test_pooled_transformer_output() -> None:
    """Mean-pooling over the true tokens: a static result per sequence."""
    rng = np.random.default_rng(2)
    x, _ = ragged_pile(rng, [3, 8, 5], (D,))
    p = params(1)
    check_pile(lambda x, p: pnp.mean(layer(x, p), axis=0), lambda x, p: np_layer(x, p).mean(0), [x, p],
               (pile_axis, None), 0, rtol=1e-4, atol=1e-4)  # fmt: skip
