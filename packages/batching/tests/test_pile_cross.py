"""Values with ragged axes of two different sizes: ``n x m`` between two piles.

Queries from one pile and keys from another (lengths that differ per
element) make ``(n, m)`` scores; elementwise operations, broadcasting,
reductions and softmax over either ragged axis, ``where`` and ``dot_general``
contracting either one all work on them.  The oracle is NumPy on each pair
of elements, in a Python loop (``check_pile``: eagerly, with NaN in the
inputs' padding, and staged).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pile_checks import check_pile, ragged_pile

import plait_core.numpy as pnp
from plait_batching import pile_axis, vmap
from plait_core import lax, nn

P = pile_axis
D = 3
Q_LENGTHS = [3, 1, 5, 2]
K_LENGTHS = [2, 4, 1, 3]


def piles() -> tuple[Any, Any]:
    rng = np.random.default_rng(16)
    q, _ = ragged_pile(rng, Q_LENGTHS, (D,))
    k, _ = ragged_pile(rng, K_LENGTHS, (D,))
    return q, k


def np_softmax(s: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(s - s.max(axis, keepdims=True))
    return np.asarray(e / e.sum(axis, keepdims=True), s.dtype)


def scores(q: Any, k: Any) -> Any:
    return pnp.einsum("nd,md->nm", q, k) / np.float32(np.sqrt(D))


def np_scores(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.asarray(q @ k.T / np.float32(np.sqrt(D)), np.float32)


@pytest.mark.parametrize(
    "name, fun, oracle, out_axes",
    [
        ("cross-attention", lambda q, k: nn.softmax(scores(q, k), axis=-1) @ k,
         lambda q, k: np_softmax(np_scores(q, k), -1) @ k, P),
        ("attention of the keys over the queries", lambda q, k: nn.softmax(scores(q, k), axis=0).T @ q,
         lambda q, k: np_softmax(np_scores(q, k), 0).T @ q, P),
        ("sums over either axis and both", lambda q, k: (scores(q, k).sum(1), scores(q, k).sum(0), scores(q, k).sum()),
         lambda q, k: (np_scores(q, k).sum(1), np_scores(q, k).sum(0), np_scores(q, k).sum()), (P, P, 0)),
        ("max, min, argmax, argmin", lambda q, k: (scores(q, k).max(1), scores(q, k).min(0),
                                                    pnp.argmax(scores(q, k), 1), pnp.argmin(scores(q, k), 0)),
         lambda q, k: (np_scores(q, k).max(1), np_scores(q, k).min(0), np.argmax(np_scores(q, k), 1).astype(np.int32),
                       np.argmin(np_scores(q, k), 0).astype(np.int32)), (P, P, P, P)),
        ("outer differences by broadcasting", lambda q, k: pnp.abs(q[:, None, :] - k[None, :, :]).sum((1, 2)),
         lambda q, k: np.abs(q[:, None, :] - k[None, :, :]).sum((1, 2)), P),
        ("where over the pair", lambda q, k: pnp.where(scores(q, k) > 0, scores(q, k), 0.0).sum(0),
         lambda q, k: np.where(np_scores(q, k) > 0, np_scores(q, k), np.float32(0)).sum(0), P),
        ("a causal-style mask from both lengths",
         lambda q, k: pnp.where(pnp.arange(q.shape[0])[:, None] >= pnp.arange(k.shape[0])[None, :],
                                scores(q, k), -1e9).max(1),
         lambda q, k: np.where(np.arange(len(q))[:, None] >= np.arange(len(k))[None, :], np_scores(q, k),
                               np.float32(-1e9)).max(1), P),
        ("logsumexp and cumsum over the keys", lambda q, k: (nn.logsumexp(scores(q, k), axis=1),
                                                             pnp.cumsum(scores(q, k), axis=1).sum(1)),
         lambda q, k: (np.log(np.exp(np_scores(q, k)).sum(1)), np.cumsum(np_scores(q, k), axis=1).sum(1)), (P, P)),
        ("sort and argsort over either axis",
         lambda q, k: ((pnp.sort(scores(q, k), axis=1) * pnp.arange(k.shape[0])).sum(1),
                       (pnp.argsort(scores(q, k), axis=0) * pnp.arange(q.shape[0])[:, None]).sum(0)),
         lambda q, k: ((np.sort(np_scores(q, k), axis=1) * np.arange(len(k), dtype=np.float32)).sum(1),
                       (np.argsort(np_scores(q, k), axis=0, kind="stable") * np.arange(len(q))[:, None]).sum(0)
                       .astype(np.int32)), (P, P)),
        ("lax-level broadcast, transpose and expand_dims",
         lambda q, k: lax.squeeze(lax.expand_dims(lax.transpose(scores(q, k), (1, 0)), (0,)), (0,)).sum(1),
         lambda q, k: np_scores(q, k).T.sum(1), P),
    ],
)
def test_values_between_two_piles(name: str, fun: Any, oracle: Any, out_axes: Any) -> None:
    q, k = piles()
    check_pile(fun, oracle, [q, k], (P, P), out_axes, rtol=1e-4, atol=1e-5)


def test_two_piles_inside_an_outer_vmap() -> None:
    q, k = piles()
    temps = np.array([0.5, 1.0, 2.0], np.float32)

    def per_temperature(t: Any) -> Any:
        return vmap(lambda a, b: (nn.softmax(scores(a, b) / t, axis=-1) @ b).sum(0), in_axes=(P, P))(q, k)

    got = np.asarray(vmap(per_temperature)(temps))
    qs, ks = q.unpack(), k.unpack()
    want = np.stack([np.stack([(np_softmax(np_scores(np.asarray(a), np.asarray(b)) / t, -1) @ np.asarray(b)).sum(0)
                               for a, b in zip(qs, ks)]) for t in temps])  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_value_with_two_ragged_sizes_is_not_a_pile() -> None:
    q, k = piles()
    with pytest.raises(ValueError, match=r"the function's result has ragged axes \(0, 1\) of different sizes "
                                         r"\(_pile\d+, _pile\d+; element type f32\[_pile\d+,_pile\d+\]\), but the "
                                         r"ragged axes of a Pile share one length per element"):
        vmap(scores, in_axes=(P, P), out_axes=P)(q, k)


def test_concatenating_an_n_x_m_value_along_either_axis() -> None:
    """``concatenate`` is core's padded rule, which writes each piece at its
    logical offset along its own axis (issue 16: it used to refuse two sizes)."""
    q, k = piles()
    out = vmap(lambda a, b: pnp.concatenate([scores(a, b)] * 2, axis=1).cumsum(1).sum(1), in_axes=(P, P),
               out_axes=P)(q, k)  # fmt: skip
    for got, a, b in zip(out.unpack(), q.unpack(), k.unpack()):
        s = np_scores(np.asarray(a), np.asarray(b))
        np.testing.assert_allclose(np.asarray(got), np.concatenate([s, s], 1).cumsum(1).sum(1), rtol=1e-5, atol=1e-5)


def test_rev_of_either_ragged_axis() -> None:
    """``rev`` is core's padded rule, which reverses each axis by its own size."""
    q, k = piles()
    out = vmap(lambda a, b: (pnp.flip(scores(a, b), axis=1).cumsum(1) * pnp.flip(scores(a, b), 0)).sum(1),
               in_axes=(P, P), out_axes=P)(q, k)  # fmt: skip
    for got, a, b in zip(out.unpack(), q.unpack(), k.unpack()):
        s = np_scores(np.asarray(a), np.asarray(b))
        np.testing.assert_allclose(np.asarray(got), (np.flip(s, 1).cumsum(1) * np.flip(s, 0)).sum(1), rtol=1e-5,
                                   atol=1e-6)


def test_two_piles_of_different_lengths_along_one_axis_are_refused() -> None:
    q, k = piles()
    with pytest.raises(ValueError, match=r"vmap over piles: sort combines values of different ragged sizes \(operands "
                                         r"f32\[_pile\d+\], f32\[_pile\d+\];.*Piles combine only when their lengths "
                                         r"are equal"):
        vmap(lambda a, b: lax.sort((a[:, 0], b[:, 0]), num_keys=1)[0], in_axes=(P, P), out_axes=P)(q, k)
    with pytest.raises(ValueError, match=r"vmap over piles: mul combines values of different ragged sizes"):
        vmap(lambda a, b: lax.mul(a, b), in_axes=(P, P), out_axes=P)(q, k)
