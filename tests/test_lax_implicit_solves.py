"""``lax.custom_root`` and ``lax.custom_linear_solve`` differentiated implicitly
(forward and reverse mode, under ``jit`` and ``vmap``), against closed forms
and, when ``PLAIT_JAX_PYTHON`` names a JAX 0.10.2 interpreter, against JAX."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
B = np.array([1.0, 2.0, -1.0], np.float32)


def newton(f: Any, x0: Any) -> Any:
    """30 scalar Newton steps (differentiating them directly would be wrong: they stop at the root)."""
    return lax.fori_loop(0, 30, lambda i, x: x - f(x) / plait.grad(f)(x), x0)


def scalar_tangent_solve(g: Any, y: Any) -> Any:
    return y / g(1.0)


def cube_root(a: Any) -> Any:
    return lax.custom_root(lambda x: x**3 - a, 1.0, newton, scalar_tangent_solve)


def cg(matvec: Any, b: Any) -> Any:
    """Conjugate gradients, as many steps as unknowns (exact for SPD systems)."""
    def body(i: Any, c: Any) -> Any:
        x, r, p = c
        ap = matvec(p)
        rr = pnp.vdot(r, r)
        alpha = rr / pnp.vdot(p, ap)
        r2 = r - alpha * ap
        return x + alpha * p, r2, r2 + pnp.vdot(r2, r2) / rr * p

    return lax.fori_loop(0, b.shape[0], body, (pnp.zeros_like(b), b, b))[0]


def solve_cg(m: Any, b: Any) -> Any:
    return lax.custom_linear_solve(lambda x: m @ x, b, cg, symmetric=True)


def test_newton_root_value_and_derivatives() -> None:
    assert float(cube_root(8.0)) == pytest.approx(2.0, rel=1e-6)
    # d a^(1/3) / da = a^(-2/3) / 3; second derivative -2/9 a^(-5/3)
    want1, want2 = 8.0 ** (-2 / 3) / 3, -2 / 9 * 8.0 ** (-5 / 3)
    assert float(plait.grad(cube_root)(8.0)) == pytest.approx(want1, rel=1e-5)
    assert float(plait.jvp(cube_root, (8.0,), (2.0,))[1]) == pytest.approx(2 * want1, rel=1e-5)
    assert float(plait.jit(plait.grad(cube_root))(8.0)) == pytest.approx(want1, rel=1e-5)
    assert float(plait.grad(plait.grad(cube_root))(8.0)) == pytest.approx(want2, rel=1e-4)
    a = np.array([1.0, 8.0, 27.0], np.float32)
    np.testing.assert_allclose(np.asarray(plait.vmap(plait.grad(cube_root))(a)), a ** (-2 / 3) / 3, rtol=1e-5)


def test_vector_root_with_linear_tangent_solve() -> None:
    # f(x) = A x + x**3 / 3 - p has Jacobian A + diag(x**2); tangent_solve densifies g.
    def tangent_solve(g: Any, y: Any) -> Any:
        jac = plait.vmap(g, out_axes=1)(pnp.eye(3, dtype=y.dtype))
        return pnp.linalg.solve(jac, y)

    def solver(f: Any, x0: Any) -> Any:
        return lax.fori_loop(0, 20, lambda i, x: x - pnp.linalg.solve(plait.jacfwd(f)(x), f(x)), x0)

    def root(p: Any) -> Any:
        return lax.custom_root(lambda x: A @ x + x**3 / 3 - p, pnp.zeros(3), solver, tangent_solve)

    x = np.asarray(root(B), np.float64)
    np.testing.assert_allclose(A @ x + x**3 / 3, B, atol=1e-5)
    jac_want = np.linalg.inv(A.astype(np.float64) + np.diag(x**2))  # dx/dp
    np.testing.assert_allclose(np.asarray(plait.jacrev(root)(B)), jac_want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(plait.jacfwd(root)(B)), jac_want, rtol=1e-4, atol=1e-6)


def test_cg_solve_value_forward_and_reverse() -> None:
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    ainv = np.linalg.inv(a64)
    x = ainv @ b64
    np.testing.assert_allclose(np.asarray(solve_cg(A, B)), x, rtol=1e-5)
    # d(sum x)/dM = -lambda x^T with lambda = A^-T 1; d(sum x)/db = lambda
    lam = ainv.T @ np.ones(3)
    g_m, g_b = plait.grad(lambda m, b: solve_cg(m, b).sum(), argnums=(0, 1))(A, B)
    np.testing.assert_allclose(np.asarray(g_m), -np.outer(lam, x), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(g_b), lam, rtol=1e-5)
    dm = np.arange(9, dtype=np.float32).reshape(3, 3) / 10
    _, tangent = plait.jvp(lambda m: solve_cg(m, B), (A,), (dm,))
    np.testing.assert_allclose(np.asarray(tangent), -ainv @ dm @ x, rtol=1e-4, atol=1e-6)
    jitted = plait.jit(plait.grad(lambda m: solve_cg(m, B).sum()))(A)
    np.testing.assert_allclose(np.asarray(jitted), -np.outer(lam, x), rtol=1e-4, atol=1e-6)
    batched = plait.vmap(plait.grad(lambda b: solve_cg(A, b) @ b))(np.stack([B, 2 * B]))
    np.testing.assert_allclose(np.asarray(batched), [2 * ainv @ b64, 4 * ainv @ b64], rtol=1e-4)


def test_second_order_through_the_linear_solve() -> None:
    # h(b) = b . A^-1 b has Hessian 2 A^-1 (A symmetric).
    hess = plait.hessian(lambda b: solve_cg(A, b) @ b)(B)
    np.testing.assert_allclose(np.asarray(hess), 2 * np.linalg.inv(A.astype(np.float64)), rtol=1e-4, atol=1e-6)


def test_transpose_solve_and_has_aux() -> None:
    m = A + np.triu(A, 1)  # not symmetric

    def direct(mv: Any, b: Any) -> Any:
        return pnp.linalg.solve(m, b), pnp.int32(7)

    def direct_t(vm: Any, b: Any) -> Any:
        return pnp.linalg.solve(m.T, b), pnp.int32(8)

    def f(b: Any) -> Any:
        return lax.custom_linear_solve(lambda x: m @ x, b, direct, direct_t, has_aux=True)

    x, aux = f(B)
    assert int(aux) == 7
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(m, B), rtol=1e-5)
    g = plait.grad(lambda b: f(b)[0] @ np.array([1.0, -2.0, 3.0], np.float32))(B)
    np.testing.assert_allclose(np.asarray(g), np.linalg.solve(m.T, [1.0, -2.0, 3.0]), rtol=1e-5)


def test_errors() -> None:
    def no_transpose(b: Any) -> Any:
        return lax.custom_linear_solve(lambda x: A @ x, b, lambda mv, b: pnp.linalg.solve(A, b))

    # forward mode needs no transpose_solve; reverse mode does.
    np.testing.assert_allclose(np.asarray(plait.jvp(no_transpose, (B,), (B,))[1]), np.linalg.solve(A, B), rtol=1e-5)
    with pytest.raises(TypeError, match="transpose_solve"):
        plait.grad(lambda b: no_transpose(b).sum())(B)
    with pytest.raises(ValueError, match="solution must have the same shapes"):
        lax.custom_linear_solve(lambda x: A @ x, B, lambda mv, b: b[:2])
    with pytest.raises(TypeError, match="tree structure"):
        lax.custom_root(lambda x: x - 1.0, 0.0, lambda f, x: (x, x), scalar_tangent_solve)
    with pytest.raises(TypeError, match="must be functions"):
        lax.custom_linear_solve(A, B, cg)


def _jax_python() -> str | None:
    path = os.environ.get("PLAIT_JAX_PYTHON")
    return path if path and os.path.exists(path) else None


@pytest.mark.skipif(_jax_python() is None, reason="PLAIT_JAX_PYTHON does not name a JAX interpreter")
def test_against_jax() -> None:
    script = textwrap.dedent(f"""
        import json, jax, jax.numpy as jnp
        from jax import lax
        A = jnp.array({A.tolist()}, jnp.float32); B = jnp.array({B.tolist()}, jnp.float32)
        def newton(f, x0):
            return lax.fori_loop(0, 30, lambda i, x: x - f(x) / jax.grad(f)(x), x0)
        cube = lambda a: lax.custom_root(lambda x: x**3 - a, 1.0, newton, lambda g, y: y / g(1.0))
        sol = lambda m, b: lax.custom_linear_solve(lambda x: m @ x, b, lambda mv, b: jnp.linalg.solve(m, b),
                                                   symmetric=True)
        gm, gb = jax.grad(lambda m, b: jnp.sin(sol(m, b)).sum(), argnums=(0, 1))(A, B)
        print(json.dumps({{"root": float(jax.grad(cube)(5.0)), "gm": gm.tolist(), "gb": gb.tolist(),
                          "jvp": jax.jvp(lambda m: sol(m, B), (A,), (A * A,))[1].tolist()}}))
    """)
    out = subprocess.run([_jax_python() or "", "-c", script], capture_output=True, text=True, check=True)
    want = json.loads(out.stdout.strip().splitlines()[-1])
    assert float(plait.grad(cube_root)(5.0)) == pytest.approx(want["root"], rel=1e-5)

    def sol(m: Any, b: Any) -> Any:
        return lax.custom_linear_solve(lambda x: m @ x, b, lambda mv, b: pnp.linalg.solve(m, b), symmetric=True)

    gm, gb = plait.grad(lambda m, b: pnp.sin(sol(m, b)).sum(), argnums=(0, 1))(A, B)
    np.testing.assert_allclose(np.asarray(gm), want["gm"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), want["gb"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(plait.jvp(lambda m: sol(m, B), (A,), (A * A,))[1]), want["jvp"], rtol=1e-4)
