"""``plait.scipy.signal`` against brute-force NumPy definitions of SciPy's
convolution, correlation and detrending."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from plait_core import make_jaxpr
from plait_core.scipy import signal as ps

rng = np.random.default_rng(7)
SHAPES = [((4, 5), (2, 3)), ((2, 3), (4, 5)), ((3, 3), (3, 3)), ((6,), (3,)), ((2,), (5,)), ((3, 4, 5), (2, 2, 3))]
MODES = ["full", "same", "valid"]


def full_convolution(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(tuple(x + y - 1 for x, y in zip(a.shape, b.shape)), np.result_type(a, b))
    for idx in itertools.product(*map(range, b.shape)):
        out[tuple(slice(i, i + n) for i, n in zip(idx, a.shape))] += b[idx] * a
    return out


def cut(full: np.ndarray, s1: tuple[int, ...], s2: tuple[int, ...], mode: str, late: bool = False) -> np.ndarray:
    """SciPy's window of the full result: all, centred like in1, or the overlaps
    without padding (``late``: a tie in centring goes to the later start)."""
    index = []
    for n, n1, n2 in zip(full.shape, s1, s2):
        size = {"full": n, "same": n1, "valid": max(n1, n2) - min(n1, n2) + 1}[mode]
        start = (n - size + 1) // 2 if late else (n - size) // 2
        index.append(slice(start, start + size))
    return full[tuple(index)]


def data(shape: tuple[int, ...], complex_: bool) -> np.ndarray:
    x = rng.standard_normal(shape)
    if complex_:
        return (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return x.astype(np.float32)


def close(got: Any, want: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("s1,s2", SHAPES)
@pytest.mark.parametrize("complex_", [False, True])
def test_convolutions_and_correlations(s1: tuple[int, ...], s2: tuple[int, ...], complex_: bool) -> None:
    a, b = data(s1, complex_), data(s2, complex_)
    conv = full_convolution(a, b)
    corr = full_convolution(a, np.conj(b)[tuple(slice(None, None, -1) for _ in s2)])
    for mode in MODES:
        close(ps.convolve(a, b, mode), cut(conv, s1, s2, mode))
        close(ps.convolve(a, b, mode, method="fft"), cut(conv, s1, s2, mode))
        close(ps.fftconvolve(a, b, mode), cut(conv, s1, s2, mode))
        close(ps.correlate(a, b, mode), cut(corr, s1, s2, mode))
        if len(s1) == 2:
            close(ps.convolve2d(a, b, mode), cut(conv, s1, s2, mode))
            want = cut(corr, s1, s2, mode, late=mode == "same")
            if mode == "valid" and s1 != s2 and all(x <= y for x, y in zip(s1, s2)):
                want = np.conj(want)  # SciPy's correlate2d conjugates a swapped 'valid' result
            close(ps.correlate2d(a, b, mode), want)


def test_fftconvolve_over_some_axes_and_dtypes() -> None:
    a, b = data((3, 8), False), data((3, 4), False)
    want = np.stack([full_convolution(a[i], b[i]) for i in range(3)])
    close(ps.fftconvolve(a, b, axes=1), want)
    close(ps.fftconvolve(a, b, "same", axes=[-1]), want[:, 1:9])
    assert ps.convolve(np.arange(4), np.arange(2)).dtype == np.float32
    closed = make_jaxpr(lambda x, y: ps.convolve(x, y))(a, b)
    assert [e.primitive.name for e in closed.jaxpr.eqns].count("conv_general_dilated") == 1


def test_detrend() -> None:
    x = data((3, 20), False)
    t = np.arange(20)
    for bp in ([0], [5, 12], [19]):
        got = np.asarray(ps.detrend(x + 0.5 * t, bp=bp))
        edges = sorted({0, 20, *bp})
        for lo, hi in itertools.pairwise(edges):
            seg = (x + 0.5 * t)[:, lo:hi]
            tt = np.arange(hi - lo, dtype=np.float64)
            coef = np.polyfit(tt, seg.T, 1) if hi - lo > 1 else np.zeros((2, 3))
            fit = (np.outer(tt, coef[0]) + coef[1]).T if hi - lo > 1 else seg
            close(got[:, lo:hi], seg - fit)
    close(ps.detrend(x.T, axis=0, type="constant"), x.T - x.T.mean(axis=0))


def test_signal_errors() -> None:
    a, b = data((4, 5), False), data((2, 3), False)
    with pytest.raises(ValueError, match=r"scipy.signal.convolve: mode must be one of 'full', 'same' or 'valid', got 'wide'"):
        ps.convolve(a, b, "wide")
    with pytest.raises(ValueError, match=r"scipy.signal.convolve: method must be 'auto', 'direct' or 'fft'"):
        ps.convolve(a, b, method="fast")
    with pytest.raises(ValueError, match=r"scipy.signal.convolve: in1 and in2 must have the same number of dimensions"):
        ps.convolve(a, b[0])
    with pytest.raises(ValueError, match=r"scipy.signal.convolve: one input must be at least as large as the other in every dimension"):
        ps.convolve(data((4, 2), False), data((2, 4), False))
    with pytest.raises(ValueError, match=r"scipy.signal.fftconvolve: for mode 'valid' one input must be at least as large"):
        ps.fftconvolve(data((4, 2), False), data((2, 4), False), "valid")
    with pytest.raises(ValueError, match=r"scipy.signal.fftconvolve: the axes not convolved must have equal sizes"):
        ps.fftconvolve(a, b, axes=1)
    with pytest.raises(NotImplementedError, match=r"scipy.signal.convolve2d supports only boundary='fill' with fillvalue=0"):
        ps.convolve2d(a, b, boundary="wrap")
    with pytest.raises(ValueError, match=r"scipy.signal.correlate2d needs 2-D inputs, got ranks 1 and 2"):
        ps.correlate2d(a[0], b)
    with pytest.raises(ValueError, match=r"scipy.signal.detrend: type must be 'linear' or 'constant'"):
        ps.detrend(a, type="quadratic")
    with pytest.raises(ValueError, match=r"scipy.signal.detrend: breakpoints must lie in \[0, 5\]"):
        ps.detrend(a, bp=[7])
    with pytest.raises(NotImplementedError, match=r"scipy.signal.detrend: overwrite_data is not supported"):
        ps.detrend(a, overwrite_data=True)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Short-time Fourier analysis


def _hann(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)


def test_stft_against_its_definition_and_istft_round_trip() -> None:
    x = rng.standard_normal(300)
    n, step = 64, 32
    f, t, z = (np.asarray(v) for v in ps.stft(x, fs=4.0, nperseg=n))
    ext = np.concatenate([np.zeros(n // 2), x, np.zeros(n // 2)])
    ext = np.concatenate([ext, np.zeros((-(len(ext) - n) % step) % n)])
    segs = np.stack([ext[i : i + n] for i in range(0, len(ext) - n + 1, step)])
    want = (np.fft.rfft(segs * _hann(n), axis=-1) / _hann(n).sum()).T
    np.testing.assert_allclose(z, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f, np.fft.rfftfreq(n, 1 / 4.0), rtol=1e-6)
    np.testing.assert_allclose(t, np.arange(len(segs)) * step / 4.0, rtol=1e-6)
    _, back = ps.istft(z, fs=4.0, nperseg=n)
    np.testing.assert_allclose(np.asarray(back)[:300], x, rtol=1e-4, atol=1e-4)
    many = rng.standard_normal((2, 3, 200))
    _, _, zz = ps.stft(many, nperseg=32, axis=-1)
    assert np.asarray(zz).shape == (2, 3, 17, 14)
    _, _, z0 = ps.stft(many[0].T, nperseg=32, axis=0)
    np.testing.assert_allclose(np.asarray(z0), np.moveaxis(np.asarray(zz)[0], 0, 1), rtol=1e-5, atol=1e-6)


def test_welch_and_csd() -> None:
    fs, n = 100.0, 4000
    t = np.arange(n) / fs
    x = np.sin(2 * np.pi * 12.5 * t) + 0.1 * rng.standard_normal(n)
    f, pxx = (np.asarray(v) for v in ps.welch(x, fs=fs, nperseg=200))
    assert f[np.argmax(pxx)] == 12.5
    noise = rng.standard_normal(20000)
    _, flat = ps.welch(noise, fs=2.0, nperseg=256)
    np.testing.assert_allclose(np.median(np.asarray(flat)[1:-1]), 1.0, rtol=0.1)  # two-sided variance 1 over 1 Hz
    y = rng.standard_normal(n)
    _, pxy = ps.csd(x, y, nperseg=128)
    _, pyx = ps.csd(y, x, nperseg=128)
    np.testing.assert_allclose(np.asarray(pxy), np.conj(np.asarray(pyx)), rtol=1e-5, atol=1e-8)
    _, pxx2 = ps.csd(x, x, fs=fs, nperseg=200)
    np.testing.assert_allclose(np.asarray(pxx2).real, pxx, rtol=1e-5, atol=1e-8)
    _, med = ps.welch(noise, nperseg=256, average="median")
    np.testing.assert_allclose(np.median(np.asarray(med)[1:-1]), 2.0, rtol=0.15)


def test_spectral_errors() -> None:
    x = rng.standard_normal(100)
    with pytest.raises(ValueError, match=r"scipy.signal.stft: noverlap \(64\) must be less than nperseg \(64\)"):
        ps.stft(x, nperseg=64, noverlap=64)
    with pytest.raises(ValueError, match=r"scipy.signal.csd: nfft \(10\) must be at least nperseg \(32\)"):
        ps.welch(x, nperseg=32, nfft=10)
    with pytest.raises(NotImplementedError, match=r"scipy.signal.stft: the window 'kaiser' is not supported"):
        ps.stft(x, window="kaiser", nperseg=32)
    with pytest.raises(ValueError, match=r"scipy.signal.csd: scaling must be 'density' or 'spectrum'"):
        ps.welch(x, scaling="power")
    with pytest.raises(ValueError, match=r"scipy.signal.stft: boundary must be None, 'zeros', 'constant', 'even' or 'odd'"):
        ps.stft(x, nperseg=32, boundary="wrap")
    with pytest.raises(ValueError, match=r"scipy.signal.istft: time_axis and freq_axis must differ"):
        ps.istft(np.ones((5, 4), np.complex64), time_axis=0, freq_axis=0)
