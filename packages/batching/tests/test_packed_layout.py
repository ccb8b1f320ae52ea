"""The packed layout of piles: what a pile records, which equations plait
packs (seen in the staged program), how the layout is chosen and forced,
and results equal to the padded layout's and to NumPy's per element.

(Every ``test_pile*`` module also runs under each layout: see conftest.py.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pile_checks import ragged_pile

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, pile_layout, vmap
from plait_batching import packed as packed_mod
from plait_batching.length_plan import LengthPlan
from plait_batching.pile import pile_static_lengths
from plait_core import eval_jaxpr, make_jaxpr, nn
from plait_core.tree_util import tree_flatten, tree_unflatten

# The programs of whole piles: the piles these tests build keep their lengths values (no plan of buckets).
pytestmark = pytest.mark.whole_pile(reason="asserts on the packed layout of whole piles")

D = 8
RNG = np.random.default_rng(3)
W1 = RNG.standard_normal((D, 16)).astype(np.float32)
W2 = RNG.standard_normal((16, D)).astype(np.float32)


def mlp(x: Any) -> Any:
    """A residual MLP with a layer norm: every operation treats rows independently."""
    h = nn.gelu(x @ W1) @ W2
    y = x + h
    mu = pnp.mean(y, axis=-1, keepdims=True)
    return (y - mu) / pnp.sqrt(pnp.var(y, axis=-1, keepdims=True) + 1e-5)


def np_mlp(x: np.ndarray) -> np.ndarray:
    h = x @ W1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
    y = x + h @ W2
    return (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-5)


def shapes_of(jaxpr: Any, prim: str) -> list[tuple[int, ...]]:
    """The result shapes of every ``prim`` equation of a staged program."""
    return [tuple(e.outvars[0].aval.shape) for e in jaxpr.jaxpr.eqns if e.primitive.name == prim]


def run(fun: Any, pile: Pile) -> Pile:
    out = vmap(fun, in_axes=pile_axis, out_axes=pile_axis)(pile)
    assert isinstance(out, Pile)
    return out


# -- what a pile records ------------------------------------------------------------


def test_from_arrays_records_the_sum_of_the_lengths() -> None:
    pile, _ = ragged_pile(RNG, [2, 7, 3], (D,))
    assert pile.capacity == 12 and pile.layout is None and pile.static_lengths is None
    assert Pile.from_arrays([np.ones((2, 3)), np.ones((5, 3))], pad_to=8).capacity is None
    with pile_static_lengths(None):  # the library's default: a plan of buckets, and no capacity
        planned, _ = ragged_pile(RNG, [2, 7, 3, 30, 28, 1], (D,))
        assert planned.capacity is None and planned.static_lengths == LengthPlan([(2, 30), (4, 8)])
        # pad_to or a capacity asks for one structure for every batch: no plan; a full pile needs none.
        assert Pile.from_arrays([np.ones((2, 3)), np.ones((5, 3))], pad_to=8).static_lengths is None
        assert Pile.from_arrays([np.ones((2, 3)), np.ones((5, 3))], capacity=9).static_lengths is None
        assert Pile.from_arrays([np.ones((5, 3)), np.ones((5, 3))]).static_lengths is None
    forced = Pile.from_arrays([np.ones((2, 3)), np.ones((5, 3))], layout="packed", capacity=9)
    assert (forced.layout, forced.capacity) == ("packed", 9)


def test_layout_and_capacity_are_static_structure() -> None:
    pile = Pile(np.zeros((2, 5, 3), np.float32), np.array([2, 5]), layout="padded", capacity=8)
    leaves, tree = tree_flatten(pile)
    assert len(leaves) == 2
    back = tree_unflatten(tree, leaves)
    assert (back.layout, back.capacity) == ("padded", 8)
    other = Pile(np.zeros((2, 5, 3), np.float32), np.array([2, 5]), layout="packed", capacity=8)
    assert tree_flatten(other)[1] != tree


def test_bad_layouts_and_capacities_are_refused() -> None:
    data, lengths = np.zeros((2, 5, 3), np.float32), np.array([2, 5])
    with pytest.raises(ValueError, match=r"Pile: layout must be None, 'packed' or 'padded', got 'jagged'"):
        Pile(data, lengths, layout="jagged")
    with pytest.raises(ValueError, match=r"Pile: capacity=6 is out of range: it must be at least the sum of the "
                                         r"lengths \(7\) and at most .* \(10\)"):  # fmt: skip
        Pile(data, lengths, capacity=6)
    with pytest.raises(ValueError, match=r"capacity=11 is out of range"):
        Pile(data, lengths, capacity=11)
    with pytest.raises(TypeError, match=r"Pile: capacity must be an int or None, got 7.0"):
        Pile(data, lengths, capacity=7.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Pile.from_arrays: capacity=1 is out of range"):
        Pile.from_arrays([np.ones((2, 3)), np.ones((5, 3))], capacity=1)
    bad = pile_layout("x")
    with pytest.raises(ValueError, match=r"pile_layout: layout must be 'auto', 'packed', 'padded' or None, got 'x'"):
        bad.__enter__()


def test_the_environment_variable_names_a_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAIT_PILE_LAYOUT", "packed")
    assert packed_mod._layout_from_environment() == "packed"
    monkeypatch.setenv("PLAIT_PILE_LAYOUT", "auto")
    assert packed_mod._layout_from_environment() is None
    monkeypatch.setenv("PLAIT_PILE_LAYOUT", "ragged")
    with pytest.raises(ValueError, match=r"PLAIT_PILE_LAYOUT must be 'auto', 'packed' or 'padded', got 'ragged'"):
        packed_mod._layout_from_environment()


# -- which layout the staged program uses ----------------------------------------------


def test_dense_layers_run_on_the_packed_rows() -> None:
    pile, elems = ragged_pile(RNG, [2, 7, 3], (D,))
    with pile_layout("auto"):
        jaxpr = make_jaxpr(lambda p: run(mlp, p))(pile)
    # 12 true rows instead of 3 x 7 padded ones: both matmuls, the gathers in and out.
    assert shapes_of(jaxpr, "dot_general").count((12, 16)) == 1
    assert shapes_of(jaxpr, "dot_general").count((12, D)) == 1
    assert shapes_of(jaxpr, "bijective_gather") == [(12, D), (3, 7, D)]
    out = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *tree_flatten(pile)[0])
    for got, want in zip(Pile(out[0], out[1]).unpack(), elems):
        np.testing.assert_allclose(np.asarray(got), np_mlp(want), rtol=1e-4, atol=1e-5)


def test_forced_padded_never_gathers() -> None:
    pile, _ = ragged_pile(RNG, [2, 7, 3], (D,))
    with pile_layout("padded"):
        jaxpr = make_jaxpr(lambda p: run(mlp, p))(pile)
    assert shapes_of(jaxpr, "bijective_gather") == []
    assert (3, 7, 16) in shapes_of(jaxpr, "dot_general")


def test_the_pile_layout_wins_over_the_default() -> None:
    pile, elems = ragged_pile(RNG, [2, 7, 3], (D,))
    forced = Pile(pile.data, pile.lengths, layout="packed", capacity=12)
    with pile_layout("padded"):
        jaxpr = make_jaxpr(lambda p: run(mlp, p))(forced)
        got = run(mlp, forced)
    assert (12, 16) in shapes_of(jaxpr, "dot_general")
    assert got.layout == "packed"
    for g, want in zip(got.unpack(), elems):
        np.testing.assert_allclose(np.asarray(g), np_mlp(want), rtol=1e-4, atol=1e-5)


def test_equal_lengths_stay_padded_by_default() -> None:
    """Packing saves nothing when every element has the largest length."""
    pile, _ = ragged_pile(RNG, [5, 5, 5], (D,))
    jaxpr = make_jaxpr(lambda p: run(mlp, p))(pile)
    assert shapes_of(jaxpr, "bijective_gather") == []


def test_nearly_full_piles_stay_padded_by_default() -> None:
    pile, _ = ragged_pile(RNG, [10, 10, 9], (D,))  # 29 of 30 rows
    jaxpr = make_jaxpr(lambda p: run(mlp, p))(pile)
    assert shapes_of(jaxpr, "bijective_gather") == []
    with pile_layout("packed"):
        assert (29, 16) in shapes_of(make_jaxpr(lambda p: run(mlp, p))(pile), "dot_general")


def test_traced_lengths_pack_to_the_given_capacity() -> None:
    """Under a staging transformation the lengths are traced: the capacity
    (static) sizes the packed rows and the indices come from the lengths."""
    pile, elems = ragged_pile(RNG, [2, 7, 3], (D,))
    data, lengths = np.asarray(pile.data), np.asarray(pile.lengths)

    def f(data: Any, lengths: Any) -> Any:
        out = run(mlp, Pile(data, lengths, capacity=14))
        return out.data, out.lengths

    jaxpr = make_jaxpr(f)(data, lengths)
    assert (14, 16) in shapes_of(jaxpr, "dot_general")
    got_data, got_lengths = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, data, lengths)
    for g, want in zip(Pile(got_data, got_lengths).unpack(), elems):
        np.testing.assert_allclose(np.asarray(g), np_mlp(want), rtol=1e-4, atol=1e-5)
    # Without a capacity, traced lengths give B x N rows: nothing to save, so nothing is packed.
    plain = make_jaxpr(lambda d, n: run(mlp, Pile(d, n)).data)(data, lengths)
    assert shapes_of(plain, "bijective_gather") == []


def test_ops_that_mix_positions_read_the_padded_layout() -> None:
    """Attention mixes positions: its scores are padded blocks; the dense
    layers around it are packed, with one conversion each way."""
    pile, elems = ragged_pile(RNG, [2, 7, 3], (D,))

    def attend(x: Any) -> Any:
        q = x @ W1[:, :D]
        att = nn.softmax(q @ q.T, axis=-1)
        return (att @ x) @ W2[:D]

    jaxpr = make_jaxpr(lambda p: run(attend, p))(pile)
    dots = shapes_of(jaxpr, "dot_general")
    assert (12, D) in dots and (3, 7, 7) in dots
    got = run(attend, pile)
    for g, x in zip(got.unpack(), elems):
        q = x @ W1[:, :D]
        s = q @ q.T
        e = np.exp(s - s.max(-1, keepdims=True))
        np.testing.assert_allclose(np.asarray(g), (e / e.sum(-1, keepdims=True)) @ x @ W2[:D], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layout", ["auto", "packed", "padded"])
def test_layouts_give_identical_results(layout: str) -> None:
    pile, elems = ragged_pile(RNG, [1, 9, 4, 0, 6], (D,))
    with pile_layout(layout):
        got = run(lambda x: mlp(x) * pnp.sum(x, axis=0), pile)
        pooled = vmap(lambda x: pnp.max(mlp(x), axis=-1).sum(0), in_axes=pile_axis)(pile)
    for g, x in zip(got.unpack(), elems):
        np.testing.assert_allclose(np.asarray(g), np_mlp(x) * x.sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(pooled), [np_mlp(x).max(-1).sum(0) for x in elems], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(got.data)[3], 0)  # an empty element: all padding, zero
