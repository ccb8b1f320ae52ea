"""The factorisation primitives and ``lax.linalg``: reconstructions against
NumPy for every dtype, JAX's output conventions, shape rules and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_core import enable_x64, lax, make_jaxpr
from plait_core.primitives import factorizations as fz

L = lax.linalg
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 2e-4, np.float64: 1e-10, np.complex64: 2e-4, np.complex128: 1e-10}


def sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hpd(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    a = sample(shape, dtype, 1)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def adj(x: Any) -> np.ndarray:
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


@pytest.fixture(autouse=True)
def x64() -> Any:
    with enable_x64():
        yield


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cholesky_reconstructs(dtype: Any) -> None:
    a = hpd((2, 4, 4), dtype)
    f = np.asarray(L.cholesky(a))
    assert f.dtype == dtype and f.shape == a.shape
    np.testing.assert_allclose(f @ adj(f), a, atol=TOL[dtype] * 10)
    assert np.all(np.triu(f, 1) == 0)


def test_cholesky_not_positive_definite_is_nan() -> None:
    a = np.stack([np.eye(3), -np.eye(3)])
    f = np.asarray(L.cholesky(a))
    np.testing.assert_allclose(f[0], np.eye(3))
    assert np.isnan(f[1][np.tril_indices(3)]).all() and (f[1][np.triu_indices(3, 1)] == 0).all()  # as JAX


def test_cholesky_without_symmetrizing_reads_the_lower_triangle() -> None:
    a = hpd((3, 3), np.float64)
    junk = a + np.triu(np.full((3, 3), 5.0), 1)
    np.testing.assert_allclose(L.cholesky(junk, symmetrize_input=False), np.linalg.cholesky(a), rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_every_variant(dtype: Any, left_side: bool) -> None:
    for lower in (True, False):
        for transpose_a in (False, True):
            for conjugate_a in (False, True):
                for unit in (False, True):
                    a = sample((2, 3, 3), dtype, 2) + 3 * np.eye(3, dtype=dtype)
                    b = sample((2, 3, 4) if left_side else (2, 4, 3), dtype, 3)
                    x = np.asarray(L.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                                      conjugate_a=conjugate_a, unit_diagonal=unit))  # fmt: skip
                    t = np.tril(a) if lower else np.triu(a)
                    if unit:
                        t = t * (1 - np.eye(3)) + np.eye(3)
                    t = np.conj(t) if conjugate_a else t
                    t = np.swapaxes(t, -1, -2) if transpose_a else t
                    got = t @ x if left_side else x @ t
                    np.testing.assert_allclose(got, b, atol=TOL[dtype] * 10, err_msg=f"{lower} {transpose_a} {conjugate_a} {unit}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5)])
def test_lu_reconstructs_with_pivots_and_permutation(dtype: Any, shape: tuple[int, int]) -> None:
    a = sample(shape, dtype, 4)
    lu, pivots, perm = (np.asarray(t) for t in L.lu(a))
    m, n = shape[-2:]
    k = min(m, n)
    assert pivots.dtype == np.int32 and pivots.shape == (*shape[:-2], k)
    assert perm.dtype == np.int32 and perm.shape == (*shape[:-2], m)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    permuted = np.take_along_axis(a, perm[..., None].astype(np.int64), axis=-2)
    np.testing.assert_allclose(lower @ upper, permuted, atol=TOL[dtype] * 10)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(pivots, m), perm)
    # Partial pivoting (by |re| + |im|, as LAPACK) bounds L's entries.
    bound = np.sqrt(2) if np.iscomplexobj(a) else 1.0
    assert np.all(np.abs(np.tril(lower, -1)) <= bound + 1e-6)


def test_lu_pivots_to_permutation_applies_swaps_in_order() -> None:
    pivots = np.array([[2, 2, 3], [0, 1, 2]], np.int32)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(pivots, 4), [[2, 0, 3, 1], [0, 1, 2, 3]])
    with pytest.raises(ValueError, match=r"permutation_size \(2\) must be at least the number of pivots \(3\)"):
        L.lu_pivots_to_permutation(pivots, 2)
    with pytest.raises(TypeError, match=r"pivots must be an integer array"):
        L.lu_pivots_to_permutation(np.zeros(3), 4)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5)])
@pytest.mark.parametrize("full", [True, False])
def test_qr_reconstructs(dtype: Any, shape: tuple[int, int], full: bool) -> None:
    a = sample(shape, dtype, 5)
    q, r = (np.asarray(t) for t in L.qr(a, full_matrices=full))
    m, n = shape[-2:]
    k = m if full else min(m, n)
    assert q.shape == (*shape[:-2], m, k) and r.shape == (*shape[:-2], k, n)
    np.testing.assert_allclose(q @ r, a, atol=TOL[dtype] * 10)
    np.testing.assert_allclose(adj(q) @ q, np.broadcast_to(np.eye(k), adj(q).shape[:-1] + (k,)), atol=TOL[dtype] * 10)
    assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_eigh_returns_vectors_then_ascending_real_values(dtype: Any) -> None:
    a = hpd((2, 4, 4), dtype)
    v, w = (np.asarray(t) for t in L.eigh(a))
    assert w.dtype == np.dtype(dtype).type(0).real.dtype and v.dtype == dtype
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=TOL[dtype] * 100)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=TOL[dtype] * 10)
    assert np.all(np.diff(w, axis=-1) >= 0)


def test_eigh_lower_and_upper_read_their_triangle() -> None:
    a = hpd((4, 4), np.float64)
    lower_only = np.tril(a) + np.triu(np.full((4, 4), 9.0), 1)
    upper_only = np.triu(a) + np.tril(np.full((4, 4), 9.0), -1)
    want = np.linalg.eigvalsh(a)
    np.testing.assert_allclose(L.eigh(lower_only, lower=True, symmetrize_input=False)[1], want, rtol=1e-12)
    np.testing.assert_allclose(L.eigh(upper_only, lower=False, symmetrize_input=False)[1], want, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5)])
def test_svd_reconstructs(dtype: Any, shape: tuple[int, int]) -> None:
    a = sample(shape, dtype, 6)
    u, s, vh = (np.asarray(t) for t in L.svd(a, full_matrices=False))
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=TOL[dtype] * 10)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=TOL[dtype] * 10)
    np.testing.assert_allclose(L.svd(a, compute_uv=False), s, rtol=TOL[dtype] * 10)
    uf, _, vhf = (np.asarray(t) for t in L.svd(a, full_matrices=True))
    m, n = shape[-2:]
    assert uf.shape[-2:] == (m, m) and vhf.shape[-2:] == (n, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_eig_left_and_right_vectors(dtype: Any) -> None:
    a = sample((2, 4, 4), dtype, 7)
    w, vl, vr = (np.asarray(t) for t in L.eig(a))
    assert w.dtype == (np.complex64 if dtype in (np.float32, np.complex64) else np.complex128)
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=TOL[dtype] * 100)
    np.testing.assert_allclose(adj(vl) @ a, w[..., :, None] * adj(vl), atol=TOL[dtype] * 100)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1, rtol=TOL[dtype] * 10)
    only_values = L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    assert len(only_values) == 1
    np.testing.assert_allclose(only_values[0], w, rtol=TOL[dtype] * 10)


def test_empty_matrices() -> None:
    q, r = L.qr(np.zeros((0, 3)))
    assert np.shape(q) == (0, 0) and np.shape(r) == (0, 3)
    u, s, vh = L.svd(np.zeros((2, 0)), full_matrices=True)
    np.testing.assert_array_equal(u, np.eye(2))
    assert np.shape(s) == (0,) and np.shape(vh) == (0, 0)
    assert np.shape(L.cholesky(np.zeros((0, 0)))) == (0, 0)


def test_staged_shapes() -> None:
    closed = make_jaxpr(lambda x: L.svd(x, full_matrices=False))(np.zeros((3, 5, 2), np.float32))
    assert [v.aval.shape for v in closed.jaxpr.outvars] == [(3, 5, 2), (3, 2), (3, 2, 2)]
    assert "svd[" in str(closed)


@pytest.mark.parametrize("prim,args,params", [
    (fz.cholesky_p, (np.eye(3, dtype=np.int32),), {}),
    (fz.lu_p, (np.eye(3, dtype=np.int32),), {}),
    (fz.qr_p, (np.eye(3, dtype=np.bool_),), {"full_matrices": True}),
    (fz.eigh_p, (np.eye(3, dtype=np.float16),), {"lower": True, "sort_eigenvalues": True}),
    (fz.svd_p, (np.eye(3, dtype=np.int8),), {"full_matrices": True, "compute_uv": True}),
    (fz.eig_p, (np.eye(3, dtype=np.int32),), {"compute_left_eigenvectors": True, "compute_right_eigenvectors": True}),
])  # fmt: skip
def test_integer_input_is_a_type_error(prim: Any, args: tuple[Any, ...], params: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match=rf"{prim.name} does not accept dtype {args[0].dtype.name} at position 0"):
        prim.bind(*args, **params)


def test_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"lax.linalg.cholesky: the operand must be a square matrix \(\.\.\., n, n\), got shape \(2, 3\)"):
        L.cholesky(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"lax.linalg.eigh: the operand must have at least 2 dimensions"):
        L.eigh(np.ones(3))
    with pytest.raises(ValueError, match=r"eig: the operand must be a square matrix"):
        L.eig(np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"triangular_solve: incompatible shapes \(3, 3\) and \(4, 2\)"):
        L.triangular_solve(np.eye(3), np.ones((4, 2)), left_side=True)
    with pytest.raises(ValueError, match=r"triangular_solve: a and b must have the same rank"):
        L.triangular_solve(np.ones((2, 3, 3)), np.ones(3))
    with pytest.raises(TypeError, match=r"triangular_solve requires a and b of the same dtype"):
        L.triangular_solve(np.eye(3, dtype=np.float32), np.ones((3, 3)), left_side=True)
    with pytest.raises(TypeError, match=r"triangular_solve does not accept dtype int32 at position 1"):
        L.triangular_solve(np.eye(3), np.ones((3, 3), np.int32), left_side=True)


def test_unsupported_options_say_why() -> None:
    with pytest.raises(NotImplementedError, match=r"pivoting=True is not supported: .*geqp3"):
        L.qr(np.eye(3), pivoting=True)
    with pytest.raises(NotImplementedError, match=r"subset_by_index=\(0, 1\) is not supported"):
        L.eigh(np.eye(3), subset_by_index=(0, 1))
    with pytest.raises(NotImplementedError, match=r"subset_by_index=\(0, 1\) is not supported"):
        L.svd(np.eye(3), subset_by_index=(0, 1))


def test_integer_input_to_the_symmetrizing_functions_becomes_float() -> None:
    # As in JAX: cholesky and eigh symmetrise first, which promotes integers.
    f = L.cholesky(4 * np.eye(2, dtype=np.int32))
    np.testing.assert_allclose(f, 2 * np.eye(2))
    assert np.asarray(f).dtype == np.float64


def test_triangular_solve_of_vectors() -> None:
    a = np.tril(sample((2, 3, 3), np.float64, 8)) + 3 * np.eye(3)
    b = sample((2, 3), np.float64, 9)
    x = np.asarray(L.triangular_solve(a, b, left_side=True, lower=True))
    np.testing.assert_allclose(np.einsum("bij,bj->bi", a, x), b, rtol=1e-12)
    y = np.asarray(L.triangular_solve(a, b, left_side=False, lower=True, transpose_a=True))
    np.testing.assert_allclose(np.einsum("bj,bij->bi", y, a), b, rtol=1e-12)


def test_a_matrix_holding_nan_gives_nan_results_and_leaves_the_others() -> None:
    a = np.stack([hpd((3, 3), np.float64), np.full((3, 3), np.nan)])
    v, w = (np.asarray(t) for t in L.eigh(a))
    np.testing.assert_allclose(w[0], np.linalg.eigvalsh(a[0]), rtol=1e-12)
    assert np.isnan(w[1]).all() and np.isnan(v[1]).all()
    s = np.asarray(L.svd(a, compute_uv=False))
    np.testing.assert_allclose(s[0], np.linalg.svd(a[0], compute_uv=False), rtol=1e-12)
    assert np.isnan(s[1]).all()
