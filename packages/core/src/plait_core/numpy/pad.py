"""``pad``: extend an array at the ends of each axis, as ``numpy.pad``.

Modes: ``constant`` (``constant_values`` per axis and side), ``empty`` (zeros),
``edge``, ``reflect`` and ``symmetric`` (even reflection), ``wrap``, and the
whole-axis statistics ``maximum``, ``minimum`` and ``mean``.  Pad widths must
be concrete.  Every mode works with symbolic sizes (under ``mask``, a ragged
axis inside ``vmap`` over piles): ``constant`` lowers to ``lax.pad``, and the
periodic modes read source positions computed from the length as a value.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import Dim
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    convert,
    dtype_of,
    shape_str,
    slice_axis,
)
from plait_core.numpy.math import round as _round
from plait_core.numpy.reductions import max as _max
from plait_core.numpy.reductions import mean
from plait_core.numpy.reductions import min as _min
from plait_core.numpy.selection import take
from plait_core.trace import concrete_or_error

_MODES = ("constant", "empty", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean")


def _pairs(value: Any, nd: int, what: str, integral: builtins.bool) -> list[tuple[Any, Any]]:
    raw = np.asarray(concrete_or_error(value, f"pad: {what}"))
    if integral and raw.dtype.kind not in "iu":
        raise TypeError(f"pad: {what} must be integers, got {raw.dtype} values {value!r}")
    try:
        table = np.broadcast_to(raw, (nd, 2))
    except ValueError:
        raise ValueError(f"pad: {what} {value!r} cannot be broadcast to ({nd}, 2) "
                         f"(one (before, after) pair per axis)") from None
    return [(table[i, 0].item(), table[i, 1].item()) for i in range(nd)]


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """``array`` padded by ``pad_width`` (an int, a ``(before, after)`` pair, or one
    pair per axis) using ``mode``; ``constant_values`` gives the fill of the
    ``constant`` mode (default 0) and ``reflect_type`` must be ``"even"``."""
    x = as_array(array, "pad")
    nd = get_aval(x).ndim
    if mode not in _MODES:
        raise ValueError(f"pad: unsupported mode {mode!r}; supported modes: {', '.join(_MODES)}")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}, "maximum": {"stat_length"}, "minimum": {"stat_length"},
               "mean": {"stat_length"}}.get(mode, set())
    unexpected = set(kwargs) - allowed
    if unexpected:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {sorted(unexpected)}")
    widths = _pairs(pad_width, nd, "pad_width", True)
    if builtins.any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    if mode in ("constant", "empty"):
        values = _pairs(kwargs.get("constant_values", 0), nd, "constant_values", False)
        return _pad_constant(x, widths, values)
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError(f"pad: only reflect_type='even' is supported, got {kwargs['reflect_type']!r}")
    if kwargs.get("stat_length") is not None:
        raise ValueError("pad: stat_length is not supported; statistics use the whole axis")
    for ax, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        n = get_aval(x).shape[ax]
        if type(n) is builtins.int and n == 0:
            raise ValueError(f"pad: can't extend the empty axis {ax} of shape {shape_str(get_aval(x).shape)} "
                             f"using modes other than 'constant' or 'empty'")
        if mode == "edge":
            x = _pad_edge(x, ax, n, lo, hi)
        elif mode in ("maximum", "minimum", "mean"):
            x = _pad_stat(x, ax, lo, hi, mode)
        else:
            x = _pad_by_index(x, ax, n, lo, hi, mode)
    return x


def _pad_constant(x: Array, widths: list[tuple[int, int]], values: list[tuple[Any, Any]]) -> Array:
    dt = dtype_of(x)
    firsts = {v for pair in values for v in pair}
    if len(firsts) == 1:
        fill = _cast_fill(next(iter(firsts)), dt)
        return lax.pad(x, fill, [(lo, hi, 0) for lo, hi in widths])
    nd = len(widths)
    for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):
        config = [(0, 0, 0)] * nd
        config[ax] = (lo, 0, 0)
        x = lax.pad(x, _cast_fill(vlo, dt), config)
        config[ax] = (0, hi, 0)
        x = lax.pad(x, _cast_fill(vhi, dt), config)
    return x


def _cast_fill(value: Any, dt: np.dtype[Any]) -> Array:
    with np.errstate(all="ignore"):
        return convert(np.asarray(value).astype(dt), dt)


def _pad_edge(x: Array, ax: int, n: Dim, lo: int, hi: int) -> Array:
    shape = list(get_aval(x).shape)
    parts = []
    dims = tuple(range(len(shape)))
    if lo:
        shape_lo = list(shape)
        shape_lo[ax] = lo
        parts.append(lax.broadcast_in_dim(slice_axis(x, 0, 1, ax), tuple(shape_lo), dims))
    parts.append(x)
    if hi:
        shape_hi = list(shape)
        shape_hi[ax] = hi
        parts.append(lax.broadcast_in_dim(slice_axis(x, n - 1, n, ax), tuple(shape_hi), dims))
    return lax.concatenate(parts, ax)


def _pad_by_index(x: Array, ax: int, n: Dim, lo: int, hi: int, mode: str) -> Array:
    """Periodic extensions: each output position reads a source position."""
    if type(n) is not builtins.int:
        return take(x, _symbolic_sources(n, lo, hi, mode), axis=ax, mode="promise_in_bounds")
    i = np.arange(-lo, n + hi)
    if mode == "wrap":
        src = i % n
    elif mode == "symmetric":
        j = i % (2 * n)
        src = np.where(j < n, j, 2 * n - 1 - j)
    elif n == 1:
        src = np.zeros_like(i)
    else:
        period = 2 * (n - 1)
        j = i % period
        src = np.where(j < n, j, period - j)
    return take(x, src.astype(dtypes.default_int_dtype()), axis=ax, mode="promise_in_bounds")


def _symbolic_sources(n: Dim, lo: int, hi: int, mode: str) -> Array:
    """The source positions of :func:`_pad_by_index` for a symbolic length
    ``n`` (under mask, a ragged axis), computed from ``n`` as a value."""
    idt = dtypes.default_int_dtype()
    size = convert(_dim_as_value(n), idt)

    def const(v: int) -> np.ndarray:
        return np.asarray(v, idt)

    def positive_mod(a: Array, m: Array) -> Array:
        m = _lenient.max(m, const(1))  # a period of 0 (reflect with n = 1) is handled below
        return _lenient.rem(_lenient.add(_lenient.rem(a, m), m), m)

    def mirror(j: Array, bound: Array, period_end: Array) -> Array:
        return _lenient.select_n(_lenient.lt(j, bound), _lenient.sub(period_end, j), j)

    i = _lenient.sub(lax.iota(idt, n + lo + hi), const(lo))
    if mode == "wrap":
        return positive_mod(i, size)
    if mode == "symmetric":
        twice = _lenient.mul(size, const(2))
        return mirror(positive_mod(i, twice), size, _lenient.sub(twice, const(1)))
    period = _lenient.mul(_lenient.sub(size, const(1)), const(2))
    src = mirror(positive_mod(i, period), size, period)
    return _lenient.select_n(_lenient.eq(size, const(1)), src, lax.broadcast_in_dim(const(0), tuple(get_aval(i).shape), ()))


def _pad_stat(x: Array, ax: int, lo: int, hi: int, mode: str) -> Array:
    if mode == "mean":
        stat = mean(x, axis=ax, keepdims=True)
        if not dtypes.is_inexact(dtype_of(x)):
            stat = _round(stat)
        stat = convert(stat, dtype_of(x))
    else:
        stat = (_max if mode == "maximum" else _min)(x, axis=ax, keepdims=True)
    shape = list(get_aval(x).shape)
    dims = tuple(range(len(shape)))
    parts = []
    if lo:
        shape[ax] = lo
        parts.append(lax.broadcast_in_dim(stat, tuple(shape), dims))
    parts.append(x)
    if hi:
        shape[ax] = hi
        parts.append(lax.broadcast_in_dim(stat, tuple(shape), dims))
    return lax.concatenate(parts, ax)
