"""The ``fft`` primitive: discrete Fourier transforms over 1 to 3 trailing axes.

``fft(x, fft_type=..., fft_lengths=(n1, ..., nk))`` transforms the last
``k`` axes of ``x`` (leading axes are a batch), as XLA's ``fft`` does:

* ``FFT`` / ``IFFT``: complex to complex, unnormalised forward and ``1/N``
  inverse; the trailing axes must equal ``fft_lengths``;
* ``RFFT``: real (float32/float64) to complex; the trailing axes equal
  ``fft_lengths`` and the last result axis keeps the ``n // 2 + 1``
  non-negative frequencies;
* ``IRFFT``: complex to real, the inverse of ``RFFT``; the operand's last
  axis has ``nk // 2 + 1`` entries (the imaginary parts that a Hermitian
  spectrum cannot have are ignored) and the result's last axis is ``nk``.

Results are complex64/float32 for single-precision operands and
complex128/float64 for double.  Sizes must be concrete integers: a
transform mixes every entry of an axis, so it has no meaning over a masked or
ragged axis (interpreters say so).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import Shape, dim_as_int, is_constant_dim, is_symbolic
from plait_core.primitive import Primitive
from plait_core.primitives._elementwise_helpers import DType, DTypeClass, check_dtype
from plait_core.primitives.complex_numbers import COMPLEX, complex_of, real_dtype
from plait_core.primitives.reductions import dims_match, shape_text

__all__ = ["FftType", "fft_p", "fft_shapes"]

_REAL = DTypeClass("a float32 or float64", (dtypes.float32, dtypes.float64))


class FftType(enum.IntEnum):
    """Which transform ``fft`` computes (XLA's names)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __repr__(self) -> str:  # (how jaxprs print the parameter)
        return f"FftType.{self.name}"


fft_p = Primitive("fft", family="linalg")


def _check_params(fft_type: Any, fft_lengths: Any) -> tuple[FftType, tuple[int, ...]]:
    if not isinstance(fft_type, (int, FftType)) or isinstance(fft_type, bool) or fft_type not in (0, 1, 2, 3):
        raise TypeError(f"fft: fft_type must be an FftType (FFT, IFFT, RFFT or IRFFT), got {fft_type!r}")
    if not isinstance(fft_lengths, tuple) or not 1 <= len(fft_lengths) <= 3:
        raise ValueError(f"fft: fft_lengths must be a tuple of 1 to 3 sizes, got {fft_lengths!r}")
    for n in fft_lengths:
        if is_symbolic(n) and not n.is_constant:
            raise ValueError(
                f"fft: fft_lengths {shape_text(fft_lengths)} has the symbolic size {n}; a transform mixes every "
                "entry of its axes, so it is not supported over a masked or ragged axis"
            )
        if (
            isinstance(n, bool)
            or not (is_symbolic(n) or isinstance(n, (int, np.integer)))
            or dim_as_int(n) < 1
        ):
            raise ValueError(f"fft: fft_lengths must be positive integers, got {fft_lengths!r}")
    return FftType(int(fft_type)), tuple(dim_as_int(n) for n in fft_lengths)


def fft_shapes(shape: Shape, fft_type: FftType, fft_lengths: tuple[int, ...]) -> tuple[Shape, Shape]:
    """The trailing operand shape ``fft`` expects and the result's full shape."""
    k = len(fft_lengths)
    lead = tuple(shape[: len(shape) - k])
    half = (*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
    if fft_type == FftType.IRFFT:
        return half, lead + fft_lengths
    if fft_type == FftType.RFFT:
        return fft_lengths, lead + half
    return fft_lengths, lead + fft_lengths


def _out_dtype(dt: DType, fft_type: FftType) -> DType:
    if fft_type == FftType.RFFT:
        check_dtype("fft (RFFT)", dt, _REAL)
        return complex_of(dt)
    check_dtype(f"fft ({fft_type.name})", dt, COMPLEX)
    return real_dtype(dt) if fft_type == FftType.IRFFT else dt


@fft_p.def_abstract_eval
def _fft_rule(x: ShapedArray, *, fft_type: Any, fft_lengths: Any) -> ShapedArray:
    kind, lengths = _check_params(fft_type, fft_lengths)
    out_dt = _out_dtype(x.dtype, kind)
    k = len(lengths)
    if x.ndim < k:
        raise ValueError(f"fft: a {k}-D transform needs an operand of rank at least {k}, got {x.str_short()}")
    want, out_shape = fft_shapes(x.shape, kind, lengths)
    have = tuple(x.shape[x.ndim - k :])
    for d in have:
        if not is_constant_dim(d):
            raise ValueError(
                f"fft: the operand {x.str_short()} has the symbolic size {d} in a transformed axis; a transform "
                "mixes every entry of its axes, so it is not supported over a masked or ragged axis"
            )
    if not all(dims_match(a, b) for a, b in zip(have, want)):
        raise ValueError(
            f"fft ({kind.name}) with fft_lengths {shape_text(lengths)} needs trailing operand dimensions "
            f"{shape_text(want)}, got {x.str_short()}"
        )
    return ShapedArray(out_shape, out_dt, x.weak_type)


@fft_p.def_impl
def _fft_impl(x: np.ndarray, *, fft_type: Any, fft_lengths: Any) -> np.ndarray:
    aval = _fft_rule(ShapedArray(x.shape, x.dtype), fft_type=fft_type, fft_lengths=fft_lengths)
    kind, lengths = _check_params(fft_type, fft_lengths)
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    out: np.ndarray
    if kind == FftType.FFT:
        out = np.fft.fftn(x, axes=axes)
    elif kind == FftType.IFFT:
        out = np.fft.ifftn(x, axes=axes)
    elif kind == FftType.RFFT:
        out = np.fft.rfftn(x, axes=axes)
    else:
        out = np.fft.irfftn(x, s=lengths, axes=axes)
    return np.asarray(out, aval.dtype)
