"""``plait.numpy.linalg`` and ``plait.lax.linalg`` through the whole stack
(XLA's LAPACK kernels, autodiff, vmap, jit) against NumPy float64 oracles,
and three drop-in programs written as a JAX user would: Gaussian-process
regression (Cholesky, triangular solves, the log marginal likelihood and its
gradient), Newton's method with ``solve``/``inv``, and PCA by SVD."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax
from plait_core.config import enable_x64

R = np.random.default_rng(11)


def close(got: Any, want: Any, rtol: float = 1e-10, atol: float = 1e-10) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


def spd(*shape: int) -> np.ndarray:
    a = R.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.fixture
def x64() -> Any:
    with enable_x64():
        yield


A = R.standard_normal((3, 4, 4)) + 2 * np.eye(4)
B = R.standard_normal((3, 4, 2))
M = R.standard_normal((5, 3))
S = spd(3, 4, 4)

# name, plait function, NumPy oracle, arguments
VALUES: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = [
    ("solve", pnp.linalg.solve, np.linalg.solve, (A, B)),
    ("solve-vector", pnp.linalg.solve, np.linalg.solve, (A[0], B[0, :, 0])),
    ("inv", pnp.linalg.inv, np.linalg.inv, (A,)),
    ("det", pnp.linalg.det, np.linalg.det, (A,)),
    ("slogdet", lambda a: tuple(pnp.linalg.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)), (A,)),
    ("cholesky", pnp.linalg.cholesky, np.linalg.cholesky, (S,)),
    ("cholesky-upper", lambda a: pnp.linalg.cholesky(a, upper=True), lambda a: np.linalg.cholesky(a, upper=True), (S,)),
    ("eigvalsh", pnp.linalg.eigvalsh, np.linalg.eigvalsh, (S,)),
    ("svdvals", pnp.linalg.svdvals, np.linalg.svdvals, (M,)),
    ("qr-r-abs", lambda a: pnp.abs(pnp.linalg.qr(a, mode="r")), lambda a: np.abs(np.linalg.qr(a, mode="r")), (M,)),
    ("pinv", pnp.linalg.pinv, np.linalg.pinv, (M,)),
    ("lstsq", lambda a, b: pnp.linalg.lstsq(a, b)[0], lambda a, b: np.linalg.lstsq(a, b)[0], (M, M[:, 0])),
    ("matrix_rank", pnp.linalg.matrix_rank, np.linalg.matrix_rank, (np.outer(M[:, 0], M[:, 1]),)),
    ("matrix_power", lambda a: pnp.linalg.matrix_power(a, 5), lambda a: np.linalg.matrix_power(a, 5), (A,)),
    ("matrix_power-neg", lambda a: pnp.linalg.matrix_power(a, -3), lambda a: np.linalg.matrix_power(a, -3), (A,)),
    ("norm-2", lambda a: pnp.linalg.norm(a, 2, axis=(1, 2)), lambda a: np.linalg.norm(a, 2, axis=(1, 2)), (A,)),
    ("norm--2", lambda a: pnp.linalg.norm(a, -2), lambda a: np.linalg.norm(a, -2), (M,)),
    ("norm-nuc", lambda a: pnp.linalg.norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc"), (M,)),
    ("matrix_norm-nuc", lambda a: pnp.linalg.matrix_norm(a, ord="nuc", keepdims=True),
     lambda a: np.linalg.matrix_norm(a, ord="nuc", keepdims=True), (A,)),
    ("cond", pnp.linalg.cond, np.linalg.cond, (A,)),
    ("cond-1", lambda a: pnp.linalg.cond(a, 1), lambda a: np.linalg.cond(a, 1), (A,)),
    ("tensorsolve", pnp.linalg.tensorsolve, np.linalg.tensorsolve, (R.standard_normal((6, 2, 3)), R.standard_normal(6))),
    ("tensorinv", lambda a: pnp.linalg.tensorinv(a, 1), lambda a: np.linalg.tensorinv(a, 1),
     (R.standard_normal((6, 2, 3)),)),
    ("multi_dot", lambda *xs: pnp.linalg.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
     (M[:, 0], M, M.T, M[:, 1])),
]  # fmt: skip


@pytest.mark.parametrize("name,f,oracle,args", VALUES, ids=[v[0] for v in VALUES])
def test_numpy_linalg_matches_numpy_in_float64(x64: Any, name: str, f: Callable[..., Any],
                                               oracle: Callable[..., Any], args: tuple[Any, ...]) -> None:  # fmt: skip
    want, got = oracle(*args), f(*args)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        close(g, w, rtol=1e-9, atol=1e-9)


def test_jit_equals_eager(x64: Any) -> None:
    def many(a: Any, b: Any, s: Any, m: Any) -> list[Any]:
        return [pnp.linalg.solve(a, b), pnp.linalg.inv(a), pnp.linalg.det(a), *pnp.linalg.slogdet(a),
                pnp.linalg.cholesky(s), pnp.linalg.eigvalsh(s), pnp.linalg.svdvals(m), pnp.linalg.pinv(m),
                pnp.linalg.norm(a, 2, axis=(1, 2)), pnp.linalg.cond(a), pnp.linalg.matrix_power(a, -3)]  # fmt: skip

    for e, j in zip(many(A, B, S, M), plait.jit(many)(A, B, S, M)):
        close(j, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_decompositions_reconstruct_in_every_dtype(dtype: Any) -> None:
    with enable_x64(np.dtype(dtype).itemsize >= 16 or dtype == np.float64):
        a = (R.standard_normal((2, 4, 4)) + (1j * R.standard_normal((2, 4, 4)) if np.dtype(dtype).kind == "c" else 0))
        a = a.astype(dtype)
        h = (a @ np.conj(np.swapaxes(a, -1, -2)) + 4 * np.eye(4)).astype(dtype)
        tol = 1e-4 if np.dtype(dtype).itemsize <= 8 and dtype != np.float64 else 1e-10
        w, v = (np.asarray(t) for t in pnp.linalg.eigh(h))
        close(h @ v, v * w[..., None, :], rtol=tol, atol=tol * 10)
        u, s, vh = (np.asarray(t) for t in pnp.linalg.svd(a))
        close((u * s[..., None, :]) @ vh, a, rtol=tol, atol=tol * 10)
        q, r = (np.asarray(t) for t in pnp.linalg.qr(a))
        close(q @ r, a, rtol=tol, atol=tol * 10)
        L = np.asarray(pnp.linalg.cholesky(h))
        close(L @ np.conj(np.swapaxes(L, -1, -2)), h, rtol=tol, atol=tol * 10)
        lu, _, perm = (np.asarray(t) for t in lax.linalg.lu(a))
        lower, upper = np.tril(lu, -1) + np.eye(4), np.triu(lu)
        close(lower @ upper, np.take_along_axis(a, perm[..., None].astype(np.int64), axis=-2), rtol=tol, atol=tol * 10)
        ew, ev = (np.asarray(t) for t in pnp.linalg.eig(a))
        close(a @ ev, ev * ew[..., None, :], rtol=tol, atol=tol * 100)
        close(pnp.linalg.solve(a, h), np.linalg.solve(a, h), rtol=tol * 10, atol=tol * 100)


def numerical_grad(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("name,f", [
    ("slogdet", lambda a: pnp.linalg.slogdet(a)[1]),
    ("det", pnp.linalg.det),
    ("inv-sum", lambda a: pnp.sum(pnp.linalg.inv(a) ** 2)),
    ("solve", lambda a: pnp.sum(pnp.linalg.solve(a, a[:, :1] + 1.0))),
    ("pinv", lambda a: pnp.sum(pnp.linalg.pinv(a) * a.T)),
    ("norm-2", lambda a: pnp.linalg.norm(a, 2)),
    ("norm-nuc", lambda a: pnp.linalg.norm(a, "nuc")),
    ("eigvalsh", lambda a: pnp.sum(pnp.linalg.eigvalsh(a + a.T) ** 3)),
])  # fmt: skip
def test_gradients_match_finite_differences(x64: Any, name: str, f: Callable[..., Any]) -> None:
    a = A[0]
    g = plait.jit(plait.grad(f))(a)
    jf = plait.jit(f)
    close(g, numerical_grad(lambda x: float(jf(x)), a), rtol=1e-6, atol=1e-6)


def test_vmap_of_solve_matches_a_loop(x64: Any) -> None:
    out = plait.vmap(pnp.linalg.solve)(A, B)
    close(out, np.stack([np.linalg.solve(A[i], B[i]) for i in range(3)]))
    grads = plait.vmap(plait.grad(lambda a: pnp.linalg.slogdet(a)[1]))(A)
    close(grads, np.swapaxes(np.linalg.inv(A), -1, -2), rtol=1e-8, atol=1e-8)


def test_errors_name_what_was_wrong() -> None:
    with pytest.raises(ValueError, match=r"linalg.inv: the argument must have shape \(\.\.\., n, n\), got \(2, 3\)"):
        pnp.linalg.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"linalg.det: the argument must have shape \(\.\.\., n, n\), got \(3,\)"):
        pnp.linalg.det(np.ones(3))
    with pytest.raises(ValueError, match=r"linalg.solve: incompatible shapes"):
        pnp.linalg.solve(np.eye(3), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"unsupported QR decomposition mode 'bad'"):
        pnp.linalg.qr(np.eye(3), mode="bad")
    with pytest.raises(NotImplementedError, match=r"mode='raw' is not supported"):
        pnp.linalg.qr(np.eye(3), mode="raw")
    with pytest.raises(TypeError, match=r"linalg.matrix_power: exponent must be an integer, got 1.5"):
        pnp.linalg.matrix_power(np.eye(2), 1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"linalg.multi_dot: needs at least two arrays"):
        pnp.linalg.multi_dot([np.ones(3)])
    with pytest.raises(ValueError, match=r"linalg.tensorinv: the product of the first ind=2 dimensions \(24\)"):
        pnp.linalg.tensorinv(np.ones((4, 6, 8, 2)), ind=2)
    with pytest.raises(TypeError, match=r"triangular_solve does not accept dtype int32"):
        lax.linalg.triangular_solve(np.eye(2, dtype=np.int32), np.eye(2, dtype=np.int32))
    # Integers are promoted by numpy.linalg, as in JAX.
    close(pnp.linalg.inv(2 * np.eye(2, dtype=np.int32)), 0.5 * np.eye(2), rtol=1e-6)


# ---------------------------------------------------------------------------
# Drop-in programs


def rbf(x: Any, y: Any, length: Any, amplitude: Any) -> Any:
    d = x[:, None] - y[None, :]
    return amplitude**2 * pnp.exp(-0.5 * (d / length) ** 2)


def gp_log_marginal_likelihood(params: dict[str, Any], x: Any, y: Any) -> Any:
    """The GP regression objective as a JAX user writes it (jax.scipy-free)."""
    length, amplitude, noise = pnp.exp(params["log_length"]), pnp.exp(params["log_amp"]), pnp.exp(params["log_noise"])
    k = rbf(x, x, length, amplitude) + (noise**2 + 1e-6) * pnp.eye(x.shape[0])
    chol = pnp.linalg.cholesky(k)
    z = lax.linalg.triangular_solve(chol, y[:, None], left_side=True, lower=True)
    alpha_term = pnp.sum(z**2)
    return -0.5 * alpha_term - pnp.sum(pnp.log(pnp.diagonal(chol))) - 0.5 * x.shape[0] * pnp.log(2 * pnp.pi)


def gp_oracle(p: dict[str, float], x: np.ndarray, y: np.ndarray) -> float:
    length, amplitude, noise = np.exp(p["log_length"]), np.exp(p["log_amp"]), np.exp(p["log_noise"])
    d = x[:, None] - x[None, :]
    k = amplitude**2 * np.exp(-0.5 * (d / length) ** 2) + (noise**2 + 1e-6) * np.eye(len(x))
    _, logdet = np.linalg.slogdet(k)
    return float(-0.5 * y @ np.linalg.solve(k, y) - 0.5 * logdet - 0.5 * len(x) * np.log(2 * np.pi))


def test_gaussian_process_regression(x64: Any) -> None:
    x = np.linspace(0, 5, 12)
    y = np.sin(x) + 0.1 * R.standard_normal(12)
    params = {"log_length": np.float64(0.1), "log_amp": np.float64(-0.2), "log_noise": np.float64(-1.5)}
    value, grads = plait.jit(plait.value_and_grad(gp_log_marginal_likelihood))(params, x, y)
    close(value, gp_oracle(params, x, y), rtol=1e-10)
    for name in params:
        def shifted(eps: float, name: str = name) -> float:
            return gp_oracle({**params, name: params[name] + eps}, x, y)

        close(grads[name], (shifted(1e-6) - shifted(-1e-6)) / 2e-6, rtol=1e-5, atol=1e-6)
    # The posterior mean at new points, through cho_solve-style triangular solves.
    xs = np.linspace(0.5, 4.5, 5)
    k = rbf(x, x, np.exp(0.1), np.exp(-0.2)) + (np.exp(-3.0) + 1e-6) * pnp.eye(12)
    chol = pnp.linalg.cholesky(k)
    w = lax.linalg.triangular_solve(chol, y[:, None], left_side=True, lower=True)
    alpha = lax.linalg.triangular_solve(chol, w, left_side=True, lower=True, transpose_a=True)
    mean = rbf(xs, x, np.exp(0.1), np.exp(-0.2)) @ alpha[:, 0]
    kn = np.asarray(k)
    ks = np.exp(-0.4) * np.exp(-0.5 * ((xs[:, None] - x[None, :]) / np.exp(0.1)) ** 2)
    close(mean, ks @ np.linalg.solve(kn, y), rtol=1e-8, atol=1e-8)


def test_newtons_method(x64: Any) -> None:
    # Minimise a smooth convex function with Newton steps: H⁻¹ via inv and via solve.
    c = spd(4, 4)
    b = R.standard_normal(4)

    def f(x: Any) -> Any:
        return 0.5 * x @ c @ x - b @ x + pnp.sum(pnp.exp(0.1 * x))

    def step_solve(x: Any) -> Any:
        return x - pnp.linalg.solve(plait.hessian(f)(x), plait.grad(f)(x))

    def step_inv(x: Any) -> Any:
        return x - pnp.linalg.inv(plait.hessian(f)(x)) @ plait.grad(f)(x)

    def oracle_step(x: np.ndarray) -> np.ndarray:
        g = c @ x - b + 0.1 * np.exp(0.1 * x)
        h = c + np.diag(0.01 * np.exp(0.1 * x))
        return x - np.linalg.solve(h, g)

    x_s = x_i = np.zeros(4)
    want = np.zeros(4)
    jit_solve, jit_inv = plait.jit(step_solve), plait.jit(step_inv)
    for _ in range(6):
        x_s, x_i, want = jit_solve(x_s), jit_inv(x_i), oracle_step(want)
    close(x_s, want, rtol=1e-10)
    close(x_i, want, rtol=1e-10)
    close(plait.grad(f)(x_s), np.zeros(4), atol=1e-10)


def test_pca_by_svd(x64: Any) -> None:
    latent = R.standard_normal((200, 2))
    data = latent @ R.standard_normal((2, 5)) + 0.01 * R.standard_normal((200, 5))

    def pca(x: Any, k: int) -> tuple[Any, Any]:
        centered = x - pnp.mean(x, axis=0)
        _, s, vh = pnp.linalg.svd(centered, full_matrices=False)
        explained = s**2 / pnp.sum(s**2)
        return centered @ vh[:k].T @ vh[:k], explained

    recon, explained = plait.jit(pca, static_argnums=1)(data, 2)
    centered = data - data.mean(axis=0)
    _, s, vh = np.linalg.svd(centered, full_matrices=False)
    close(explained, s**2 / np.sum(s**2), rtol=1e-10)
    close(recon, centered @ vh[:2].T @ vh[:2], rtol=1e-8, atol=1e-10)
    assert float(np.asarray(explained)[:2].sum()) > 0.99


def test_linalg_modules_import_as_in_jax() -> None:
    import plait.lax.linalg as lax_linalg
    import plait.numpy.linalg as np_linalg

    assert np_linalg.solve is pnp.linalg.solve and lax_linalg.eigh is lax.linalg.eigh
    v, w = lax_linalg.eigh(np.diag(np.array([2.0, 1.0], np.float32)))
    close(w, [1.0, 2.0], rtol=1e-6)  # lax.linalg.eigh returns (vectors, values), values ascending
    close(np.abs(np.asarray(v)), [[0.0, 1.0], [1.0, 0.0]], atol=1e-6)


@pytest.mark.parametrize("name,f", [
    ("cholesky", lambda a: lax.linalg.cholesky(a @ pnp.conj(a.T) + 4 * pnp.eye(3))),
    ("eigh", lambda a: lax.linalg.eigh(a @ pnp.conj(a.T))[1]),
    ("svdvals", pnp.linalg.svdvals),
    ("qr", lambda a: pnp.linalg.qr(a)[1]),
    ("lu", lambda a: lax.linalg.lu(a)[0]),
    ("triangular_solve", lambda a: lax.linalg.triangular_solve(a + 3 * pnp.eye(3), a, left_side=True, lower=True,
                                                                transpose_a=True, conjugate_a=True)),
    ("slogdet", lambda a: pnp.linalg.slogdet(a)[1]),
    ("solve", lambda a: pnp.linalg.solve(a, pnp.conj(a))),
])  # fmt: skip
def test_complex_jvps_match_finite_differences(x64: Any, name: str, f: Callable[..., Any]) -> None:
    a = R.standard_normal((3, 3)) + 1j * R.standard_normal((3, 3)) + 2 * np.eye(3)
    t = R.standard_normal((3, 3)) + 1j * R.standard_normal((3, 3))
    jf = plait.jit(f)
    _, tangent = plait.jit(lambda a, t: plait.jvp(f, (a,), (t,)))(a, t)
    numerical = (np.asarray(jf(a + 1e-6 * t)) - np.asarray(jf(a - 1e-6 * t))) / 2e-6
    close(tangent, numerical, rtol=1e-6, atol=1e-6)


def test_grad_of_det_is_the_adjugate_even_when_singular(x64: Any) -> None:
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    close(plait.grad(pnp.linalg.det)(singular), [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-10, atol=1e-12)  # as JAX
    rank_one = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0])
    close(plait.jit(plait.grad(pnp.linalg.det))(rank_one), np.zeros((3, 3)), atol=1e-12)
    batch = A
    want = np.linalg.det(batch)[:, None, None] * np.swapaxes(np.linalg.inv(batch), -1, -2)
    close(plait.vmap(plait.grad(pnp.linalg.det))(batch), want, rtol=1e-9, atol=1e-9)


def test_hessian_of_log_det(x64: Any) -> None:
    # d² log|det A| [E_ij, E_kl] = -(A⁻¹)[j, k] (A⁻¹)[l, i]: second derivatives through the LU rules.
    a = A[1]
    inv = np.linalg.inv(a)
    want = -np.einsum("jk,li->ijkl", inv, inv)
    close(plait.jit(plait.hessian(lambda m: pnp.linalg.slogdet(m).logabsdet))(a), want, rtol=1e-9, atol=1e-9)
