"""``lax.fft`` and ``lax.FftType``: XLA's discrete Fourier transform.

``lax.fft(x, fft_type, fft_lengths)`` transforms the trailing
``len(fft_lengths)`` (1 to 3) axes of ``x``; see
:mod:`plait_core.primitives.fft` for the four kinds and their shapes.
``fft_type`` is an :class:`FftType` or its name (``'fft'``, ``'IRFFT'``, ...).
As in JAX, the operand is converted first: to a floating dtype for ``RFFT``
(a complex operand is a ``ValueError``), to a complex dtype for the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.lax.elementwise import _convert_element_type, _dtype_and_weakness
from plait_core.primitives.complex_numbers import complex_of
from plait_core.primitives.fft import FftType, fft_p

__all__ = ["FftType", "fft"]


def _fft_type(fft_type: Any) -> FftType:
    if isinstance(fft_type, str):
        try:
            return FftType[fft_type.upper()]
        except KeyError:
            pass
    elif isinstance(fft_type, int) and not isinstance(fft_type, bool) and fft_type in (0, 1, 2, 3):
        return FftType(fft_type)
    raise ValueError(
        f"lax.fft: unknown fft_type {fft_type!r}; expected an FftType or one of 'fft', 'ifft', 'rfft', 'irfft'"
    )


def to_complex_dtype(dt: Any) -> Any:
    """The complex dtype a value of dtype ``dt`` is transformed in
    (complex128 for float64; for integers and booleans, as in JAX, complex128
    for the 64-bit ones and complex64 for the others)."""
    if dtypes.is_complex(dt):
        return dt
    if dtypes.is_float(dt):
        return complex_of(dt)
    return np.dtype(np.complex128 if np.dtype(dt).itemsize >= 8 else np.complex64)


def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int]) -> Any:
    """The discrete Fourier transform of ``x``'s trailing axes.

    ``FFT``/``IFFT`` map complex to complex (unnormalised forward, ``1/N``
    inverse); ``RFFT`` maps a real ``x`` to its ``n // 2 + 1`` non-negative
    frequencies along the last axis; ``IRFFT`` is its inverse, with the
    result's last axis of length ``fft_lengths[-1]``."""
    if isinstance(fft_lengths, int):
        fft_lengths = (fft_lengths,)
    kind = _fft_type(fft_type)
    dt, weak = _dtype_and_weakness(x, "fft")
    if kind == FftType.RFFT:
        if dtypes.is_complex(dt):
            raise ValueError(f"lax.fft: RFFT transforms real values only, got a {dt.name} operand")
        target = dt if dt in (dtypes.float32, dtypes.float64) else dtypes.default_float_dtype()
        if dtypes.is_float(dt) and dt.itemsize < 4:  # 16-bit floats are transformed in float32
            target = dtypes.float32
    else:
        target = to_complex_dtype(dt)
    if target != dt or not hasattr(x, "shape"):
        x = _convert_element_type(x, target, weak)
    return fft_p.bind(x, fft_type=kind, fft_lengths=tuple(fft_lengths))
