"""``plait.numpy.fft``: discrete Fourier transforms with NumPy's names and JAX's
semantics.

Every transform is built on ``lax.fft``, which transforms 1 to 3 trailing
axes: other axes are moved to the end and back, and more than three axes
are transformed in groups.  ``n``/``s`` crop or zero-pad the transformed
axes first.  ``norm`` is ``None``/``"backward"`` (inverse scaled by
``1/N``), ``"ortho"`` (both by ``1/sqrt(N)``) or ``"forward"`` (forward
scaled by ``1/N``).  Inputs are converted as JAX does: real transforms need
real input, complex transforms work in complex64 (complex128 for float64
input with x64 on).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.dims import is_constant_dim
from plait_core.lax import _lenient
from plait_core.lax.fft import FftType, to_complex_dtype
from plait_core.numpy._util import Array, ArrayLike, as_array, canonicalize_axis, convert, dtype_of, shape_of
from plait_core.numpy.math import conj
from plait_core.numpy.shape import moveaxis, roll

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft",
    "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]  # fmt: skip

_NORMS = (None, "backward", "ortho", "forward")


def _check_norm(name: str, norm: Any) -> None:
    if norm not in _NORMS:
        raise ValueError(
            f'numpy.fft.{name}: invalid norm {norm!r}; should be "backward", "ortho" or "forward"'
        )


def _scale(x: Array, name: str, inverse: bool, norm: Any, sizes: Sequence[int]) -> Array:
    """``x`` scaled as ``norm`` asks (``lax.fft``'s own scaling is "backward")."""
    n = math.prod(sizes)
    if norm is None or norm == "backward":
        return x
    if norm == "ortho":
        factor = math.sqrt(n) if inverse else 1 / math.sqrt(n)
    else:
        factor = n if inverse else 1 / n
    return _lenient.mul(x, factor)


def _transform(x: Array, kind: FftType, lengths: Sequence[int]) -> Array:
    """``lax.fft`` over the trailing ``len(lengths)`` axes, in groups of at most 3."""
    k = len(lengths)
    if k <= 3:
        return lax.fft(x, kind, tuple(lengths))
    # More than three axes: the last three with ``kind`` and the rest as a
    # complex transform of the same direction (before, for IRFFT).
    nd = len(shape_of(x))
    rest = list(range(nd - k, nd - 3))
    moved = list(range(nd - len(rest), nd))
    inner = FftType.IFFT if kind in (FftType.IFFT, FftType.IRFFT) else FftType.FFT
    if kind == FftType.IRFFT:
        x = moveaxis(_transform(moveaxis(x, rest, moved), inner, lengths[:-3]), moved, rest)
        return lax.fft(x, kind, tuple(lengths[-3:]))
    x = lax.fft(x, kind, tuple(lengths[-3:]))
    return moveaxis(_transform(moveaxis(x, rest, moved), inner, lengths[:-3]), moved, rest)


def _resize(x: Array, axis: int, size: int) -> Array:
    """``x`` cropped or zero-padded to ``size`` along ``axis``."""
    shape = shape_of(x)
    have = int(shape[axis])
    if have == size:
        return x
    if have > size:
        start = [0] * len(shape)
        limit = list(shape)
        limit[axis] = size
        return lax.slice(x, start, limit)
    config = [(0, 0, 0)] * len(shape)
    config[axis] = (0, size - have, 0)
    return lax.pad(x, np.zeros((), dtype_of(x)), config)


def _check_concrete(name: str, shape: Sequence[Any], axes: Sequence[int]) -> None:
    for ax in axes:
        if not is_constant_dim(shape[ax]):
            raise ValueError(
                f"numpy.fft.{name}: axis {ax} has the symbolic size {shape[ax]}; a transform mixes every entry of "
                "its axes, so it is not supported over a masked or ragged axis"
            )


def _core(name: str, kind: FftType, a: ArrayLike, s: Any, axes: Any, norm: Any) -> Array:
    x = as_array(a, f"numpy.fft.{name}")
    _check_norm(name, norm)
    dt = dtype_of(x)
    if kind == FftType.RFFT:
        if dtypes.is_complex(dt):
            raise ValueError(f"numpy.fft.{name} transforms real values only, got a {dt.name} array")
        # a weak input gives a strong result, and integers are transformed in the float of their width, as in JAX
        x = convert(x, dt if dtypes.is_float(dt) else np.dtype(to_complex_dtype(dt).type(0).real.dtype))
    else:
        x = convert(x, to_complex_dtype(dt))
    nd = len(shape_of(x))
    if s is not None:
        s = tuple(operator.index(v) for v in s)
        if any(v <= 0 for v in s):
            raise ValueError(f"numpy.fft.{name}: the transform sizes must be positive, got {s}")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError(f"numpy.fft.{name}: s {s} and axes {tuple(axes)} have different lengths")
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    axes = tuple(canonicalize_axis(ax, nd, f"numpy.fft.{name}", "axis") for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"numpy.fft.{name} does not support repeated axes, got axes {axes}")
    if not axes:
        return x
    _check_concrete(name, shape_of(x), axes)
    trailing = tuple(range(nd - len(axes), nd))
    x = moveaxis(x, axes, trailing)
    shape = shape_of(x)
    if s is None:
        sizes = [int(shape[ax]) for ax in trailing]
        if kind == FftType.IRFFT:
            sizes[-1] = max(0, 2 * (sizes[-1] - 1))
            if sizes[-1] == 0:
                raise ValueError(f"numpy.fft.{name}: invalid number of data points (0) for the real output")
    else:
        sizes = list(s)
    for ax, size in zip(trailing, sizes):
        have = size // 2 + 1 if kind == FftType.IRFFT and ax == nd - 1 else size
        x = _resize(x, ax, have)
    out = _transform(x, kind, sizes)
    out = _scale(out, name, kind in (FftType.IFFT, FftType.IRFFT), norm, sizes)
    return moveaxis(out, trailing, axes)


def _one_axis(name: str, axis: Any) -> tuple[int]:
    if isinstance(axis, (list, tuple)):
        raise ValueError(
            f"numpy.fft.{name} transforms one axis; use numpy.fft.{name}n for several (got axis={axis!r})"
        )
    return (axis,)


def _two_axes(name: str, axes: Any) -> Sequence[int]:
    if len(axes) != 2:
        raise ValueError(f"numpy.fft.{name} transforms exactly 2 axes, got axes={tuple(axes)!r}")
    return tuple(axes)


def _n_as_s(n: int | None) -> tuple[int] | None:
    return None if n is None else (n,)


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-D discrete Fourier transform along ``axis`` (``n`` crops or zero-pads it first)."""
    return _core("fft", FftType.FFT, a, _n_as_s(n), _one_axis("fft", axis), norm)


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-D inverse discrete Fourier transform along ``axis``."""
    return _core("ifft", FftType.IFFT, a, _n_as_s(n), _one_axis("ifft", axis), norm)


def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-D transform of real input: the ``n // 2 + 1`` non-negative frequencies."""
    return _core("rfft", FftType.RFFT, a, _n_as_s(n), _one_axis("rfft", axis), norm)


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of :func:`rfft`: a real result of length ``n`` (``2 * (m - 1)`` by default)."""
    return _core("irfft", FftType.IRFFT, a, _n_as_s(n), _one_axis("irfft", axis), norm)


def _swapped(norm: str | None) -> str:
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, "ortho")


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The transform of a signal with a Hermitian-symmetric spectrum (given as
    its non-negative half): a real result of length ``n`` (``2 * (m - 1)``)."""
    _check_norm("hfft", norm)
    return irfft(conj(a), n, axis, _swapped(norm))


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of :func:`hfft`: the non-negative half of a Hermitian spectrum."""
    _check_norm("ihfft", norm)
    return conj(rfft(a, n, axis, _swapped(norm)))


def fft2(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The 2-D discrete Fourier transform over ``axes``."""
    return _core("fft2", FftType.FFT, a, s, _two_axes("fft2", axes), norm)


def ifft2(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The 2-D inverse discrete Fourier transform over ``axes``."""
    return _core("ifft2", FftType.IFFT, a, s, _two_axes("ifft2", axes), norm)


def rfft2(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The 2-D transform of real input (half spectrum along the last of ``axes``)."""
    return _core("rfft2", FftType.RFFT, a, s, _two_axes("rfft2", axes), norm)


def irfft2(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The inverse of :func:`rfft2`."""
    return _core("irfft2", FftType.IRFFT, a, s, _two_axes("irfft2", axes), norm)


def fftn(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The N-D discrete Fourier transform over ``axes`` (all axes, or the last ``len(s)``)."""
    return _core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The N-D inverse discrete Fourier transform over ``axes``."""
    return _core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The N-D transform of real input (half spectrum along the last axis transformed)."""
    return _core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(
    a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The inverse of :func:`rfftn`."""
    return _core("irfftn", FftType.IRFFT, a, s, axes, norm)


# ---------------------------------------------------------------------------
# Frequencies and shifts


def _freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"numpy.fft.{name}: n must be an int, got {list(n)}")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"numpy.fft.{name}: d must be a single value, got {list(d)}")


def _freq_dtype(dtype: Any) -> tuple[Any, Any]:
    out = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_dtype(np.dtype(dtype))
    work = out if dtypes.is_float(out) else dtypes.default_float_dtype()
    return out, work


def fftfreq(n: int, d: ArrayLike = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an ``n``-point transform with sample spacing
    ``d``: ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    _freq_args("fftfreq", n, d)
    n = operator.index(n)
    out, work = _freq_dtype(dtype)
    k = (np.arange(n) + n // 2) % builtins.max(n, 1) - n // 2
    return convert(_lenient.div(convert(np.asarray(k, work), work), _lenient.mul(convert(d, work), float(n))), out)


def rfftfreq(n: int, d: ArrayLike = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d * n)``."""
    _freq_args("rfftfreq", n, d)
    n = operator.index(n)
    out, work = _freq_dtype(dtype)
    k = np.arange(n // 2 + 1)
    return convert(_lenient.div(convert(np.asarray(k, work), work), _lenient.mul(convert(d, work), float(n))), out)


def _shift(name: str, x: ArrayLike, axes: Any, sign: int) -> Array:
    x = as_array(x, f"numpy.fft.{name}")
    shape = shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(canonicalize_axis(ax, len(shape), f"numpy.fft.{name}", "axis") for ax in axes)
    _check_concrete(name, shape, axes)
    shifts = tuple(sign * (int(shape[ax]) // 2) for ax in axes)
    return roll(x, shifts, axes) if axes else x


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """``x`` with the zero frequency moved to the centre of ``axes`` (all by default)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of :func:`fftshift`."""
    return _shift("ifftshift", x, axes, -1)
