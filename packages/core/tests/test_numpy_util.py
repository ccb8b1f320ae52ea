"""Shared checks for the plait_core.numpy tests, and tests of the dtype module
and of the promotion, broadcasting and axis helpers.

``check(fn, *args, expected=...)`` runs ``fn`` eagerly and staged
(``make_jaxpr`` + ``check_jaxpr`` + ``eval_jaxpr``), requires the two to agree
exactly, and compares them with the NumPy oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import plait_core
import plait_core.numpy as pnp
from plait_core import dtypes
from plait_core.numpy import _util
from plait_core.tree_util import tree_flatten

F32, I32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(bool)
BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)


def run_both(fn: Callable[..., Any], *args: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``fn(*args)`` eagerly and through make_jaxpr/eval_jaxpr, as flat lists of arrays."""
    eager, _ = tree_flatten(fn(*args))
    closed = plait_core.make_jaxpr(fn)(*args)
    plait_core.check_jaxpr(closed)
    flat_args, _ = tree_flatten(args)
    staged = plait_core.eval_jaxpr(closed.jaxpr, closed.consts, *flat_args)
    return [np.asarray(e) for e in eager], [np.asarray(s) for s in staged]


def assert_close(actual: np.ndarray, expected: Any, rtol: float, atol: float) -> None:
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype == bool or expected.dtype == bool:
        np.testing.assert_array_equal(actual, expected)
        return
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


def check(fn: Callable[..., Any], *args: Any, expected: Any, dtype: Any = None,
          rtol: float = 1e-5, atol: float = 1e-6) -> list[np.ndarray]:
    """Eager == staged (bitwise, same dtype) and both close to ``expected``
    (one value, or a tuple of values for several outputs; a list is one array).
    ``dtype``: the dtype every output must have."""
    eager, staged = run_both(fn, *args)
    want = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(eager) == len(staged) == len(want)
    for e, s, w in zip(eager, staged, want):
        assert e.dtype == s.dtype, (e.dtype, s.dtype)
        np.testing.assert_array_equal(e, s)
        assert_close(e, w, rtol, atol)
        if dtype is not None:
            assert e.dtype == np.dtype(dtype), (e.dtype, dtype)
    return eager


def check_staged(fn: Callable[..., Any], *args: Any, expected: Any, dtype: Any = None,
                 rtol: float = 1e-5, atol: float = 1e-6) -> list[np.ndarray]:
    """Only the staged run (for code using operators, which on NumPy inputs would
    run NumPy's own operators eagerly)."""
    closed = plait_core.make_jaxpr(fn)(*args)
    plait_core.check_jaxpr(closed)
    flat_args, _ = tree_flatten(args)
    staged = [np.asarray(s) for s in plait_core.eval_jaxpr(closed.jaxpr, closed.consts, *flat_args)]
    want = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(staged) == len(want)
    for s, w in zip(staged, want):
        assert_close(s, w, rtol, atol)
        if dtype is not None:
            assert s.dtype == np.dtype(dtype), (s.dtype, dtype)
    return staged


def tol(dt: Any) -> dict[str, float]:
    """Tolerances for comparing results computed in ``dt`` with NumPy."""
    dt = np.dtype(dt)
    if dt == BF16:
        return {"rtol": 2e-2, "atol": 2e-2}
    if dt == F16:
        return {"rtol": 2e-3, "atol": 2e-3}
    return {"rtol": 2e-5, "atol": 2e-6}


def sample(shape: tuple[int, ...], dtype: Any, seed: int = 0, low: float = -3, high: float = 3) -> np.ndarray:
    """Reproducible test data of ``dtype``."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == BOOL:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else int(low)
        return rng.integers(lo, int(high) + 1, size=shape).astype(dt)
    return rng.uniform(low, high, size=shape).astype(dt)


# ---------------------------------------------------------------------------
# The dtypes module


ALL = [np.dtype(d) for d in (bool, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
                             ml_dtypes.bfloat16, np.float16, np.float32)]


@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", ALL, ids=str)
def test_promote_types_matches_core_lattice(a: np.dtype[Any], b: np.dtype[Any]) -> None:
    assert pnp.promote_types(a, b) == dtypes.promote_types(a, b)
    assert pnp.promote_types(a, b) == pnp.promote_types(b, a)


@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", ALL, ids=str)
def test_result_type_of_arrays_and_binary_op(a: np.dtype[Any], b: np.dtype[Any]) -> None:
    x, y = np.zeros(2, a), np.zeros(2, b)
    want = dtypes.canonicalize_dtype(dtypes.promote_types(a, b))
    assert pnp.result_type(x, y) == want
    if want != BOOL:
        assert np.asarray(pnp.add(x, y)).dtype == want


@pytest.mark.parametrize("a", ALL, ids=str)
def test_python_scalars_are_weak(a: np.dtype[Any]) -> None:
    x = np.zeros(2, a)
    assert pnp.result_type(x, 1) == (a if a != BOOL else I32)
    expected_float = a if dtypes.is_float(a) else F32
    assert pnp.result_type(x, 1.0) == expected_float
    assert pnp.result_type(1, 1.0) == F32
    assert pnp.result_type(1, 1.0, return_weak_type_flag=True) == (F32, True)


def test_unsigned_signed_bfloat16_promotions() -> None:
    assert pnp.promote_types(pnp.int8, pnp.uint8) == np.int16
    assert pnp.promote_types(pnp.bfloat16, pnp.float16) == np.float32
    assert pnp.promote_types(np.uint32, np.int32) == np.int64
    assert pnp.result_type(np.zeros(1, np.uint32), np.zeros(1, np.int32)) == np.int32  # x64 off


def test_scalar_types_act_as_dtypes_and_converters() -> None:
    assert np.dtype(pnp.float32) == np.float32
    assert pnp.float32 == np.dtype(np.float32)
    assert np.dtype(np.float32) == pnp.float32
    assert pnp.bfloat16.dtype == ml_dtypes.bfloat16
    y = pnp.int8(np.array([1.7, -2.2]))
    assert np.asarray(y).dtype == np.int8
    np.testing.assert_array_equal(np.asarray(y), [1, -2])
    assert np.asarray(pnp.zeros(2, pnp.bfloat16)).dtype == ml_dtypes.bfloat16
    assert pnp.issubdtype(pnp.bfloat16, pnp.floating)
    assert pnp.issubdtype(np.dtype("int8"), pnp.signedinteger)
    assert not pnp.issubdtype(pnp.uint8, pnp.signedinteger)
    assert pnp.bool is pnp.bool_
    assert repr(pnp.float32) == "plait.numpy.float32"


def test_scalar_type_converts_a_traced_value() -> None:
    closed = plait_core.make_jaxpr(lambda x: pnp.float16(x))(np.ones(3, np.int32))
    assert closed.out_avals[0].dtype == np.float16


def test_dtype_is_numpy_dtype() -> None:
    # As jax.numpy.dtype: NumPy's own class (isinstance checks work), not canonicalising.
    assert pnp.dtype is np.dtype and isinstance(np.dtype("f4"), pnp.dtype)
    assert pnp.dtype("float64") == np.float64 and pnp.dtype(int) == np.dtype(int)
    assert pnp.dtype(pnp.bfloat16) == np.dtype(ml_dtypes.bfloat16) and pnp.dtype(pnp.int8) == np.int8
    with pytest.raises(TypeError, match="data type 'nope' not understood"):
        pnp.dtype("nope")


def test_scalar_types_hash_and_compare_as_numpy_s() -> None:
    assert np.int32 in {pnp.int32} and pnp.int32 in {np.int32}
    assert {np.float32: "f"}[pnp.float32] == "f" and hash(pnp.bfloat16) == hash(ml_dtypes.bfloat16)
    assert pnp.int32 == np.int32 and pnp.int32 == np.dtype("int32") and pnp.int32 != np.int64
    assert len({pnp.float32, np.float32, pnp.float16}) == 2


def test_finfo_iinfo_can_cast() -> None:
    assert float(pnp.finfo(pnp.bfloat16).eps) == float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)  # type: ignore[no-untyped-call]
    assert pnp.iinfo(pnp.int8).max == 127
    assert pnp.can_cast(pnp.int8, pnp.int32)
    assert not pnp.can_cast(pnp.float32, pnp.int32)
    assert pnp.can_cast(pnp.bfloat16, pnp.float32)
    assert not pnp.can_cast(pnp.float16, pnp.bfloat16)


def test_x64_narrowing() -> None:
    assert np.asarray(pnp.array([1.5])).dtype == np.float32
    assert np.asarray(pnp.arange(3)).dtype == np.int32
    with plait_core.enable_x64():
        assert np.asarray(pnp.array([1.5])).dtype == np.float64
        assert np.asarray(pnp.arange(3)).dtype == np.int64
        assert np.asarray(pnp.true_divide(np.arange(3), 2)).dtype == np.float64


# ---------------------------------------------------------------------------
# Helpers


def test_broadcast_shapes_helper_and_errors() -> None:
    assert _util.broadcast_shapes("f", (3, 1), (4,)) == (3, 4)
    assert _util.broadcast_shapes("f", (), (2, 1), (1, 5)) == (2, 5)
    with pytest.raises(ValueError, match=r"add: shapes \(3,\), \(4,\) cannot be broadcast together"):
        pnp.add(np.ones(3), np.ones(4))


def test_symbolic_broadcasting() -> None:
    (n,) = plait_core.dims.symbolic_dims("n")
    assert _util.broadcast_shapes("f", (n, 1), (1, 3)) == (n, 3)
    assert _util.broadcast_shapes("f", (n,), (n,)) == (n,)
    (m,) = plait_core.dims.symbolic_dims("m")
    with pytest.raises(ValueError, match="dimension -1 has sizes n and m"):
        _util.broadcast_shapes("f", (n,), (m,))


def test_axis_errors() -> None:
    with pytest.raises(np.exceptions.AxisError, match="sum: axis 2 is out of bounds for an array of rank 2"):
        pnp.sum(np.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="sum: axis -3 is out of bounds"):
        pnp.sum(np.ones((2, 3)), axis=-3)
    with pytest.raises(TypeError, match=r"sum: axis must be an integer, got 1.5"):
        pnp.sum(np.ones((2, 3)), axis=1.5)
    with pytest.raises(ValueError, match=r"sum: repeated axis in axis=\(0, -2\)"):
        pnp.sum(np.ones((2, 3)), axis=(0, -2))


def test_non_arrays_are_rejected_with_names() -> None:
    with pytest.raises(TypeError, match=r"add: argument 1 is a list; plait.numpy functions take arrays"):
        pnp.add(np.ones(2), [1, 2])
    with pytest.raises(TypeError, match=r"argument 0 of sin: expected an array.*builtins.str"):
        pnp.sin("x")


def test_dim_as_value() -> None:
    assert _util._dim_as_value(3) == 3
    (n,) = plait_core.dims.symbolic_dims("n")
    closed = plait_core.make_jaxpr(lambda: _util._dim_as_value(2 * n))()
    assert [e.primitive.name for e in closed.eqns] == ["dim_as_value"]
    assert closed.eqns[0].params["dim"] == 2 * n
    with pytest.raises(ValueError, match=r"the symbolic size 2\*n has no value here"):
        _util._dim_as_value(2 * n)


def test_check_helper_detects_a_wrong_oracle() -> None:
    with pytest.raises(AssertionError):
        check(lambda x: pnp.add(x, 1.0), np.zeros(2, np.float32), expected=np.zeros(2))
