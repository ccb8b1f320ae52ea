"""The Pile type: building, reading, printing, pytrees, and its errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
from plait_batching import Pile, pile_axis
from plait_core.tree_util import tree_flatten, tree_map, tree_unflatten


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_from_arrays_and_unpack(dtype: object, axis: int) -> None:
    rng = np.random.default_rng(0)
    lengths = [4, 1, 3]
    ax = axis % 2
    elems = []
    for n in lengths:
        shape = [2, 2]
        shape[ax] = n
        elems.append((rng.uniform(-2, 2, shape) > 0).astype(dtype) if dtype == np.bool_ else rng.uniform(-2, 2, shape).astype(dtype))
    p = Pile.from_arrays(elems, ragged_axis=axis)
    assert p.ragged_axis == ax
    assert len(p) == 3 and p.num_elements == 3 and p.max_length == 4
    assert np.asarray(p.lengths).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(p.lengths), lengths)
    expected_shape = [3, 2, 2]
    expected_shape[1 + ax] = 4
    assert np.asarray(p.data).shape == tuple(expected_shape)
    assert np.asarray(p.data).dtype == np.dtype(dtype)
    for i, e in enumerate(elems):
        np.testing.assert_array_equal(np.asarray(p[i]), e)
        np.testing.assert_array_equal(np.asarray(p[i - 3]), e)
    for got, e in zip(p.unpack(), elems):
        np.testing.assert_array_equal(np.asarray(got), e)
    # the padding is zero
    for i, n in enumerate(lengths):
        pad = np.take(np.asarray(p.data)[i], np.arange(n, 4), axis=ax)
        assert not pad.astype(bool).any()


def test_ragged_axis_inferred_and_equal_shapes() -> None:
    a, b = np.ones((2, 3), np.float32), np.ones((2, 5), np.float32)
    assert Pile.from_arrays([a, b]).ragged_axis == 1
    same = Pile.from_arrays([a, a])
    assert same.ragged_axis == 0
    np.testing.assert_array_equal(np.asarray(same.lengths), [2, 2])
    assert Pile.from_arrays([a, a], ragged_axis=1).ragged_axis == 1


def test_from_arrays_dtype_and_pad_to() -> None:
    p = Pile.from_arrays([np.arange(3), np.arange(2.0)], pad_to=6)
    assert np.asarray(p.data).dtype == np.float32  # float64 canonicalised with x64 off
    assert p.max_length == 6
    np.testing.assert_array_equal(np.asarray(p.data)[0], [0, 1, 2, 0, 0, 0])
    q = Pile.from_arrays([np.arange(3), np.arange(2)], dtype=np.int8)
    assert np.asarray(q.data).dtype == np.int8


def test_repr(layout_of_piles: str) -> None:
    # Piles carry static lengths in the buckets mode, a plan of buckets in the plan mode and by default (under
    # the automatic layout), neither under a forced layout.
    plan = layout_of_piles in ("plan", "auto", "stored")
    static = " (static)" if layout_of_piles == "buckets" else " (plan 3 ≤16)" if plan else ""
    planned = " (static)" if layout_of_piles == "buckets" else " (plan 2 ≤3)" if plan else ""
    p = Pile.from_arrays(
        [np.ones((16, 8), np.float32), np.ones((11, 8), np.float32), np.ones((13, 8), np.float32)], storage="padded"
    )
    assert repr(p) == f"Pile[3] of f32[≤16, 8] lengths [16 11 13]{static}"
    q = Pile.from_arrays([np.ones((2, 3), np.int32), np.ones((2, 1), np.int32)], storage="padded")
    assert repr(q) == f"Pile[2] of i32[2, ≤3] lengths [3 1]{planned}"


def test_constructor_keeps_parts() -> None:
    data = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    p = Pile(data, np.array([3, 1], np.int64), ragged_axis=-2)
    assert p.ragged_axis == 0 and p.data is data
    assert np.asarray(p.lengths).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(p[1]), data[1, :1])
    p2 = Pile(data, [2, 2], 1)
    np.testing.assert_array_equal(np.asarray(p2[0]), data[0, :, :2])


def test_pytree(layout_of_piles: str) -> None:
    p = Pile.from_arrays([np.ones((3, 2), np.float32), np.ones((1, 2), np.float32)], storage="padded")
    leaves, tree = tree_flatten(p)
    assert len(leaves) == 2 and leaves[0] is p.data and leaves[1] is p.lengths
    back = tree_unflatten(tree, leaves)
    assert isinstance(back, Pile) and back.ragged_axis == p.ragged_axis
    if layout_of_piles in ("plan", "auto", "stored"):  # NumPy lengths rebuilt into a plan are checked against it
        with pytest.raises(ValueError, match=r"rebuilt with lengths \[6 2\] that do not fit its plan"):
            tree_map(lambda x: x * 2, p)
        p = Pile.from_arrays([np.ones((3, 2), np.float32), np.ones((1, 2), np.float32)], storage="padded",
                             static_lengths=False)  # fmt: skip
    doubled = tree_map(lambda x: x * 2, p)
    assert isinstance(doubled, Pile)
    np.testing.assert_array_equal(np.asarray(doubled.data), np.asarray(p.data) * 2)
    np.testing.assert_array_equal(np.asarray(doubled.lengths), [6, 2])
    # a pile crosses staging as its two leaves
    closed = pc.make_jaxpr(lambda q: q.data * 2)(p)
    assert len(closed.in_avals) == 2


def test_pile_axis_repr() -> None:
    assert repr(pile_axis) == "pile_axis"
    import pickle

    assert pickle.loads(pickle.dumps(pile_axis)) is pile_axis


# ---------------------------------------------------------------------------
# Errors


def test_constructor_errors() -> None:
    data = np.zeros((2, 3, 2), np.float32)
    with pytest.raises(ValueError, match=r"Pile: data must have a batch axis and at least one element axis, got data of shape \(2,\)"):
        Pile(np.zeros(2, np.float32), [1, 1])
    with pytest.raises(TypeError, match="Pile: lengths must be integers, got lengths of dtype float32"):
        Pile(data, np.array([1.0, 2.0], np.float32))
    with pytest.raises(ValueError, match=r"lengths must be a vector with one length per element \(2 elements"):
        Pile(data, np.array([1, 2, 3], np.int32))
    with pytest.raises(ValueError, match=r"the length 4 of element 1 is out of range: the lengths must be in \[0, 3\]"):
        Pile(data, np.array([1, 4], np.int32))
    with pytest.raises(ValueError, match=r"the length -1 of element 0 is out of range"):
        Pile(data, np.array([-1, 2], np.int32))
    with pytest.raises(ValueError, match=r"ragged_axis=2 is out of range for elements of rank 2"):
        Pile(data, [1, 1], 2)
    with pytest.raises(TypeError, match=r"Pile: ragged_axis must be an int or a non-empty sequence of ints, got 0\.5"):
        Pile(data, [1, 1], 0.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Pile: data must be an array, got a value of type str"):
        Pile("abc", [1, 1])


def test_from_arrays_errors() -> None:
    with pytest.raises(ValueError, match=r"Pile\.from_arrays needs a non-empty list of arrays"):
        Pile.from_arrays([])
    with pytest.raises(ValueError, match=r"the arrays must have the same rank, got shapes \(2,\), \(2, 1\)"):
        Pile.from_arrays([np.ones(2), np.ones((2, 1))])
    with pytest.raises(ValueError, match=r"the elements must have at least one axis \(got scalars\)"):
        Pile.from_arrays([np.float32(1), np.float32(2)])
    with pytest.raises(ValueError, match=r"the arrays differ along the axes \[0, 1\].*one axis only"):
        Pile.from_arrays([np.ones((2, 3)), np.ones((3, 2))])
    with pytest.raises(ValueError, match=r"differ along the axes \[1\] .*which are not among the ragged axes \[0\]"):
        Pile.from_arrays([np.ones((2, 3)), np.ones((2, 2))], ragged_axis=0)
    with pytest.raises(ValueError, match="pad_to=2 is smaller than the largest length 3"):
        Pile.from_arrays([np.ones(3), np.ones(1)], pad_to=2)
    with pytest.raises(ValueError, match=r"ragged_axis=1 is out of range for elements of rank 1 \(arrays\): it must be in \[-1, 1\)"):
        Pile.from_arrays([np.ones(3), np.ones(1)], ragged_axis=1)


def test_getitem_errors() -> None:
    p = Pile.from_arrays([np.ones(3, np.float32), np.ones(1, np.float32)])
    with pytest.raises(TypeError, match="Pile indices must be integers, got str"):
        p["a"]  # type: ignore[index]
    with pytest.raises(IndexError, match="Pile index 2 is out of range for a pile of 2 elements"):
        p[2]
    with pytest.raises(TypeError, match="reading element slices needs concrete lengths, but the lengths are traced"):
        pc.make_jaxpr(lambda q: q[0])(p)


def test_tree_map_that_breaks_the_lengths_is_an_error() -> None:
    import ml_dtypes

    from plait_core.tree_util import tree_map

    pile = Pile.from_arrays([np.ones(2, np.float32), np.ones(3, np.float32)])
    with pytest.raises(TypeError, match=r"Pile: rebuilt with lengths of dtype float(32|64); .*map over pile.data"):
        tree_map(lambda x: x * 2.0, pile)
    with pytest.raises(TypeError, match=r"lengths of dtype bfloat16"):
        tree_map(lambda x: np.asarray(x).astype(ml_dtypes.bfloat16), pile)
    kept = tree_map(lambda x: x, pile)  # an identity map (and integer arithmetic) rebuilds as given
    np.testing.assert_array_equal(np.asarray(kept.lengths), [2, 3])
