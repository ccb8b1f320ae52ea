"""Short-time Fourier analysis for ``plait.scipy.signal``: ``stft``,
``istft``, ``csd`` and ``welch``, with SciPy's conventions.

A signal is cut into segments of ``nperseg`` samples overlapping by
``noverlap`` (gathered with static indices), each detrended, windowed and
transformed with ``numpy.fft``; ``csd``/``welch`` average the segments'
cross spectra (``'mean'``, or ``'median'`` with SciPy's bias correction).
Windows are given by name (``'hann'``, ``'hamming'``, ``'blackman'``,
``'bartlett'``, ``'boxcar'``, periodic as SciPy's ``get_window``) or as an
array of length ``nperseg``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core import numpy as pnp
from plait_core.numpy import fft as _fft
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    canonicalize_axis,
    dtype_of,
    promote_dtypes_inexact,
    shape_of,
)
from plait_core.numpy.updates import scatter_update
from plait_core.scipy._detrend import detrend

__all__ = ["csd", "istft", "stft", "welch"]

_WINDOWS = ("hann", "hamming", "blackman", "bartlett", "boxcar")


def _window(name: str, window: Any, nperseg: int, dt: Any) -> Array:
    if isinstance(window, str):
        key = {"hanning": "hann", "rect": "boxcar", "rectangular": "boxcar", "ones": "boxcar"}.get(
            window, window
        )
        if key not in _WINDOWS:
            raise NotImplementedError(
                f"scipy.signal.{name}: the window {window!r} is not supported; use one of {_WINDOWS} or pass "
                "the window's values as an array"
            )
        n = np.arange(nperseg)
        phase = 2 * np.pi * n / nperseg  # periodic windows, as SciPy's get_window (fftbins=True)
        values = {
            "hann": 0.5 - 0.5 * np.cos(phase),
            "hamming": 0.54 - 0.46 * np.cos(phase),
            "blackman": 0.42 - 0.5 * np.cos(phase) + 0.08 * np.cos(2 * phase),
            "bartlett": 1 - np.abs(2 * n / nperseg - 1),
            "boxcar": np.ones(nperseg),
        }[key]
        return pnp.asarray(values.astype(dt))
    w = pnp.asarray(window)
    if shape_of(w) != (nperseg,):
        raise ValueError(
            f"scipy.signal.{name}: the window must have shape ({nperseg},), got {tuple(shape_of(w))}"
        )
    return w.astype(dt)


def _lengths(
    name: str, n: int, nperseg: Any, noverlap: Any, nfft: Any, default_nperseg: int
) -> tuple[int, int, int]:
    if nperseg is None:
        nperseg = min(default_nperseg, n)
    nperseg = operator.index(nperseg)
    if nperseg < 1:
        raise ValueError(f"scipy.signal.{name}: nperseg must be a positive integer, got {nperseg}")
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    nfft = nperseg if nfft is None else operator.index(nfft)
    if nfft < nperseg:
        raise ValueError(f"scipy.signal.{name}: nfft ({nfft}) must be at least nperseg ({nperseg})")
    if noverlap >= nperseg:
        raise ValueError(f"scipy.signal.{name}: noverlap ({noverlap}) must be less than nperseg ({nperseg})")
    return nperseg, noverlap, nfft


def _segments(x: Array, nperseg: int, step: int) -> Array:
    """``(..., nseg, nperseg)``: the segments along the last axis."""
    n = int(shape_of(x)[-1])
    nseg = (n - nperseg) // step + 1
    index = np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]
    return pnp.take(x, index, axis=-1)


def _detrend(x: Array, kind: Any) -> Array:
    if kind is False or kind is None:
        return x
    if callable(kind):
        return kind(x)
    if kind == "constant":
        return x - pnp.mean(x, axis=-1, keepdims=True)
    if kind == "linear":
        return detrend(x, axis=-1)
    raise ValueError(f"scipy.signal: detrend must be False, 'constant', 'linear' or a function, got {kind!r}")


def _extend(name: str, x: Array, boundary: Any, half: int) -> Array:
    """``x`` extended by ``half`` samples at each end of its last axis."""
    if boundary is None or half == 0:
        return x
    n = int(shape_of(x)[-1])
    last = len(shape_of(x)) - 1
    if boundary == "zeros":
        return lax.pad(x, np.zeros((), dtype_of(x)), [(0, 0, 0)] * last + [(half, half, 0)])
    if boundary == "constant":
        left = pnp.repeat(lax.slice_in_dim(x, 0, 1, axis=last), half, axis=-1)
        right = pnp.repeat(lax.slice_in_dim(x, n - 1, n, axis=last), half, axis=-1)
        return pnp.concatenate([left, x, right], axis=-1)
    if boundary in ("even", "odd"):
        left = pnp.flip(lax.slice_in_dim(x, 1, half + 1, axis=last), -1)
        right = pnp.flip(lax.slice_in_dim(x, n - half - 1, n - 1, axis=last), -1)
        if boundary == "odd":
            first, end = lax.slice_in_dim(x, 0, 1, axis=last), lax.slice_in_dim(x, n - 1, n, axis=last)
            left, right = 2 * first - left, 2 * end - right
        return pnp.concatenate([left, x, right], axis=-1)
    raise ValueError(
        f"scipy.signal.{name}: boundary must be None, 'zeros', 'constant', 'even' or 'odd', got {boundary!r}"
    )


def _spectra(name: str, x: Array, nperseg: int, noverlap: int, nfft: int, win: Array, detrend: Any,
             onesided: bool) -> Array:  # fmt: skip
    """The windowed transforms of the segments: ``(..., nseg, nfreq)``."""
    seg = _detrend(_segments(x, nperseg, nperseg - noverlap), detrend)
    seg = seg * win
    if onesided:
        return _fft.rfft(seg, n=nfft)
    return _fft.fft(seg, n=nfft)


def stft(x: ArrayLike, fs: ArrayLike = 1.0, window: Any = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: Any = False, return_onesided: bool = True, boundary: str | None = "zeros",
         padded: bool = True, axis: int = -1) -> tuple[Array, Array, Array]:  # fmt: skip
    """``(f, t, Zxx)``: the short-time Fourier transform of ``x`` along ``axis``,
    ``Zxx`` of shape ``(..., len(f), len(t))`` scaled by ``1 / sum(window)``."""
    (xa,) = promote_dtypes_inexact("scipy.signal.stft", x)
    nd = len(shape_of(xa))
    ax = canonicalize_axis(axis, nd, "scipy.signal.stft")
    xa = pnp.moveaxis(xa, ax, -1)
    n = int(shape_of(xa)[-1])
    nperseg, noverlap, nfft = _lengths("stft", n, nperseg, noverlap, nfft, 256)
    real_dt = dtype_of(pnp.real(xa))
    win = _window("stft", window, nperseg, real_dt)
    onesided = return_onesided and not dtypes.is_complex(dtype_of(xa))
    xa = _extend("stft", xa, boundary, nperseg // 2)
    step = nperseg - noverlap
    if padded:
        extra = (-(int(shape_of(xa)[-1]) - nperseg) % step) % nperseg
        xa = lax.pad(xa, np.zeros((), dtype_of(xa)), [(0, 0, 0)] * (nd - 1) + [(0, extra, 0)])
    z = _spectra("stft", xa, nperseg, noverlap, nfft, win, detrend, onesided) / pnp.sum(win)
    # z is (..., nseg, nfreq): the frequencies go where the data axis was, the segments last (as SciPy).
    z = pnp.moveaxis(z, -1, axis - 1 if axis < 0 else axis)
    freqs = _freqs(nfft, fs, onesided, real_dt)
    nseg = int(shape_of(z)[-1])
    times = (np.arange(nseg) * step + nperseg / 2 - (nperseg / 2 if boundary is not None else 0)).astype(
        real_dt
    )
    return freqs, pnp.asarray(times) / pnp.asarray(fs, dtype=real_dt), z


def _freqs(nfft: int, fs: ArrayLike, onesided: bool, dt: Any) -> Array:
    d = 1 / pnp.asarray(fs, dtype=dt)
    return (_fft.rfftfreq(nfft, d) if onesided else _fft.fftfreq(nfft, d)).astype(dt)


def _median_bias(n: int) -> float:
    """SciPy's correction of the median of ``n`` chi-squared(2) values to their mean."""
    ii = np.arange(1.0, (n - 1) // 2 + 1)
    return float(1 + np.sum(1.0 / (ii + ii + 1) - 1.0 / (ii + ii)))


def csd(x: ArrayLike, y: ArrayLike | None, fs: ArrayLike = 1.0, window: Any = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Array, Array]:  # fmt: skip
    """``(f, Pxy)``: the cross power spectral density of ``x`` and ``y`` by
    Welch's method (``y=None``: of ``x`` with itself); ``scaling`` is
    ``'density'`` (per Hz) or ``'spectrum'`` (power)."""
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"scipy.signal.csd: scaling must be 'density' or 'spectrum', got {scaling!r}")
    if average not in ("mean", "median"):
        raise ValueError(f"scipy.signal.csd: average must be 'mean' or 'median', got {average!r}")
    same = y is None
    xs = (
        promote_dtypes_inexact("scipy.signal.csd", x)
        if same
        else promote_dtypes_inexact("scipy.signal.csd", x, y)
    )
    xa = xs[0]
    ya = xa if same else xs[1]
    nd = len(shape_of(xa))
    if len(shape_of(ya)) != nd:
        raise ValueError(
            f"scipy.signal.csd: x and y must have the same rank, got {nd} and {len(shape_of(ya))}"
        )
    ax = canonicalize_axis(axis, nd, "scipy.signal.csd")
    xa, ya = pnp.moveaxis(xa, ax, -1), pnp.moveaxis(ya, ax, -1)
    batch = np.broadcast_shapes(tuple(shape_of(xa))[:-1], tuple(shape_of(ya))[:-1])
    n = int(max(shape_of(xa)[-1], shape_of(ya)[-1]))
    last = nd - 1
    xa = lax.pad(xa, np.zeros((), dtype_of(xa)), [(0, 0, 0)] * last + [(0, n - int(shape_of(xa)[-1]), 0)])
    ya = lax.pad(ya, np.zeros((), dtype_of(ya)), [(0, 0, 0)] * last + [(0, n - int(shape_of(ya)[-1]), 0)])
    xa, ya = pnp.broadcast_to(xa, (*batch, n)), pnp.broadcast_to(ya, (*batch, n))
    nperseg, noverlap, nfft = _lengths("csd", n, nperseg, noverlap, nfft, 256)
    real_dt = dtype_of(pnp.real(xa))
    win = _window("csd", window, nperseg, real_dt)
    onesided = return_onesided and not dtypes.is_complex(dtype_of(xa)) and not dtypes.is_complex(dtype_of(ya))
    fx = _spectra("csd", xa, nperseg, noverlap, nfft, win, detrend, onesided)
    fy = fx if same else _spectra("csd", ya, nperseg, noverlap, nfft, win, detrend, onesided)
    scale = (
        1 / (pnp.asarray(fs, dtype=real_dt) * pnp.sum(win * win))
        if scaling == "density"
        else 1 / pnp.sum(win) ** 2
    )
    pxy = pnp.conj(fx) * fy * scale
    if onesided:
        last_doubled = nfft // 2 if nfft % 2 == 0 else nfft // 2 + 1  # not the Nyquist bin of an even nfft
        factor = np.ones(int(shape_of(pxy)[-1]), real_dt)
        factor[1:last_doubled] = 2
        pxy = pxy * factor
    nseg = int(shape_of(pxy)[-2])
    if average == "median":
        bias = _median_bias(nseg)
        med = pnp.median(pnp.real(pxy), axis=-2)
        if dtypes.is_complex(dtype_of(pxy)):
            med = med + 1j * pnp.median(pnp.imag(pxy), axis=-2)
        out = med / bias
    else:
        out = pnp.mean(pxy, axis=-2)
    out = pnp.moveaxis(out, -1, ax) if nd > 1 else out
    return _freqs(nfft, fs, onesided, real_dt), out


def welch(x: ArrayLike, fs: ArrayLike = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Array, Array]:  # fmt: skip
    """``(f, Pxx)``: the power spectral density of ``x`` by Welch's method (real)."""
    f, pxx = csd(
        x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average
    )
    return f, pnp.real(pxx)


def istft(Zxx: ArrayLike, fs: ArrayLike = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2) -> tuple[Array, Array]:  # fmt: skip
    """``(t, x)``: the signal whose :func:`stft` (with the same window and
    segments, ``boundary='zeros'``) is ``Zxx``, by windowed overlap-add."""
    (z,) = promote_dtypes_inexact("scipy.signal.istft", Zxx)
    nd = len(shape_of(z))
    if nd < 2:
        raise ValueError(
            f"scipy.signal.istft: Zxx must have at least 2 dimensions, got shape {tuple(shape_of(z))}"
        )
    ta = canonicalize_axis(time_axis, nd, "scipy.signal.istft", "time_axis")
    fa = canonicalize_axis(freq_axis, nd, "scipy.signal.istft", "freq_axis")
    if ta == fa:
        raise ValueError("scipy.signal.istft: time_axis and freq_axis must differ")
    z = pnp.moveaxis(z, (fa, ta), (-1, -2))  # (..., nseg, nfreq)
    nfreq = int(shape_of(z)[-1])
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else operator.index(nperseg)
    nperseg, noverlap, nfft = _lengths("istft", nperseg, nperseg, noverlap, nfft if nfft is not None else n_default,
                                       nperseg)  # fmt: skip
    real_dt = dtype_of(pnp.real(z))
    win = _window("istft", window, nperseg, real_dt)
    seg = _fft.irfft(z, n=nfft) if input_onesided else _fft.ifft(z, n=nfft)
    seg = lax.slice_in_dim(seg, 0, nperseg, axis=len(shape_of(seg)) - 1) * pnp.sum(win) * win
    nseg = int(shape_of(seg)[-2])
    step = nperseg - noverlap
    length = nperseg + (nseg - 1) * step
    index = (np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]).ravel()
    batch = tuple(shape_of(seg)[:-2])
    flat = pnp.reshape(seg, (*batch, nseg * nperseg))
    out = scatter_update(pnp.zeros((*batch, length), dtype_of(seg)), (..., index), flat, "add")
    norm = scatter_update(pnp.zeros((length,), real_dt), index, pnp.tile(win * win, nseg), "add")
    out = out / pnp.where(norm > 1e-10, norm, 1.0)
    if boundary:
        out = lax.slice_in_dim(out, nperseg // 2, length - nperseg // 2, axis=len(shape_of(out)) - 1)
    # As SciPy and JAX: the times count the first axis of the output (the samples for 1-D input).
    times = np.arange(int(shape_of(out)[0])).astype(real_dt)
    return pnp.asarray(times) / pnp.asarray(fs, dtype=real_dt), out
