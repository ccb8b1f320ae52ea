"""``plait.scipy.signal``: convolutions, correlations and detrending with
SciPy's names and JAX's semantics.

``convolve``/``correlate`` work on N-D arrays of one rank: ``mode='full'``
gives every overlap, ``'same'`` the part centred like ``in1``, ``'valid'``
the overlaps without zero padding.  The direct method is one
``lax.conv_general_dilated`` (the smaller operand is the kernel; as in JAX,
one operand must be at least as large as the other in every dimension);
``method='fft'`` and :func:`fftconvolve` multiply spectra from
``numpy.fft``.  Inputs are promoted to an inexact dtype.  The 2-D variants
support ``boundary='fill'`` with ``fillvalue=0`` only, as JAX's do.
``stft``, ``istft``, ``csd`` and ``welch`` live in
:mod:`plait_core.scipy._spectral`.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.lax import _lenient
from plait_core.numpy import fft as _fft
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    canonicalize_axis,
    dtype_of,
    promote_dtypes_inexact,
    shape_of,
)
from plait_core.numpy.math import conj
from plait_core.numpy.shape import flip, reshape
from plait_core.scipy._detrend import detrend
from plait_core.scipy._spectral import csd, istft, stft, welch

__all__ = [
    "convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft", "welch",
]  # fmt: skip

_MODES = ("full", "same", "valid")


def _check_mode(name: str, mode: Any) -> None:
    if mode not in _MODES:
        raise ValueError(f"scipy.signal.{name}: mode must be one of 'full', 'same' or 'valid', got {mode!r}")


def _operands(
    name: str, in1: ArrayLike, in2: ArrayLike
) -> tuple[Array, Array, tuple[int, ...], tuple[int, ...]]:
    a, b = promote_dtypes_inexact(f"scipy.signal.{name}", in1, in2)
    s1, s2 = shape_of(a), shape_of(b)
    if len(s1) != len(s2):
        raise ValueError(
            f"scipy.signal.{name}: in1 and in2 must have the same number of dimensions, got shapes {s1} and {s2}"
        )
    return a, b, tuple(int(d) for d in s1), tuple(int(d) for d in s2)


def _window(s1: Sequence[int], s2: Sequence[int], mode: str) -> list[tuple[int, int]]:
    """Per dimension, where the result starts inside the full convolution
    (of length ``n1 + n2 - 1``) and how long it is, as SciPy defines ``mode``."""
    out = []
    for n1, n2 in zip(s1, s2):
        full = n1 + n2 - 1
        size = {"full": full, "same": n1, "valid": builtins.max(n1, n2) - builtins.min(n1, n2) + 1}[mode]
        out.append(((full - size) // 2, size))
    return out


def _direct(
    name: str, a: Array, b: Array, s1: tuple[int, ...], s2: tuple[int, ...], mode: str, precision: Any
) -> Array:
    """SciPy's ``convolve(a, b, mode)`` as one XLA convolution."""
    if 0 in s1 or 0 in s2:
        raise ValueError(f"scipy.signal.{name}: zero-size arrays are not supported, got shapes {s1} and {s2}")
    a_big = all(n1 >= n2 for n1, n2 in zip(s1, s2))
    if not a_big and not all(n1 <= n2 for n1, n2 in zip(s1, s2)):
        raise ValueError(
            f"scipy.signal.{name}: one input must be at least as large as the other in every dimension, "
            f"got shapes {s1} and {s2}"
        )
    window = _window(s1, s2, mode)
    lhs, kernel, k = (a, b, s2) if a_big else (b, a, s1)
    n = len(s1)
    # XLA's convolution correlates: flip the kernel.  With padding k - 1 on
    # both sides the result would be the full convolution; the padding below
    # cuts it to the window.
    lhs_shape = s1 if a_big else s2
    padding = [(kn - 1 - start, kn - 1 - (ln + kn - 1 - start - size)) for kn, ln, (start, size) in
               zip(k, lhs_shape, window)]  # fmt: skip
    lhs4 = reshape(lhs, (1, 1, *lhs_shape))
    kernel4 = reshape(flip(kernel), (1, 1, *k))
    out = lax.conv_general_dilated(lhs4, kernel4, (1,) * n, padding, precision=precision)
    return reshape(out, tuple(size for _, size in window))


def _cut(x: Array, window: Sequence[tuple[int, int]], axes: Sequence[int]) -> Array:
    shape = list(shape_of(x))
    start = [0] * len(shape)
    limit = list(shape)
    for ax, (s, size) in zip(axes, window):
        start[ax], limit[ax] = s, s + size
    return lax.slice(x, start, limit)


def fftconvolve(
    in1: ArrayLike, in2: ArrayLike, mode: str = "full", axes: int | Sequence[int] | None = None
) -> Array:
    """N-D convolution by FFTs (over ``axes``, all by default; the other axes
    must have equal sizes and are convolved position by position)."""
    _check_mode("fftconvolve", mode)
    a, b, s1, s2 = _operands("fftconvolve", in1, in2)
    nd = len(s1)
    if axes is None:
        conv_axes: tuple[int, ...] = tuple(range(nd))
    else:
        given = (axes,) if isinstance(axes, int) else tuple(axes)
        conv_axes = tuple(canonicalize_axis(ax, nd, "scipy.signal.fftconvolve", "axes") for ax in given)
    others = [i for i in range(nd) if i not in conv_axes]
    if any(s1[i] != s2[i] for i in others):
        raise ValueError(
            f"scipy.signal.fftconvolve: the axes not convolved must have equal sizes, got shapes {s1} and {s2} "
            f"with axes={conv_axes}"
        )
    c1, c2 = [s1[i] for i in conv_axes], [s2[i] for i in conv_axes]
    if mode == "valid" and not (all(x >= y for x, y in zip(c1, c2)) or all(x <= y for x, y in zip(c1, c2))):
        raise ValueError(
            "scipy.signal.fftconvolve: for mode 'valid' one input must be at least as large as the other in every "
            f"dimension, got shapes {s1} and {s2}"
        )
    if not conv_axes:
        return _lenient.mul(a, b)
    full = [x + y - 1 for x, y in zip(c1, c2)]
    if dtypes.is_complex(dtype_of(a)):
        prod = _lenient.mul(_fft.fftn(a, full, conv_axes), _fft.fftn(b, full, conv_axes))
        out = _fft.ifftn(prod, full, conv_axes)
    else:
        prod = _lenient.mul(_fft.rfftn(a, full, conv_axes), _fft.rfftn(b, full, conv_axes))
        out = _fft.irfftn(prod, full, conv_axes)
    return _cut(out, _window(c1, c2, mode), conv_axes)


def _method(name: str, method: Any) -> str:
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"scipy.signal.{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")
    return str(method)


def convolve(
    in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto", precision: Any = None
) -> Array:
    """The N-D convolution of ``in1`` and ``in2`` (``method='fft'`` uses :func:`fftconvolve`)."""
    _check_mode("convolve", mode)
    if _method("convolve", method) == "fft":
        return fftconvolve(in1, in2, mode)
    a, b, s1, s2 = _operands("convolve", in1, in2)
    return _direct("convolve", a, b, s1, s2, mode, precision)


def _reversed_conj(x: Array) -> Array:
    return flip(conj(x))


def correlate(
    in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto", precision: Any = None
) -> Array:
    """The N-D cross-correlation ``z[k] = sum_l in1[l + k] * conj(in2[l])``: the
    convolution of ``in1`` with ``in2`` reversed and conjugated."""
    _check_mode("correlate", mode)
    a, b, _, _ = _operands("correlate", in1, in2)
    return convolve(a, _reversed_conj(b), mode, method, precision)


def _check_2d(name: str, in1: ArrayLike, in2: ArrayLike, boundary: Any, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(
            f"scipy.signal.{name} supports only boundary='fill' with fillvalue=0 (as JAX's), got "
            f"boundary={boundary!r}, fillvalue={fillvalue!r}"
        )
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"scipy.signal.{name} needs 2-D inputs, got ranks {np.ndim(in1)} and {np.ndim(in2)}")


def convolve2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0,
               precision: Any = None) -> Array:  # fmt: skip
    """The 2-D convolution (zero fill outside the inputs only)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    _check_mode("convolve2d", mode)
    a, b, s1, s2 = _operands("convolve2d", in1, in2)
    return _direct("convolve2d", a, b, s1, s2, mode, precision)


def correlate2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0,
                precision: Any = None) -> Array:  # fmt: skip
    """The 2-D cross-correlation, as SciPy's ``correlate2d``: like
    :func:`correlate`, except that ``'same'`` is centred from the other end
    (on a tie) and ``'valid'`` with ``in2`` the larger is conjugated."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    _check_mode("correlate2d", mode)
    a, b, s1, s2 = _operands("correlate2d", in1, in2)
    if mode == "same":
        return flip(_direct("correlate2d", flip(a), conj(b), s1, s2, mode, precision))
    out = _direct("correlate2d", a, _reversed_conj(b), s1, s2, mode, precision)
    swapped = all(x <= y for x, y in zip(s1, s2)) and s1 != s2
    return conj(out) if mode == "valid" and swapped else out
