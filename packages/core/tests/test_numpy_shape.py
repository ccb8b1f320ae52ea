"""plait_core.numpy shape manipulation against NumPy, eager and staged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_numpy_util import F32, I32, check, sample

import plait_core
import plait_core.numpy as pnp
from plait_core.dims import symbolic_dims

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("shape", [(6, 4), (-1,), (4, -1, 2), (24,), (1, 2, 1, 12), 24], ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape(shape: Any, order: str) -> None:
    check(lambda v: pnp.reshape(v, shape, order=order), X, expected=np.reshape(X, shape, order=order))  # type: ignore[call-overload]
    check(lambda v: pnp.ravel(v, order), X, expected=np.ravel(X, order))  # type: ignore[call-overload]


def test_reshape_errors() -> None:
    with pytest.raises(ValueError, match=r"reshape: cannot reshape an array of shape \(2, 3, 4\) \(size 24\) into "
                                         r"shape \(5, 5\)"):
        pnp.reshape(X, (5, 5))
    with pytest.raises(ValueError, match="reshape: can only specify one unknown dimension"):
        pnp.reshape(X, (-1, -1))
    with pytest.raises(ValueError, match=r"reshape: cannot reshape an array of shape \(2, 3, 4\) \(size 24\) into "
                                         r"shape \(5, -1\)"):
        pnp.reshape(X, (5, -1))
    with pytest.raises(ValueError, match="reshape: order must be 'C', 'F' or 'A', got 'K'"):
        pnp.reshape(X, (24,), order="K")


def test_reshape_symbolic() -> None:
    (n,) = symbolic_dims("n")
    spec = plait_core.ShapeDtypeStruct((n, 4), np.float32)
    closed = plait_core.make_jaxpr(lambda v: pnp.reshape(v, (-1, 2)))(spec)
    assert closed.out_avals[0].shape == (2 * n, 2)
    closed = plait_core.make_jaxpr(lambda v: pnp.ravel(v))(spec)
    assert closed.out_avals[0].shape == (4 * n,)


@pytest.mark.parametrize("axes", [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)], ids=str)
def test_transpose(axes: Any) -> None:
    check(lambda v: pnp.transpose(v, axes), X, expected=np.transpose(X, axes))
    check(lambda v: pnp.permute_dims(v, axes), X, expected=np.transpose(X, axes))


def test_transpose_like() -> None:
    check(lambda v: pnp.swapaxes(v, 0, -1), X, expected=np.swapaxes(X, 0, -1))
    check(lambda v: pnp.moveaxis(v, 0, -1), X, expected=np.moveaxis(X, 0, -1))
    check(lambda v: pnp.moveaxis(v, (0, 1), (2, 0)), X, expected=np.moveaxis(X, (0, 1), (2, 0)))
    check(pnp.matrix_transpose, X, expected=np.swapaxes(X, -1, -2))
    with pytest.raises(ValueError, match="transpose: axes \\(0, 0, 1\\) are not a permutation"):
        pnp.transpose(X, (0, 0, 1))
    with pytest.raises(ValueError, match="moveaxis: source 0 and destination \\(1, 2\\) must have the same number"):
        pnp.moveaxis(X, 0, (1, 2))


@pytest.mark.parametrize("axis", [0, -1, 3, (0, 2), (-1, 0)], ids=str)
def test_expand_dims(axis: Any) -> None:
    check(lambda v: pnp.expand_dims(v, axis), X, expected=np.expand_dims(X, axis))


def test_squeeze() -> None:
    y = X.reshape(1, 2, 1, 12)
    check(pnp.squeeze, y, expected=np.squeeze(y))
    check(lambda v: pnp.squeeze(v, 2), y, expected=np.squeeze(y, 2))
    check(lambda v: pnp.squeeze(v, (0, -2)), y, expected=np.squeeze(y, (0, -2)))
    with pytest.raises(ValueError, match=r"squeeze: cannot select axis 1 to squeeze out, which has size 2"):
        pnp.squeeze(y, 1)


def test_broadcasting_functions() -> None:
    a = np.arange(3, dtype=np.float32)
    check(lambda v: pnp.broadcast_to(v, (2, 3)), a, expected=np.broadcast_to(a, (2, 3)))
    b = np.ones((4, 1), np.int32)
    check(lambda u, v: pnp.broadcast_arrays(u, v), a, b, expected=tuple(np.broadcast_arrays(a, b)))
    assert pnp.broadcast_shapes((3,), (4, 1), 1) == (4, 3)
    with pytest.raises(ValueError, match=r"broadcast_to: cannot broadcast an array of shape \(3,\) to the shape \(4,\)"):
        pnp.broadcast_to(a, (4,))


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)], ids=str)
def test_atleast(name: str, shape: Any) -> None:
    x = sample(shape, F32)
    check(getattr(pnp, name), x, expected=getattr(np, name)(x))


def test_atleast_several() -> None:
    check(lambda a, b: pnp.atleast_2d(a, b), np.float32(1), np.ones(3, np.float32),
          expected=tuple(np.atleast_2d(np.float32(1), np.ones(3))))


@pytest.mark.parametrize("axis", [0, 1, -1, None], ids=str)
def test_concatenate_and_stack(axis: Any) -> None:
    a = sample((2, 3), F32, seed=1)
    b = sample((2, 3), I32, seed=2)
    check(lambda u, v: pnp.concatenate([u, v, u], axis), a, b, expected=np.concatenate([a, b, a], axis), dtype=F32)
    if axis is not None:
        check(lambda u, v: pnp.stack([u, v], axis), a, b, expected=np.stack([a, b], axis), dtype=F32)
    check(lambda u: pnp.concatenate(pnp.stack([u, u]), 0), a, expected=np.concatenate(np.stack([a, a]), 0))


def test_concatenate_errors() -> None:
    with pytest.raises(ValueError, match="concatenate: need at least one array to concatenate"):
        pnp.concatenate([])
    with pytest.raises(ValueError, match="concatenate: zero-dimensional arrays cannot be concatenated"):
        pnp.concatenate([np.float32(1), np.float32(2)])
    with pytest.raises(ValueError, match="the array at index 0 has 2 dimension\\(s\\) and the array at index 1 has 1"):
        pnp.concatenate([np.ones((2, 3)), np.ones(3)])
    with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 3 and the array at index 1 "
                                         "has size 2"):
        pnp.concatenate([np.ones((2, 3)), np.ones((2, 2))])
    with pytest.raises(ValueError, match=r"stack: all input arrays must have the same shape.*\(2, 3\).*\(2, 2\)"):
        pnp.stack([np.ones((2, 3)), np.ones((2, 2))])
    with pytest.raises(TypeError, match="concatenate: expected a sequence of arrays, got int"):
        pnp.concatenate(3)  # type: ignore[arg-type]


def test_hvd_column_stack_append() -> None:
    a, b = np.arange(3.0, dtype=np.float32), np.arange(3.0, 6.0, dtype=np.float32)
    m = sample((2, 3), F32)
    for name in ("hstack", "vstack", "dstack", "column_stack", "row_stack"):
        oracle = np.vstack if name == "row_stack" else getattr(np, name)
        fn = getattr(pnp, name)
        check(lambda u, v, fn=fn: fn([u, v]), a, b, expected=oracle([a, b]))
        check(lambda u, v, fn=fn: fn([u, v]), m, m, expected=oracle([m, m]))
    check(lambda u, v: pnp.append(u, v), m, a, expected=np.append(m, a))
    check(lambda u: pnp.append(u, u, axis=0), m, expected=np.append(m, m, axis=0))


@pytest.mark.parametrize("spec", [2, [1, 3], [-1], [0, 2, 2], [3, 1], [10]], ids=str)
def test_split(spec: Any) -> None:
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    if isinstance(spec, int):
        check(lambda v: pnp.split(v, spec, 1), x, expected=tuple(np.split(x, spec, 1)))
    check(lambda v: pnp.array_split(v, spec, 0), x, expected=tuple(np.array_split(x, spec, 0)))
    check(lambda v: pnp.hsplit(v, spec), x, expected=tuple(np.hsplit(x, spec)))
    check(lambda v: pnp.vsplit(v, spec), x, expected=tuple(np.vsplit(x, spec)))


def test_split_errors_and_uneven() -> None:
    x = np.arange(7.0, dtype=np.float32)
    check(lambda v: pnp.array_split(v, 3), x, expected=tuple(np.array_split(x, 3)))
    with pytest.raises(ValueError, match="split: array split does not result in an equal division: an axis of size 7 "
                                         "into 3 sections"):
        pnp.split(x, 3)
    with pytest.raises(ValueError, match="split: the number of sections must be larger than 0, got 0"):
        pnp.split(x, 0)


@pytest.mark.parametrize("reps", [2, (2, 1), (1, 2, 3), (0, 2), (3, 1, 1, 1)], ids=str)
def test_tile(reps: Any) -> None:
    x = sample((2, 3), I32)
    check(lambda v: pnp.tile(v, reps), x, expected=np.tile(x, reps), dtype=I32)
    check(lambda v: pnp.tile(v, reps), x[0], expected=np.tile(x[0], reps), dtype=I32)


@pytest.mark.parametrize("repeats,axis", [(2, None), (3, 0), (2, -1), ([1, 0, 2], 1), (np.array([2, 1]), 0), (0, 1)],
                         ids=str)
def test_repeat(repeats: Any, axis: Any) -> None:
    x = sample((2, 3), F32)
    check(lambda v: pnp.repeat(v, repeats, axis), x, expected=np.repeat(x, repeats, axis))


def test_repeat_traced_counts_and_errors() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    counts = np.array([2, 0, 3], np.int32)
    check(lambda v, c: pnp.repeat(v, c, total_repeat_length=5), x, counts, expected=np.repeat(x, counts))
    with pytest.raises(TypeError, match="repeat: traced repeat counts need total_repeat_length="):
        plait_core.make_jaxpr(lambda v, c: pnp.repeat(v, c))(x, counts)
    with pytest.raises(ValueError, match="repeat: repeats may not contain negative values"):
        pnp.repeat(x, -1)
    with pytest.raises(ValueError, match="repeat: 2 repeat counts for an axis of length 3"):
        pnp.repeat(x, [1, 2])


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)], ids=str)
def test_flip(axis: Any) -> None:
    check(lambda v: pnp.flip(v, axis), X, expected=np.flip(X, axis))
    check(pnp.fliplr, X, expected=np.fliplr(X))
    check(pnp.flipud, X, expected=np.flipud(X))
    with pytest.raises(ValueError, match="fliplr: the input must have at least 2 dimensions"):
        pnp.fliplr(np.ones(3))


@pytest.mark.parametrize("shift,axis", [(1, None), (-3, None), (25, None), (2, 1), (-1, -1), ((1, 2), (0, 2)),
                                        (5, (0, 1)), (0, 0)], ids=str)
def test_roll(shift: Any, axis: Any) -> None:
    check(lambda v: pnp.roll(v, shift, axis), X, expected=np.roll(X, shift, axis))


@pytest.mark.parametrize("shift", [-7, -1, 0, 2, 9])
def test_roll_traced_shift(shift: int) -> None:
    check(lambda v, s: pnp.roll(v, s, 1), X, np.int32(shift), expected=np.roll(X, shift, 1))
    check(lambda v, s: pnp.roll(v, s), X, np.int32(shift), expected=np.roll(X, shift))


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 2), (2, 0)], ids=str)
def test_rot90(k: int, axes: Any) -> None:
    check(lambda v: pnp.rot90(v, k, axes), X, expected=np.rot90(X, k, axes))


@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 2), (2, 0), (-1, -2)], ids=str)
def test_diagonal_trace(offset: int, axes: Any) -> None:
    check(lambda v: pnp.diagonal(v, offset, *axes), X, expected=np.diagonal(X, offset, *axes))
    check(lambda v: pnp.trace(v, offset, *axes), X, expected=np.trace(X, offset, *axes))


@pytest.mark.parametrize("k", [-2, 0, 1, 3])
def test_diag_diagflat(k: int) -> None:
    v = np.arange(1, 4, dtype=np.float32)
    check(lambda a: pnp.diag(a, k), v, expected=np.diag(v, k))
    m = X[0]
    check(lambda a: pnp.diag(a, k), m, expected=np.diag(m, k))
    check(lambda a: pnp.diagflat(a, k), m, expected=np.diagflat(m, k))
    with pytest.raises(ValueError, match=r"diag: the input must be 1-D or 2-D, got shape \(2, 3, 4\)"):
        pnp.diag(X)
    with pytest.raises(ValueError, match="diagonal: axis1 and axis2 cannot be the same"):
        pnp.diagonal(X, 0, 1, 1)


def test_shape_ndim_size() -> None:
    assert pnp.shape(X) == (2, 3, 4)
    assert pnp.ndim(X) == 3
    assert pnp.size(X) == 24
    assert pnp.size(X, -1) == 4
    assert pnp.shape(3.0) == ()
