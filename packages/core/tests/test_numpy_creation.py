"""plait_core.numpy array creation against NumPy, eager and staged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_numpy_util import BF16, F32, I32, check

import plait_core
import plait_core.numpy as pnp
from plait_core.dims import symbolic_dims
from plait_core.errors import ConcretizationTypeError


@pytest.mark.parametrize("shape", [(), 3, (2, 3), (0, 4), [2, 1, 2]], ids=str)
@pytest.mark.parametrize("dtype", [None, np.int32, bool, BF16], ids=str)
def test_zeros_ones_full_empty(shape: Any, dtype: Any) -> None:
    want = np.dtype(dtype) if dtype is not None else F32
    check(lambda: pnp.zeros(shape, dtype), expected=np.zeros(shape), dtype=want)
    check(lambda: pnp.ones(shape, dtype), expected=np.ones(shape, want), dtype=want)
    check(lambda: pnp.empty(shape, dtype), expected=np.zeros(shape), dtype=want)
    full_dt = np.dtype(dtype) if dtype is not None else I32
    check(lambda: pnp.full(shape, 7, dtype), expected=np.full(shape, 7, full_dt), dtype=full_dt)


def test_full_dtype_follows_fill_value_and_broadcasts() -> None:
    check(lambda: pnp.full((2, 3), 2), expected=np.full((2, 3), 2), dtype=I32)
    check(lambda: pnp.full((2, 3), 2.5), expected=np.full((2, 3), 2.5), dtype=F32)
    check(lambda: pnp.full((2, 3), True), expected=np.full((2, 3), True), dtype=bool)
    row = np.arange(3, dtype=np.float32)
    check(lambda r: pnp.full((2, 3), r), row, expected=np.full((2, 3), row))
    with pytest.raises(ValueError, match=r"full: cannot broadcast an array of shape \(3,\) to the shape \(2, 4\)"):
        pnp.full((2, 4), row)


def test_like_functions() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    check(pnp.zeros_like, x, expected=np.zeros_like(x), dtype=I32)
    check(pnp.ones_like, x, expected=np.ones_like(x), dtype=I32)
    check(lambda v: pnp.full_like(v, 4.7), x, expected=np.full_like(x, 4.7), dtype=I32)
    check(lambda v: pnp.full_like(v, 4.5, dtype=np.float32), x, expected=np.full(x.shape, 4.5), dtype=F32)
    check(lambda v: pnp.empty_like(v, shape=(4,)), x, expected=np.zeros(4), dtype=I32)
    check(lambda v: pnp.zeros_like(v, dtype=bool), x, expected=np.zeros(x.shape, bool), dtype=bool)


def test_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"zeros: negative dimensions are not allowed, got shape \(2, -1\)"):
        pnp.zeros((2, -1))
    with pytest.raises(TypeError, match="zeros: a shape must be an int or a sequence of ints, got 'ab'"):
        pnp.zeros("ab")
    with pytest.raises(TypeError, match="ones: invalid dtype 'notadtype'"):
        pnp.ones(3, "notadtype")

    def traced_shape(n: Any) -> Any:
        return pnp.zeros((n,))

    with pytest.raises(ConcretizationTypeError, match="zeros: a dimension of the shape needs a concrete value"):
        plait_core.make_jaxpr(traced_shape)(np.int32(3))


@pytest.mark.parametrize("obj", [[1, 2, 3], [[1.5, 2.0], [3.0, 4.0]], (True, False), 3, 2.5, [],
                                 np.arange(4, dtype=np.int64), np.float64(1.5)], ids=repr)
def test_array_from_data(obj: Any) -> None:
    raw = np.asarray(obj)
    want = {np.dtype(np.int64): I32, np.dtype(np.float64): F32}.get(raw.dtype, raw.dtype)
    check(lambda: pnp.array(obj), expected=raw, dtype=want)
    check(lambda: pnp.asarray(obj), expected=raw, dtype=want)
    check(lambda: pnp.array(obj, dtype=np.float32), expected=raw.astype(np.float32), dtype=F32)


def test_array_of_traced_values_stacks_them() -> None:
    def f(x: Any, y: Any) -> Any:
        return pnp.array([[x, y], [y, 2.0]])

    a, b = np.float32(1.5), np.float32(-2.0)
    check(f, a, b, expected=np.array([[1.5, -2.0], [-2.0, 2.0]]), dtype=F32)
    rows = np.ones((2, 3), np.float32)
    check(lambda r: pnp.asarray([r, r * 2]), rows, expected=np.stack([rows, rows * 2]))
    with pytest.raises(ValueError, match="array: the sequence's elements have different shapes"):
        plait_core.make_jaxpr(lambda r: pnp.array([r, r[0]]))(rows)


def test_array_options_and_errors() -> None:
    check(lambda: pnp.array([1, 2], ndmin=3), expected=np.array([1, 2], ndmin=3), dtype=I32)
    with pytest.raises(OverflowError, match="array: the value 8589934592 does not fit in int32"):
        pnp.array([1, 2**33])
    with pytest.raises(TypeError, match="array: cannot make an array of <U1 data"):
        pnp.array(["a"])
    with plait_core.enable_x64():
        assert np.asarray(pnp.array([1, 2**33])).dtype == np.int64
    copied = np.arange(3)
    out = pnp.array(copied)
    copied[0] = 100
    assert np.asarray(out)[0] == 0


def test_asarray_keeps_a_tracer() -> None:
    def f(x: Any) -> Any:
        assert pnp.asarray(x) is x
        return pnp.asarray(x, dtype=np.int32)

    check(f, np.array([1.7, -2.5], np.float32), expected=[1, -2], dtype=I32)


@pytest.mark.parametrize("args", [(5,), (2, 9), (2, 9, 3), (9, 2, -2), (0.5, 3.0), (1, 2, 0.25), (-3,), (3, 3)],
                         ids=str)
def test_arange(args: Any) -> None:
    raw = np.arange(*args)
    want = F32 if raw.dtype.kind == "f" else I32
    check(lambda: pnp.arange(*args), expected=raw, dtype=want)
    check(lambda: pnp.arange(*args, dtype=np.float32), expected=np.arange(*args, dtype=np.float32), dtype=F32)  # type: ignore[misc]


def test_arange_stages_iota_and_errors() -> None:
    closed = plait_core.make_jaxpr(lambda: pnp.arange(4))()
    assert "iota" in str(closed)
    with pytest.raises(ValueError, match="arange: step must not be zero"):
        pnp.arange(1, 5, 0)
    with pytest.raises(ConcretizationTypeError, match="arange: the stop argument needs a concrete value"):
        plait_core.make_jaxpr(lambda n: pnp.arange(0, n))(np.int32(3))


def test_arange_of_a_symbolic_size() -> None:
    (n,) = symbolic_dims("n")
    closed = plait_core.make_jaxpr(lambda x: pnp.arange(x.shape[0]) + x)(
        plait_core.ShapeDtypeStruct((n,), np.int32))
    assert closed.out_avals[0].shape == (n,)
    closed = plait_core.make_jaxpr(lambda x: pnp.arange(1, x.shape[0]))(plait_core.ShapeDtypeStruct((n,), np.int32))
    assert closed.out_avals[0].shape == (n - 1,)
    closed = plait_core.make_jaxpr(lambda x: pnp.zeros((x.shape[0], 2)))(plait_core.ShapeDtypeStruct((n,), np.int32))
    assert closed.out_avals[0].shape == (n, 2)


@pytest.mark.parametrize("num", [0, 1, 2, 7])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace(num: int, endpoint: bool) -> None:
    check(lambda: pnp.linspace(-1.0, 3.0, num, endpoint=endpoint),
          expected=np.linspace(-1.0, 3.0, num, endpoint=endpoint), dtype=F32, rtol=1e-6, atol=1e-6)
    _, step = pnp.linspace(-1.0, 3.0, num, endpoint=endpoint, retstep=True)
    _, want_step = np.linspace(-1.0, 3.0, num, endpoint=endpoint, retstep=True)
    np.testing.assert_allclose(np.asarray(step), want_step, rtol=1e-6)


def test_linspace_arrays_axis_and_int_dtype() -> None:
    a = np.array([0.0, 1.0], np.float32)
    b = np.array([[4.0, 5.0], [6.0, 7.0]], np.float32)
    for axis in (0, 1, -1, 2):
        check(lambda s, e, axis=axis: pnp.linspace(s, e, 5, axis=axis), a, b, expected=np.linspace(a, b, 5, axis=axis),
              rtol=1e-6)
    check(lambda: pnp.linspace(-3, 4, 6, dtype=np.int32), expected=np.linspace(-3, 4, 6, dtype=np.int32),
          dtype=I32)
    with pytest.raises(ValueError, match="linspace: num must be non-negative, got -1"):
        pnp.linspace(0, 1, -1)
    check(lambda: pnp.logspace(0, 2, 3), expected=np.logspace(0, 2, 3), rtol=1e-6)


@pytest.mark.parametrize("args", [(3,), (3, 4), (4, 3, 1), (3, 5, -2), (2, 2, 5)], ids=str)
def test_eye_tri(args: Any) -> None:
    check(lambda: pnp.eye(*args), expected=np.eye(*args), dtype=F32)
    check(lambda: pnp.tri(*args), expected=np.tri(*args), dtype=F32)
    check(lambda: pnp.eye(*args, dtype=np.int32), expected=np.eye(*args, dtype=np.int32), dtype=I32)  # type: ignore[misc]
    check(lambda: pnp.identity(args[0], dtype=bool), expected=np.identity(args[0], dtype=bool), dtype=bool)


@pytest.mark.parametrize("k", [-2, 0, 1, 3])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (2, 3, 4)], ids=str)
def test_tril_triu(k: int, shape: Any) -> None:
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    check(lambda v: pnp.tril(v, k), x, expected=np.tril(x, k))
    check(lambda v: pnp.triu(v, k), x, expected=np.triu(x, k))
    with pytest.raises(ValueError, match=r"tril: the input must have at least 2 dimensions, got shape \(3,\)"):
        pnp.tril(np.ones(3))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing: str, sparse: bool) -> None:
    xs = (np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32) * 2, np.arange(2, dtype=np.float32))
    want = np.meshgrid(*xs, indexing=indexing, sparse=sparse)  # type: ignore[call-overload]
    check(lambda *v: pnp.meshgrid(*v, indexing=indexing, sparse=sparse), *xs, expected=tuple(want))
    with pytest.raises(ValueError, match="meshgrid: indexing must be 'xy' or 'ij', got 'yx'"):
        pnp.meshgrid(*xs, indexing="yx")


def test_indices() -> None:
    check(lambda: pnp.indices((2, 3)), expected=np.indices((2, 3)), dtype=I32)
    check(lambda: pnp.indices((2, 3), sparse=True), expected=tuple(np.indices((2, 3), sparse=True)), dtype=I32)


def test_copy() -> None:
    x = np.arange(3.0, dtype=np.float32)
    check(pnp.copy, x, expected=x)
