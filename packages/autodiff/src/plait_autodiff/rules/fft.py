"""JVP and transpose rules of ``fft``.

Every transform is linear.  Under JAX's pairing of complex cotangents,
``Re(sum(c * y))``, the transposes are:

* ``FFT``/``IFFT``: the same transform (the DFT matrix is symmetric);
* ``RFFT`` (``y = S F x``, ``S`` keeping the first ``n // 2 + 1``
  frequencies of the last axis): ``real(FFT(c zero-padded to n))``;
* ``IRFFT`` (``y = Re(IFFT(H x))``, ``H`` the Hermitian extension):
  ``IFFT(c)`` cut to the ``n // 2 + 1`` frequencies, the ones that ``H``
  also mirrors (``1 <= k <= n - n // 2 - 1``) doubled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_autodiff import ops
from plait_autodiff.rules.common import deflinear
from plait_core.primitives import complex_numbers as cx
from plait_core.primitives.fft import FftType, fft_p


def _pad_last(x: Any, size: int) -> Any:
    a = ops.aval(x)
    config = [(0, 0, 0)] * (a.ndim - 1) + [(0, size - size // 2 - 1, 0)]
    return ops.pad(x, ops.const(x, 0), config)


def _fft_transpose(ct: Any, x: Any, *, fft_type: Any, fft_lengths: tuple[int, ...]) -> list[Any]:
    kind = FftType(int(fft_type))
    if kind in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=kind, fft_lengths=fft_lengths)]
    n = fft_lengths[-1]
    if kind == FftType.RFFT:
        full = fft_p.bind(_pad_last(ct, n), fft_type=FftType.FFT, fft_lengths=fft_lengths)
        return [cx.real_p.bind(full)]
    zeros = ops.full(ops.aval(ct).shape, 0, ops.aval(ct).dtype)
    spectrum = fft_p.bind(cx.complex_p.bind(ct, zeros), fft_type=FftType.IFFT, fft_lengths=fft_lengths)
    m = n // 2 + 1
    a = ops.aval(spectrum)
    spectrum = ops.slice_(spectrum, [0] * a.ndim, [*a.shape[:-1], m])
    weights = np.ones(m, ops.aval(ct).dtype)
    weights[1 : n - m + 1] = 2
    scale = ops.broadcast_in_dim(
        cx.complex_p.bind(weights, np.zeros(m, weights.dtype)), ops.aval(spectrum).shape, (a.ndim - 1,)
    )
    return [ops.mul(spectrum, scale)]


deflinear(fft_p, _fft_transpose)
