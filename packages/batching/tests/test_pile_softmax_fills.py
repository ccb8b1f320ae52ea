"""A softmax over a ragged axis fills its scores once (``-inf``, in the rows
of logical queries), its exponentials read them and its weights sum as zero
in their padding (``plait_batching.fill_facts``), so attention's contraction
of the weights with the values fills only the values; a maximum leaves the
rows of the padding finite, so an element of length 0 gives finite padding
(its derivative was NaN: tests/test_pile_softmax_fills_grad.py).  Results
equal a loop over the elements."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, pile_layout, vmap
from plait_core import make_jaxpr, nn


def _pile(lengths: tuple[int, ...], seed: int = 0, garbage: float = np.nan, width: int = 4) -> Pile:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, width)).astype(np.float32) for n in lengths]
    pile = Pile.from_arrays(arrays)
    data = np.asarray(pile.data).copy()
    for i, n in enumerate(lengths):
        data[i, n:] = garbage  # padding the computation must never read
    # the default (static lengths in the conftest's buckets mode, so the values go through buckets); the
    # assertions on programs read a pile mapped whole (_whole)
    return Pile(data, np.asarray(pile.lengths))


def _whole(pile: Pile) -> Pile:
    """``pile`` mapped as a whole (without static lengths, so not in buckets):
    the assertions on the program read the whole pile's."""
    return Pile(pile.data, pile.lengths, pile.ragged_axis, static_lengths=False)


def _square_selects(fun: Any, *args: Any) -> list[str]:
    """The selects of the padded layout's program whose result is ``(B, N, N)`` (fills of scores or weights),
    each named by what it fills: the primitive that made its data operand (piles mapped whole)."""
    args = tuple(_whole(a) if isinstance(a, Pile) else a for a in args)
    with pile_layout("padded"):
        jaxpr = make_jaxpr(fun)(*args).jaxpr
    made = {id(v): e.primitive.name for e in jaxpr.eqns for v in e.outvars}
    out = []
    for e in jaxpr.eqns:
        shape = e.outvars[0].aval.shape
        if e.primitive.name == "select_n" and len(shape) == 3 and shape[1] == shape[2] and shape[1] > 1:
            out.append(made.get(id(e.invars[2]), "input"))
    return out


def _weights_maker(fun: Any, *args: Any) -> str:
    """The primitive that made the left operand of the last ``dot_general`` (a
    contraction's weights) in the padded layout's program of ``fun``."""
    with pile_layout("padded"):
        jaxpr = make_jaxpr(fun)(*args).jaxpr
    made = {id(v): e.primitive.name for e in jaxpr.eqns for v in e.outvars}
    weights = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"][-1].invars[0]
    return made.get(id(weights), "input")


def _attention(x: Any) -> Any:
    return nn.softmax(x @ x.T / 2.0, axis=-1) @ x


def _dense_attention(a: np.ndarray) -> np.ndarray:
    s = a @ a.T / 2.0
    w = np.exp(s - s.max(-1, keepdims=True)) if a.shape[0] else s
    return (w / w.sum(-1, keepdims=True)) @ a if a.shape[0] else np.zeros_like(a)


def test_attention_fills_the_scores_once() -> None:
    pile = _pile((3, 5, 1))
    f = vmap(_attention, in_axes=pile_axis, out_axes=pile_axis)
    # -inf before the maximum (of the scaled scores, made by a div), in the rows of the logical queries; the
    # exponentials read those filled scores, so their sum and the weights e / sum(e) need no fill (before the
    # change: 3 fills of n x n values, the scores, the exponentials and the weights)
    assert _square_selects(f, pile) == ["div"]
    with pile_layout("padded"):
        jaxpr = make_jaxpr(f)(_whole(pile)).jaxpr
    made = {id(v): e for e in jaxpr.eqns for v in e.outvars}
    (exp,) = [e for e in jaxpr.eqns if e.primitive.name == "exp"]
    shifted = made[id(exp.invars[0])]
    assert shifted.primitive.name == "sub" and made[id(shifted.invars[0])].primitive.name == "select_n"
    for a, o in zip(pile.unpack(), f(pile).unpack()):
        np.testing.assert_allclose(np.asarray(o), _dense_attention(a), rtol=1e-5, atol=1e-6)



def test_cross_attention_keeps_the_fill_of_the_weights() -> None:
    """``n x m`` weights: an element with no keys has logical rows that are
    empty along the keys, whose weights are 0 / 0; they are filled before the
    contraction, which gives the loop's zeros."""
    queries, keys = _pile((2, 3, 4), seed=3), _pile((3, 0, 2), seed=4)

    def f(q: Any, k: Any) -> Any:
        return nn.softmax(q @ k.T, axis=-1) @ k

    g = vmap(f, in_axes=(pile_axis, pile_axis), out_axes=pile_axis)
    assert _weights_maker(g, queries, keys) == "select_n"  # the weights are filled
    for qa, ka, o in zip(queries.unpack(), keys.unpack(), g(queries, keys).unpack()):
        if ka.shape[0]:
            s = qa @ ka.T
            e = np.exp(s - s.max(-1, keepdims=True))
            want = (e / e.sum(-1, keepdims=True)) @ ka
        else:
            want = np.zeros((qa.shape[0], ka.shape[1]), np.float32)
        np.testing.assert_allclose(np.asarray(o), want, rtol=1e-5, atol=1e-6)


def test_a_divisor_that_varies_along_the_axis_keeps_the_fill() -> None:
    """``e / e`` is not a softmax's weights: its padding is 0 / 0 in general,
    so the contraction fills it."""
    pile = _pile((3, 5, 2), seed=5, garbage=0.0)

    def f(x: Any) -> Any:
        e = pnp.exp(x @ x.T)
        return (e / (e + 1.0)) @ x

    g = vmap(f, in_axes=pile_axis, out_axes=pile_axis)
    assert _weights_maker(g, _whole(pile)) == "select_n"
    for a, o in zip(pile.unpack(), g(pile).unpack()):
        e = np.exp(a @ a.T)
        np.testing.assert_allclose(np.asarray(o), (e / (e + 1.0)) @ a, rtol=1e-5, atol=1e-5)


def test_a_divisor_without_known_padding_keeps_the_fill() -> None:
    """``e / c`` with ``c`` broadcast along the keys but not a reduction's
    result (its padding rows are not known to be nonzero): filled."""
    pile = _pile((3, 5, 2), seed=6, garbage=0.0)

    def f(x: Any) -> Any:
        e = nn.relu(x @ x.T)
        c = x[:, :1] ** 2 + 1.0  # n x 1, broadcast along the keys
        return (e.sum(1, keepdims=True) * 0 + e / c) @ x

    g = vmap(f, in_axes=pile_axis, out_axes=pile_axis)
    assert _weights_maker(g, _whole(pile)) == "select_n"
    for a, o in zip(pile.unpack(), g(pile).unpack()):
        e = np.maximum(a @ a.T, 0)
        want = (e.sum(1, keepdims=True) * 0 + e / (a[:, :1] ** 2 + 1.0)) @ a
        np.testing.assert_allclose(np.asarray(o), want, rtol=1e-5, atol=1e-5)


def test_a_softmax_over_a_vector_keeps_its_fills() -> None:
    """One ragged axis: a logical row (the whole vector) may be empty, so the
    exponentials do not read the ``-inf`` scores (0 fill before the sum, and
    before the contraction), and an element of length 0 gives the loop's zeros."""
    pile = _pile((3, 0, 4), seed=7, garbage=0.0)

    def f(x: Any) -> Any:
        return nn.softmax(x[:, 0], axis=0) @ x

    g = vmap(f, in_axes=pile_axis)
    with pile_layout("padded"):
        jaxpr = make_jaxpr(g)(_whole(pile)).jaxpr
    made = {id(v): e for e in jaxpr.eqns for v in e.outvars}
    (exp,) = [e for e in jaxpr.eqns if e.primitive.name == "exp"]
    assert made[id(made[id(exp.invars[0])].invars[0])].primitive.name != "select_n"  # exp(x - max), x unfilled
    weights = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"][-1].invars[0]
    assert made[id(weights)].primitive.name == "select_n"
    got = np.asarray(g(pile))
    for i, a in enumerate(pile.unpack()):
        if a.shape[0]:
            e = np.exp(a[:, 0] - a[:, 0].max())
            want = (e / e.sum()) @ a
        else:
            want = np.zeros(a.shape[1], np.float32)
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-6)


def test_a_maximum_used_twice_and_other_uses_of_the_scores() -> None:
    """The scores filled for the maximum are that value's alternative data,
    never its data: a later sum and product of the scores read finite padding
    filled for them, and a second maximum reuses the fill."""
    pile = _pile((4, 2, 3), seed=8, garbage=0.0, width=5)

    def f(x: Any) -> Any:
        s = x @ x.T
        w = nn.softmax(s, axis=-1)
        return w @ x, s.max(1) + s.max(1), (s * 2.0).sum(1), s.prod(1)

    g = vmap(f, in_axes=pile_axis, out_axes=pile_axis)
    # -inf for the three maxima of s (one fill), 0 for the sum of s * 2, 1 for the product of s
    assert _square_selects(g, pile) == ["dot_general", "mul", "dot_general"]
    out = g(pile)
    for i, a in enumerate(pile.unpack()):
        s = a @ a.T
        e = np.exp(s - s.max(-1, keepdims=True))
        wants = ((e / e.sum(-1, keepdims=True)) @ a, 2 * s.max(1), (2 * s).sum(1), s.prod(1))
        for got, want in zip(out, wants):
            np.testing.assert_allclose(np.asarray(got.unpack()[i]), want, rtol=1e-5, atol=1e-5)


def test_other_rules_of_a_value_with_a_maximum_s_fill() -> None:
    """A value whose maximum was taken (so it holds the maximum's fill as
    alternative data) goes on through other rules of core's padded ones
    (``rev``, ``cumsum``, ``argmax``), which read its own data."""
    pile = _pile((3, 5, 1), seed=9, garbage=0.0)

    def f(x: Any) -> Any:
        return x.max(0), pnp.cumsum(x[::-1], axis=0), pnp.argmax(x, axis=0), x.max(0) - x.min(0)

    out = vmap(f, in_axes=pile_axis, out_axes=pile_axis)(pile)
    for i, a in enumerate(pile.unpack()):
        wants = (a.max(0), np.cumsum(a[::-1], axis=0), np.argmax(a, axis=0), a.max(0) - a.min(0))
        for got, want in zip(out, wants):
            np.testing.assert_allclose(np.asarray(got.unpack()[i] if isinstance(got, Pile) else got[i]), want,
                                       rtol=1e-6)  # fmt: skip
