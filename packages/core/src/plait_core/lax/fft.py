"""``lax.fft`` and ``lax.FftType``: XLA's discrete Fourier transform.

``lax.fft(x, fft_type, fft_lengths)`` transforms the trailing
``len(fft_lengths)`` (1 to 3) axes of ``x``; see
:mod:`plait_core.primitives.fft` for the four kinds and their shapes.
``fft_type`` is an :class:`FftType` or its name (``'fft'``, ``'IRFFT'``, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int]) -> Any:
    """The discrete Fourier transform of ``x``'s trailing axes.

    ``FFT``/``IFFT`` map complex to complex (unnormalised forward, ``1/N``
    inverse); ``RFFT`` maps a real ``x`` to its ``n // 2 + 1`` non-negative
    frequencies along the last axis; ``IRFFT`` is its inverse, with the
    result's last axis of length ``fft_lengths[-1]``."""
    if isinstance(fft_lengths, int):
        fft_lengths = (fft_lengths,)
    return fft_p.bind(x, fft_type=_fft_type(fft_type), fft_lengths=tuple(fft_lengths))
