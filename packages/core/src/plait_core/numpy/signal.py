"""Differences, 1-D convolutions, numerical derivatives and integrals,
interpolation: ``diff``, ``ediff1d``, ``convolve``, ``correlate``,
``gradient``, ``trapezoid``, ``interp``.

All are compositions of slices, arithmetic and (for the convolutions)
``lax.conv_general_dilated``, so they stage, differentiate and batch like any
other ``plait.numpy`` code.  The convolutions take a symbolic length of
``a`` (under ``mask`` or ``vmap`` over piles) with a kernel ``v`` of constant
length; ``"same"`` and ``"valid"`` then need ``len(a) >= len(v)`` to be
decidable (it is for a kernel of length 1).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import Dim, InconclusiveDimensionOperation, definitely_equal_shapes
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    canonicalize_axis,
    concrete_int,
    convert,
    dtype_of,
    promote_dtypes_inexact,
    shape_str,
    slice_axis,
)
from plait_core.numpy.math import add, conjugate, divide, imag, multiply, negative, real, remainder, subtract
from plait_core.numpy.reductions import sum as sum_
from plait_core.numpy.selection import take
from plait_core.numpy.shape import concatenate, ravel
from plait_core.numpy.sorting import searchsorted


def _static_length(d: Dim, name: str, what: str) -> int:
    """A dimension the result's shape depends on, as an int."""
    if type(d) is not builtins.int:
        raise ValueError(f"{name}: {what} must have a constant length, got {d}")
    return d


def _at_least(n: Dim, m: int, name: str, mode: str) -> builtins.bool:
    """``n >= m``, where ``n`` may be symbolic; an error when that is undecidable."""
    try:
        return builtins.bool(n >= m)
    except InconclusiveDimensionOperation:
        raise InconclusiveDimensionOperation(
            f"{name}: mode {mode!r} of a of symbolic length {n} and v of length {m} depends on whether "
            f"{n} >= {m}, which is not known for every size; use mode 'full' and slice the result"
        ) from None


def _along(x: Array, ax: int, start: Dim, stop: Dim) -> Array:
    return slice_axis(x, start, stop, ax)


# ---------------------------------------------------------------------------
# Differences


def _edge_values(value: ArrayLike, like: Array, ax: int, name: str, argname: str) -> Array:
    """``prepend``/``append``: a scalar becomes a slab of width 1 along ``ax``."""
    v = as_array(value, name, argname)
    if get_aval(v).ndim == 0:
        shape = list(get_aval(like).shape)
        shape[ax] = 1
        return lax.broadcast_in_dim(v, tuple(shape), ())
    return v


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:
    """The ``n``-th discrete difference along ``axis``: ``a[1:] - a[:-1]``, ``n``
    times (``!=`` for booleans).  ``prepend`` / ``append`` are joined to ``a``
    along ``axis`` first (a scalar counts as one entry).  Each difference
    shortens the axis by one, down to length 0."""
    name = "diff"
    x = as_array(a, name)
    n = concrete_int(n, f"{name}: n")
    if n < 0:
        raise ValueError(f"{name}: the order n must be non-negative, got {n}")
    if n == 0:
        return x
    if get_aval(x).ndim == 0:
        raise ValueError(f"{name}: a must be at least 1-D, got a scalar")
    ax = canonicalize_axis(axis, get_aval(x).ndim, name)
    if prepend is not None or append is not None:
        parts = [x]
        if prepend is not None:
            parts.insert(0, _edge_values(prepend, x, ax, name, "prepend"))
        if append is not None:
            parts.append(_edge_values(append, x, ax, name, "append"))
        x = concatenate(parts, axis=ax)
    boolean = dtype_of(x) == np.dtype(bool)
    for _ in range(n):
        length = get_aval(x).shape[ax]
        if type(length) is builtins.int and length == 0:
            break
        hi, lo = _along(x, ax, 1, length), _along(x, ax, 0, length - 1)
        x = _lenient.ne(hi, lo) if boolean else _lenient.sub(hi, lo)
    return x


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None) -> Array:
    """The differences of the flattened ``ary``, with the flattened ``to_begin``
    before and ``to_end`` after them (converted to ``ary``'s dtype)."""
    name = "ediff1d"
    flat = ravel(as_array(ary, name))
    dt, weak = dtype_of(flat), get_aval(flat).weak_type
    out = [diff(flat)]
    if to_begin is not None:
        out.insert(0, convert(ravel(as_array(to_begin, name, "to_begin")), dt, weak))
    if to_end is not None:
        out.append(convert(ravel(as_array(to_end, name, "to_end")), dt, weak))
    return lax.concatenate(out, 0) if len(out) > 1 else out[0]


# ---------------------------------------------------------------------------
# Convolution and correlation


def _conv1d(name: str, a: ArrayLike, v: ArrayLike, mode: str, flip: builtins.bool, precision: Any,
            preferred_element_type: Any) -> Array:
    """``convolve`` (``flip``) or ``correlate`` of two 1-D arrays: one XLA
    convolution whose padding picks the slice of the full result that ``mode``
    keeps, so no more than the wanted outputs are computed."""
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    x, k = promote_dtypes_inexact(name, as_array(a, name, "a"), as_array(v, name, "v"))
    for arr, argname in ((x, "a"), (k, "v")):
        if get_aval(arr).ndim != 1:
            raise ValueError(f"{name}: {argname} must be 1-D, got shape {shape_str(get_aval(arr).shape)}")
    n: Dim = get_aval(x).shape[0]  # may be symbolic (mask, piles); the kernel's length may not be
    m = _static_length(get_aval(k).shape[0], name, "v")
    if (type(n) is builtins.int and n == 0) or m == 0:
        raise ValueError(f"{name}: {'v' if m == 0 else 'a'} cannot be empty")
    if flip:
        k = lax.rev(k, (0,))
    elif dtypes.is_complex(dtype_of(k)):
        k = conjugate(k)
    # Where the kept slice starts in the full result (NumPy's alignment: when
    # v is the longer one, convolution is symmetric and correlation mirrored).
    if mode == "full":
        start, length = 0, n + m - 1
    elif not _at_least(n, m, name, mode):
        assert type(n) is builtins.int
        if mode == "valid":
            start, length = n - 1, m - n + 1
        else:
            start, length = ((n - 1) // 2 if flip else n - 1 - (n - 1) // 2), m
    elif mode == "valid":
        start, length = m - 1, n - m + 1
    else:
        start, length = (m - 1) // 2, n
    low = m - 1 - start
    high = int(length + m - 1 - n - low)  # constant: a symbolic n cancels
    out = lax.conv_general_dilated(
        lax.reshape(x, (1, 1, n)), lax.reshape(k, (1, 1, m)), (1,), [(low, high)],
        precision=precision, preferred_element_type=preferred_element_type)
    return lax.reshape(out, (length,))


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Array:
    """The discrete linear convolution of the 1-D arrays ``a`` and ``v``.

    ``mode``: ``"full"`` (length ``len(a) + len(v) - 1``), ``"same"`` (length
    ``max(len(a), len(v))``, centred as NumPy's) or ``"valid"`` (only where the
    two overlap completely).  Inputs are promoted to an inexact dtype, as in
    JAX; neither may be empty."""
    return _conv1d("convolve", a, v, mode, True, precision, preferred_element_type)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """The cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of the 1-D
    arrays ``a`` and ``v``; ``mode`` as for :func:`convolve` (default
    ``"valid"``)."""
    return _conv1d("correlate", a, v, mode, False, precision, preferred_element_type)


# ---------------------------------------------------------------------------
# Derivatives and integrals


def _spacing(h: ArrayLike, length: Dim, name: str, ax: int) -> Array:
    """A spacing argument of ``gradient``: a scalar, or 1-D coordinates as long as the axis."""
    s = as_array(h, name, "varargs")
    aval = get_aval(s)
    if aval.ndim == 0:
        return s
    if aval.ndim != 1 or not definitely_equal_shapes(aval.shape, (length,)):
        raise ValueError(f"{name}: the spacing for axis {ax} must be a scalar or 1-D coordinates of length "
                         f"{length}, got shape {shape_str(aval.shape)}")
    return s


def _gradient_axis(f: Array, ax: int, h: Array) -> Array:
    """Central differences inside, one-sided differences at the two ends."""
    n = get_aval(f).shape[ax]
    if type(n) is builtins.int and n < 2:
        raise ValueError(f"gradient: axis {ax} has length {n}; at least 2 entries are needed to compute "
                         "a numerical gradient")
    nd = get_aval(f).ndim

    def along(v: Array) -> Array:  # 1-D coordinates/steps, lined up with ``ax``
        return lax.broadcast_in_dim(v, tuple(1 if i != ax else get_aval(v).shape[0] for i in range(nd)), (ax,))

    first = _lenient.sub(_along(f, ax, 1, 2), _along(f, ax, 0, 1))
    last = _lenient.sub(_along(f, ax, n - 1, n), _along(f, ax, n - 2, n - 1))
    if get_aval(h).ndim == 0:
        inner = _lenient.div(_lenient.sub(_along(f, ax, 2, n), _along(f, ax, 0, n - 2)), _lenient.add(h, h))
        first, last = _lenient.div(first, h), _lenient.div(last, h)
    else:
        step = diff(h)
        d1, d2 = along(_along(step, 0, 0, n - 2)), along(_along(step, 0, 1, n - 1))
        total = add(d1, d2)
        # Second-order accurate on uneven grids (the weights sum to zero).
        wa = negative(divide(d2, multiply(d1, total)))
        wb = divide(subtract(d2, d1), multiply(d1, d2))
        wc = divide(d1, multiply(d2, total))
        inner = add(add(multiply(wa, _along(f, ax, 0, n - 2)), multiply(wb, _along(f, ax, 1, n - 1))),
                    multiply(wc, _along(f, ax, 2, n)))
        first = divide(first, along(_along(step, 0, 0, 1)))
        last = divide(last, along(_along(step, 0, n - 2, n - 1)))
    return lax.concatenate([first, inner, last], ax)


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Array | list[Array]:
    """The gradient of ``f`` sampled on a grid: central differences inside,
    first-order one-sided differences at the boundaries.

    ``varargs``: nothing (unit spacing), one spacing for every axis, or one per
    axis in ``axis``; each a scalar step or the 1-D coordinates along that axis.
    ``axis``: None (every axis), an int or a sequence of ints.  One array is
    returned for a single axis, else a list (as JAX).  Only ``edge_order=1``
    (the default) is supported."""
    name = "gradient"
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError(f"{name}: edge_order={edge_order!r} is not supported; only the first-order "
                                  "boundary differences (edge_order=1) are")
    x = as_array(f, name)
    nd = get_aval(x).ndim
    if nd == 0:
        raise ValueError(f"{name}: f must be at least 1-D, got a scalar")
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, nd, name) for a in axis)
    else:
        axes = (canonicalize_axis(axis, nd, name),)
    if len(varargs) == 0:
        spacings: list[ArrayLike] = [1.0] * len(axes)
    elif len(varargs) == 1 and get_aval(as_array(varargs[0], name, "varargs")).ndim == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"{name}: expected 0, 1 or {len(axes)} spacing arguments (one per axis), got {len(varargs)}")
    shape = get_aval(x).shape
    out = []
    for ax, h in zip(axes, spacings):
        values, step = promote_dtypes_inexact(name, x, _spacing(h, shape[ax], name, ax))
        out.append(_gradient_axis(values, ax, step))
    return out[0] if len(out) == 1 else out


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1) -> Array:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample
    points ``x`` (1-D along ``axis``, or shaped like ``y``) or evenly ``dx``
    apart."""
    name = "trapezoid"
    yv = as_array(y, name, "y")
    nd = get_aval(yv).ndim
    if nd == 0:
        raise ValueError(f"{name}: y must be at least 1-D, got a scalar")
    ax = canonicalize_axis(axis, nd, name)
    if x is None:
        yv, d = promote_dtypes_inexact(name, yv, as_array(dx, name, "dx"))
        if get_aval(d).ndim != 0:
            raise ValueError(f"{name}: dx must be a scalar, got shape {shape_str(get_aval(d).shape)}")
    else:
        yv, xv = promote_dtypes_inexact(name, yv, as_array(x, name, "x"))
        xa = get_aval(xv)
        if xa.ndim == 1:
            if not definitely_equal_shapes(xa.shape, (get_aval(yv).shape[ax],)):
                raise ValueError(f"{name}: x has {xa.shape[0]} sample points but y has {get_aval(yv).shape[ax]} "
                                 f"along axis {ax}")
            step = diff(xv)
            d = lax.broadcast_in_dim(step, tuple(get_aval(step).shape[0] if i == ax else 1 for i in range(nd)),
                                     (ax,))
        else:
            d = diff(xv, axis=ax)
    n = get_aval(yv).shape[ax]
    if type(n) is builtins.int and n == 0:
        return sum_(yv, axis=ax)
    halves = _lenient.add(_along(yv, ax, 1, n), _along(yv, ax, 0, n - 1))
    return _lenient.mul(sum_(multiply(d, halves), axis=ax), convert(0.5, dtype_of(halves), get_aval(halves).weak_type))


# ---------------------------------------------------------------------------
# Interpolation


def _side(value: Any, fallback: Array, name: str, argname: str) -> Array | str:
    if value is None:
        return fallback
    if isinstance(value, str):
        if value != "extrapolate":
            raise ValueError(f"{name}: {argname} must be a scalar, None or 'extrapolate', got {value!r}")
        return value
    v = as_array(value, name, argname)
    if get_aval(v).ndim != 0:
        raise ValueError(f"{name}: {argname} must be a scalar, got shape {shape_str(get_aval(v).shape)}")
    return v


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | str | None = None,
           right: ArrayLike | str | None = None, period: ArrayLike | None = None) -> Array:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (1-D, ``xp``
    increasing) at ``x``.

    Below ``xp[0]`` the result is ``left`` (default ``fp[0]``), above ``xp[-1]``
    ``right`` (default ``fp[-1]``); ``"extrapolate"`` continues the first or
    last segment, as in JAX.  With ``period``, ``x`` and ``xp`` are taken
    modulo it (``xp`` need not be sorted then) and ``left``/``right`` must be
    None.  The result has an inexact dtype.  An unsorted ``xp`` gives
    meaningless values, as in NumPy (it is not checked)."""
    name = "interp"
    for v, argname in ((x, "x"), (xp, "xp")):
        if dtypes.is_complex(dtype_of(as_array(v, name, argname))):
            raise ValueError(f"{name}: complex {argname} values are not supported (they have no order); fp, left "
                             "and right may be complex")
    sides = [v for v in (left, right) if v is not None and not isinstance(v, str)]
    if any(dtypes.is_complex(dtype_of(as_array(v, name))) for v in (fp, *sides)):
        # the real and the imaginary parts are interpolated on their own
        def part(of: Any, v: Any) -> Any:
            return v if v is None or isinstance(v, str) else of(as_array(v, name))

        re, im = (interp(x, xp, part(of, fp), part(of, left), part(of, right), period) for of in (real, imag))
        return lax.complex(re, im)
    xv, xpv, fpv = promote_dtypes_inexact(name, as_array(x, name, "x"), as_array(xp, name, "xp"),
                                          as_array(fp, name, "fp"))
    weak = get_aval(xv).weak_type
    for arr, argname in ((xpv, "xp"), (fpv, "fp")):
        if get_aval(arr).ndim != 1:
            raise ValueError(f"{name}: {argname} must be 1-D, got shape {shape_str(get_aval(arr).shape)}")
    m = get_aval(xpv).shape[0]
    if not definitely_equal_shapes(get_aval(fpv).shape, (m,)):
        raise ValueError(f"{name}: xp and fp must have the same length, got {m} and {get_aval(fpv).shape[0]}")
    if type(m) is builtins.int and m == 0:
        raise ValueError(f"{name}: xp and fp must not be empty")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError(f"{name}: left and right must be None when period is given")
        p = lax.abs(as_array(period, name, "period"))
        xv, xpv, p = promote_dtypes_inexact(name, xv, xpv, p)
        xv, xpv = remainder(xv, p), remainder(xpv, p)
        xpv, fpv = lax.sort((xpv, fpv), dimension=0, num_keys=1)
        # One period's copy of the last point before the first and of the first after the last.
        xpv = lax.concatenate([_lenient.sub(_along(xpv, 0, m - 1, m), lax.broadcast_in_dim(p, (1,), ())), xpv,
                               _lenient.add(_along(xpv, 0, 0, 1), lax.broadcast_in_dim(p, (1,), ()))], 0)
        fpv = lax.concatenate([_along(fpv, 0, m - 1, m), fpv, _along(fpv, 0, 0, 1)], 0)
        m = m + 2
    idt = dtypes.default_int_dtype()
    shape = tuple(get_aval(xv).shape)
    if type(m) is builtins.int and m == 1:
        hi = lax.broadcast_in_dim(np.zeros((), idt), shape, ())
        lo = hi
    else:
        hi = _lenient.clamp(np.ones((), idt), searchsorted(xpv, xv, side="right"), convert(m - 1, idt))
        lo = _lenient.sub(hi, lax.broadcast_in_dim(np.ones((), idt), shape, ()))
    x0, x1 = take(xpv, lo, mode="clip"), take(xpv, hi, mode="clip")
    f0, f1 = take(fpv, lo, mode="clip"), take(fpv, hi, mode="clip")
    dx = _lenient.sub(x1, x0)
    # A zero-width segment (repeated xp) takes its right value, as NumPy.
    eps = dtypes.finfo(dtype_of(dx)).eps
    flat = _lenient.le(lax.abs(dx), lax.broadcast_in_dim(np.asarray(eps, np.asarray(eps).dtype), shape, ()))
    safe_dx = _lenient.select(flat, lax.broadcast_in_dim(convert(1, dtype_of(dx)), shape, ()), dx)
    slope = _lenient.div(_lenient.sub(f1, f0), safe_dx)
    line = _lenient.add(f0, _lenient.mul(slope, _lenient.sub(xv, x0)))
    out = _lenient.select(flat, f1, line)
    if period is None:
        below, above = _lenient.lt(xv, _first_b(xpv, shape)), _lenient.gt(xv, _last_b(xpv, shape))
        lval = _side(left, _first_b(fpv, shape), name, "left")
        rval = _side(right, _last_b(fpv, shape), name, "right")
        if not isinstance(lval, str):
            out = _lenient.select(below, lax.broadcast_in_dim(convert(lval, dtype_of(out)), shape, ())
                             if get_aval(lval).ndim == 0 else lval, out)
        if not isinstance(rval, str):
            out = _lenient.select(above, lax.broadcast_in_dim(convert(rval, dtype_of(out)), shape, ())
                             if get_aval(rval).ndim == 0 else rval, out)
    return convert(out, dtype_of(out), weak)  # weak when x, xp and fp all are, as in JAX


def _first_b(v: Array, shape: tuple[Dim, ...]) -> Array:
    return lax.broadcast_in_dim(lax.index_in_dim(v, 0, 0, False), shape, ())


def _last_b(v: Array, shape: tuple[Dim, ...]) -> Array:
    n = get_aval(v).shape[0]
    return lax.broadcast_in_dim(lax.reshape(_along(v, 0, n - 1, n), ()), shape, ())
