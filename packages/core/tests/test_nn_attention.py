"""nn.dot_product_attention against a NumPy loop over batch and heads
written from the definition (softmax(scale * q k^T + bias, masked) v)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_core import nn

B, T, S, N, K, H = 2, 5, 6, 4, 2, 8
R = np.random.default_rng(0)
Q = R.standard_normal((B, T, N, H)).astype(np.float32)
KEY = R.standard_normal((B, S, K, H)).astype(np.float32)
V = R.standard_normal((B, S, K, H)).astype(np.float32)


def oracle(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: Any = None, keep: Any = None, scale: Any = None,
           q_len: Any = None) -> np.ndarray:  # fmt: skip
    b, t, n, h = q.shape
    s, kh = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(h) if scale is None else scale
    out = np.zeros((b, t, n, h), np.float64)
    for bi in range(b):
        for head in range(n):
            kv = head // (n // kh)  # query heads share key/value heads in contiguous groups
            logits = scale * q[bi, :, head].astype(np.float64) @ k[bi, :, kv].T.astype(np.float64)
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (b, n, t, s))[bi, head]
            if keep is not None:
                logits = np.where(np.broadcast_to(keep, (b, n, t, s))[bi, head], logits, -np.inf)
            w = np.exp(logits - logits.max(-1, keepdims=True))
            out[bi, :, head] = (w / w.sum(-1, keepdims=True)) @ v[bi, :, kv]
            if q_len is not None:
                out[bi, q_len[bi] :, head] = 0
    return out


def test_plain_grouped_heads() -> None:
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(Q, KEY, V)), oracle(Q, KEY, V), rtol=1e-5, atol=1e-6)


def test_bias_mask_scale() -> None:
    bias = R.standard_normal((1, N, T, S)).astype(np.float32)
    keep = R.random((B, 1, T, S)) > 0.3
    keep[..., 0] = True  # every query attends at least one key
    got = nn.dot_product_attention(Q, KEY, V, bias=bias, mask=keep, scale=0.3)
    np.testing.assert_allclose(np.asarray(got), oracle(Q, KEY, V, bias, keep, 0.3), rtol=1e-5, atol=1e-6)


def test_causal_window_and_lengths() -> None:
    causal = np.tril(np.ones((T, S), bool))
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(Q, KEY, V, is_causal=True)),
                               oracle(Q, KEY, V, keep=causal), rtol=1e-5, atol=1e-6)  # fmt: skip
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    window = (t <= s + 1) & (t >= s - 2)
    lengths = (np.array([3, 5]), np.array([4, 6]))
    kv_keep = (np.arange(S)[None, None, None, :] < lengths[1][:, None, None, None]) & (
        np.arange(T)[None, None, :, None] < lengths[0][:, None, None, None]
    )
    got = nn.dot_product_attention(Q, KEY, V, local_window_size=(1, 2), query_seq_lengths=lengths[0].astype(np.int32),
                                   key_value_seq_lengths=lengths[1].astype(np.int32))  # fmt: skip
    want = oracle(Q, KEY, V, keep=window & kv_keep | ~(np.arange(T)[None, None, :, None] < lengths[0][:, None, None, None]),
                  q_len=lengths[0])  # fmt: skip
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_unbatched_and_residual() -> None:
    got = nn.dot_product_attention(Q[0], KEY[0], V[0])
    np.testing.assert_allclose(np.asarray(got), oracle(Q, KEY, V)[0], rtol=1e-5, atol=1e-6)
    out, lse = nn.dot_product_attention(Q, KEY, V, return_residual=True)
    logits = np.einsum("btkgh,bskh->btkgs", Q.reshape(B, T, K, N // K, H), KEY) / np.sqrt(H)
    want = np.log(np.exp(logits).sum(-1)).reshape(B, T, N)
    np.testing.assert_allclose(np.asarray(lse), want, rtol=1e-5)
    assert np.asarray(out).shape == (B, T, N, H)


def test_errors() -> None:
    with pytest.raises(ValueError, match=r"query heads \(4\) must be a multiple of the key/value heads \(3\)"):
        nn.dot_product_attention(Q, np.zeros((B, S, 3, H), np.float32), np.zeros((B, S, 3, H), np.float32))
    with pytest.raises(TypeError, match="mask must be boolean"):
        nn.dot_product_attention(Q, KEY, V, mask=np.ones((B, N, T, S), np.float32))
    with pytest.raises(ValueError, match="does not broadcast to"):
        nn.dot_product_attention(Q, KEY, V, bias=np.ones((B, N, T, S + 1), np.float32))
    with pytest.raises(NotImplementedError, match=r"not supported: dot_product_attention\(implementation='cudnn'\)"):
        nn.dot_product_attention(Q, KEY, V, implementation="cudnn")
