"""JVP and transpose rules of ``fft``.

Every transform is linear.  Under JAX's pairing of complex cotangents,
``Re(sum(c * y))``, the transposes are:

* ``FFT``/``IFFT``: the same transform (the DFT matrix is symmetric);
* ``RFFT`` (``y = S F x``, ``S`` keeping the first ``m = n // 2 + 1``
  frequencies of the last axis): ``Re(F Sᵀ c)``, which is ``N`` times the
  ``IRFFT`` of ``conj(c)`` with the frequencies that the Hermitian extension
  mirrors (``1 <= k <= n - m``) halved;
* ``IRFFT`` (``y = Re(IFFT(H x))``, ``H`` the Hermitian extension):
  ``IFFT(c)`` cut to ``m`` frequencies with the mirrored ones doubled; for a
  real ``c`` that is ``conj(RFFT(c)) / N``.

(``N`` is the product of ``fft_lengths``.)  Both real transposes run the
half-size transform, as the forward ones do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from plait_autodiff.rules.common import deflinear
from plait_core import ops
from plait_core.primitives import complex_numbers as cx
from plait_core.primitives.fft import FftType, fft_p


def _mirror_weights(ct: Any, n: int, mirrored: float) -> Any:
    """Weights over the last axis (``m = n // 2 + 1`` frequencies): ``mirrored``
    where the Hermitian extension repeats a frequency, 1 elsewhere, as a
    complex array broadcast to ``ct``'s shape."""
    m = n // 2 + 1
    real = np.dtype(np.float64 if ops.aval(ct).dtype == np.complex128 else np.float32)
    w = np.ones(m, real)
    w[1 : n - m + 1] = mirrored
    weights = cx.complex_p.bind(w, np.zeros(m, real))
    a = ops.aval(ct)
    return ops.broadcast_in_dim(weights, a.shape, (a.ndim - 1,))


def _fft_transpose(ct: Any, x: Any, *, fft_type: Any, fft_lengths: tuple[int, ...]) -> list[Any]:
    kind = FftType(int(fft_type))
    if kind in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=kind, fft_lengths=fft_lengths)]
    n, total = fft_lengths[-1], math.prod(fft_lengths)
    if kind == FftType.RFFT:
        spectrum = ops.mul(cx.conj_p.bind(ct), _mirror_weights(ct, n, 0.5))
        out = fft_p.bind(spectrum, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)
        return [ops.mul(out, ops.const(out, total))]
    spectrum = cx.conj_p.bind(fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths))
    return [ops.mul(spectrum, ops.mul(_mirror_weights(spectrum, n, 2.0), ops.const(spectrum, 1 / total)))]


deflinear(fft_p, _fft_transpose)
