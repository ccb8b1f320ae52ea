"""Slicing, indexing (``x[i]``, ``x[:, j]``, ``take``), dynamic slices,
concatenation and reshapes of an ``n x m`` value between two piles of different lengths
(issue 16): core's padded rules of these primitives treat each padded axis
by its own size, so piles take them along either ragged axis.  The oracle
is the same function on each pair of elements in a Python loop, under
``jit``, ``grad`` and ``vmap`` of the pile map; what piles refuse is a
``ValueError`` naming the primitive and the axis."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait.numpy as pnp
from plait import Pile, grad, jit, lax, pile_axis, vmap

P = pile_axis
RNG = np.random.default_rng(1618)
QS = [RNG.standard_normal((n, 3)).astype(np.float32) for n in (3, 1, 5)]
KS = [RNG.standard_normal((m, 3)).astype(np.float32) for m in (2, 4, 1)]


def _scores(q: Any, k: Any) -> Any:
    return pnp.einsum("nd,md->nm", q, k)  # (n, m): two ragged sizes


def _row(s: Any) -> Any:
    """A traced row index per element, in range: the row of the largest first entry."""
    return pnp.argmax(s[:, 0])


FUNS = {
    "slice rows": lambda q, k: _scores(q, k)[1:].cumsum(0),
    "slice cols": lambda q, k: _scores(q, k)[:, :-1] * (pnp.arange(k.shape[0] - 1) + 1.0),
    "slice both": lambda q, k: lax.slice(_scores(q, k), (1, 0), (q.shape[0], k.shape[0] - 1)).cumsum(1),
    "last row and column": lambda q, k: _scores(q, k)[-1] * 2.0 + _scores(q, k)[:, -1].sum(),
    "x[i] and x[:, j]": lambda q, k: _scores(q, k)[0] + _scores(q, k)[:, 0][_row(_scores(q, k))],
    "x[i] at a traced row": lambda q, k: _scores(q, k)[_row(_scores(q, k))].cumsum(),
    "take along rows, clip": lambda q, k: pnp.take(_scores(q, k), np.array([2, 0, -1, 7]), axis=0, mode="clip"),
    "take along cols, fill": lambda q, k: pnp.take(_scores(q, k), np.array([1, 5, 0]), axis=1, mode="fill",
                                                   fill_value=-2.0),
    "dynamic_slice rows": lambda q, k: lax.dynamic_slice_in_dim(_scores(q, k), _row(_scores(q, k)), 1, axis=0),
    "dynamic_slice cols": lambda q, k: lax.dynamic_slice(_scores(q, k), (0, k.shape[0] - 1), (q.shape[0], 1)),
    "concatenate, static axis": lambda q, k: pnp.concatenate([_scores(q, k)[..., None], _scores(q, k)[..., None] ** 2],
                                                             axis=2).cumsum(2),
    "concatenate rows, n + m": lambda q, k: pnp.concatenate([_scores(q, k), 1.0 + k @ k.T], axis=0).cumsum(0),
    "concatenate cols, m + n": lambda q, k: pnp.concatenate([_scores(q, k), q @ q.T], axis=1).cumsum(1) ** 2,
    "reshape n * m": lambda q, k: _scores(q, k).reshape(-1).cumsum(),
    "reshape m * n of the transpose": lambda q, k: _scores(q, k).T.reshape(-1).cumsum() * 0.5,
    "reshape n x m x 1 to n x m": lambda q, k: _scores(q, k)[..., None].reshape(q.shape[0], k.shape[0]).cumsum(1),
    "concatenate rows, n + n": lambda q, k: pnp.concatenate([_scores(q, k), -_scores(q, k)[::-1]], axis=0).cumsum(0),
}


def _reduce(fun: Any) -> Any:
    return lambda q, k: pnp.sum(fun(q, k) ** 2)


@pytest.mark.parametrize("name", list(FUNS))
def test_sum_over_the_result(name: str) -> None:
    f = _reduce(FUNS[name])
    got = np.asarray(jit(vmap(f, in_axes=(P, P)))(Pile.from_arrays(QS), Pile.from_arrays(KS)))
    want = [float(f(a, b)) for a, b in zip(QS, KS)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", [n for n in FUNS if n.startswith(("concatenate", "slice", "reshape"))])
def test_rows_as_a_pile(name: str) -> None:
    """Summing away every axis but the first leaves one ragged axis (``n + m``
    for the rows of a concatenation of piles of different lengths, ``n * m``
    for both axes merged): a pile."""
    fun = FUNS[name]

    def rows(q: Any, k: Any) -> Any:
        out = fun(q, k)
        return out.sum(tuple(range(1, out.ndim)))

    got = jit(vmap(rows, in_axes=(P, P), out_axes=P))(Pile.from_arrays(QS), Pile.from_arrays(KS))
    for g, a, b in zip(got.unpack(), QS, KS):
        np.testing.assert_allclose(np.asarray(g), np.asarray(rows(a, b)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", list(FUNS))
def test_grad_with_respect_to_both_piles(name: str) -> None:
    f = _reduce(FUNS[name])
    q, k = Pile.from_arrays(QS), Pile.from_arrays(KS)

    def total(qd: Any, kd: Any) -> Any:
        return pnp.sum(vmap(f, in_axes=(P, P))(Pile(qd, q.lengths), Pile(kd, k.lengths)))

    gq, gk = (np.asarray(g) for g in jit(grad(total, argnums=(0, 1)))(q.data, k.data))
    per_pair = jit(grad(f, argnums=(0, 1)))
    for i, (a, b) in enumerate(zip(QS, KS)):
        wq, wk = per_pair(a, b)
        np.testing.assert_allclose(gq[i, : len(a)], np.asarray(wq), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(gk[i, : len(b)], np.asarray(wk), rtol=1e-4, atol=1e-4)
        assert not gq[i, len(a):].any() and not gk[i, len(b):].any()


@pytest.mark.parametrize("name", ["x[i] at a traced row", "concatenate rows, n + m", "take along cols, fill"])
def test_vmap_of_the_pile_map(name: str) -> None:
    """An outer vmap over two stacks of piles (same lengths, different data)."""
    f = _reduce(FUNS[name])
    q, k = Pile.from_arrays(QS), Pile.from_arrays(KS)
    qd = np.stack([np.asarray(q.data), 2 * np.asarray(q.data)])
    kd = np.stack([np.asarray(k.data), -np.asarray(k.data)])
    inner = vmap(f, in_axes=(P, P))
    got = np.asarray(jit(vmap(lambda a, b: inner(Pile(a, q.lengths), Pile(b, k.lengths))))(qd, kd))
    for j, (sq, sk) in enumerate(((1, 1), (2, -1))):
        want = [float(f(sq * a, sk * b)) for a, b in zip(QS, KS)]
        np.testing.assert_allclose(got[j], want, rtol=1e-5, atol=1e-4)


def test_concatenations_of_equal_sums_share_a_size() -> None:
    """``[s; kk]`` and ``[kk; s]`` have the same ragged size ``n + m``: they add."""

    def f(q: Any, k: Any) -> Any:
        s, kk = _scores(q, k), k @ k.T
        return (pnp.concatenate([s, kk], axis=0) + pnp.concatenate([kk, s], axis=0)).sum(1)

    got = vmap(f, in_axes=(P, P), out_axes=P)(Pile.from_arrays(QS), Pile.from_arrays(KS))
    for g, a, b in zip(got.unpack(), QS, KS):
        np.testing.assert_allclose(np.asarray(g), np.asarray(f(a, b)), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Refused


def test_a_static_window_an_element_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match=r"vmap over piles: slice takes the entries \[1, 2\) of the ragged axis 1, "
                                         r"which the elements of lengths \[1\] do not have"):
        vmap(lambda q, k: lax.slice(_scores(q, k), (0, 1), (q.shape[0], 2)).sum(), in_axes=(P, P))(
            Pile.from_arrays(QS), Pile.from_arrays(KS))
    with pytest.raises(ValueError, match=r"vmap over piles: dynamic_slice takes the entries \[0, 2\) of the ragged "
                                         r"axis 0, which the elements of lengths \[1\] do not have"):
        vmap(lambda q, k: lax.dynamic_slice_in_dim(_scores(q, k), 0, 2, axis=0).sum(), in_axes=(P, P))(
            Pile.from_arrays(QS), Pile.from_arrays(KS))


def test_concatenating_along_an_axis_whose_other_sizes_differ_is_refused() -> None:
    with pytest.raises(ValueError, match=r"concatenate: all the input array dimensions except for the concatenation "
                                         r"axis must match exactly, but along dimension 1, the array at index 0 has "
                                         r"size _pile\d+ and the array at index 1 has size _pile\d+"):
        vmap(lambda q, k: pnp.concatenate([_scores(q, k), _scores(k, q)], axis=0).sum(), in_axes=(P, P))(
            Pile.from_arrays(QS), Pile.from_arrays(KS))
