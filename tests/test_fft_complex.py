"""Complex numbers and FFTs through plait's whole stack (XLA, autodiff,
vmap, jit): JAX's convention for complex derivatives checked on closed
forms, FFT gradients against finite differences, and a spectral solver of a
periodic Poisson / heat equation against a NumPy float64 oracle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait_core.config import enable_x64

Z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j], np.complex64)


def close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# JAX's convention for complex derivatives (closed forms)


def test_grad_of_real_function_of_complex_input_is_the_conjugate_gradient() -> None:
    # f(x + iy) real: grad is df/dx - i df/dy, as in JAX.
    close(plait.grad(lambda z: pnp.sum(pnp.abs(z) ** 2))(Z), 2 * np.conj(Z))
    close(plait.grad(lambda z: pnp.sum(pnp.real(z) * pnp.imag(z)))(Z), Z.imag - 1j * Z.real)
    r2 = np.abs(Z) ** 2
    close(plait.grad(lambda z: pnp.sum(pnp.angle(z)))(Z), (-Z.imag - 1j * Z.real) / r2)
    close(plait.grad(lambda z: pnp.sum(pnp.abs(z)))(Z), np.conj(Z) / np.abs(Z))


def test_abs_of_complex_zero_has_zero_derivative() -> None:
    _, t = plait.jvp(pnp.abs, (np.complex64(0),), (np.complex64(1 + 1j),))
    assert float(t) == 0.0


def test_holomorphic_derivatives() -> None:
    close(plait.grad(lambda z: pnp.sum(z**2), holomorphic=True)(Z), 2 * Z)
    close(plait.grad(lambda z: pnp.sum(pnp.sin(z)), holomorphic=True)(Z), np.cos(Z), 1e-4, 1e-4)
    close(plait.jacfwd(lambda z: z * z, holomorphic=True)(Z), np.diag(2 * Z))
    close(plait.jacrev(lambda z: pnp.exp(z), holomorphic=True)(Z), np.diag(np.exp(Z)), 1e-4, 1e-4)


def test_jacobians_with_complex_inputs_follow_jax() -> None:
    close(plait.jacrev(lambda z: pnp.abs(z) ** 2)(Z), np.diag(2 * np.conj(Z)))
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        plait.jacfwd(lambda z: pnp.abs(z) ** 2)(Z)
    x = np.arange(3.0, dtype=np.float32)
    close(plait.jacfwd(pnp.fft.rfft)(x), np.fft.rfft(np.eye(3), axis=0))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        plait.jacrev(pnp.fft.rfft)(x)


# ---------------------------------------------------------------------------
# FFT gradients, jit and vmap


def finite_difference_grad(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize(
    "loss",
    [
        lambda x: pnp.sum(pnp.abs(pnp.fft.rfft(x)) ** 3),
        lambda x: pnp.sum(pnp.fft.irfft(pnp.fft.rfft(x) * pnp.arange(4.0), n=6) ** 2),
        lambda x: pnp.sum(pnp.real(pnp.fft.ifft2(pnp.fft.fft2(x) ** 2))),
        lambda x: pnp.sum(pnp.imag(pnp.fft.fftn(x * 1j + x**2, norm="ortho")) ** 2),
    ],
    ids=["rfft", "irfft", "fft2", "fftn-ortho"],
)
def test_fft_gradients_match_finite_differences(loss: Callable[[Any], Any]) -> None:
    rng = np.random.default_rng(4)
    with enable_x64():
        x = rng.standard_normal((3, 6))
        got = plait.grad(loss)(x)
        want = finite_difference_grad(lambda v: float(loss(v)), x)
        close(got, want, 1e-6, 1e-6)
        close(plait.jit(plait.grad(loss))(x), want, 1e-6, 1e-6)


def test_jit_and_vmap_agree_with_eager() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8, 6)).astype(np.float32)
    f = lambda v: pnp.fft.irfft2(pnp.fft.rfft2(v) * pnp.conj(pnp.fft.rfft2(v[..., ::-1, :])), s=(8, 6))  # noqa: E731
    eager = np.asarray(f(x))
    close(plait.jit(f)(x), eager, 1e-4, 1e-4)
    close(plait.vmap(f)(x), np.stack([np.asarray(f(x[i])) for i in range(4)]), 1e-4, 1e-4)
    spec = np.fft.rfft2(x) * np.conj(np.fft.rfft2(x[:, ::-1]))
    close(eager, np.fft.irfft2(spec, s=(8, 6)), 1e-4, 1e-4)


# ---------------------------------------------------------------------------
# Drop-in: a spectral method with rfft against a NumPy float64 oracle


def poisson_periodic(xp: Any, f: Any, length: float) -> Any:
    """Solve u'' = f - mean(f) on a periodic grid with zero-mean u, by rfft."""
    n = f.shape[-1]
    k = 2 * np.pi * xp.fft.rfftfreq(n, d=length / n)
    fh = xp.fft.rfft(f)
    k2 = xp.where(k == 0, 1.0, k**2)
    uh = xp.where(k == 0, 0.0, -fh / k2)
    return xp.fft.irfft(uh, n=n)


def heat_steps(xp: Any, u0: Any, nu: float, dt: float, steps: int, length: float) -> Any:
    """Exact spectral time stepping of u_t = nu u_xx."""
    n = u0.shape[-1]
    k = 2 * np.pi * xp.fft.rfftfreq(n, d=length / n)
    decay = xp.exp(-nu * k**2 * dt)
    uh = xp.fft.rfft(u0)
    for _ in range(steps):
        uh = uh * decay
    return xp.fft.irfft(uh, n=n)


def test_spectral_poisson_and_heat_equations_match_numpy() -> None:
    length, n = 2 * np.pi, 64
    x = np.arange(n) * length / n
    f = np.sin(3 * x) + 0.5 * np.cos(5 * x) + 0.2
    u_np = poisson_periodic(np, f, length)
    np.testing.assert_allclose(u_np, -np.sin(3 * x) / 9 - 0.5 * np.cos(5 * x) / 25, atol=1e-12)
    close(plait.jit(lambda g: poisson_periodic(pnp, g, length))(f.astype(np.float32)), u_np, 1e-4, 1e-5)
    with enable_x64():
        close(poisson_periodic(pnp, f, length), u_np, 1e-10, 1e-12)
        u0 = np.exp(np.cos(x))
        want = heat_steps(np, u0, 0.1, 0.05, 10, length)
        close(plait.jit(lambda v: heat_steps(pnp, v, 0.1, 0.05, 10, length))(u0), want, 1e-10, 1e-12)
        # The solution's sensitivity to the initial state, by reverse mode, against finite differences.
        loss = lambda v: pnp.sum(heat_steps(pnp, v, 0.1, 0.05, 10, length) ** 2)  # noqa: E731
        g = plait.grad(loss)(u0)
        fd = finite_difference_grad(lambda v: float(np.sum(heat_steps(np, v, 0.1, 0.05, 10, length) ** 2)), u0)
        close(g, fd, 1e-6, 1e-7)
