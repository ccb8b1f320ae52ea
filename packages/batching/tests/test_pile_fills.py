"""Padding fills are tracked per ragged value: a fill the value already has is
skipped, and the filled data replaces the value's for every later use (its
padding is unspecified), with results equal to a loop over the elements —
whatever the padding of the pile held."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, pile_layout, vmap
from plait_core import make_jaxpr, nn

LENGTHS = (3, 5, 1)


def _pile(seed: int = 0, garbage: float = np.nan) -> Pile:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, 4)).astype(np.float32) for n in LENGTHS]
    pile = Pile.from_arrays(arrays)
    data = np.asarray(pile.data).copy()
    for i, n in enumerate(LENGTHS):
        data[i, n:] = garbage  # padding the computation must never read
    return Pile(data, np.asarray(pile.lengths))


def _selects(fun: Any, *args: Any) -> int:
    """The fills (selects) of the padded layout's program (packed values have no padding to fill), the
    piles mapped whole (without static lengths, so not in buckets)."""
    args = tuple(Pile(a.data, a.lengths, a.ragged_axis, static_lengths=False) if isinstance(a, Pile) else a
                 for a in args)  # fmt: skip
    with pile_layout("padded"):
        return sum(e.primitive.name == "select_n" for e in make_jaxpr(fun)(*args).jaxpr.eqns)


def test_a_sum_after_entering_skips_the_fill() -> None:
    pile = _pile()
    f = vmap(lambda x: x.sum(0), in_axes=pile_axis)
    assert _selects(f, pile) == 1  # the zero fill on entering only
    want = [a.sum(0) for a in pile.unpack()]
    np.testing.assert_allclose(np.asarray(f(pile)), np.stack(want), rtol=1e-6)


def test_a_second_reduction_with_the_same_identity_reuses_the_fill() -> None:
    pile = _pile(1)
    f = vmap(lambda x: (x.sum(0), (x * 2).sum(0) + x.sum(0), x.prod(0)), in_axes=pile_axis)
    # enter (0; both sums of x reuse it), the sum of x * 2 (0), prod (1)
    assert _selects(f, pile) == 3
    got = f(pile)
    for i, a in enumerate(pile.unpack()):
        np.testing.assert_allclose(np.asarray(got[0])[i], a.sum(0), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(got[1])[i], 3 * a.sum(0), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(got[2])[i], a.prod(0), rtol=1e-5)


def test_non_finite_fills_are_not_recorded() -> None:
    pile = _pile(1)
    f = vmap(lambda x: (x.max(0), pnp.exp(x).max(0), x.max(0) - x.min(0)), in_axes=pile_axis)
    # enter (0), max (-inf), exp(x).max (-inf on a new value), min (+inf); max again reuses the -inf
    # fill, kept as the value's alternative data (plait_batching.fill_facts), never recorded as its data:
    # the padding x reads stays finite
    assert _selects(f, pile) == 4
    got = f(pile)
    for i, a in enumerate(pile.unpack()):
        np.testing.assert_allclose(np.asarray(got[0])[i], a.max(0), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(got[1])[i], np.exp(a).max(0), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(got[2])[i], a.max(0) - a.min(0), rtol=1e-6)


def test_softmax_reads_the_filled_scores() -> None:
    """``e / sum(e)`` reads ``e`` with its padding at 0 (the fill of the sum),
    and the results, a later sum of the scores included, are the loop's."""
    pile = _pile(2)

    def f(x: Any) -> Any:
        s = x @ x.T
        att = nn.softmax(s, axis=-1)
        return att @ x, s.sum(1)  # s's padding now -inf along axis 1: the sum refills it with 0

    out, scores = vmap(f, in_axes=pile_axis, out_axes=pile_axis)(pile)
    for a, o, s in zip(pile.unpack(), out.unpack(), scores.unpack()):
        ws = a @ a.T
        w = np.exp(ws - ws.max(-1, keepdims=True))
        np.testing.assert_allclose(np.asarray(o), (w / w.sum(-1, keepdims=True)) @ a, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(s), ws.sum(1), rtol=1e-5, atol=1e-5)


def test_fills_along_two_ragged_axes() -> None:
    """An ``n x n`` value summed over one axis, multiplied over the other, then
    summed again: each reduction sees its identity in the padding it reads."""
    pile = _pile(3, garbage=0.0)

    def f(x: Any) -> Any:
        s = x @ x.T
        return s.sum(0), s.prod(1), s.sum(0) * 2

    a0, p1, a2 = vmap(f, in_axes=pile_axis, out_axes=pile_axis)(pile)
    for a, u, v, w in zip(pile.unpack(), a0.unpack(), p1.unpack(), a2.unpack()):
        s = a @ a.T
        np.testing.assert_allclose(np.asarray(u), s.sum(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(v), s.prod(1), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(np.asarray(w), 2 * s.sum(0), rtol=1e-5, atol=1e-6)


def test_one_value_as_both_operands_of_a_contraction_is_filled_for_both() -> None:
    # found by the fuzzer (seed 747000294): einsum('ij,ij->i', e, e) fills e's padding once, through the lhs,
    # and recorded it; the rhs, the same value, then skipped its fill and read the old padding (2 / 0 = inf
    # there, so inf * 0 = NaN in every element with padding)
    pile = _pile(2, garbage=0.0)

    def f(x: Any) -> Any:
        e = (2 / x).T
        return pnp.einsum("ij,ij->i", e, e)

    got = vmap(f, in_axes=pile_axis)(pile)
    for i, a in enumerate(pile.unpack()):
        np.testing.assert_allclose(np.asarray(got)[i], np.sum((2 / a) ** 2, axis=0), rtol=1e-5)
