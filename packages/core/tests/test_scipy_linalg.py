"""``plait.scipy.linalg`` on core alone, against NumPy: reconstructions,
solves, closed forms of the matrix exponential, and the special matrices
from their definitions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core.config import enable_x64
from plait_core.scipy import linalg as sl

rng = np.random.default_rng(11)
A = rng.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = rng.standard_normal((4, 2))
b = rng.standard_normal(4)
R = rng.standard_normal((4, 3))


@pytest.fixture(autouse=True)
def _x64() -> Any:
    with enable_x64():
        yield


def close(got: Any, want: Any, tol: float = 1e-10) -> None:
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# Factorisations and solves


def test_cholesky_and_cho_solve() -> None:
    u = np.asarray(sl.cholesky(SPD))
    close(np.triu(u), u)
    close(u.T @ u, SPD)
    close(sl.cholesky(SPD, lower=True), u.T)
    for lower in (False, True):
        factor = sl.cho_factor(SPD, lower=lower)
        assert factor[1] is lower
        close(sl.cho_solve(factor, B), np.linalg.solve(SPD, B))
        close(sl.cho_solve(factor, b), np.linalg.solve(SPD, b))


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular(trans: Any, lower: bool) -> None:
    t = (np.tril if lower else np.triu)(A + 1j * A.T) + 4 * np.eye(4)
    op = {0: t, "N": t, 1: t.T, "T": t.T, 2: t.conj().T, "C": t.conj().T}[trans]
    junk = t + (np.triu if lower else np.tril)(np.full((4, 4), 7.0), 1 if lower else -1)  # the other triangle is not read
    close(sl.solve_triangular(junk, B, trans=trans, lower=lower), np.linalg.solve(op, B))
    close(sl.solve_triangular(junk, b, trans=trans, lower=lower), np.linalg.solve(op, b))


def test_solve_det_inv() -> None:
    for assume_a in ("gen", "sym", "her", "pos"):
        close(sl.solve(SPD, B, assume_a=assume_a), np.linalg.solve(SPD, B))
        close(sl.solve(SPD, b, assume_a=assume_a), np.linalg.solve(SPD, b))
    close(sl.det(A), np.linalg.det(A))
    close(sl.inv(A), np.linalg.inv(A))


@pytest.mark.parametrize("x", [A, R, R.T], ids=["square", "tall", "wide"])
def test_lu(x: np.ndarray) -> None:
    p, lo, up = (np.asarray(v) for v in sl.lu(x))
    k = min(x.shape)
    assert lo.shape == (x.shape[0], k) and up.shape == (k, x.shape[1])
    close(p @ lo @ up, x)
    close(np.tril(lo), lo)
    close(np.diag(lo), np.ones(k))
    close(np.triu(up), up)
    close(np.sort(p.sum(0)), np.ones(x.shape[0]))
    pl, up2 = sl.lu(x, permute_l=True)
    close(np.asarray(pl) @ np.asarray(up2), x)


def test_lu_factor_and_solve() -> None:
    factors = sl.lu_factor(A)
    for trans, op in ((0, A), (1, A.T), (2, A.conj().T)):
        close(sl.lu_solve(factors, B, trans=trans), np.linalg.solve(op, B))
    close(sl.lu_solve(factors, b), np.linalg.solve(A, b))


def test_qr_svd_eigh_polar() -> None:
    q, r = (np.asarray(v) for v in sl.qr(R))
    assert q.shape == (4, 4) and r.shape == (4, 3)
    close(q @ r, R)
    close(q.T @ q, np.eye(4))
    q, r = (np.asarray(v) for v in sl.qr(R, mode="economic"))
    assert q.shape == (4, 3)
    close(q @ r, R)
    (r_only,) = sl.qr(R, mode="r")
    close(np.abs(np.asarray(r_only)), np.abs(np.linalg.qr(R, mode="complete")[1]))
    qc, _ = sl.qr_multiply(R, np.ones((2, 4)))
    close(qc, np.ones((2, 4)) @ q)
    u, s, vh = (np.asarray(v) for v in sl.svd(R))
    close(u[:, :3] * s @ vh, R)
    close(sl.svd(R, compute_uv=False), np.linalg.svd(R, compute_uv=False))
    w, v = (np.asarray(t) for t in sl.eigh(SPD))
    close(SPD @ v, v * w)
    close(sl.eigh(SPD, eigvals_only=True), np.linalg.eigvalsh(SPD))
    d, e = rng.standard_normal(5), rng.standard_normal(4)
    close(sl.eigh_tridiagonal(d, e, eigvals_only=True), np.linalg.eigvalsh(np.diag(d) + np.diag(e, 1) + np.diag(e, -1)))
    for side in ("right", "left"):
        up_, p = (np.asarray(t) for t in sl.polar(A, side))
        close(up_ @ p if side == "right" else p @ up_, A)
        close(up_.T @ up_, np.eye(4))
        close(p, p.T)
        assert np.linalg.eigvalsh(p).min() > -1e-12


# ---------------------------------------------------------------------------
# Matrix functions


def test_expm_closed_forms() -> None:
    t = 0.7
    close(sl.expm(np.array([[0.0, -t], [t, 0.0]])), [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], 1e-14)
    n = np.triu(rng.standard_normal((4, 4)), 1)  # nilpotent: the series stops
    close(sl.expm(n), np.eye(4) + n + n @ n / 2 + n @ n @ n / 6, 1e-13)
    for scale in (0.1, 1.0, 30.0):  # small norms, and ones that need squarings
        w, v = np.linalg.eigh(scale * (A + A.T) / 4)
        want = (v * np.exp(w)) @ v.T
        close(sl.expm(scale * (A + A.T) / 4), want, 1e-12 * max(1.0, np.abs(want).max()))
    close(sl.expm(np.zeros((3, 3))), np.eye(3))
    batch = np.stack([A * 0.1, A * 0.2])
    close(sl.expm(batch)[1], np.asarray(sl.expm(A * 0.2)))
    with enable_x64(False):
        single = np.asarray(sl.expm((A * 0.5).astype(np.float32)))
        assert single.dtype == np.float32
        np.testing.assert_allclose(single, np.asarray(sl.expm(A * 0.5)), rtol=1e-4, atol=1e-4)


def test_expm_frechet_is_the_derivative() -> None:
    e = rng.standard_normal((4, 4))
    eps = 1e-6
    fd = (np.asarray(sl.expm(A + eps * e)) - np.asarray(sl.expm(A - eps * e))) / (2 * eps)
    expm_a, frechet = sl.expm_frechet(A, e)
    close(expm_a, np.asarray(sl.expm(A)))
    close(frechet, fd, 1e-6)
    close(sl.expm_frechet(A, e, compute_expm=False), np.asarray(frechet))


def test_sqrtm_funm_sylvester_hessenberg() -> None:
    root = np.asarray(sl.sqrtm(SPD))
    close(root @ root, SPD)
    close(np.asarray(sl.funm(A, pnp.exp)).real, np.asarray(sl.expm(A)), 1e-9)
    c = rng.standard_normal((4, 3))
    bb = rng.standard_normal((3, 3))
    x = np.asarray(sl.solve_sylvester(A, bb, c))
    close(A @ x + x @ bb, c)
    for m in (rng.standard_normal((5, 5)), rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))):
        h, q = (np.asarray(t) for t in sl.hessenberg(m, calc_q=True))
        close(np.triu(h, -1), h)
        close(q @ h @ q.conj().T, m)
        close(q.conj().T @ q, np.eye(len(m)))
        close(sl.hessenberg(m), h)


# ---------------------------------------------------------------------------
# Special matrices


def test_special_matrices_from_their_definitions() -> None:
    c, r = np.array([1.0, 2.0, 3.0]), np.array([9.0, 8.0, 7.0, 6.0])
    close(sl.toeplitz(c, r), [[c[i - j] if i >= j else r[j - i] for j in range(4)] for i in range(3)])
    close(sl.toeplitz(c), [[c[abs(i - j)] for j in range(3)] for i in range(3)])
    close(sl.toeplitz(np.stack([c, 2 * c]))[1], 2 * np.asarray(sl.toeplitz(c)))
    close(sl.hankel(c, r), [[c[i + j] if i + j < 3 else r[i + j - 2] for j in range(4)] for i in range(3)])
    close(sl.circulant(c), [[c[(i - j) % 3] for j in range(3)] for i in range(3)])
    poly = np.array([2.0, 4.0, 6.0, 1.0])
    comp = np.asarray(sl.companion(poly))
    close(np.sort_complex(np.linalg.eigvals(comp)), np.sort_complex(np.roots(poly)))
    fc = np.asarray(sl.fiedler_companion(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])))
    close(np.sort_complex(np.linalg.eigvals(fc)), np.sort_complex(np.roots([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])), 1e-8)
    assert not np.any(fc[np.abs(np.subtract.outer(range(5), range(5))) > 2])  # pentadiagonal
    close(sl.fiedler(c), np.abs(c[:, None] - c[None, :]))
    close(sl.leslie(np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.6])), [[1, 2, 3], [0.5, 0, 0], [0, 0.6, 0]])
    for mode in ("full", "same", "valid"):
        for a, n in ((np.array([1.0, 2.0, 3.0]), 5), (np.arange(1.0, 6.0), 2)):
            v = rng.standard_normal(n)
            close(np.asarray(sl.convolution_matrix(a, n, mode)) @ v, np.convolve(a, v, mode))
    close(sl.block_diag(np.ones((1, 2)), 3.0, np.array([1.0, 2.0])), [[1, 1, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 1, 2]])
    assert np.asarray(sl.block_diag()).shape == (1, 0)
    j, k = np.indices((5, 5))
    close(sl.dft(5), np.exp(-2j * np.pi * j * k / 5))
    close(sl.dft(5, "sqrtn"), np.exp(-2j * np.pi * j * k / 5) / np.sqrt(5))
    h = np.asarray(sl.hadamard(8))
    close(h @ h.T, 8 * np.eye(8))
    close(sl.hilbert(4), 1 / (np.add.outer(range(4), range(4)) + 1))
    close(np.asarray(sl.invhilbert(5)) @ np.asarray(sl.hilbert(5)), np.eye(5), 1e-8)
    for kind in ("symmetric", "lower", "upper"):
        close(np.asarray(sl.invpascal(5, kind)) @ np.asarray(sl.pascal(5, kind)), np.eye(5))
    close(sl.pascal(4, "lower"), [[math.comb(i, jj) for jj in range(4)] for i in range(4)])
    hm = np.asarray(sl.helmert(5, full=True))
    close(hm @ hm.T, np.eye(5))
    close(hm[0], np.full(5, 1 / np.sqrt(5)))
    close(np.asarray(sl.helmert(5)).sum(axis=1), np.zeros(4))


def test_dtypes_without_x64() -> None:
    with enable_x64(False):
        assert np.asarray(sl.hilbert(3)).dtype == np.float32
        assert np.asarray(sl.dft(3)).dtype == np.complex64
        assert np.asarray(sl.hadamard(4)).dtype == np.int32
        assert np.asarray(sl.toeplitz(np.array([1, 2, 3]))).dtype == np.int32
        assert np.asarray(sl.solve(SPD.astype(np.float32), b.astype(np.float32))).dtype == np.float32


def test_linalg_errors() -> None:
    with pytest.raises(ValueError, match=r"scipy.linalg.solve: assume_a must be one of"):
        sl.solve(SPD, b, assume_a="diag")
    with pytest.raises(ValueError, match=r"scipy.linalg.solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C'"):
        sl.solve_triangular(SPD, b, trans=3)
    with pytest.raises(ValueError, match=r"scipy.linalg.det: expected square matrices \(..., n, n\), got an array of shape \(4, 3\)"):
        sl.det(R)
    with pytest.raises(ValueError, match=r"scipy.linalg.cho_solve: incompatible shapes"):
        sl.cho_solve(sl.cho_factor(SPD), np.ones(3))
    with pytest.raises(ValueError, match=r"scipy.linalg.qr: mode must be 'full', 'r' or 'economic'"):
        sl.qr(R, mode="raw")
    with pytest.raises(NotImplementedError, match=r"scipy.linalg.qr: pivoting=True is not supported"):
        sl.qr(R, pivoting=True)
    with pytest.raises(NotImplementedError, match=r"scipy.linalg.eigh: only b=None is supported"):
        sl.eigh(SPD, SPD)
    with pytest.raises(NotImplementedError, match=r"scipy.linalg.schur is not supported: plait has no primitive"):
        sl.schur(A)
    with pytest.raises(NotImplementedError, match=r"scipy.linalg.rsf2csf is not supported"):
        sl.rsf2csf(A, A)
    with pytest.raises(NotImplementedError, match=r"scipy.linalg.sqrtm: the blocked algorithm"):
        sl.sqrtm(A, blocksize=2)
    with pytest.raises(ValueError, match=r"scipy.linalg.qr_multiply: shapes are not compatible for c @ q"):
        sl.qr_multiply(R, np.eye(3))
    with pytest.raises(ValueError, match=r"scipy.linalg.hadamard: n must be a positive power of 2, got 3"):
        sl.hadamard(3)
    with pytest.raises(ValueError, match=r"scipy.linalg.pascal: kind must be one of"):
        sl.pascal(3, "diagonal")
    with pytest.raises(ValueError, match=r"scipy.linalg.companion: a needs at least 2 coefficients, got 1"):
        sl.companion(np.array([1.0]))
    with pytest.raises(ValueError, match=r"scipy.linalg.block_diag: argument 0 has 3 dimensions"):
        sl.block_diag(np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match=r"scipy.linalg.expm_frechet: A and E must have the same shape"):
        sl.expm_frechet(A, np.ones((3, 3)))
