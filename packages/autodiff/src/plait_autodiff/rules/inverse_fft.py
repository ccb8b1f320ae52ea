"""Inverse rules (for invertible reverse mode) of ``fft`` and the
complex-number primitives.

``FFT`` and ``IFFT`` invert each other and ``RFFT`` is inverted by
``IRFFT`` (its input is real).  ``IRFFT`` is refused: it discards the
imaginary parts of the zero (and Nyquist) frequencies, so its input cannot
be rebuilt from its output.  ``conj`` is its own inverse; ``complex(x, y)``
gives back ``x`` as the real part and ``y`` as the imaginary part of its
output.  ``real`` and ``imag`` keep only one part, so they have no rule (the
planner keeps their input).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_autodiff.registries import inverse_refusals, inverse_rules
from plait_core.abstract import ShapedArray
from plait_core.primitives import complex_numbers as cx
from plait_core.primitives.fft import FftType, fft_p

Avals = Sequence[ShapedArray]

_INVERSE = {FftType.FFT: FftType.IFFT, FftType.IFFT: FftType.FFT, FftType.RFFT: FftType.IRFFT}


def _fft_refusal(in_avals: Avals, out_avals: Avals, i: int, *, fft_type: Any, fft_lengths: Any) -> str | None:
    if FftType(int(fft_type)) == FftType.IRFFT:
        return "an IRFFT discards the imaginary parts of the zero and Nyquist frequencies of its input"
    return None


def _fft_inverse(in_avals: Avals, outs: Sequence[Any], ins: Sequence[Any], *, fft_type: Any,
                 fft_lengths: Any) -> list[Any]:  # fmt: skip
    kind = FftType(int(fft_type))
    return [fft_p.bind(outs[0], fft_type=_INVERSE[kind], fft_lengths=tuple(fft_lengths))]


inverse_rules[fft_p] = _fft_inverse
inverse_refusals[fft_p] = _fft_refusal
inverse_rules[cx.conj_p] = lambda in_avals, outs, ins: [cx.conj_p.bind(outs[0])]


def _complex_refusal(in_avals: Avals, out_avals: Avals, i: int) -> str | None:
    if in_avals[i].ndim == 0 and out_avals[0].ndim > 0:
        return "the value to rebuild is a scalar broadcast against an array"
    return None


def _complex_inverse(in_avals: Avals, outs: Sequence[Any], ins: Sequence[Any]) -> list[Any]:
    part = cx.real_p if ins[0] is None else cx.imag_p
    full = list(ins)
    full[0 if ins[0] is None else 1] = part.bind(outs[0])
    return full


inverse_rules[cx.complex_p] = _complex_inverse
inverse_refusals[cx.complex_p] = _complex_refusal
