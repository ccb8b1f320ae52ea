"""Cross-attention between two piles: a decoder layer over ragged sources and targets.

In an encoder-decoder model (translation, summarisation) each example has a
*source* sequence of ``m`` tokens and a *target* sequence of ``n`` tokens,
and ``n`` and ``m`` differ from example to example and from each other.
Padding both to their longest and stacking them needs two masks in every
attention: one for the padded queries and one for the padded keys.  With
two ``plait.Pile`` values the layer is written for ONE pair:

    targets = plait.Pile.from_arrays([t0, t1, ...])    # (B, max_n, D), lengths n_i
    sources = plait.Pile.from_arrays([s0, s1, ...])    # (B, max_m, D), lengths m_i
    plait.vmap(decoder_layer, in_axes=(pile_axis, pile_axis, None), out_axes=pile_axis)

Inside, ``y.shape[0]`` is ``n`` and ``memory.shape[0]`` is ``m``, two
different ragged sizes; the cross-attention scores have the shape
``(heads, n, m)``, a value with two ragged axes of different lengths.  The
softmax over ``m`` ignores each pair's padded keys, the product with the
values contracts ``m`` over the true keys only, and the result is a pile of
the targets' lengths.

The script runs one decoder layer (causal self-attention over the target,
cross-attention to the source, an MLP, each residual and layer-normed) on
four pairs under ``jit``, and checks it against the layer applied to each pair
alone, in a Python loop, to 1e-5 (and against NumPy in float64).  It then
checks the gradient of a loss over the whole ragged batch, with respect to
the parameters and to the source pile, against the sum of the per-pair
gradients.  Run it with ``python examples/cross_attention_piles.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
from plait import nn, pile_axis
from plait import numpy as pnp

D_MODEL, HEADS, D_FF = 16, 2, 32
TARGET_LENGTHS = [4, 1, 7, 3]
SOURCE_LENGTHS = [6, 3, 1, 8]
TOL = 1e-5


def init(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def dense(n_in: int, n_out: int) -> np.ndarray:
        return np.asarray(rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), np.float32)

    p = {name: dense(D_MODEL, D_MODEL) for name in ("sq", "sk", "sv", "so", "cq", "ck", "cv", "co")}
    p.update(w1=dense(D_MODEL, D_FF), w2=dense(D_FF, D_MODEL))
    p.update({g: np.ones(D_MODEL, np.float32) for g in ("g1", "g2", "g3")})
    return p


def layer_norm(x: Any, gain: Any) -> Any:
    mean = pnp.mean(x, axis=-1, keepdims=True)
    return (x - mean) / pnp.sqrt(pnp.var(x, axis=-1, keepdims=True) + 1e-5) * gain


def attention(x: Any, memory: Any, p: dict[str, Any], prefix: str, causal: bool) -> Any:
    """Multi-head attention of the rows of ``x`` (n, D) over the rows of ``memory`` (m, D)."""
    n, m = x.shape[0], memory.shape[0]

    def heads(y: Any, rows: Any) -> Any:  # (rows, D) -> (HEADS, rows, D / HEADS)
        return y.reshape(rows, HEADS, D_MODEL // HEADS).transpose(1, 0, 2)

    q, k, v = heads(x @ p[prefix + "q"], n), heads(memory @ p[prefix + "k"], m), heads(memory @ p[prefix + "v"], m)
    scores = pnp.einsum("hqd,hkd->hqk", q, k) / np.float32(np.sqrt(D_MODEL // HEADS))  # (HEADS, n, m)
    if causal:
        scores = pnp.where(pnp.arange(n)[:, None] >= pnp.arange(m)[None, :], scores, -1e9)
    attended = pnp.einsum("hqk,hkd->hqd", nn.softmax(scores, axis=-1), v)
    return attended.transpose(1, 0, 2).reshape(n, D_MODEL) @ p[prefix + "o"]


def decoder_layer(y: Any, memory: Any, p: dict[str, Any]) -> Any:
    """One decoder layer on ONE pair: target ``y`` (n, D), source ``memory`` (m, D)."""
    y = layer_norm(y + attention(y, y, p, "s", causal=True), p["g1"])
    y = layer_norm(y + attention(y, memory, p, "c", causal=False), p["g2"])
    return layer_norm(y + nn.gelu(y @ p["w1"]) @ p["w2"], p["g3"])


def numpy_layer(y: np.ndarray, memory: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    """The same layer in NumPy, in float64: the oracle."""
    y, memory = y.astype(np.float64), memory.astype(np.float64)

    def norm(x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return np.asarray((x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g)

    def attend(x: np.ndarray, mem: np.ndarray, prefix: str, causal: bool) -> np.ndarray:
        n, m = len(x), len(mem)

        def heads(z: np.ndarray, rows: int) -> np.ndarray:
            return z.reshape(rows, HEADS, D_MODEL // HEADS).transpose(1, 0, 2)

        q, k, v = heads(x @ p[prefix + "q"], n), heads(mem @ p[prefix + "k"], m), heads(mem @ p[prefix + "v"], m)
        s = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D_MODEL // HEADS)
        if causal:
            s = np.where(np.arange(n)[:, None] >= np.arange(m)[None, :], s, -1e9)
        w = np.exp(s - s.max(-1, keepdims=True))
        out = np.einsum("hqk,hkd->hqd", w / w.sum(-1, keepdims=True), v)
        return np.asarray(out.transpose(1, 0, 2).reshape(n, D_MODEL) @ p[prefix + "o"])

    def gelu(x: np.ndarray) -> np.ndarray:
        return np.asarray(0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))))

    y = norm(y + attend(y, y, "s", True), p["g1"])
    y = norm(y + attend(y, memory, "c", False), p["g2"])
    return norm(y + gelu(y @ p["w1"]) @ p["w2"], p["g3"])


def pair_loss(y: Any, memory: Any, p: dict[str, Any]) -> Any:
    """A scalar per pair: the squared mean of the layer's output tokens."""
    return pnp.sum(pnp.mean(decoder_layer(y, memory, p), axis=0) ** 2)


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"cross_attention_piles.py: check failed: {what}")


def close(a: Any, b: Any, what: str, tol: float = TOL) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    check(a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}")
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    check(diff <= tol * max(1.0, float(np.max(np.abs(b))) if b.size else 1.0), f"{what}: off by {diff:.2e}")
    return diff


def main() -> None:
    rng = np.random.default_rng(0)
    params = init(rng)
    targets = [rng.standard_normal((n, D_MODEL)).astype(np.float32) for n in TARGET_LENGTHS]
    sources = [rng.standard_normal((m, D_MODEL)).astype(np.float32) for m in SOURCE_LENGTHS]
    target_pile, source_pile = plait.Pile.from_arrays(targets), plait.Pile.from_arrays(sources)
    print("targets:", target_pile)
    print("sources:", source_pile)

    # The layer over every pair at once, compiled once: (n, m) scores inside, a pile of targets out.
    batched = plait.jit(plait.vmap(decoder_layer, in_axes=(pile_axis, pile_axis, None), out_axes=pile_axis))
    out = batched(target_pile, source_pile, params)
    results = [np.asarray(r) for r in out.unpack()]
    check([r.shape[0] for r in results] == TARGET_LENGTHS, "each result has its target's length")

    # The oracle: each pair alone, in a Python loop (with plait, and with NumPy in float64).
    single = plait.jit(decoder_layer)
    diff = max(close(r, single(t, s, params), "pile vs each pair alone") for r, t, s in zip(results, targets, sources))
    diff_np = max(close(r, numpy_layer(t, s, params), "pile vs NumPy", 1e-4)
                  for r, t, s in zip(results, targets, sources))  # fmt: skip
    print(f"max |pile - each pair alone| = {diff:.2e}; against NumPy (float64) {diff_np:.2e}")

    # Gradients of a loss over the ragged batch, for the parameters and the source pile.
    def batch_loss(p: dict[str, Any], source_data: Any) -> Any:
        src = plait.Pile(source_data, source_pile.lengths)  # the lengths are integers: not differentiated
        losses = plait.vmap(pair_loss, in_axes=(pile_axis, pile_axis, None))(target_pile, src, p)
        return pnp.sum(losses)

    g_params, g_data = plait.jit(plait.grad(batch_loss, argnums=(0, 1)))(params, source_pile.data)
    single_grad = plait.jit(plait.grad(pair_loss, argnums=(1, 2)))
    per_pair = [single_grad(t, s, params) for t, s in zip(targets, sources)]
    gdiff = 0.0
    for name in params:
        gdiff = max(gdiff, close(g_params[name], sum(np.asarray(g[1][name]) for g in per_pair), f"d loss / d {name}"))
    g_data = np.asarray(g_data)
    for i, (m, g) in enumerate(zip(SOURCE_LENGTHS, per_pair)):
        gdiff = max(gdiff, close(g_data[i, :m], g[0], f"d loss / d source {i}"))
        check(not g_data[i, m:].any(), f"the gradient is zero in the padding of source {i}")
    print(f"max |grad over the piles - sum of per-pair grads| = {gdiff:.2e}")
    print("cross_attention_piles.py: all checks passed")


if __name__ == "__main__":
    main()
