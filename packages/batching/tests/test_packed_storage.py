"""Piles stored packed: what they hold (the sum of the lengths, not
``B x max length``), their views and conversions, their errors, their
pytree, and ``vmap`` over them: the values enter as packed values (no padded
data made), results of their size leave packed, and everything equals the
padded pile's results.

(Every ``test_pile*`` module also runs with ``Pile.from_arrays`` storing
packed, under each layout: see conftest.py.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, pile_layout, vmap
from plait_batching.storage import pile_storage
from plait_core import eval_jaxpr, make_jaxpr, nn
from plait_core.tree_util import tree_flatten, tree_structure, tree_unflatten

# The programs and contents of whole piles: the piles these tests build keep their lengths values (no plan).
pytestmark = pytest.mark.whole_pile(reason="asserts on how whole piles are stored and entered")

D = 4
RNG = np.random.default_rng(11)
W = RNG.standard_normal((D, 6)).astype(np.float32)


def elements(lengths: list[int], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, D)).astype(np.float32) for n in lengths]


def dense(x: Any) -> Any:
    return nn.gelu(x @ W)


def attention(x: Any) -> Any:
    """Mixes positions along the ragged axis: runs on the padded data."""
    return nn.softmax(x @ x.T, axis=-1) @ x


def mapped(fun: Any, pile: Pile) -> Any:
    return vmap(fun, in_axes=pile_axis, out_axes=pile_axis)(pile)


def count(jaxpr: Any, prim: str) -> int:
    return sum(e.primitive.name == prim for e in jaxpr.jaxpr.eqns)


# -- what a packed pile holds ----------------------------------------------------------


def test_a_packed_pile_holds_the_sum_of_the_lengths() -> None:
    elems = elements([3, 100])
    padded = Pile.from_arrays(elems, storage="padded")
    packed = Pile.from_arrays(elems, storage="packed")
    assert np.shape(padded.data) == (2, 100, D)  # 200 rows
    assert packed.storage == "packed" and padded.storage == "padded"
    assert np.shape(packed.values) == (103, D) and packed.capacity == 103 and packed.max_length == 100
    np.testing.assert_array_equal(np.asarray(packed.values), np.concatenate(elems))
    assert np.asarray(packed.values).nbytes == 103 * D * 4
    # The padded view is the padded pile's data (zero padding).
    np.testing.assert_array_equal(np.asarray(packed.data), np.asarray(padded.data))
    # A result of a packed pile's size is stored packed, in as many rows.
    out = mapped(dense, packed)
    assert out.storage == "packed" and np.shape(out.values) == (103, 6)
    np.testing.assert_allclose(np.asarray(out.data), np.asarray(mapped(dense, padded).data), rtol=1e-5, atol=1e-6)


def test_reading_a_packed_pile() -> None:
    elems = elements([2, 0, 5])
    p = Pile.from_arrays(elems, storage="packed")
    assert len(p) == 3 and p.num_elements == 3 and p.dtype == np.float32 and p.ragged_axes == (0,)
    for got, want in zip(p.unpack(), elems):
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(p[-1]), elems[2])
    assert repr(p) == "Pile[3] of f32[≤5, 4] lengths [2 0 5] packed in 7 rows"
    with pytest.raises(IndexError, match="out of range for a pile of 3 elements"):
        p[3]


def test_a_packed_pile_along_another_axis() -> None:
    rng = np.random.default_rng(2)
    elems = [rng.standard_normal((3, n)).astype(np.float32) for n in (4, 1, 2)]
    p = Pile.from_arrays(elems, ragged_axis=1, storage="packed")
    assert np.shape(p.values) == (3, 7) and p.ragged_axis == 1
    np.testing.assert_array_equal(np.asarray(p.data), np.asarray(Pile.from_arrays(elems).data))
    out = mapped(lambda x: pnp.sin(x) * 2, p)
    assert out.storage == "packed"
    for got, e in zip(out.unpack(), elems):
        np.testing.assert_allclose(np.asarray(got), np.sin(e) * 2, rtol=1e-6)


def test_pile_packed_checks_its_parts() -> None:
    values = np.arange(12, dtype=np.float32).reshape(6, 2)
    p = Pile.packed(values, [2, 3])
    assert p.max_length == 3 and p.capacity == 6 and p.lengths.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(p[1]), values[2:5])
    assert Pile.packed(values, [2, 3], max_length=5).max_length == 5
    with pytest.raises(ValueError, match=r"capacity=6 is out of range: it must be at least the sum of the lengths \(7\)"):
        Pile.packed(values, [3, 4])
    with pytest.raises(ValueError, match=r"the length 4 of element 1 is out of range: the lengths must be in \[0, 3\]"):
        Pile.packed(values, [1, 4], max_length=3)
    with pytest.raises(ValueError, match="at most the number of elements times the padded size"):
        Pile.packed(values, [1, 1])
    with pytest.raises(TypeError, match="lengths must be integers"):
        Pile.packed(values, np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="lengths must be a vector"):
        Pile.packed(values, np.array([[1, 2]]))
    with pytest.raises(TypeError, match="max_length must be a non-negative int"):
        Pile.packed(values, [1, 2], max_length=-1)
    with pytest.raises(ValueError, match="values must have at least the ragged axis"):
        Pile.packed(np.float32(1), [1])


def test_several_ragged_axes_cannot_be_packed() -> None:
    mats = [np.ones((n, n), np.float32) for n in (2, 3)]
    why = "packed storage concatenates the elements' rows along their one ragged axis, but the ragged axes are"
    with pytest.raises(ValueError, match=f"Pile.from_arrays: {why} \\(0, 1\\)"):
        Pile.from_arrays(mats, storage="packed")
    with pytest.raises(ValueError, match=f"Pile.with_storage: {why}"):
        Pile.from_arrays(mats).with_storage("packed")
    with pytest.raises(ValueError, match=f"Pile.packed: {why}"):
        Pile.packed(np.ones((5, 5), np.float32), [2, 3], ragged_axis=(0, 1))
    # The test default (pile_storage) leaves such piles padded.
    with pile_storage("packed"):
        assert Pile.from_arrays(mats).storage == "padded"
        assert Pile.from_arrays(elements([1, 2])).storage == "packed"


def test_storage_names_are_checked() -> None:
    with pytest.raises(ValueError, match="storage must be None, 'padded' or 'packed', got 'ragged'"):
        Pile.from_arrays(elements([1, 2]), storage="ragged")
    with pytest.raises(ValueError, match="storage must be 'padded' or 'packed', got 'dense'"):
        Pile.from_arrays(elements([1, 2])).with_storage("dense")
    with pytest.raises(ValueError, match="pile_storage: storage must be 'padded' or 'packed', got 'x'"), pile_storage("x"):
        pass


def test_with_storage_converts_both_ways() -> None:
    elems = elements([4, 1, 3])
    padded = Pile.from_arrays(elems, storage="padded", layout="packed")
    packed = padded.with_storage("packed")
    assert packed.storage == "packed" and packed.capacity == 8 and packed.layout == "packed"
    np.testing.assert_array_equal(np.asarray(packed.values), np.concatenate(elems))
    np.testing.assert_array_equal(np.asarray(padded.values), np.concatenate(elems))  # made when read
    back = packed.with_storage("padded")
    assert back.storage == "padded" and back.layout == "packed"
    np.testing.assert_array_equal(np.asarray(back.data), np.asarray(padded.data))
    assert packed.with_storage("packed") is packed and padded.with_storage("padded") is padded
    roomy = packed.with_storage("packed", capacity=10)
    assert np.shape(roomy.values) == (10, D) and not np.asarray(roomy.values)[8:].any()
    np.testing.assert_array_equal(np.asarray(roomy.data), np.asarray(padded.data))
    with pytest.raises(ValueError, match=r"capacity=5 is out of range"):
        packed.with_storage("packed", capacity=5)
    with pytest.raises(TypeError, match="capacity applies to packed storage only"):
        packed.with_storage("padded", capacity=8)


def test_a_full_packed_pile() -> None:
    elems = elements([3, 3])
    p = Pile.from_arrays(elems, storage="packed")
    assert p.full and p.capacity == 6
    out = mapped(attention, p)
    assert out.storage == "packed" and out.full and np.shape(out.values) == (6, D)
    want = mapped(attention, Pile.from_arrays(elems, storage="padded"))
    np.testing.assert_allclose(np.asarray(out.data), np.asarray(want.data), rtol=1e-5, atol=1e-6)
    # It enters by a reshape: no gather in the program.
    jaxpr = make_jaxpr(lambda q: mapped(attention, q))(p)
    assert count(jaxpr, "bijective_gather") == 0 and count(jaxpr, "gather") == 0


# -- the pytree -----------------------------------------------------------------------


def test_the_leaves_of_a_packed_pile_are_values_and_lengths() -> None:
    p = Pile.from_arrays(elements([2, 5]), storage="packed")
    leaves, tree = tree_flatten(p)
    assert len(leaves) == 2 and leaves[0] is p.values and leaves[1] is p.lengths
    assert tree != tree_structure(p.with_storage("padded"))
    q = tree_unflatten(tree, [np.asarray(p.values) * 2, p.lengths])
    assert q.storage == "packed" and q.max_length == 5 and q.capacity == 7
    np.testing.assert_array_equal(np.asarray(q.data), 2 * np.asarray(p.data))
    # A packed pile of another capacity or max length is another structure (both are static).
    assert tree != tree_structure(p.with_storage("packed", capacity=8))
    assert tree != tree_structure(Pile.packed(p.values, p.lengths, max_length=6))


# -- vmap over packed piles -------------------------------------------------------------


@pytest.mark.parametrize("layout", ["packed", None, "padded"])
def test_vmap_equals_the_padded_pile(layout: str | None) -> None:
    elems = elements([3, 100, 9, 40])
    padded = Pile.from_arrays(elems, storage="padded", layout=layout)
    packed = Pile.from_arrays(elems, storage="packed", layout=layout)

    def layer(x: Any) -> Any:
        h = dense(x)
        return h + attention(h)

    got, want = mapped(layer, packed), mapped(layer, padded)
    assert got.storage == "packed" and want.storage == "padded" and got.layout == layout
    np.testing.assert_allclose(np.asarray(got.data), np.asarray(want.data), rtol=1e-5, atol=1e-5)
    # Staged (the lengths traced), the same.
    closed = make_jaxpr(lambda q: mapped(layer, q))(packed)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *tree_flatten(packed)[0])
    staged = tree_unflatten(tree_structure(got), outs)
    np.testing.assert_allclose(np.asarray(staged.data), np.asarray(want.data), rtol=1e-5, atol=1e-5)


def test_packed_values_enter_vmap_without_padding() -> None:
    """A dense layer over a packed pile computes on its 103 rows: no conversion, no padded data."""
    p = Pile.from_arrays(elements([3, 100]), storage="packed")
    for layout in ("packed", "auto"):
        with pile_layout(layout):
            closed = make_jaxpr(lambda q: mapped(dense, q))(p)
        assert [str(a.str_short()) for a in closed.in_avals] == ["f32[103,4]", "i32[2]"]
        assert [str(a.str_short()) for a in closed.out_avals] == ["f32[103,6]", "i32[2]"]
        assert count(closed, "bijective_gather") == 0
        assert all(100 not in e.outvars[0].aval.shape for e in closed.jaxpr.eqns)  # nothing at the max length
        assert [tuple(e.outvars[0].aval.shape) for e in closed.jaxpr.eqns if e.primitive.name == "dot_general"] == [
            (103, 6)
        ]


def test_the_padded_layout_unpacks_on_entry() -> None:
    p = Pile.from_arrays(elements([3, 10]), storage="packed", layout="padded")
    closed = make_jaxpr(lambda q: mapped(dense, q))(p)
    dots = [e.outvars[0].aval for e in closed.jaxpr.eqns if e.primitive.name == "dot_general"]
    assert [tuple(a.shape) for a in dots if a.dtype == np.float32] == [(2, 10, 6)]
    assert count(closed, "bijective_gather") == 2  # unpacked on entry, the result packed on leaving
    out = mapped(dense, p)
    for got, e in zip(out.unpack(), elements([3, 10])):
        np.testing.assert_allclose(np.asarray(got), np.asarray(dense(e)), rtol=1e-5, atol=1e-6)


def test_results_of_other_sizes_are_padded() -> None:
    """A result whose ragged size is not the packed pile's (``2 n``) is stored padded."""
    elems = elements([2, 3])
    p = Pile.from_arrays(elems, storage="packed")
    out = mapped(lambda x: pnp.concatenate([x, -x]), p)
    assert out.storage == "padded"
    for got, e in zip(out.unpack(), elems):
        np.testing.assert_array_equal(np.asarray(got), np.concatenate([e, -e]))
    summed = vmap(lambda x: x.sum(0), in_axes=pile_axis)(p)
    np.testing.assert_allclose(np.asarray(summed), np.stack([e.sum(0) for e in elems]), rtol=1e-6)


def test_rows_past_the_sum_never_reach_a_result() -> None:
    """A packed buffer's rows past the sum of the lengths may hold anything
    (here NaN): with traced lengths vmap zeroes them, with concrete ones it
    cuts them; results and their sums are those of the true rows."""
    elems = elements([2, 3])
    values = np.concatenate([*elems, np.full((3, D), np.nan, np.float32)])
    p = Pile.packed(values, [2, 3], max_length=4)
    assert p.capacity == 8
    want = mapped(dense, Pile.from_arrays(elems, pad_to=4, storage="padded"))

    def total(q: Pile) -> Any:
        return pnp.sum(vmap(lambda x: pnp.sum(dense(x), axis=0), in_axes=pile_axis)(q))

    for layout in ("packed", "padded", "auto"):
        with pile_layout(layout):
            got = mapped(dense, p)
            closed = make_jaxpr(lambda q: mapped(dense, q))(p)
            values, lengths = eval_jaxpr(closed.jaxpr, closed.consts, *tree_flatten(p)[0])
            staged = Pile.packed(values, lengths, max_length=4)
            closed_total = make_jaxpr(total)(p)
            staged_total = eval_jaxpr(closed_total.jaxpr, closed_total.consts, *tree_flatten(p)[0])[0]
        for out in (got, staged):
            np.testing.assert_allclose(np.asarray(out.data), np.asarray(want.data), rtol=1e-5, atol=1e-6)
        assert got.capacity == 5 and staged.capacity == 8  # concrete lengths: cut to their sum
        assert np.isfinite(np.asarray(staged.values)).all()  # traced: zeroed, so gelu(0 @ W) = 0 there
        assert np.isfinite(np.asarray(staged_total))
        np.testing.assert_allclose(np.asarray(staged_total), sum(np.asarray(dense(e)).sum() for e in elems), rtol=1e-5)


def test_static_lengths_of_a_packed_pile_compute_in_buckets() -> None:
    elems = elements([2, 30, 3, 28, 2])
    packed = Pile.from_arrays(elems, storage="packed", static_lengths=True)
    assert packed.static_lengths == (2, 30, 3, 28, 2)
    out = mapped(attention, packed)
    for got, e in zip(out.unpack(), elems):
        np.testing.assert_allclose(np.asarray(got), np.asarray(attention(e)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["auto", "packed", "padded"])
@pytest.mark.parametrize("lengths", [[0, 0], [0, 2], []])
def test_packed_piles_without_rows(layout: str, lengths: list[int]) -> None:
    """A capacity of 0 (every length 0, or no element): nothing to gather, zeros padded."""
    values = np.arange(sum(lengths) * D, dtype=np.float32).reshape(sum(lengths), D)
    p = Pile.packed(values, np.array(lengths, np.int32), max_length=3)
    with pile_layout(layout):
        doubled = mapped(lambda x: x * 2, p)
        cumulative = mapped(lambda x: pnp.cumsum(x, axis=0), p)
        sums = vmap(lambda x: x.sum(0), in_axes=pile_axis)(p)
        closed = make_jaxpr(lambda q: mapped(lambda x: x * 2, q))(p)
        staged = eval_jaxpr(closed.jaxpr, closed.consts, *tree_flatten(p)[0])
    assert doubled.storage == "packed" and np.shape(doubled.values) == (sum(lengths), D)
    np.testing.assert_array_equal(np.asarray(doubled.values), 2 * values)
    np.testing.assert_array_equal(np.asarray(staged[0])[: sum(lengths)], 2 * values)
    for got, e in zip(cumulative.unpack(), p.unpack()):
        np.testing.assert_array_equal(np.asarray(got), np.cumsum(np.asarray(e), axis=0))
    assert len(cumulative) == len(lengths) and cumulative.storage == "packed"
    np.testing.assert_array_equal(np.asarray(sums), np.asarray(p.data).sum(1))


def test_pad_to_fixes_the_capacity_of_a_packed_pile() -> None:
    """``pad_to`` promises one structure for piles of one padded size: packed,
    their capacity is ``B * pad_to`` unless a capacity is given."""
    a = Pile.from_arrays(elements([2, 6]), pad_to=8, storage="packed")
    b = Pile.from_arrays(elements([8, 1]), pad_to=8, storage="packed")
    assert a.capacity == b.capacity == 16 and tree_structure(a) == tree_structure(b)
    np.testing.assert_array_equal(np.asarray(a.values)[:8], np.concatenate(elements([2, 6])))
    assert not np.asarray(a.values)[8:].any()
    small = Pile.from_arrays(elements([2, 6]), pad_to=8, storage="packed", capacity=9)
    assert np.shape(small.values) == (9, D) and small.max_length == 8
