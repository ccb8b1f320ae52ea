"""The fft and complex-number primitives and ``numpy.fft`` on core alone
(NumPy reference implementations), against NumPy's own FFTs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import lax, make_jaxpr
from plait_core.config import enable_x64

rng = np.random.default_rng(1)
X = rng.standard_normal((3, 4, 6)).astype(np.float32)
Z = (X + 1j * rng.standard_normal(X.shape)).astype(np.complex64)
NORMS = [None, "backward", "ortho", "forward"]


def close(got: Any, want: Any, rtol: float = 1e-5) -> None:
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))


# ---------------------------------------------------------------------------
# Primitives


def test_complex_primitives_values_and_dtypes() -> None:
    z = lax.complex(X, 2.0)
    assert z.dtype == np.complex64
    close(z, X + 2j)
    close(lax.real(Z), Z.real)
    close(lax.imag(Z), Z.imag)
    close(lax.conj(Z), np.conj(Z))
    assert lax.real(Z).dtype == np.float32 and lax.conj(X).dtype == np.complex64
    with enable_x64():
        assert lax.complex(np.ones(2), np.zeros(2)).dtype == np.complex128
        assert lax.imag(np.ones(2, np.complex128)).dtype == np.float64


def test_complex_keeps_infinities_out_of_products() -> None:
    z = lax.complex(np.array([np.inf, 1.0], np.float32), np.array([0.0, np.inf], np.float32))
    assert np.asarray(z)[0] == complex(np.inf, 0) and np.asarray(z)[1].real == 1.0


def test_complex_primitive_errors() -> None:
    with pytest.raises(TypeError, match=r"real does not accept float32 operands; it needs a complex dtype"):
        lax.real(X)
    with pytest.raises(TypeError, match=r"complex does not accept int32 operands; it needs a float32 or float64 dtype"):
        lax.complex(np.ones(2, np.int32), np.ones(2, np.int32))
    with enable_x64(), pytest.raises(TypeError, match=r"lax.complex requires arguments of the same dtype, got float32, float64"):
        lax.complex(np.ones(2, np.float32), np.ones(2, np.float64))
    with pytest.raises(ValueError, match=r"complex requires operands of equal shapes"):
        lax.complex(np.ones(2, np.float32), np.ones(3, np.float32))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_fft_primitive_against_numpy(k: int) -> None:
    axes = tuple(range(3 - k, 3))
    lengths = X.shape[3 - k :]
    close(lax.fft(Z, "fft", lengths), np.fft.fftn(Z, axes=axes), 1e-5)
    close(lax.fft(Z, lax.FftType.IFFT, lengths), np.fft.ifftn(Z, axes=axes), 1e-5)
    close(lax.fft(X, "rfft", lengths), np.fft.rfftn(X, axes=axes), 1e-5)
    half = Z[..., :4]
    out_lengths = (*lengths[:-1], 7)
    close(lax.fft(half, "irfft", out_lengths), np.fft.irfftn(half, s=out_lengths, axes=axes), 1e-5)


def test_fft_converts_its_operand_as_jax() -> None:
    assert lax.fft(np.arange(4), "fft", (4,)).dtype == np.complex64
    assert lax.fft(np.arange(4), "rfft", (4,)).dtype == np.complex64
    assert lax.fft(np.ones(3, np.float32), "irfft", (4,)).dtype == np.float32
    with enable_x64():
        assert lax.fft(np.ones(4), "rfft", (4,)).dtype == np.complex128


def test_fft_shape_rule_is_staged() -> None:
    closed = make_jaxpr(lambda x: lax.fft(x, "rfft", (4, 6)))(X)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive.name == "fft" and eqn.outvars[0].aval.shape == (3, 4, 4)


def test_fft_errors() -> None:
    with pytest.raises(ValueError, match=r"lax.fft: RFFT transforms real values only, got a complex64 operand"):
        lax.fft(Z, "rfft", (6,))
    with pytest.raises(ValueError, match=r"lax.fft: unknown fft_type 'dft'"):
        lax.fft(Z, "dft", (6,))
    with pytest.raises(ValueError, match=r"fft \(FFT\) with fft_lengths \(5,\) needs trailing operand dimensions \(5,\), got c64\[3,4,6\]"):
        lax.fft(Z, "fft", (5,))
    with pytest.raises(ValueError, match=r"fft \(IRFFT\) with fft_lengths \(6,\) needs trailing operand dimensions \(4,\)"):
        lax.fft(Z, "irfft", (6,))
    with pytest.raises(ValueError, match=r"fft: fft_lengths must be a tuple of 1 to 3 sizes"):
        lax.fft(np.ones((2, 2, 2, 2), np.complex64), "fft", (2, 2, 2, 2))
    with pytest.raises(ValueError, match=r"fft: a 2-D transform needs an operand of rank at least 2"):
        lax.fft(np.ones(4, np.complex64), "fft", (1, 4))
    with pytest.raises(ValueError, match=r"fft: fft_lengths must be positive integers"):
        lax.fft(np.ones(4, np.complex64), "fft", (0,))


# ---------------------------------------------------------------------------
# numpy.fft


@pytest.mark.parametrize("norm", NORMS)
def test_one_dimensional_transforms(norm: str | None) -> None:
    close(pnp.fft.fft(Z, norm=norm), np.fft.fft(Z, norm=norm))
    close(pnp.fft.ifft(Z, n=7, axis=0, norm=norm), np.fft.ifft(Z, n=7, axis=0, norm=norm))
    close(pnp.fft.rfft(X, n=4, axis=1, norm=norm), np.fft.rfft(X, n=4, axis=1, norm=norm))
    close(pnp.fft.irfft(Z, norm=norm), np.fft.irfft(Z, norm=norm))
    close(pnp.fft.irfft(Z, n=9, axis=1, norm=norm), np.fft.irfft(Z, n=9, axis=1, norm=norm))
    close(pnp.fft.hfft(Z, norm=norm), np.fft.hfft(Z, norm=norm))
    close(pnp.fft.ihfft(X, n=5, norm=norm), np.fft.ihfft(X, n=5, norm=norm))


@pytest.mark.parametrize("norm", NORMS)
def test_multi_dimensional_transforms(norm: str | None) -> None:
    close(pnp.fft.fft2(Z, norm=norm), np.fft.fft2(Z, norm=norm))
    close(pnp.fft.ifft2(Z, s=(3, 8), axes=(0, 2), norm=norm), np.fft.ifft2(Z, s=(3, 8), axes=(0, 2), norm=norm))
    close(pnp.fft.rfft2(X, axes=(2, 0), norm=norm), np.fft.rfft2(X, axes=(2, 0), norm=norm))
    close(pnp.fft.irfft2(Z, s=(4, 5), norm=norm), np.fft.irfft2(Z, s=(4, 5), norm=norm))
    close(pnp.fft.fftn(Z, norm=norm), np.fft.fftn(Z, norm=norm))
    close(pnp.fft.ifftn(Z, axes=(2, 0), norm=norm), np.fft.ifftn(Z, axes=(2, 0), norm=norm))
    close(pnp.fft.rfftn(X, s=(5, 4), axes=(1, 2), norm=norm), np.fft.rfftn(X, s=(5, 4), axes=(1, 2), norm=norm))
    close(pnp.fft.irfftn(Z, norm=norm), np.fft.irfftn(Z, norm=norm))


def test_more_than_three_axes_are_transformed_in_groups() -> None:
    x = rng.standard_normal((2, 3, 2, 4, 3)).astype(np.float32)
    close(pnp.fft.fftn(x), np.fft.fftn(x), 1e-4)
    close(pnp.fft.ifftn(x, axes=(0, 1, 2, 3)), np.fft.ifftn(x, axes=(0, 1, 2, 3)), 1e-4)
    close(pnp.fft.rfftn(x), np.fft.rfftn(x), 1e-4)
    half = (x[..., :3] + 1j * x[..., :3]).astype(np.complex64)
    close(pnp.fft.irfftn(half, axes=(1, 2, 3, 4)), np.fft.irfftn(half, axes=(1, 2, 3, 4)), 1e-4)


def test_round_trips_and_dtypes() -> None:
    close(pnp.fft.irfft(pnp.fft.rfft(X), n=6), X)
    close(pnp.fft.ifftn(pnp.fft.fftn(Z)), Z)
    assert pnp.fft.fft(np.arange(4)).dtype == np.complex64
    assert pnp.fft.irfft(Z).dtype == np.float32
    with enable_x64():
        assert pnp.fft.rfft(np.ones(8)).dtype == np.complex128
        assert pnp.fft.fft(np.ones(8, np.float32)).dtype == np.complex64


def test_frequencies_and_shifts() -> None:
    for n in (1, 5, 8):
        close(pnp.fft.fftfreq(n, 0.5), np.fft.fftfreq(n, 0.5))
        close(pnp.fft.rfftfreq(n, 0.1), np.fft.rfftfreq(n, 0.1))
    assert pnp.fft.fftfreq(4).dtype == np.float32
    np.testing.assert_array_equal(pnp.fft.fftfreq(5, dtype=np.int32), np.zeros(5, np.int32))
    np.testing.assert_array_equal(pnp.fft.fftshift(X), np.fft.fftshift(X))
    np.testing.assert_array_equal(pnp.fft.ifftshift(X, axes=1), np.fft.ifftshift(X, axes=1))
    np.testing.assert_array_equal(pnp.fft.ifftshift(pnp.fft.fftshift(np.arange(7))), np.arange(7))


def test_numpy_fft_errors() -> None:
    with pytest.raises(ValueError, match=r"numpy.fft.fft: invalid norm 'bad'; should be .backward., .ortho. or .forward."):
        pnp.fft.fft(Z, norm="bad")
    with pytest.raises(ValueError, match=r"numpy.fft.fft: the transform sizes must be positive, got \(0,\)"):
        pnp.fft.fft(Z, n=0)
    with pytest.raises(ValueError, match=r"numpy.fft.fft transforms one axis; use numpy.fft.fftn for several"):
        pnp.fft.fft(Z, axis=(0, 1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"numpy.fft.fft2 transforms exactly 2 axes, got axes=\(0, 1, 2\)"):
        pnp.fft.fft2(Z, axes=(0, 1, 2))
    with pytest.raises(ValueError, match=r"numpy.fft.fftn does not support repeated axes, got axes \(0, 0\)"):
        pnp.fft.fftn(Z, axes=(0, 0))
    with pytest.raises(ValueError, match=r"numpy.fft.fftn: s \(2,\) and axes \(0, 1\) have different lengths"):
        pnp.fft.fftn(Z, s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match=r"numpy.fft.rfft transforms real values only, got a complex64 array"):
        pnp.fft.rfft(Z)
    with pytest.raises(ValueError, match=r"numpy.fft.fft: axis 5 is out of bounds for an array of rank 3"):
        pnp.fft.fft(Z, axis=5)
    with pytest.raises(ValueError, match=r"numpy.fft.fftfreq: n must be an int"):
        pnp.fft.fftfreq([4])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pnp.fft.fft([1.0, 2.0])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Complex functions of numpy


def test_numpy_complex_functions() -> None:
    close(pnp.angle(Z), np.angle(Z))
    close(pnp.angle(Z, deg=True), np.angle(Z, deg=True), 1e-4)
    close(pnp.angle(np.array([1, -1, 0])), np.angle(np.array([1.0, -1.0, 0.0])))
    assert pnp.angle(np.array([1, -1])).dtype == np.float32
    w = np.array([1 + 0j, 2j, 3.5], np.complex64)
    np.testing.assert_array_equal(pnp.iscomplex(w), [False, True, False])
    np.testing.assert_array_equal(pnp.isreal(w), [True, False, True])
    np.testing.assert_array_equal(pnp.iscomplex(X[0, 0]), np.zeros(6, bool))
    np.testing.assert_array_equal(pnp.isreal(X[0, 0]), np.ones(6, bool))
    assert pnp.iscomplexobj(w) and not pnp.iscomplexobj(X) and pnp.iscomplexobj(1j) and not pnp.iscomplexobj(None)
    assert pnp.isrealobj(X) and not pnp.isrealobj(w)
    close(pnp.real(w), w.real)
    close(pnp.conjugate(w), np.conj(w))
    close(pnp.abs(w), np.abs(w))


def test_complex_sorting_and_closeness() -> None:
    w = np.array([1 + 2j, 1 - 1j, -2 + 0j, 0.5 + 3j], np.complex64)
    want = np.array([-2 + 0j, 0.5 + 3j, 1 - 1j, 1 + 2j], np.complex64)
    np.testing.assert_array_equal(pnp.sort(w), want)
    np.testing.assert_array_equal(pnp.sort(w, descending=True), want[::-1])
    np.testing.assert_array_equal(pnp.argsort(w), [2, 3, 1, 0])
    np.testing.assert_array_equal(pnp.sort_complex(w), want)
    assert pnp.sort_complex(np.array([3.0, 1.0], np.float32)).dtype == np.complex64
    np.testing.assert_array_equal(pnp.isclose(w, w + 1e-9), [True] * 4)
    np.testing.assert_array_equal(pnp.isclose(np.array([complex(np.inf, 0)]), np.array([complex(np.inf, 1)])), [False])
