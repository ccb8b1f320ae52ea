"""The structural primitives and their lax wrappers, against NumPy.

Every case runs three ways and must agree: eagerly, staged (``make_jaxpr``
then ``eval_jaxpr``, after ``check_jaxpr``), and NumPy (the oracle).  Gather
and scatter also have a direct, loop-per-element reading of the XLA spec as
an oracle for the general cases NumPy indexing cannot express.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait_core as pc
from plait_core import lax
from plait_core.dims import InconclusiveDimensionOperation, SymbolicDim
from plait_core.lax import GatherDimensionNumbers as GDN
from plait_core.lax import GatherScatterMode as Mode
from plait_core.lax import ScatterDimensionNumbers as SDN
from plait_core.primitives.structural import copy_p, dynamic_slice_p, reshape_p

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_), BF16]
NUMERIC = [np.dtype(np.float32), np.dtype(np.int32), BF16]


def make(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if np.issubdtype(dtype, np.integer):
        return np.asarray(rng.integers(-50, 50, shape)).astype(dtype)
    return np.asarray(rng.standard_normal(shape) * 10).astype(dtype)


def assert_same(actual: Any, expected: Any) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype, (a.dtype, e.dtype)
    assert a.shape == e.shape, (a.shape, e.shape)
    if a.dtype in (BF16, np.dtype(np.float16)):
        a, e = a.astype(np.float64), e.astype(np.float64)
    np.testing.assert_array_equal(a, e)


def check(fn: Callable[..., Any], *args: Any, expected: Any) -> None:
    """eager == staged == expected, and the staged jaxpr type-checks."""
    eager = fn(*args)
    assert_same(eager, expected)
    closed = pc.make_jaxpr(fn)(*args)
    pc.check_jaxpr(closed)
    (staged,) = pc.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    assert_same(staged, expected)
    out_aval = closed.out_avals[0]
    assert out_aval.shape == np.shape(expected)
    assert out_aval.dtype == np.asarray(expected).dtype


N, M = SymbolicDim.var("n"), SymbolicDim.var("m")


def staged_shape(fn: Callable[..., Any], *specs: tuple[tuple[Any, ...], Any]) -> tuple[Any, ...]:
    closed = pc.make_jaxpr(fn)(*[pc.ShapeDtypeStruct(s, d) for s, d in specs])
    pc.check_jaxpr(closed)
    shape: tuple[Any, ...] = closed.out_avals[0].shape
    return shape


# ---------------------------------------------------------------------------
# broadcast_in_dim / broadcast


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "in_shape,shape,bdims",
    [((), (2, 3), ()), ((3,), (2, 3), (1,)), ((2, 1), (2, 4), (0, 1)), ((1, 3), (5, 2, 3), (0, 2)),
     ((2, 3), (2, 3), (0, 1)), ((0, 1), (4, 0, 3), (1, 2))],
)
def test_broadcast_in_dim(dtype: Any, in_shape: Any, shape: Any, bdims: Any) -> None:
    x = make(in_shape, dtype)
    expanded = [1] * len(shape)
    for i, b in enumerate(bdims):
        expanded[b] = in_shape[i]
    check(lambda x: lax.broadcast_in_dim(x, shape, bdims), x,
          expected=np.broadcast_to(x.reshape(expanded), shape))


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_prepends(dtype: Any) -> None:
    x = make((2, 3), dtype)
    check(lambda x: lax.broadcast(x, [4, 1]), x, expected=np.broadcast_to(x, (4, 1, 2, 3)))


def test_broadcast_symbolic() -> None:
    assert staged_shape(lambda x: lax.broadcast_in_dim(x, (2, N, 3), (1, 2)), ((N, 3), np.float32)) == (2, N, 3)
    assert staged_shape(lambda x: lax.broadcast_in_dim(x, (N, 3), (1,)), ((1,), np.float32)) == (N, 3)
    with pytest.raises(ValueError, match=r"broadcast_in_dim: operand dimension 0 of size n .* size m"):
        staged_shape(lambda x: lax.broadcast_in_dim(x, (M,), (0,)), ((N,), np.float32))


def test_broadcast_in_dim_errors() -> None:
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"broadcast_in_dim: operand dimension 1 of size 3 \(operand f32\[2,3\]\)"
                                         r" cannot be broadcast to dimension 1 of size 4"):
        lax.broadcast_in_dim(x, (2, 4), (0, 1))
    with pytest.raises(ValueError, match=r"broadcast_dimensions=\(0,\) must name one dimension .* 2 dimensions"):
        lax.broadcast_in_dim(x, (2, 3), (0,))
    with pytest.raises(ValueError, match=r"broadcast_dimensions=\(1, 0\) must be strictly increasing"):
        lax.broadcast_in_dim(x, (3, 3), (1, 0))
    with pytest.raises(ValueError, match=r"broadcast_dimensions=\(0, 5\) has the axis 5, out of range"):
        lax.broadcast_in_dim(x, (2, 3), (0, 5))
    with pytest.raises(TypeError, match=r"negative dimension"):
        lax.broadcast_in_dim(x, (2, -3), (0, 1))
    with pytest.raises(TypeError, match=r"argument operand of lax.broadcast_in_dim.*str"):
        lax.broadcast_in_dim("abc", (2, 3), ())


# ---------------------------------------------------------------------------
# reshape / squeeze / expand_dims / collapse


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "in_shape,new,dims",
    [((2, 3), (6,), None), ((2, 3), (3, 2), None), ((2, 3, 4), (4, 6), (2, 0, 1)), ((), (1, 1), None),
     ((6,), (1, 2, 3), None), ((0, 3), (3, 0), None), ((2, 3), (3, 2), (1, 0))],
)
def test_reshape(dtype: Any, in_shape: Any, new: Any, dims: Any) -> None:
    x = make(in_shape, dtype)
    src = x if dims is None else np.transpose(x, dims)
    check(lambda x: lax.reshape(x, new, dims), x, expected=np.reshape(src, new))


def test_reshape_symbolic() -> None:
    assert staged_shape(lambda x: lax.reshape(x, (3, N)), ((N, 3), np.float32)) == (3, N)
    assert staged_shape(lambda x: lax.reshape(x, (3 * N,)), ((N, 3), np.float32)) == (3 * N,)
    with pytest.raises(ValueError, match=r"reshape: cannot reshape f32\[n,3\] \(3\*n elements\) into \(n, 4\)"):
        staged_shape(lambda x: lax.reshape(x, (N, 4)), ((N, 3), np.float32))


def test_reshape_errors() -> None:
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"reshape: cannot reshape f32\[2,3\] \(6 elements\) into \(4,\) "
                                         r"\(4 elements\)"):
        lax.reshape(x, (4,))
    with pytest.raises(ValueError, match=r"reshape: dimensions=\(0, 0\) is not a permutation"):
        lax.reshape(x, (6,), (0, 0))
    with pytest.raises(TypeError, match=r"negative dimension -1"):
        lax.reshape(x, (-1,))
    with pytest.raises(ValueError, match=r"reshape: new_sizes=\(-6,\) has the negative size -6"):
        reshape_p.bind(x, new_sizes=(-6,), dimensions=None)
    with pytest.raises(TypeError, match=r"reshape: new_sizes must be a tuple of dimensions"):
        reshape_p.bind(x, new_sizes=[6], dimensions=None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape,dims", [((1, 3, 1), (0, 2)), ((1, 3, 1), (-1,)), ((1,), (0,)),
                                           ((2, 1, 1, 4), (1, 2))])
def test_squeeze(dtype: Any, in_shape: Any, dims: Any) -> None:
    x = make(in_shape, dtype)
    check(lambda x: lax.squeeze(x, dims), x, expected=np.squeeze(x, axis=dims))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape,dims", [((3,), (0,)), ((3,), (1,)), ((2, 3), (0, 3)), ((), (0, 1)),
                                           ((2, 3), (-1,))])
def test_expand_dims(dtype: Any, in_shape: Any, dims: Any) -> None:
    x = make(in_shape, dtype)
    check(lambda x: lax.expand_dims(x, dims), x, expected=np.expand_dims(x, dims))


def test_squeeze_expand_dims_errors() -> None:
    x = np.zeros((1, 3), np.float32)
    with pytest.raises(ValueError, match=r"squeeze: cannot squeeze dimension 1 of the operand f32\[1,3\]: "
                                         r"its size is 3, not 1"):
        lax.squeeze(x, (1,))
    with pytest.raises(ValueError, match=r"lax.squeeze: dimensions=2 is out of range for an operand of rank 2"):
        lax.squeeze(x, (2,))
    with pytest.raises(ValueError, match=r"squeeze: dimensions=\(0, 0\) repeats an axis"):
        lax.squeeze(x, (0, -2))
    with pytest.raises(ValueError, match=r"lax.expand_dims: dimensions=3 is out of range for an operand of rank 3"):
        lax.expand_dims(x, (3,))
    with pytest.raises(ValueError, match=r"squeeze: .*dimension 0 .* its size is n, not 1"):
        staged_shape(lambda x: lax.squeeze(x, (0,)), ((N,), np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start,stop", [(0, None), (1, 3), (0, 2), (-2, None), (1, 1)])
def test_collapse(dtype: Any, start: int, stop: int | None) -> None:
    x = make((2, 3, 4), dtype)
    a = start % 3
    b = 3 if stop is None else stop
    new = x.shape[:a] + (int(np.prod(x.shape[a:b])),) + x.shape[b:]
    check(lambda x: lax.collapse(x, start, stop), x, expected=x.reshape(new))


# ---------------------------------------------------------------------------
# transpose / rev


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,perm", [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (0, 2, 1)),
                                        ((5,), (0,)), ((0, 2), (1, 0))])
def test_transpose(dtype: Any, shape: Any, perm: Any) -> None:
    x = make(shape, dtype)
    check(lambda x: lax.transpose(x, perm), x, expected=np.transpose(x, perm))


def test_transpose_symbolic_and_errors() -> None:
    assert staged_shape(lambda x: lax.transpose(x, (1, 0)), ((N, 3), np.float32)) == (3, N)
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"transpose: permutation=\(0, 2\) is not a permutation of the dimensions "
                                         r"of the operand f32\[2,3\]"):
        lax.transpose(x, (0, 2))
    with pytest.raises(ValueError, match=r"transpose: permutation=\(0,\) is not a permutation"):
        lax.transpose(x, (0,))
    with pytest.raises(TypeError, match=r"lax.transpose: permutation must be a sequence of integers"):
        lax.transpose(x, (0.0, 1.0))  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dims", [((4,), (0,)), ((2, 3), (1,)), ((2, 3, 4), (0, 2)), ((2, 3), (-1, 0))])
def test_rev(dtype: Any, shape: Any, dims: Any) -> None:
    x = make(shape, dtype)
    check(lambda x: lax.rev(x, dims), x, expected=np.flip(x, dims))


def test_rev_errors() -> None:
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"rev: dimensions=\(1, 1\) repeats an axis"):
        lax.rev(x, (1, -1))
    with pytest.raises(ValueError, match=r"lax.rev: dimensions=2 is out of range"):
        lax.rev(x, (2,))


def test_trivial_ops_return_the_operand() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert lax.reshape(x, (2, 3)) is x
    assert lax.reshape(x, (2, 3), (0, 1)) is x
    assert lax.transpose(x, (0, 1)) is x
    assert lax.broadcast_in_dim(x, (2, 3), (0, 1)) is x
    assert lax.squeeze(x, ()) is x
    assert lax.expand_dims(x, ()) is x
    assert lax.rev(x, ()) is x
    assert lax.slice(x, (0, 0), (2, 3)) is x
    assert lax.concatenate([x], 1) is x
    # ... and staging them records no equation.
    assert pc.make_jaxpr(lambda x: lax.transpose(lax.reshape(x, (2, 3)), (0, 1)))(x).eqns == []
    # A Python scalar still becomes an array.
    assert_same(lax.reshape(2.0, ()), np.float32(2.0))


def test_results_do_not_alias_inputs() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for y in (lax.transpose(x, (1, 0)), lax.reshape(x, (6,)), lax.slice(x, (0, 0), (1, 3)),
              lax.rev(x, (0,)), copy_p.bind(x)):
        assert not np.shares_memory(np.asarray(y), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copy(dtype: Any) -> None:
    x = make((2, 3), dtype)
    check(lambda x: copy_p.bind(x), x, expected=x)


# ---------------------------------------------------------------------------
# pad


def pad_oracle(x: np.ndarray, value: Any, config: Any) -> np.ndarray:
    """Pad one axis at a time with np.insert (interior), np.pad (positive ends)
    and slicing (negative ends)."""
    out = x
    for ax, (lo, hi, interior) in enumerate(config):
        n = out.shape[ax]
        if interior and n > 1:
            out = np.insert(out, np.repeat(np.arange(1, n), interior), value, axis=ax)
        widths = [(0, 0)] * out.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, mode="constant", constant_values=value)
        sl = [slice(None)] * out.ndim
        sl[ax] = slice(max(-lo, 0), out.shape[ax] - max(-hi, 0))
        out = out[tuple(sl)]
    return out


PAD_CONFIGS = [
    ((2, 3), ((1, 2, 0), (0, 1, 0))),
    ((2, 3), ((0, 0, 1), (1, 1, 2))),
    ((2, 3), ((-1, 0, 0), (0, -2, 0))),
    ((4, 3), ((-2, 1, 1), (2, -3, 1))),
    ((3,), ((-5, -2, 3),)),
    ((0, 2), ((1, 1, 3), (0, 0, 0))),
    ((), ()),
    ((3,), ((-3, 0, 0),)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,config", PAD_CONFIGS)
def test_pad(dtype: Any, shape: Any, config: Any) -> None:
    x = make(shape, dtype)
    value = make((), dtype, seed=7)
    check(lambda x, v: lax.pad(x, v, config), x, value, expected=pad_oracle(x, value, config))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_pad_python_scalar_value(dtype: Any) -> None:
    x = make((3,), dtype)
    check(lambda x: lax.pad(x, 1, [(1, 1, 1)]), x, expected=pad_oracle(x, np.asarray(1, dtype), [(1, 1, 1)]))


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=1, max_size=3),
    data=st.data(),
)
def test_pad_property(shape: list[int], data: Any) -> None:
    config = []
    for n in shape:
        interior = data.draw(st.integers(0, 2))
        extent = n + max(n - 1, 0) * interior
        lo = data.draw(st.integers(-extent, 3))
        hi = data.draw(st.integers(-(extent + lo) if extent + lo > 0 else 0, 3))
        config.append((lo, hi, interior))
    x = make(tuple(shape), np.float32)
    assert_same(lax.pad(x, np.float32(-1), config), pad_oracle(x, np.float32(-1), config))


def test_pad_symbolic() -> None:
    assert staged_shape(lambda x: lax.pad(x, 0.0, [(1, 2, 0), (0, 0, 0)]), ((N, 3), np.float32)) == (N + 3, 3)
    assert staged_shape(lambda x: lax.pad(x, 0.0, [(1, 1, 1)]), ((N,), np.float32)) == (2 * N + 1,)


def test_pad_errors() -> None:
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"pad: the operand and padding_value must have the same dtype, "
                                        r"got f32\[2,3\] and i32\[\]"):
        lax.pad(x, np.int32(0), [(0, 0, 0)] * 2)
    with pytest.raises(ValueError, match=r"pad: padding_value must be a scalar, got f32\[2\]"):
        lax.pad(x, np.zeros(2, np.float32), [(0, 0, 0)] * 2)
    with pytest.raises(ValueError, match=r"pad: padding_config\[0\]=\(-2, -1, 0\) gives dimension 0 of the "
                                         r"operand f32\[2,3\] the negative size -1"):
        lax.pad(x, 0.0, [(-2, -1, 0), (0, 0, 0)])
    with pytest.raises(ValueError, match=r"pad: padding_config\[1\]=\(0, 0, -1\) has negative interior padding"):
        lax.pad(x, 0.0, [(0, 0, 0), (0, 0, -1)])
    with pytest.raises(ValueError, match=r"pad: padding_config must have one \(low, high, interior\) triple for "
                                         r"each of the 2 dimensions"):
        lax.pad(x, 0.0, [(0, 0, 0)])
    with pytest.raises(ValueError, match=r"pad: padding_config\[0\]=\(1, 1\) must have 3 entries"):
        lax.pad(x, 0.0, [(1, 1), (0, 0, 0)])  # type: ignore[list-item]


# ---------------------------------------------------------------------------
# concatenate


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,dim", [([(2, 3), (4, 3)], 0), ([(2, 1), (2, 3), (2, 0)], 1),
                                        ([(3,), (3,), (1,)], 0), ([(1, 2, 3), (1, 2, 1)], -1)])
def test_concatenate(dtype: Any, shapes: Any, dim: int) -> None:
    xs = [make(s, dtype, seed=i) for i, s in enumerate(shapes)]
    check(lambda *xs: lax.concatenate(xs, dim), *xs, expected=np.concatenate(xs, axis=dim))


def test_concatenate_symbolic_and_weak_type() -> None:
    fn = lambda a, b: lax.concatenate([a, b], 0)  # noqa: E731
    assert staged_shape(fn, ((N, 3), np.float32), ((M, 3), np.float32)) == (N + M, 3)
    with pytest.raises(ValueError, match=r"concatenate: operand 1 differs from operand 0 in dimension 1"):
        staged_shape(fn, ((2, N), np.float32), ((3, M), np.float32))
    weak = pc.ShapeDtypeStruct((2,), np.float32, weak_type=True)
    strong = pc.ShapeDtypeStruct((2,), np.float32)
    assert pc.make_jaxpr(fn)(weak, weak).out_avals[0].weak_type
    assert not pc.make_jaxpr(fn)(weak, strong).out_avals[0].weak_type


def test_concatenate_errors() -> None:
    a, b = np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32)
    with pytest.raises(ValueError, match=r"concatenate: operand 1 differs from operand 0 in dimension 1, which "
                                         r"is not the concatenation dimension 0: got f32\[2,3\], f32\[2,4\]"):
        lax.concatenate([a, b], 0)
    with pytest.raises(TypeError, match=r"concatenate: all operands must have the same dtype, got f32\[2,3\] "
                                        r"and i32\[2,3\]"):
        lax.concatenate([a, np.zeros((2, 3), np.int32)], 0)
    with pytest.raises(ValueError, match=r"concatenate: operands must have the same rank"):
        lax.concatenate([a, np.zeros((3,), np.float32)], 0)
    with pytest.raises(ValueError, match=r"concatenate: dimension=2 is out of range"):
        lax.concatenate([a, a], 2)
    with pytest.raises(ValueError, match=r"lax.concatenate: needs at least one operand"):
        lax.concatenate([], 0)


# ---------------------------------------------------------------------------
# slice, slice_in_dim, index_in_dim


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,starts,limits,strides", [
    ((5,), (1,), (4,), None), ((5,), (0,), (5,), (2,)), ((4, 6), (1, 0), (3, 6), (1, 4)),
    ((4, 6), (0, 2), (4, 2), None), ((3, 4, 5), (0, 1, 2), (3, 4, 5), (2, 2, 2)), ((0, 3), (0, 1), (0, 3), None),
])
def test_slice(dtype: Any, shape: Any, starts: Any, limits: Any, strides: Any) -> None:
    x = make(shape, dtype)
    steps = strides or (1,) * len(shape)
    expected = x[tuple(slice(s, lim, st) for s, lim, st in zip(starts, limits, steps))]
    check(lambda x: lax.slice(x, starts, limits, strides), x, expected=expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start,limit,stride,axis", [(1, None, 1, 0), (None, -1, 2, 1), (-3, -1, 1, -1),
                                                     (0, 4, 3, 1)])
def test_slice_in_dim(dtype: Any, start: Any, limit: Any, stride: int, axis: int) -> None:
    x = make((3, 5), dtype)
    sl: list[slice] = [slice(None)] * 2
    sl[axis] = slice(start, limit, stride)
    check(lambda x: lax.slice_in_dim(x, start, limit, stride, axis), x, expected=x[tuple(sl)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index,axis,keepdims", [(0, 0, True), (-1, 1, False), (2, -1, True), (1, 0, False)])
def test_index_in_dim(dtype: Any, index: int, axis: int, keepdims: bool) -> None:
    x = make((3, 4), dtype)
    expected = np.take(x, [index], axis=axis) if keepdims else np.take(x, index, axis=axis)
    check(lambda x: lax.index_in_dim(x, index, axis, keepdims), x, expected=expected)


def test_slice_symbolic() -> None:
    assert staged_shape(lambda x: lax.slice(x, (0, 1), (N, 3)), ((N, 3), np.float32)) == (N, 2)
    assert staged_shape(lambda x: lax.slice_in_dim(x, 1, None, axis=1), ((N, 3), np.float32)) == (N, 2)
    assert staged_shape(lambda x: lax.slice_in_dim(x, 0, N - 1), ((N + 2,), np.float32)) == (N - 1,)
    with pytest.raises(ValueError, match=r"slice: dimension 0 of the operand f32\[n\] cannot be sliced from 0 to 2"):
        staged_shape(lambda x: lax.slice(x, (0,), (2,)), ((N,), np.float32))
    with pytest.raises(InconclusiveDimensionOperation, match=r"^slice: "):
        staged_shape(lambda x: lax.slice(x, (0,), (N,), (2,)), ((N,), np.float32))


def test_slice_errors() -> None:
    x = np.zeros((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"slice: dimension 1 of the operand f32\[4,5\] cannot be sliced from 0 "
                                         r"to 6: need 0 <= start <= limit <= 5"):
        lax.slice(x, (0, 0), (4, 6))
    with pytest.raises(ValueError, match=r"slice: dimension 0 .* cannot be sliced from 3 to 2"):
        lax.slice(x, (3, 0), (2, 5))
    with pytest.raises(ValueError, match=r"slice: strides=\(1, 0\) has the non-positive stride 0 in dimension 1"):
        lax.slice(x, (0, 0), (4, 5), (1, 0))
    with pytest.raises(ValueError, match=r"slice: start_indices=\(0,\) must have one entry for each of the 2"):
        lax.slice(x, (0,), (4, 5))
    with pytest.raises(IndexError, match=r"lax.index_in_dim: index 4 is out of bounds for axis 0 of size 4"):
        lax.index_in_dim(x, 4)
    with pytest.raises(IndexError, match=r"index -6 is out of bounds for axis 1 of size 5"):
        lax.index_in_dim(x, -6, 1)


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice


def clamp_starts(starts: Any, shape: Any, sizes: Any) -> list[int]:
    """JAX's reading: negative starts count from the end, then XLA clamps."""
    out = []
    for s, d, n in zip(starts, shape, sizes):
        s = s + d if s < 0 else s
        out.append(min(max(s, 0), d - n))
    return out


DS_CASES = [((5,), (1,), (3,)), ((5,), (4,), (3,)), ((5,), (-2,), (2,)), ((5,), (-9,), (2,)),
            ((4, 6), (1, 2), (2, 3)), ((4, 6), (10, -1), (4, 1)), ((4, 6), (0, 0), (0, 6)), ((), (), ())]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,starts,sizes", DS_CASES)
def test_dynamic_slice(dtype: Any, shape: Any, starts: Any, sizes: Any) -> None:
    x = make(shape, dtype)
    c = clamp_starts(starts, shape, sizes)
    expected = x[tuple(slice(s, s + n) for s, n in zip(c, sizes))]
    check(lambda x: lax.dynamic_slice(x, starts, sizes), x, expected=expected)
    idx = [np.int32(s) for s in starts]
    check(lambda x: lax.dynamic_slice(x, np.array(starts, np.int32).reshape(len(starts)), sizes), x,
          expected=expected)
    if all(s >= 0 for s in starts):  # traced indices need no wrapping
        check(lambda x, *i: lax.dynamic_slice(x, i, sizes, allow_negative_indices=False), x, *idx,
              expected=expected)


def test_dynamic_slice_traced_negative_index() -> None:
    x = make((6,), np.float32)
    check(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), x, np.int32(-3), expected=x[3:5])
    check(lambda x, i: lax.dynamic_index_in_dim(x, i, keepdims=False), x, np.int32(-1), expected=x[5])


def test_dynamic_slice_traced_index_vector() -> None:
    x = make((4, 6), np.float32)
    check(lambda x, i: lax.dynamic_slice(x, i, (2, 2), allow_negative_indices=False), x,
          np.array([3, 1], np.int32), expected=x[2:4, 1:3])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index,axis,keepdims", [(2, 0, True), (-1, 1, False), (7, 1, True)])
def test_dynamic_in_dim(dtype: Any, index: int, axis: int, keepdims: bool) -> None:
    x = make((3, 4), dtype)
    (c,) = clamp_starts([index], [x.shape[axis]], [1])
    expected = np.take(x, [c], axis=axis) if keepdims else np.take(x, c, axis=axis)
    check(lambda x: lax.dynamic_index_in_dim(x, index, axis, keepdims), x, expected=expected)
    (c2,) = clamp_starts([index], [x.shape[axis]], [2])
    check(lambda x: lax.dynamic_slice_in_dim(x, index, 2, axis), x,
          expected=np.take(x, [c2, c2 + 1], axis=axis))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,starts,usizes", DS_CASES)
def test_dynamic_update_slice(dtype: Any, shape: Any, starts: Any, usizes: Any) -> None:
    x = make(shape, dtype)
    u = make(usizes, dtype, seed=3)
    c = clamp_starts(starts, shape, usizes)
    expected = x.copy()
    expected[tuple(slice(s, s + n) for s, n in zip(c, usizes))] = u
    check(lambda x, u: lax.dynamic_update_slice(x, u, starts), x, u, expected=expected)
    if all(s >= 0 for s in starts):
        idx = [np.int32(s) for s in starts]
        check(lambda x, u, *i: lax.dynamic_update_slice(x, u, i, allow_negative_indices=False), x, u, *idx,
              expected=expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dynamic_update_in_dim(dtype: Any) -> None:
    x = make((3, 4), dtype)
    row = make((4,), dtype, seed=1)
    expected = x.copy()
    expected[2] = row
    check(lambda x, r: lax.dynamic_update_index_in_dim(x, r, -1, 0), x, row, expected=expected)
    cols = make((3, 2), dtype, seed=2)
    expected = x.copy()
    expected[:, 2:4] = cols
    check(lambda x, c: lax.dynamic_update_slice_in_dim(x, c, 3, axis=1), x, cols, expected=expected)


def test_dynamic_slice_errors() -> None:
    x = np.zeros((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"dynamic_slice: slice_sizes=\(2, 6\) asks for 6 elements of dimension 1 "
                                         r"of the operand f32\[4,5\], which has 5"):
        lax.dynamic_slice(x, (0, 0), (2, 6))
    with pytest.raises(ValueError, match=r"lax.dynamic_slice: an operand of rank 2 needs 2 start indices, got 1"):
        lax.dynamic_slice(x, (0,), (2, 2))
    with pytest.raises(TypeError, match=r"lax.dynamic_slice: start index 1 must be an integer scalar, got 1.5"):
        lax.dynamic_slice(x, (0, 1.5), (2, 2))
    with pytest.raises(TypeError, match=r"lax.dynamic_slice: start index 0 must be an integer scalar, got f32\[\]"):
        pc.make_jaxpr(lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)))(x, np.float32(0))
    with pytest.raises(TypeError, match=r"dynamic_slice: start index 0 must be an integer, got f32\[\]"):
        dynamic_slice_p.bind(x, np.float32(0), np.int32(0), slice_sizes=(1, 1))
    with pytest.raises(ValueError, match=r"dynamic_slice: start index 0 must be a scalar, got i32\[2\]"):
        dynamic_slice_p.bind(x, np.zeros(2, np.int32), np.int32(0), slice_sizes=(1, 1))
    with pytest.raises(ValueError, match=r"lax.dynamic_slice: start_indices must be a sequence of scalars or a "
                                         r"1-D array, got i32\[2,1\]"):
        lax.dynamic_slice(x, np.zeros((2, 1), np.int32), (1, 1))


def test_dynamic_update_slice_errors() -> None:
    x = np.zeros((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"dynamic_update_slice: the update f32\[2,6\] is larger than the operand "
                                         r"f32\[4,5\] in dimension 1"):
        lax.dynamic_update_slice(x, np.zeros((2, 6), np.float32), (0, 0))
    with pytest.raises(TypeError, match=r"dynamic_update_slice: the operand and the update must have the same "
                                        r"dtype, got f32\[4,5\] and i32\[1,1\]"):
        lax.dynamic_update_slice(x, np.zeros((1, 1), np.int32), (0, 0))
    with pytest.raises(ValueError, match=r"dynamic_update_slice: the update f32\[5\] must have the rank of the "
                                         r"operand f32\[4,5\]"):
        lax.dynamic_update_slice(x, np.zeros((5,), np.float32), (0, 0))


def test_dynamic_slice_symbolic() -> None:
    fn = lambda x: lax.dynamic_slice(x, (1, 0), (2, N))  # noqa: E731
    assert staged_shape(fn, ((5, N), np.float32)) == (2, N)
    # A negative start counts from the end of the symbolic size: it is wrapped
    # with the size's value (dim_as_value), which mask or vmap over piles binds.
    closed = pc.make_jaxpr(lambda x: lax.dynamic_slice(x, (-1,), (1,)))(
        pc.ShapeDtypeStruct((N,), np.float32)
    )
    assert closed.out_avals[0].shape == (1,)
    assert "dim_as_value" in [e.primitive.name for e in closed.eqns]


# ---------------------------------------------------------------------------
# gather: a loop-per-output-element reading of the spec as the general oracle


def gather_oracle(x: np.ndarray, indices: np.ndarray, dn: GDN, sizes: Any, mode: Mode, fill: Any) -> np.ndarray:
    rank = x.ndim
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(rank) if d not in dropped]
    batch = list(indices.shape[:-1])
    window = [sizes[d] for d in kept]
    out_rank = len(batch) + len(window)
    w, b = iter(window), iter(batch)
    out_shape = tuple(next(w) if i in dn.offset_dims else next(b) for i in range(out_rank))
    out = np.empty(out_shape, x.dtype)
    for pos in np.ndindex(*out_shape):
        g = [pos[i] for i in range(out_rank) if i not in dn.offset_dims]
        o = [pos[i] for i in dn.offset_dims]
        start = [0] * rank
        for k, d in enumerate(dn.start_index_map):
            start[d] = int(indices[(*g, k)])
        for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[od] = g[idim]
        upper = [x.shape[d] - sizes[d] for d in range(rank)]
        outside = any(not 0 <= start[d] <= upper[d] for d in range(rank))
        if mode is Mode.FILL_OR_DROP and outside:
            out[pos] = fill
            continue
        full = [min(max(start[d], 0), upper[d]) for d in range(rank)]
        for off, d in zip(o, kept):
            full[d] += off
        out[pos] = x[tuple(full)]
    return out


def run_gather(x: np.ndarray, idx: np.ndarray, dn: GDN, sizes: Any, **kw: Any) -> Callable[..., Any]:
    return lambda x, idx: lax.gather(x, idx, dn, sizes, **kw)


ALL_MODES = [Mode.FILL_OR_DROP, Mode.CLIP, Mode.PROMISE_IN_BOUNDS]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ALL_MODES)
def test_gather_take_rows(dtype: Any, mode: Mode) -> None:  # x[idx]
    x = make((5, 3), dtype)
    idx = np.array([4, 0, 2, 2], np.int32)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    check(run_gather(x, idx, dn, (1, 3), mode=mode), x, idx[:, None], expected=x[idx])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ALL_MODES)
def test_gather_take_middle_axis(dtype: Any, mode: Mode) -> None:  # x[:, idx]
    x = make((2, 6, 3), dtype)
    idx = np.array([[5, 1], [0, 0], [3, 2]], np.int32)  # batch shape (3, 2)
    dn = GDN(offset_dims=(0, 3), collapsed_slice_dims=(1,), start_index_map=(1,))
    check(run_gather(x, idx, dn, (2, 1, 3), mode=mode), x, idx[..., None], expected=x[:, idx])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_point_pairs(dtype: Any) -> None:  # x[i, j]
    x = make((4, 5, 2), dtype)
    i = np.array([3, 0, 1, 3], np.int32)
    j = np.array([4, 0, 2, 1], np.int32)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    check(run_gather(x, np.stack([i, j], -1), dn, (1, 1, 2)), x, np.stack([i, j], -1), expected=x[i, j])
    # The index vector may list the dimensions in any order.
    dn_rev = GDN(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(1, 0))
    check(run_gather(x, np.stack([j, i], -1), dn_rev, (1, 1, 2)), x, np.stack([j, i], -1), expected=x[i, j])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_take_along_axis_with_batching_dims(dtype: Any) -> None:
    x = make((3, 5), dtype)
    idx = np.array([[4, 0], [1, 1], [2, 3]], np.int32)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    check(run_gather(x, idx, dn, (1, 1)), x, idx[..., None], expected=np.take_along_axis(x, idx, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_batching_dim_not_leading(dtype: Any) -> None:
    x = make((4, 2, 3), dtype)  # batch over operand dim 1 and indices dim 1
    idx = np.array([[[3], [0]], [[1], [2]], [[0], [0]]], np.int32)  # (3, 2, 1)
    dn = GDN(offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,),
             operand_batching_dims=(1,), start_indices_batching_dims=(1,))
    expected = np.stack([np.stack([x[idx[a, b, 0], b] for b in range(2)]) for a in range(3)])
    assert_same(expected, gather_oracle(x, idx, dn, (1, 1, 3), Mode.CLIP, 0))
    check(run_gather(x, idx, dn, (1, 1, 3)), x, idx, expected=expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ALL_MODES)
def test_gather_windows_out_of_bounds(dtype: Any, mode: Mode) -> None:
    x = make((6, 5), dtype)
    starts = np.array([[0, 0], [4, 3], [5, 0], [-1, 2], [2, 7], [3, 1]], np.int32)
    dn = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
    fill = np.nan if np.dtype(dtype).kind == "f" or dtype == BF16 else (
        True if dtype == np.bool_ else np.iinfo(dtype).min)
    expected = gather_oracle(x, starts, dn, (2, 3), mode, fill)
    check(run_gather(x, starts, dn, (2, 3), mode=mode), x, starts, expected=expected)


@pytest.mark.parametrize("dtype,fill", [(np.float32, -7.5), (np.int32, 42), (np.bool_, False), (BF16, 3.0)])
def test_gather_fill_value(dtype: Any, fill: Any) -> None:
    x = make((4,), dtype)
    idx = np.array([[1], [4], [-1], [3]], np.int32)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    expected = gather_oracle(x, idx, dn, (1,), Mode.FILL_OR_DROP, fill)
    check(run_gather(x, idx, dn, (1,), mode="fill", fill_value=fill), x, idx, expected=expected)


def test_gather_default_fill_values() -> None:
    dn = GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    idx = np.array([[9]], np.int32)
    assert np.isnan(lax.gather(np.zeros(2, np.float32), idx, dn, (1,))[0])
    assert lax.gather(np.zeros(2, np.int32), idx, dn, (1,))[0] == np.iinfo(np.int32).min
    assert lax.gather(np.zeros(2, np.uint8), idx, dn, (1,))[0] == 255
    assert lax.gather(np.zeros(2, np.bool_), idx, dn, (1,))[0]


def test_gather_index_dtypes_and_empty() -> None:
    x = make((5, 2), np.float32)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    for idt in (np.int8, np.uint8, np.int32):
        idx = np.array([[3], [1]], idt)
        check(run_gather(x, idx, dn, (1, 2)), x, idx, expected=x[idx[:, 0].astype(np.int64)])
    empty = np.zeros((0, 1), np.int32)
    check(run_gather(x, empty, dn, (1, 2)), x, empty, expected=np.zeros((0, 2), np.float32))


def test_gather_staged_params_and_symbolic() -> None:
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    closed = pc.make_jaxpr(lambda x, i: lax.gather(x, i, dn, (1, 3), mode="clip"))(
        np.zeros((5, 3), np.float32), np.zeros((4, 1), np.int32))
    (eqn,) = closed.eqns
    assert eqn.params["mode"] is Mode.CLIP
    assert eqn.params["dimension_numbers"] == dn
    hash(tuple(eqn.params.items()))
    assert "mode=GatherScatterMode.CLIP" in str(closed)
    fn = lambda x, i: lax.gather(x, i, dn, (1, N))  # noqa: E731
    assert staged_shape(fn, ((5, N), np.float32), ((M, 1), np.int32)) == (M, N)


def test_gather_errors() -> None:
    x = np.zeros((5, 3), np.float32)
    idx = np.zeros((4, 1), np.int32)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    with pytest.raises(TypeError, match=r"gather: indices must have an integer dtype, got f32\[4,1\]"):
        lax.gather(x, idx.astype(np.float32), dn, (1, 3))
    with pytest.raises(ValueError, match=r"gather: the index vectors of indices i32\[4,2\] have 2 entries but "
                                         r"dimension_numbers.start_index_map=\(0,\) names 1"):
        lax.gather(x, np.zeros((4, 2), np.int32), dn, (1, 3))
    with pytest.raises(ValueError, match=r"gather: slice_sizes=\(1, 4\) asks for 4 elements of dimension 1"):
        lax.gather(x, idx, dn, (1, 4))
    with pytest.raises(ValueError, match=r"gather: slice_sizes=\(2, 3\) must be 1 \(or 0\) in the collapsed or "
                                         r"batching dimension 0, got 2"):
        lax.gather(x, idx, dn, (2, 3))
    with pytest.raises(ValueError, match=r"gather: dimension_numbers.offset_dims=\(0, 1\) must name 1 output"):
        lax.gather(x, idx, dn._replace(offset_dims=(0, 1)), (1, 3))
    with pytest.raises(ValueError, match=r"gather: dimension_numbers.offset_dims=\(2,\) has the dimension 2, out of "
                                         r"range for the output of rank 2"):
        lax.gather(x, idx, dn._replace(offset_dims=(2,)), (1, 3))
    with pytest.raises(ValueError, match=r"gather: dimension_numbers.collapsed_slice_dims=\(1, 0\) must be sorted"):
        lax.gather(x, np.zeros((4, 2), np.int32), GDN((), (1, 0), (0, 1)), (1, 1))
    with pytest.raises(ValueError, match=r"gather: dimension_numbers.start_index_map=\(0,\) and "
                                         r"operand_batching_dims=\(0,\) share the dimensions \[0\]"):
        lax.gather(x, idx, GDN((1,), (), (0,), (0,), (0,)), (1, 3))
    with pytest.raises(ValueError, match=r"gather: operand batching dimension 0 of f32\[5,3\] and indices batching "
                                         r"dimension 0 of i32\[4,1\] differ in size"):
        lax.gather(x, idx, GDN((), (1,), (1,), (0,), (0,)), (1, 1))
    with pytest.raises(ValueError, match=r"indices must have at least one dimension"):
        lax.gather(x, np.int32(0), dn, (1, 3))
    with pytest.raises(TypeError, match=r"lax.gather: dimension_numbers must be a GatherDimensionNumbers"):
        lax.gather(x, idx, ((1,), (0,), (0,)), (1, 3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown gather/scatter mode 'wrap'"):
        lax.gather(x, idx, dn, (1, 3), mode="wrap")
    with pytest.raises(TypeError, match=r"lax.gather: fill_value must be a Python or NumPy scalar"):
        lax.gather(x, idx, dn, (1, 3), fill_value=[1.0])
    with pytest.raises(TypeError, match=r"argument start_indices of lax.gather.*list"):
        lax.gather(x, [[0]], dn, (1, 3))


# ---------------------------------------------------------------------------
# scatter family


COMBINE: dict[str, Callable[[Any, Any], Any]] = {
    "scatter": lambda old, new: new,
    "scatter_add": lambda old, new: old + new if old.dtype != np.bool_ else old | new,
    "scatter_mul": lambda old, new: old * new if old.dtype != np.bool_ else old & new,
    "scatter_min": lambda old, new: min(old, new),
    "scatter_max": lambda old, new: max(old, new),
}
SCATTERS = list(COMBINE)
UFUNC_AT = {"scatter_add": np.add, "scatter_mul": np.multiply, "scatter_min": np.minimum,
            "scatter_max": np.maximum}


def scatter_oracle(kind: str, x: np.ndarray, indices: np.ndarray, updates: np.ndarray, dn: SDN,
                   mode: Mode) -> np.ndarray:
    out = x.copy()
    rank = x.ndim
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    op_window = [d for d in range(rank) if d not in dropped]
    window = [1] * rank
    for u, d in zip(dn.update_window_dims, op_window):
        window[d] = updates.shape[u]
    for pos in np.ndindex(*updates.shape):
        g = [pos[i] for i in range(updates.ndim) if i not in dn.update_window_dims]
        start = [0] * rank
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] = int(indices[(*g, k)])
        for od, idim in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[od] = g[idim]
        upper = [x.shape[d] - window[d] for d in range(rank)]
        if mode is Mode.CLIP:
            start = [min(max(s, 0), u) for s, u in zip(start, upper)]
        elif any(not 0 <= s <= u for s, u in zip(start, upper)):
            continue
        full = list(start)
        for u, d in zip(dn.update_window_dims, op_window):
            full[d] += pos[u]
        out[tuple(full)] = COMBINE[kind](out[tuple(full)], updates[pos])
    return out


def scatter_fn(kind: str) -> Callable[..., Any]:
    fn: Callable[..., Any] = getattr(lax, kind)
    return fn


@pytest.mark.parametrize("kind", SCATTERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_rows_like_at(kind: str, dtype: Any) -> None:  # x.at[idx].op(u)
    x = make((5, 3), dtype)
    idx = np.array([4, 0, 2], np.int32) if kind == "scatter" else np.array([4, 0, 2, 0, 4], np.int32)
    u = make((len(idx), 3), dtype, seed=1)
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    expected = x.copy()
    if kind == "scatter":
        expected[idx] = u
    else:
        UFUNC_AT[kind].at(expected, idx, u)
    check(lambda x, i, u: scatter_fn(kind)(x, i, u, dn), x, idx[:, None], u, expected=expected)


@pytest.mark.parametrize("kind", SCATTERS)
@pytest.mark.parametrize("dtype", NUMERIC)
def test_scatter_middle_axis_and_pairs(kind: str, dtype: Any) -> None:
    x = make((2, 6, 3), dtype)
    idx = np.array([[5, 1], [0, 3]], np.int32)
    u = make((2, 2, 2, 3), dtype, seed=2)  # x.at[:, idx] -> update shape (2, 2, 2, 3)
    dn = SDN(update_window_dims=(0, 3), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))
    expected = x.copy()
    if kind == "scatter":
        expected[:, idx] = u
    else:
        where: Any = (slice(None), idx)
        UFUNC_AT[kind].at(expected, where, u)
    check(lambda x, i, u: scatter_fn(kind)(x, i, u, dn), x, idx[..., None], u, expected=expected)

    i, j = np.array([1, 0, 1], np.int32), np.array([2, 5, 2], np.int32)  # x.at[i, j]
    if kind == "scatter":
        i, j = i[:2], j[:2]
    v = make((len(i), 3), dtype, seed=4)
    dn2 = SDN(update_window_dims=(1,), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))
    expected = x.copy()
    if kind == "scatter":
        expected[i, j] = v
    else:
        UFUNC_AT[kind].at(expected, (i, j), v)
    check(lambda x, ij, v: scatter_fn(kind)(x, ij, v, dn2), x, np.stack([i, j], -1), v, expected=expected)


@pytest.mark.parametrize("kind", SCATTERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_batched_put_along_axis(kind: str, dtype: Any) -> None:
    x = make((3, 5), dtype)
    idx = np.array([[4, 0], [1, 3], [2, 2 if kind != "scatter" else 0]], np.int32)
    u = make((3, 2), dtype, seed=5)
    dn = SDN(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
             operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    expected = x.copy()
    rows = np.broadcast_to(np.arange(3)[:, None], idx.shape)
    if kind == "scatter":
        np.put_along_axis(expected, idx, u, 1)
    else:
        UFUNC_AT[kind].at(expected, (rows, idx), u)
    assert_same(expected, scatter_oracle(kind, x, idx[..., None], u, dn, Mode.FILL_OR_DROP))
    check(lambda x, i, u: scatter_fn(kind)(x, i, u, dn), x, idx[..., None], u, expected=expected)


@pytest.mark.parametrize("kind", SCATTERS)
@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, BF16])
def test_scatter_windows_out_of_bounds(kind: str, mode: Mode, dtype: Any) -> None:
    x = make((6, 5), dtype)
    starts = np.array([[0, 0], [5, 3], [-1, 2], [2, 7], [3, 1]], np.int32)
    u = make((5, 2, 3), dtype, seed=6)
    dn = SDN(update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1))
    if kind == "scatter":  # overlapping replaced windows have no defined winner: keep them apart
        starts = np.array([[0, 0], [5, 3], [-1, 2], [4, 7], [2, 1]], np.int32)
    oracle_mode = Mode.CLIP if mode is Mode.CLIP else Mode.FILL_OR_DROP
    expected = scatter_oracle(kind, x, starts, u, dn, oracle_mode)
    check(lambda x, i, u: scatter_fn(kind)(x, i, u, dn, mode=mode), x, starts, u, expected=expected)


def test_scatter_python_scalar_update_and_weak_type() -> None:
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    x = np.zeros((3,), np.int32)
    assert_same(lax.scatter_add(np.zeros((), np.int32), np.zeros((0,), np.int32), 5,
                                SDN((), (), ())), np.int32(5))
    check(lambda x: lax.scatter(x, np.array([[1]], np.int32), np.array([7], np.int32), dn), x,
          expected=np.array([0, 7, 0], np.int32))
    weak = pc.ShapeDtypeStruct((3,), np.float32, weak_type=True)
    closed = pc.make_jaxpr(lambda x: lax.scatter_add(x, np.array([[1]], np.int32), np.ones(1, np.float32), dn))(weak)
    assert closed.out_avals[0].weak_type


def test_scatter_errors() -> None:
    x = np.zeros((5, 3), np.float32)
    idx = np.zeros((4, 1), np.int32)
    u = np.zeros((4, 3), np.float32)
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    with pytest.raises(TypeError, match=r"scatter_add: the operand and the updates must have the same dtype, got "
                                        r"f32\[5,3\] and i32\[4,3\]"):
        lax.scatter_add(x, idx, u.astype(np.int32), dn)
    with pytest.raises(ValueError, match=r"scatter: the scatter dimensions \(0,\) of the updates f32\[3,3\] must "
                                         r"match the batch shape \(4,\) of the indices i32\[4,1\]"):
        lax.scatter(x, idx, np.zeros((3, 3), np.float32), dn)
    with pytest.raises(ValueError, match=r"scatter_max: window dimension 1 of the updates f32\[4,4\] \(size 4\) is "
                                         r"larger than dimension 1 of the operand f32\[5,3\]"):
        lax.scatter_max(x, idx, np.zeros((4, 4), np.float32), dn)
    with pytest.raises(ValueError, match=r"scatter_min: update_window_dims=\(1,\), inserted_window_dims=\(\) and "
                                         r"operand_batching_dims=\(\) must together account for the 2 dimensions"):
        lax.scatter_min(x, idx, u, dn._replace(inserted_window_dims=()))
    with pytest.raises(TypeError, match=r"scatter_mul: indices must have an integer dtype"):
        lax.scatter_mul(x, idx.astype(np.float32), u, dn)
    with pytest.raises(TypeError, match=r"lax.scatter: dimension_numbers must be a ScatterDimensionNumbers"):
        lax.scatter(x, idx, u, GDN((1,), (0,), (0,)))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument updates of lax.scatter.*str"):
        lax.scatter(x, idx, "u", dn)


# ---------------------------------------------------------------------------
# iota


@pytest.mark.parametrize("dtype", [np.int32, np.float32, BF16, np.uint8, np.complex64])
def test_iota(dtype: Any) -> None:
    check(lambda: lax.iota(dtype, 5), expected=np.arange(5).astype(dtype))
    expected = np.broadcast_to(np.arange(4).astype(dtype)[None, :, None], (2, 4, 3))
    check(lambda: lax.broadcasted_iota(dtype, (2, 4, 3), 1), expected=expected)
    check(lambda: lax.broadcasted_iota(dtype, (2, 3), -2), expected=np.broadcast_to(
        np.arange(2).astype(dtype)[:, None], (2, 3)))


def test_iota_symbolic_and_errors() -> None:
    closed = pc.make_jaxpr(lambda: lax.iota(np.int32, N))()
    pc.check_jaxpr(closed)
    assert closed.out_avals[0].shape == (N,)
    assert pc.eval_shape(lambda: lax.broadcasted_iota(np.float32, (3, M), 1)).shape == (3, M)
    with pytest.raises(InconclusiveDimensionOperation, match=r"iota on concrete data needs a concrete integer"):
        lax.iota(np.int32, N)
    with pytest.raises(TypeError, match=r"iota: dtype must be an integer, floating or complex type, got bool"):
        lax.iota(np.bool_, 3)
    with pytest.raises(ValueError, match=r"lax.broadcasted_iota: dimension=2 is out of range for an operand of "
                                         r"rank 2"):
        lax.broadcasted_iota(np.int32, (2, 3), 2)
    assert pc.make_jaxpr(lambda: lax.iota(np.float64, 3))().out_avals[0].dtype == np.float32  # x64 off


# ---------------------------------------------------------------------------
# Random dimension numbers against the spec oracles


@st.composite
def gather_problems(draw: Any) -> tuple[np.ndarray, np.ndarray, GDN, tuple[int, ...], Mode]:
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    dims = list(range(rank))
    op_batch = tuple(draw(st.lists(st.sampled_from(dims), max_size=1, unique=True)))
    free = [d for d in dims if d not in op_batch]
    index_map = tuple(draw(st.permutations(free).map(lambda p: p[: draw(st.integers(0, len(free)))])))
    collapsed = tuple(sorted(draw(st.lists(st.sampled_from(free), unique=True)) if free else []))
    sizes = tuple(1 if d in op_batch or d in collapsed else draw(st.integers(0, shape[d])) for d in dims)
    batch = draw(st.lists(st.integers(0, 3), min_size=len(op_batch), max_size=2))
    idx_batch: tuple[int, ...] = ()
    if op_batch:
        pos = draw(st.integers(0, len(batch) - 1))
        batch[pos] = shape[op_batch[0]]
        idx_batch = (pos,)
    lows = [-2] * len(index_map)
    highs = [shape[d] + 1 for d in index_map]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    indices = rng.integers(lows, highs, (*batch, len(index_map))).astype(np.int32) if index_map else \
        np.zeros((*batch, 0), np.int32)
    n_window = rank - len(collapsed) - len(op_batch)
    out_rank = len(batch) + n_window
    offset = tuple(sorted(draw(st.permutations(range(out_rank)))[:n_window]))
    dn = GDN(offset, collapsed, index_map, op_batch, idx_batch)
    return make(shape, np.float32, seed=1), indices, dn, sizes, draw(st.sampled_from(ALL_MODES))


@settings(max_examples=150, deadline=None)
@given(gather_problems())
def test_gather_matches_spec(problem: Any) -> None:
    x, indices, dn, sizes, mode = problem
    oracle_mode = Mode.CLIP if mode is Mode.PROMISE_IN_BOUNDS else mode
    expected = gather_oracle(x, indices, dn, sizes, oracle_mode, np.nan)
    assert_same(lax.gather(x, indices, dn, sizes, mode=mode), expected)


@settings(max_examples=150, deadline=None)
@given(gather_problems(), st.sampled_from(SCATTERS))
def test_scatter_matches_spec(problem: Any, kind: str) -> None:
    # The gather's problem, read backwards: its output shape is the updates' shape.
    x, indices, g, sizes, mode = problem
    dn = SDN(g.offset_dims, g.collapsed_slice_dims, g.start_index_map, g.operand_batching_dims,
             g.start_indices_batching_dims)
    if kind == "scatter":  # overlapping windows have no defined winner: one window per batching slice
        keep = [slice(None) if i in g.start_indices_batching_dims else slice(0, 1) for i in range(indices.ndim - 1)]
        indices = indices[(*keep, slice(None))]
    updates = make(lax.gather(x, indices, g, sizes).shape, np.float32, seed=2)
    oracle_mode = Mode.CLIP if mode is Mode.CLIP else Mode.FILL_OR_DROP
    expected = scatter_oracle(kind, x, indices, updates, dn, oracle_mode)
    np.testing.assert_allclose(scatter_fn(kind)(x, indices, updates, dn, mode=mode), expected, rtol=1e-6)
