"""Invertible reverse mode through spectral layers: the FFT and complex-number
primitives are inverted (their inputs rebuilt, not stored) and the gradients
equal ordinary reverse mode."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_autodiff as ad
import plait_core.numpy as pnp
from plait_core import invertible, lax

R = np.random.default_rng(9)


def spectral_block(w: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """A reversible coupling whose residual filters x2 in frequency space."""
    spectrum = lax.fft(lax.complex(x2, x2 * 0.5), "fft", (8,))
    filtered = lax.real(lax.fft(lax.conj(spectrum) * w, "ifft", (8,)))
    y1 = x1 + pnp.tanh(filtered)
    y2 = x2 + pnp.fft.irfft(pnp.fft.rfft(y1) * 0.5, n=8)
    return y1, y2


def test_spectral_coupling_gradients_equal_ordinary_reverse_mode() -> None:
    w = (R.standard_normal(8) + 1j * R.standard_normal(8)).astype(np.complex64)
    x1, x2 = (R.standard_normal((3, 8)).astype(np.float32) for _ in range(2))

    def loss(stack: Any) -> Any:
        def f(a: Any, b: Any) -> Any:
            y1, y2 = stack(a, b)
            return pnp.sum(y1 * y2) + pnp.sum(y1**2)

        return f

    plain = loss(lambda a, b: spectral_block(w, a, b))
    inverted = loss(lambda a, b: invertible(lambda p, q: spectral_block(w, p, q))(a, b))
    want = ad.grad(plain, argnums=(0, 1))(x1, x2)
    got = ad.grad(inverted, argnums=(0, 1))(x1, x2)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-5)


def test_fft_and_conj_are_rebuilt_not_saved() -> None:
    import plait_core as pc
    from plait_core.primitives.calls import invertible_call_p
    from plait_core.primitives.fft import FftType

    def body(x: Any) -> Any:
        z = lax.conj(lax.fft(lax.complex(x, x * 2.0), "fft", (4,)))
        return pnp.exp(pnp.real(lax.fft(z, "ifft", (4,)))), lax.imag(z)

    f = invertible(body)
    x = np.array([0.1, -0.4, 0.3, 0.2], np.float32)
    closed = pc.make_jaxpr(ad.grad(lambda v: sum(pnp.sum(o) for o in f(v))))(x)
    (call,) = [e for e in closed.eqns if e.primitive is invertible_call_p]
    assert len(call.outvars) == 2  # only the outputs leave the forward call
    kinds = [FftType(int(e.params["fft_type"])) for e in closed.eqns if e.primitive.name == "fft"]
    assert kinds.count(FftType.FFT) >= 2 and kinds.count(FftType.IFFT) >= 2  # transposes and inverses

    def plain(v: Any) -> Any:
        return sum(pnp.sum(o) for o in body(v))

    np.testing.assert_allclose(np.asarray(ad.grad(lambda v: sum(pnp.sum(o) for o in f(v)))(x)),
                               np.asarray(ad.grad(plain)(x)), rtol=1e-5, atol=1e-6)  # fmt: skip
