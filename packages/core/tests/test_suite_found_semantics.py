"""Semantics that the optax/chex/diffrax test suites found different from JAX
0.10.2 (issue 25), each checked against NumPy or a closed form."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import nn
from plait_core import numpy as pnp
from plait_core.scipy import special

X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
MASK = np.array([[True, False, True], [True, True, False]])


def _staged_aval(f: Any) -> Any:
    return pc.make_jaxpr(f)().jaxpr.outvars[0].aval


# ---------------------------------------------------------------------------
# *_like of anything with shape and dtype


@pytest.mark.parametrize(("fn", "fill"), [(pnp.zeros_like, 0), (pnp.ones_like, 1), (pnp.empty_like, 0)])
def test_like_functions_take_a_shape_dtype_struct(fn: Any, fill: float) -> None:
    s = pc.ShapeDtypeStruct((2, 3), np.float16)
    out = fn(s)
    assert out.shape == (2, 3) and out.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), fill, np.float16))
    assert fn(s, dtype=np.int8, shape=(4,)).dtype == np.int8 and fn(s, shape=(4,)).shape == (4,)


def test_full_like_of_shape_dtype_struct_canonicalises_and_is_strong() -> None:
    s = pc.ShapeDtypeStruct((2,), np.float64, weak_type=True)
    np.testing.assert_array_equal(np.asarray(pnp.full_like(s, 2)), np.full(2, 2, np.float32))
    aval = _staged_aval(lambda: pnp.full_like(s, 2))
    assert aval.dtype == np.float32 and not aval.weak_type

    class Duck:
        shape = (3,)
        dtype = np.dtype(np.int8)

    assert pnp.zeros_like(Duck()).dtype == np.int8

    class BadDtype:
        shape = (3,)
        dtype = np.dtype(object)

    with pytest.raises(TypeError, match=r"argument 0 of full_like: BadDtype with an unsupported dtype"):
        pnp.zeros_like(BadDtype())


# ---------------------------------------------------------------------------
# nn: JAX's signatures, where= masks


def test_nn_signatures_are_jax_s() -> None:
    assert list(inspect.signature(nn.softmax).parameters) == ["x", "axis", "where"]
    assert list(inspect.signature(nn.log_softmax).parameters) == ["x", "axis", "where"]
    assert list(inspect.signature(nn.logsumexp).parameters) == ["a", "axis", "b", "keepdims", "return_sign", "where"]
    assert list(inspect.signature(nn.standardize).parameters) == [
        "x", "axis", "mean", "variance", "epsilon", "where", "algorithm"]
    assert nn.logsumexp is special.logsumexp


def _np_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def test_log_softmax_positional_and_where() -> None:
    np.testing.assert_allclose(np.asarray(nn.log_softmax(X, -1, None)), _np_log_softmax(X, -1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.softmax(X, 0, None)), np.exp(_np_log_softmax(X, 0)), rtol=1e-6)
    got = np.asarray(nn.log_softmax(X, where=MASK))
    for row, keep in zip(range(2), MASK):
        want = np.full(3, -np.inf, np.float32)
        want[keep] = _np_log_softmax(X[row][keep], 0)
        np.testing.assert_allclose(got[row], want, rtol=1e-6)
    with np.errstate(invalid="ignore"):  # core's NumPy backend computes -inf - -inf in the masked-out row
        nothing = np.asarray(nn.log_softmax(np.array([-np.inf, 0.0], np.float32), where=np.array([False, False])))
    assert np.all(nothing == -np.inf)
    # (staged: eagerly, core alone computes with NumPy arrays, whose operators promote as NumPy's)
    assert _staged_aval(lambda: nn.log_softmax(np.array([1, 2, 3], np.int32))).dtype == np.float32


def test_logsumexp_where_b_and_sign() -> None:
    masked = np.where(MASK, np.exp(X.astype(np.float64)), 0.0)
    np.testing.assert_allclose(float(nn.logsumexp(X, where=MASK)), np.log(masked.sum()), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logsumexp(X, axis=1, where=MASK)), np.log(masked.sum(1)), rtol=1e-6)
    out, sign = nn.logsumexp(X, axis=1, where=MASK, return_sign=True)
    np.testing.assert_allclose(np.asarray(out), np.log(masked.sum(1)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(sign), [1.0, 1.0])
    # Positionally as JAX: (a, axis, b, keepdims).
    want = np.log((2 * np.exp(X.astype(np.float64))).sum(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(nn.logsumexp(X, 1, 2.0, True)), want, rtol=1e-6)


def test_standardize_mean_variance_where() -> None:
    np.testing.assert_allclose(np.asarray(nn.standardize(X, 0, 1.0, 2.0)), (X - 1) / np.sqrt(2 + 1e-5), rtol=1e-6)
    got = np.asarray(nn.standardize(X, where=MASK))
    for row in range(2):
        sel = X[row][MASK[row]]
        want = (X[row] - sel.mean()) / np.sqrt(sel.var() + 1e-5)
        np.testing.assert_allclose(got[row], want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(X, algorithm="stable")),
                               np.asarray(nn.standardize(X, algorithm="fast")))
    with pytest.raises(ValueError, match=r"standardize: unknown algorithm 'exact'; expected 'fast' or 'stable'"):
        nn.standardize(X, algorithm="exact")


# ---------------------------------------------------------------------------
# max/min of complex numbers: lexicographic, as JAX (and NumPy)

C = np.array([[1 + 5j, 2 + 0j], [2 - 1j, 1 + 9j], [2 + 0j, 2 - 3j]], np.complex64)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_complex_max_min_are_lexicographic(axis: Any) -> None:
    np.testing.assert_array_equal(np.asarray(pnp.max(C, axis=axis)), np.max(C, axis=axis))
    np.testing.assert_array_equal(np.asarray(pnp.min(C, axis=axis)), np.min(C, axis=axis))
    np.testing.assert_array_equal(np.asarray(pnp.max(C, axis=axis, keepdims=True)), np.max(C, axis=axis, keepdims=True))
    staged = pc.make_jaxpr(lambda: pnp.min(C, axis=axis))()
    assert staged.jaxpr.outvars[0].aval.dtype == np.complex64


def test_complex_max_initial_where_ptp_and_nan() -> None:
    assert complex(pnp.max(C, initial=3 + 0j)) == 3 + 0j
    where = np.array([[True, False], [False, True], [False, False]])
    assert complex(pnp.max(C, where=where, initial=0j)) == 1 + 9j
    np.testing.assert_array_equal(np.asarray(pnp.ptp(C, axis=0)), np.ptp(C, axis=0))
    # A NaN part makes the result nan+nanj (JAX's answer then depends on XLA's reduction order).
    out = complex(pnp.max(np.array([1 + 1j, complex(np.nan, 0)], np.complex64)))
    assert np.isnan(out.real) and np.isnan(out.imag)


# ---------------------------------------------------------------------------
# Gathers from zero-size operands


def test_empty_results_need_no_gather() -> None:
    empty = np.zeros((0, 3), np.float32)
    no_rows = np.array([], np.int32)
    for out, shape in [
        (pnp.asarray(empty)[no_rows], (0, 3)),
        (pnp.take(empty, no_rows, axis=0), (0, 3)),
        (pnp.take(empty, no_rows, axis=1), (0, 0)),
        (pnp.asarray(empty)[:, np.array([0, 2])], (0, 2)),
        (pnp.asarray(np.zeros((2, 0), np.int8))[np.array([0, 1])], (2, 0)),
        (pnp.asarray(np.zeros((3, 0, 2)))[np.array([0, 1]), :, np.array([1, 0])], (2, 0)),
    ]:
        assert tuple(out.shape) == shape
    assert pnp.asarray(np.zeros((0, 3), np.int8))[no_rows].dtype == np.int8
    np.testing.assert_array_equal(
        np.asarray(pnp.take_along_axis(empty, np.zeros((2, 3), np.int32), axis=0)), np.zeros((2, 3), np.float32))
    staged = pc.make_jaxpr(lambda i: pnp.asarray(empty)[i])(no_rows)
    assert staged.jaxpr.outvars[0].aval.shape == (0, 3)


def test_non_empty_reads_from_an_empty_axis_are_errors() -> None:
    empty = np.zeros((0, 3), np.float32)
    with pytest.raises(IndexError, match=r"take: cannot take a non-empty selection from an empty axis \(axis 0 of "
                       r"shape \(0, 3\)\)"):
        pnp.take(empty, np.array([0, 1]), axis=0)
    with pytest.raises(IndexError, match=r"index is out of bounds for axis 0 with size 0"):
        pc.make_jaxpr(lambda i: pnp.asarray(np.zeros((0,), np.float32))[i])(np.int32(0))  # a traced index
    with pytest.raises(IndexError, match=r"index 0 is out of bounds for axis 0 with size 0"):
        pnp.asarray(empty)[np.array([0, 1])]  # concrete indices are checked
    with pytest.raises(ValueError, match=r"gather: slice_sizes=\(1, 3\) asks for 1 elements of dimension 0"):
        pc.make_jaxpr(lambda i: pnp.asarray(empty)[i])(np.array([0, 1]))  # JAX: a TypeError from its gather
