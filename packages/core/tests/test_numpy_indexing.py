"""plait_core.numpy indexing: x[idx], x.at[idx].*, take, take_along_axis, nonzero.

Index expressions are drawn by hypothesis (ints, slices with any step, None,
Ellipsis, integer arrays, boolean masks, in any mix) and compared with NumPy,
both eagerly and with the index arrays traced through make_jaxpr.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_numpy_util import F32, I32, check, check_staged, sample

import plait_core
import plait_core.numpy as pnp
from plait_core.errors import ConcretizationTypeError
from plait_core.numpy.updates import IndexUpdateHelper


def at(x: Any) -> IndexUpdateHelper:
    """``x.at`` for NumPy inputs too (NumPy arrays have no ``.at``; tracers do)."""
    return IndexUpdateHelper(x)


# ---------------------------------------------------------------------------
# Drawing index expressions


@st.composite
def shapes(draw: Any) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))


@st.composite
def index_for(draw: Any, shape: tuple[int, ...], allow_masks: bool = True) -> tuple[Any, ...]:
    """An index for an array of ``shape`` mixing every kind of entry."""
    batch = draw(st.sampled_from([(), (2,), (3,), (2, 3)]))
    entries: list[Any] = []
    dim = 0
    while dim < len(shape):
        if draw(st.integers(0, 9)) == 9 and sum(e is None for e in entries) < 2:
            entries.append(None)
            continue
        d = shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "slice", "full", "array", "mask"] if allow_masks
                                    else ["int", "slice", "slice", "full", "array"]))
        if kind == "int":
            entries.append(draw(st.integers(-d, d - 1)))
        elif kind == "full":
            entries.append(slice(None))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-d - 2, d + 2))
            step = draw(st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))
            entries.append(slice(draw(bound), draw(bound), step))
        elif kind == "array":
            keep = draw(st.integers(0, len(batch)))
            arr_shape = tuple(b if draw(st.booleans()) else 1 for b in batch[len(batch) - keep:])
            values = draw(st.lists(st.integers(-d, d - 1), min_size=int(np.prod(arr_shape)),
                                   max_size=int(np.prod(arr_shape))))
            entries.append(np.array(values, np.int32).reshape(arr_shape))
        else:
            size = draw(st.integers(1, min(2, len(shape) - dim)))
            mask_shape = shape[dim:dim + size]
            bits = draw(st.lists(st.booleans(), min_size=int(np.prod(mask_shape)), max_size=int(np.prod(mask_shape))))
            entries.append(np.array(bits).reshape(mask_shape))
            dim += size
            continue
        dim += 1
    if draw(st.booleans()):
        entries = entries[:draw(st.integers(0, len(entries)))]
    elif entries and draw(st.integers(0, 3)) == 3:
        start = draw(st.integers(0, len(entries) - 1))
        stop = draw(st.integers(start, len(entries)))
        if not any(isinstance(e, np.ndarray) and e.dtype == bool for e in entries[start:stop]):
            entries = entries[:start] + [Ellipsis] + entries[stop:]
    return tuple(entries)


def _split_arrays(idx: tuple[Any, ...]) -> tuple[list[np.ndarray], list[int]]:
    """The integer index arrays of ``idx`` and their positions (to pass them traced)."""
    positions = [i for i, e in enumerate(idx) if isinstance(e, np.ndarray) and e.dtype != bool]
    return [idx[i] for i in positions], positions


def _with(idx: tuple[Any, ...], positions: list[int], arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    out = list(idx)
    for p, a in zip(positions, arrays):
        out[p] = a
    return tuple(out)


# ---------------------------------------------------------------------------
# Reading


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_getitem_matches_numpy(data: Any) -> None:
    shape = data.draw(shapes())
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    idx = data.draw(index_for(shape))
    try:
        expected = x[idx]
    except IndexError as e:
        with pytest.raises(IndexError, match=str(e).split(" with shapes")[0]):
            _getitem(x, idx)
        return
    got = _getitem(x, idx)
    np.testing.assert_array_equal(got, expected)
    assert got.shape == expected.shape
    arrays, positions = _split_arrays(idx)
    check(lambda v, *arrs: _getitem(v, _with(idx, positions, arrs)), x, *arrays, expected=expected, dtype=F32)


def _getitem(x: Any, idx: Any) -> Any:
    from plait_core.numpy.indexing import getitem

    return np.asarray(getitem(x, idx)) if isinstance(x, np.ndarray) else getitem(x, idx)


@pytest.mark.parametrize("idx", [
    0, -1, (1, 2), slice(None, None, -1), (slice(1, None), None), (Ellipsis, 0), (None, Ellipsis, None),
    (slice(None), slice(None, None, -2)), ([0, 2],), ([[0], [1]], [1, 2]), (slice(None), [2, 0, 1]),
    (0, slice(None), [1, 1]), (np.array([True, False, True]),), (np.array([[True, False, True, True]] * 3),),
    (slice(None), np.array([True, False, True, False])), (True,), (False,), (np.int32(2), np.int64(-1)),
    ([0, 1], None, [1, 2]), (Ellipsis, [0, 3]), (slice(5, 1, -2), [0]), ((0, 1),),
    (slice(None), [0, 1], Ellipsis, 0), (0, slice(None), [1, 2, 3]), ([1, 2], Ellipsis, [0, 4]),
], ids=repr)
def test_getitem_examples_with_operators(idx: Any) -> None:
    x = sample((3, 4, 5), F32)
    check_staged(lambda v: v[idx], x, expected=x[idx], dtype=F32)
    check(lambda v: at(v)[idx].get(), x, expected=x[idx])


def test_basic_indexing_lowers_to_slices() -> None:
    closed = plait_core.make_jaxpr(lambda v: v[1:, ::-2, 0])(np.zeros((3, 4, 5), np.float32))
    text = str(closed)
    assert "gather" not in text and "slice" in text and "rev" in text and "squeeze" in text


@pytest.mark.parametrize("i", [-5, -1, 0, 2, 7])
def test_traced_integer_index_uses_dynamic_slice_and_clamps(i: int) -> None:
    x = sample((4, 3), F32)
    closed = plait_core.make_jaxpr(lambda v, k: v[k, 1:])(x, np.int32(i))
    assert "dynamic_slice" in str(closed) and "gather" not in str(closed)
    j = min(max(i + 4 if i < 0 else i, 0), 3)
    check_staged(lambda v, k: v[k, 1:], x, np.int32(i), expected=x[j, 1:])
    check_staged(lambda v, k: v[:, k], x, np.int32(min(max(i, -3), 2)), expected=x[:, min(max(i, -3), 2)])


def test_traced_index_arrays_are_clamped_or_filled() -> None:
    x = np.arange(5, dtype=np.float32)
    idx = np.array([0, 4, 7, -1, -9], np.int32)
    check_staged(lambda v, i: v[i], x, idx, expected=x[np.clip(np.where(idx < 0, idx + 5, idx), 0, 4)])
    check(lambda v, i: at(v)[i].get(mode="fill", fill_value=-1.0), x, idx,
          expected=[0.0, 4.0, -1.0, 4.0, -1.0])
    check(lambda v, i: at(v)[i].get(mode="fill"), x, idx, expected=[0.0, 4.0, np.nan, 4.0, np.nan])
    check(lambda v: at(v)[9].get(mode="fill", fill_value=3.0), x, expected=3.0)


def test_getitem_on_symbolic_shapes() -> None:
    (n,) = plait_core.dims.symbolic_dims("n")
    spec = plait_core.ShapeDtypeStruct((n, 3), np.float32)
    closed = plait_core.make_jaxpr(lambda v: (v[0], v[-1], v[1:], v[:, 1], v[::-1], v[None, :, 2]))(spec)
    assert [a.shape for a in closed.out_avals] == [(3,), (3,), (n - 1, 3), (n,), (n, 3), (1, n)]
    with pytest.raises(TypeError, match=r"slicing the symbolic dimension n supports only unit steps"):
        plait_core.make_jaxpr(lambda v: v[::2])(spec)


def test_indexing_errors() -> None:
    x = sample((3, 4), F32)
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        _getitem(np.zeros((0, 2), np.float32), 0)
    with pytest.raises(IndexError, match="too many indices for array: array is 2-dimensional, but 3 were indexed"):
        _getitem(x, (0, 0, 0))
    with pytest.raises(IndexError, match=r"an index can only have a single ellipsis \('...'\)"):
        _getitem(x, (Ellipsis, Ellipsis))
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis is 3 "
                                         "but size of corresponding boolean axis is 2"):
        _getitem(x, np.array([True, False]))
    with pytest.raises(TypeError, match="index arrays must have an integer or boolean dtype, got float32"):
        _getitem(x, np.array([0.0, 1.0], np.float32))
    with pytest.raises(TypeError, match=r"index entries must be integers, slices, None, Ellipsis.*builtins.str"):
        _getitem(x, "a")
    with pytest.raises(TypeError, match=r"index entries must be integers.*builtins.float 1.5"):
        _getitem(x, 1.5)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        _getitem(x, slice(None, None, 0))
    with pytest.raises(ConcretizationTypeError, match="indexing with a boolean mask"):
        plait_core.make_jaxpr(lambda v: v[v > 0])(x)
    with pytest.raises(ConcretizationTypeError, match="slice start needs a concrete value"):
        plait_core.make_jaxpr(lambda v, k: v[k:])(x, np.int32(1))
    with pytest.raises(ValueError, match="indexing: unknown mode 'wrap'"):
        at(x)[0].get(mode="wrap")


def test_setitem_is_an_error_naming_at() -> None:
    with pytest.raises(TypeError, match=r"plait arrays are immutable: x\[idx\] = y is not supported; use x = "
                                        r"x.at\[idx\].set\(y\)"):
        def f(v: Any) -> Any:
            v[0] = 1.0
            return v

        plait_core.make_jaxpr(f)(np.zeros(3, np.float32))


# ---------------------------------------------------------------------------
# Updating


def _positions(shape: tuple[int, ...], idx: Any) -> np.ndarray:
    return np.arange(int(np.prod(shape))).reshape(shape)[idx]  # type: ignore[no-any-return]


def _expected_update(x: np.ndarray, idx: Any, values: Any, kind: str) -> np.ndarray:
    pos = _positions(x.shape, idx)
    vals = np.broadcast_to(values, pos.shape).ravel()
    flat = x.ravel().copy()
    if kind == "set":
        flat[pos.ravel()] = vals
    else:
        {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[kind].at(flat, pos.ravel(), vals)
    return flat.reshape(x.shape)


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from(["set", "add", "mul", "min", "max"]))
def test_at_updates_match_numpy(data: Any, kind: str) -> None:
    shape = data.draw(shapes())
    x = (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 7) - 3
    idx = data.draw(index_for(shape))
    try:
        pos = _positions(shape, idx)
    except IndexError:
        return
    if kind == "set" and len(np.unique(pos)) != pos.size:
        return  # repeated targets: which update wins is unspecified
    vshape = pos.shape[data.draw(st.integers(0, pos.ndim)):]
    values = (np.arange(int(np.prod(vshape)), dtype=np.float32).reshape(vshape) % 5) - 2
    expected = _expected_update(x, idx, values, kind)
    method = {"set": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}[kind]
    arrays, positions = _split_arrays(idx)

    def f(v: Any, u: Any, *arrs: Any) -> Any:
        return getattr(at(v)[_with(idx, positions, arrs)], method)(u)

    check(f, x, values, *arrays, expected=expected, dtype=F32)


def test_at_operations_examples() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([0, 2, 0])
    check(lambda v: at(v)[idx].add(1.0), x, expected=_expected_update(x, idx, np.float32(1), "add"))
    check(lambda v: at(v)[:, 1].set(-1), x, expected=_expected_update(x, (slice(None), 1),
                                                                                     np.float32(-1), "set"))
    check(lambda v: at(v)[1:, ::-1].subtract(np.arange(4.0)), x,
          expected=_expected_update(x, (slice(1, None), slice(None, None, -1)), -np.arange(4.0), "add"))
    check(lambda v: at(v)[0].divide(2.0), x, expected=_expected_update(x, 0, np.float32(0.5), "mul"))
    check(lambda v: at(v)[..., 0].power(2), x,
          expected=np.where(np.arange(4) == 0, x ** 2, x))
    check(lambda v: at(v)[2].apply(lambda r: r * 10), x,
          expected=np.where(np.arange(3)[:, None] == 2, x * 10, x))
    check(lambda v: at(v)[:].set(5.0), x, expected=np.full_like(x, 5.0))
    check(lambda v: at(v)[...].add(np.arange(4.0, dtype=np.float32)), x, expected=x + np.arange(4.0))
    check(lambda v: at(v)[None, 1].set(np.zeros((1, 4), np.float32)), x,
          expected=np.where(np.arange(3)[:, None] == 1, 0, x))
    check(lambda v: at(v)[0].mul(np.array([[2.0, 2.0, 2.0, 2.0]], np.float32)), x,
          expected=np.where(np.arange(3)[:, None] == 0, x * 2, x))
    check_staged(lambda v: v.at[1, 2].add(5.0), x, expected=_expected_update(x, (1, 2), np.float32(5), "add"))


def test_at_with_traced_scalar_and_out_of_bounds() -> None:
    x = np.zeros(4, np.float32)
    check(lambda v, k: at(v)[k].set(1.0), x, np.int32(2), expected=[0, 0, 1, 0])
    check(lambda v, k: at(v)[k].set(1.0), x, np.int32(-1), expected=[0, 0, 0, 1])
    check(lambda v, i: at(v)[i].add(1.0), x, np.array([1, 9, -9], np.int32), expected=[0, 1, 0, 0])
    check(lambda v, i: at(v)[i].add(1.0, mode="clip"), x, np.array([1, 9], np.int32),
          expected=[0, 1, 0, 1])
    check(lambda v: at(v)[7].set(1.0, mode="drop"), x, expected=x)


def test_at_dtype_handling_and_errors() -> None:
    x = np.arange(4, dtype=np.int32)
    check(lambda v: at(v)[1].set(2.7), x, expected=[0, 2, 2, 3], dtype=I32)
    b = np.array([False, True, False])
    check(lambda v: at(v)[np.array([0, 0])].add(True), b, expected=[True, True, False], dtype=bool)
    with pytest.raises(ValueError, match=r"\.at\[\.\.\.\]\.set: values of shape \(3,\) cannot be broadcast to the "
                                         r"indexed shape \(2,\)"):
        at(x)[:2].set(np.ones(3))
    # As JAX: divide is x / (ones with the values multiplied in), a float for integer x.
    check(lambda v: at(v)[0].divide(2), x, expected=[0.0, 1.0, 2.0, 3.0], dtype=F32)
    check(lambda v: at(v)[np.array([2, 2])].power(2), x, expected=[0, 1, 16, 3], dtype=I32)  # exponents multiply
    with pytest.raises(ValueError, match=r"\.at\[\.\.\.\]\.add: unknown mode 'nope'"):
        at(x)[0].add(1, mode="nope")


def test_at_updates_compute_in_the_promoted_dtype() -> None:
    # As JAX 0.10.2 (values recorded from it): x and the values are promoted, the scatter computes in
    # that dtype and its result is converted back to x's type; converting the values to x's dtype first
    # would truncate 0.5 to 0 and 0.6 to 0.
    ints = np.array([3, 4], np.int32)
    check(lambda v: at(v)[0].mul(0.5), ints, expected=[1, 4], dtype=I32)
    check(lambda v: at(v)[np.array([0, 0])].add(0.6), ints, expected=[4, 4], dtype=I32)
    check(lambda v: at(v)[0].subtract(0.5), ints, expected=[2, 4], dtype=I32)
    check(lambda v: at(v)[0].min(2.5), ints, expected=[2, 4], dtype=I32)
    check(lambda v: at(np.array([True, False]))[0].add(v), np.int32(-1), expected=[False, False], dtype=bool)
    check(lambda v: at(v)[0].subtract(5), np.array([3, 4], np.uint8), expected=[254, 4], dtype=np.uint8)
    # float32 updates of a float16 array accumulate in float32 (1000.3 + 0.3 + 0.3, rounded once)
    h = np.zeros(2, np.float16)
    check(lambda v, u: at(v)[np.array([0, 0, 0])].add(u), h, np.array([1000.3, 0.3, 0.3], np.float32),
          expected=[1001.0, 0.0], dtype=np.float16)
    # ... and compare in float32 (which value wins decides where a gradient goes): the scatter is float32
    closed = plait_core.make_jaxpr(lambda v, u: v.at[0].min(u))(h, np.float32(1.1177827))
    scatters = [e for e in closed.jaxpr.eqns if e.primitive.name == "scatter_min"]
    assert [str(e.outvars[0].aval.dtype) for e in scatters] == ["float32"]
    assert str(closed.jaxpr.outvars[0].aval.dtype) == "float16"


# ---------------------------------------------------------------------------
# take, take_along_axis, nonzero


@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("indices", [np.array([0, 2, 1]), np.array([[1], [0]]), np.int32(1), np.array([-1, 0])],
                         ids=str)
def test_take(axis: Any, indices: Any) -> None:
    x = sample((3, 4), F32)
    check(lambda v, i: pnp.take(v, i, axis), x, indices.astype(np.int32), expected=np.take(x, indices, axis))


def test_take_modes_and_errors() -> None:
    x = np.arange(5, dtype=np.float32)
    idx = np.array([0, 6, -7], np.int32)
    check(lambda v, i: pnp.take(v, i), x, idx, expected=[0.0, np.nan, np.nan])
    check(lambda v, i: pnp.take(v, i, mode="clip"), x, idx, expected=np.take(x, idx, mode="clip"))
    check(lambda v, i: pnp.take(v, i, mode="wrap"), x, idx, expected=np.take(x, idx, mode="wrap"))
    check(lambda v: pnp.take(v, np.array([1, -1], np.int32), mode="raise"), x, expected=[1.0, 4.0])
    check(lambda v, i: pnp.take(v, i, fill_value=-2.0), x, idx, expected=[0.0, -2.0, -2.0])
    with pytest.raises(IndexError, match="take: index 6 is out of bounds for an axis of size 5"):
        pnp.take(x, idx, mode="raise")
    with pytest.raises(ConcretizationTypeError, match="take with mode='raise'"):
        plait_core.make_jaxpr(lambda v, i: pnp.take(v, i, mode="raise"))(x, idx)
    with pytest.raises(TypeError, match="take: indices must be integers, got float32"):
        pnp.take(x, np.array([0.5], np.float32))


@pytest.mark.parametrize("axis", [0, 1, -1, None], ids=str)
def test_take_along_axis(axis: Any) -> None:
    x = sample((3, 4), F32, seed=3)
    order = np.argsort(x, axis=axis).astype(np.int32)
    check(lambda v, i: pnp.take_along_axis(v, i, axis), x, order, expected=np.take_along_axis(x, order, axis))
    if axis is not None:
        idx = np.zeros((3, 4), np.int32)
        idx = np.take(idx, [0], axis=axis)
        check(lambda v, i: pnp.take_along_axis(v, i, axis), x, idx, expected=np.take_along_axis(x, idx, axis))


def test_take_along_axis_broadcasts_and_errors() -> None:
    x = sample((3, 1, 4), F32, seed=4)
    idx = np.array([[[0, 3]], [[1, 1]], [[2, 0]]], np.int32).repeat(5, axis=1)
    check(lambda v, i: pnp.take_along_axis(v, i, 2), x, idx, expected=np.take_along_axis(np.broadcast_to(
        x, (3, 5, 4)), idx, 2))
    with pytest.raises(ValueError, match="take_along_axis: indices and arr must have the same number of dimensions"):
        pnp.take_along_axis(x, np.zeros(2, np.int32), 0)


def test_nonzero_family() -> None:
    x = np.array([[0, 2, 0], [3, 0, 4]], np.int32)
    check(lambda: pnp.nonzero(x), expected=tuple(np.nonzero(x)), dtype=I32)
    check(lambda: pnp.argwhere(x), expected=np.argwhere(x), dtype=I32)
    check(lambda: pnp.flatnonzero(x), expected=np.flatnonzero(x), dtype=I32)
    expected_rows = np.array([0, 1, 1, -1, -1])
    expected_cols = np.array([1, 0, 2, -1, -1])
    check(lambda v: pnp.nonzero(v, size=5, fill_value=-1), x, expected=(expected_rows, expected_cols), dtype=I32)
    check(lambda v: pnp.nonzero(v, size=2), x, expected=(np.array([0, 1]), np.array([1, 0])))
    check(lambda v: pnp.argwhere(v, size=4, fill_value=0), x,
          expected=np.concatenate([np.argwhere(x), np.zeros((1, 2), int)]))
    with pytest.raises(ValueError, match="nonzero: calling nonzero on a 0-d array is not allowed"):
        pnp.nonzero(np.int32(1))
    assert np.asarray(pnp.argwhere(np.float32(2.0))).shape == (1, 0)


def test_unravel_and_ravel_multi_index() -> None:
    flat = np.array([0, 5, 11], np.int32)
    check(lambda f: pnp.unravel_index(f, (3, 4)), flat, expected=np.unravel_index(flat, (3, 4)))
    rows, cols = np.array([0, 2], np.int32), np.array([3, 1], np.int32)
    check(lambda r, c: pnp.ravel_multi_index((r, c), (3, 4), mode="clip"), rows, cols,
          expected=np.ravel_multi_index((rows, cols), (3, 4)))
    with pytest.raises(ValueError, match="ravel_multi_index: invalid entry in coordinates array 1"):
        pnp.ravel_multi_index((rows, cols + 3), (3, 4))


def test_out_of_bounds_static_ints_follow_jax() -> None:
    """As JAX: reads clamp (after one wrap of a negative index), updates drop."""
    x = sample((3, 4), F32)
    np.testing.assert_array_equal(_getitem(x, 3), x[2])
    np.testing.assert_array_equal(_getitem(x, 7), x[2])
    np.testing.assert_array_equal(_getitem(x, (0, -5)), x[0, 0])
    np.testing.assert_array_equal(_getitem(x, (-9, 1)), x[0, 1])
    np.testing.assert_array_equal(_getitem(x, (np.array([7, -9]), 0)), x[[2, 0], 0])
    v = np.arange(5, dtype=np.int32)
    for i in (5, 7, -6, -9):
        check(lambda a, i=i: at(a)[i].set(99), v, expected=v, dtype=I32)
        check(lambda a, i=i: at(a)[i].add(99), v, expected=v, dtype=I32)
    check(lambda a: at(a)[np.array([7, 1, -9])].add(10), v, expected=[0, 11, 2, 3, 4], dtype=I32)
    check(lambda a: at(a)[7].set(9, mode="clip"), v, expected=[0, 1, 2, 3, 9], dtype=I32)
    check(lambda a: at(a)[7].get(mode="fill", fill_value=-1), v, expected=-1, dtype=I32)
    check(lambda a: at(a)[7].get(), v, expected=4, dtype=I32)


def test_a_list_index_is_a_type_error_as_in_jax() -> None:
    x = sample((5,), F32)
    with pytest.raises(TypeError, match=r"indexing with the list \[0, 2\] \(a non-tuple sequence\) is not allowed"):
        _getitem(x, [0, 2])
    np.testing.assert_array_equal(_getitem(x, (np.array([0, 2]),)), x[[0, 2]])
    np.testing.assert_array_equal(_getitem(x, ([0, 2],)), x[[0, 2]])
