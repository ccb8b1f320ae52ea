"""A transformer layer on a ragged batch of sequences, with ``vmap`` over a ``Pile``.

Sequences of different lengths are usually padded to the longest and
stacked; then every operation that mixes positions (attention's softmax,
a mean over tokens) reads the padding, and each needs its own mask.  A
``plait.Pile`` holds the padded data *and* each element's length:

    pile = plait.Pile.from_arrays([seq0, seq1, ...])    # data (B, max_n, D), lengths (B,)

``vmap(layer, in_axes=(pile_axis, None), out_axes=pile_axis)`` maps a
function written for *one* sequence of shape ``(n, D)`` over the pile.
Inside, ``x.shape[0]`` is a symbolic size (each element's own length), so
reshapes, softmaxes and means work on the true tokens only; the result is a
pile again.  Reducing over the tokens gives an ordinary array instead
(``out_axes=0``).  The whole batch compiles once, under ``jit``.

The script runs one encoder layer (multi-head self-attention and an MLP, each
residual and layer-normed), written with ``plait.numpy`` and ``plait.nn``,
on eight sequences, and checks it against the layer applied to each sequence
alone (with plait, and in NumPy).  It also shows what goes wrong without the
pile: the same layer on the zero-padded batch mixes padding into attention.

Run it with ``python examples/ragged_transformer.py``; it checks its own
results.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
from plait import nn, pile_axis
from plait import numpy as pnp

D_MODEL, HEADS, D_FF = 32, 4, 64
LENGTHS = [5, 17, 3, 12, 9, 1, 24, 8]


def init(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def dense(n_in: int, n_out: int) -> np.ndarray:
        return np.asarray(rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), np.float32)

    p = {name: dense(D_MODEL, D_MODEL) for name in ("wq", "wk", "wv", "wo")}
    p.update(w1=dense(D_MODEL, D_FF), b1=np.zeros(D_FF, np.float32), w2=dense(D_FF, D_MODEL))
    p.update(g1=np.ones(D_MODEL, np.float32), g2=np.ones(D_MODEL, np.float32))
    return p


def layer_norm(x: Any, gain: Any) -> Any:
    mean = pnp.mean(x, axis=-1, keepdims=True)
    return (x - mean) / pnp.sqrt(pnp.var(x, axis=-1, keepdims=True) + 1e-5) * gain


def encoder_layer(x: Any, p: dict[str, Any]) -> Any:
    """One encoder layer on ONE sequence ``x`` of shape ``(n, D_MODEL)``."""
    n = x.shape[0]

    def split_heads(y: Any) -> Any:  # (n, D) -> (heads, n, D / heads)
        return y.reshape(n, HEADS, D_MODEL // HEADS).transpose(1, 0, 2)

    q, k, v = (split_heads(x @ p[w]) for w in ("wq", "wk", "wv"))
    scores = pnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D_MODEL // HEADS)
    attended = pnp.einsum("hqk,hkd->hqd", nn.softmax(scores, axis=-1), v)
    x = layer_norm(x + attended.transpose(1, 0, 2).reshape(n, D_MODEL) @ p["wo"], p["g1"])
    return layer_norm(x + nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"], p["g2"])


def numpy_layer(x: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    """The same layer in NumPy, in float64: the oracle."""
    x = x.astype(np.float64)
    n = x.shape[0]

    def split_heads(y: np.ndarray) -> np.ndarray:
        return y.reshape(n, HEADS, D_MODEL // HEADS).transpose(1, 0, 2)

    def norm(y: np.ndarray, g: np.ndarray) -> np.ndarray:
        return np.asarray((y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-5) * g)

    def gelu(y: np.ndarray) -> np.ndarray:
        return np.asarray(0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y**3))))

    q, k, v = (split_heads(x @ p[w]) for w in ("wq", "wk", "wv"))
    s = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D_MODEL // HEADS)
    w = np.exp(s - s.max(-1, keepdims=True))
    attended = np.einsum("hqk,hkd->hqd", w / w.sum(-1, keepdims=True), v)
    x = norm(x + attended.transpose(1, 0, 2).reshape(n, D_MODEL) @ p["wo"], p["g1"])
    return norm(x + gelu(x @ p["w1"] + p["b1"]) @ p["w2"], p["g2"])


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"ragged_transformer.py: check failed: {what}")


def main() -> None:
    rng = np.random.default_rng(0)
    params = init(rng)
    sequences = [rng.standard_normal((n, D_MODEL)).astype(np.float32) for n in LENGTHS]
    pile = plait.Pile.from_arrays(sequences)
    print("input: ", pile)

    # The layer over the whole ragged batch, compiled once.
    batched = plait.jit(plait.vmap(encoder_layer, in_axes=(pile_axis, None), out_axes=pile_axis))
    out = batched(pile, params)
    print("output:", out)
    results = [np.asarray(r) for r in out.unpack()]

    # Mean-pooled features: one vector per sequence, an ordinary (B, D) array.
    pooled = plait.jit(plait.vmap(lambda x, p: pnp.mean(encoder_layer(x, p), axis=0), in_axes=(pile_axis, None)))
    features = np.asarray(pooled(pile, params))
    print("pooled features:", features.shape)

    # The oracles: each sequence alone, with plait and with NumPy.
    single = plait.jit(encoder_layer)
    alone = [np.asarray(single(s, params)) for s in sequences]
    in_numpy = [numpy_layer(s, params) for s in sequences]
    diff = max(float(np.max(np.abs(r - a))) for r, a in zip(results, alone))
    diff_np = max(float(np.max(np.abs(r - o))) for r, o in zip(results, in_numpy))
    print(f"max |pile - each sequence alone| = {diff:.2e}; against NumPy (float64) {diff_np:.2e}")
    for r, o in zip(results, in_numpy):
        np.testing.assert_allclose(r, o, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(features, np.stack([o.mean(0) for o in in_numpy]), rtol=1e-4, atol=1e-4)
    check([r.shape[0] for r in results] == LENGTHS, "each result has its sequence's length")

    # Without the pile, every query also attends to the padded (zero) positions.
    padded = np.asarray(plait.jit(plait.vmap(encoder_layer, in_axes=(0, None)))(pile.data, params))
    leak = max(float(np.max(np.abs(padded[i, :n] - o))) for i, (n, o) in enumerate(zip(LENGTHS, in_numpy)))
    print(f"the zero-padded batch without a pile is off by up to {leak:.2f}")
    check(leak > 1e-2, "padding changes attention when it is not masked")
    print("ragged_transformer.py: all checks passed")


if __name__ == "__main__":
    main()
