"""Reductions (``sum``, ``mean``, ``max``, ``argmax``, ...) and cumulative scans.

Common conventions, as in JAX's ``jax.numpy``:

* ``axis`` is ``None`` (every axis), an int or a tuple of ints, negative ones
  counting from the end; ``keepdims=True`` keeps reduced axes with size 1;
* ``sum``/``prod`` of booleans and of integers narrower than the default
  integer accumulate in the default integer width (unsigned stays unsigned)
  unless ``promote_integers=False`` or a ``dtype`` is given; ``cumsum`` /
  ``cumprod`` keep integer dtypes and count booleans in the default integer;
* results are strongly typed, also of weakly typed inputs (as in JAX);
* ``mean``/``var``/``std`` of integers return the default float dtype, and
  16-bit floats accumulate in float32;
* ``where=`` masks elements out (``max``/``min`` then need ``initial``).

``mean`` divides by the number of reduced elements computed from the shape,
so a symbolic shape divides by its symbolic size.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.config import config
from plait_core.dims import Dim, is_symbolic
from plait_core.eager_fast import shortcuts as _fast
from plait_core.eager_staging import staged_when_eager
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    aval_of,
    broadcast_to_shape,
    canonicalize_axes,
    canonicalize_axis,
    convert,
    dtype_of,
    full_like_value,
    shape_str,
    slice_axis,
    to_inexact,
)
from plait_core.numpy.complex_extrema import reduce_max_complex, reduce_min_complex
from plait_core.numpy.math import complex_part, multiply, subtract, true_divide
from plait_core.primitive import Primitive
from plait_core.primitives import reductions as _rp
from plait_core.trace import EvalTrace as _EvalTrace
from plait_core.trace import _state as _trace_state

DType = np.dtype[Any]


def _bound(prim: Primitive) -> Callable[[Array, tuple[int, ...]], Array]:
    """The reduction ``prim`` over axes that :func:`canonicalize_axes` has made
    canonical (non-negative, distinct ints): bound directly, since the
    ``lax.reduce_*`` function would only check again what is established."""

    def reduce(x: Array, axes: tuple[int, ...]) -> Array:
        return prim.bind(x, axes=axes)

    reduce.__name__ = reduce.__qualname__ = prim.name
    return reduce


_reduce_sum = _bound(_rp.reduce_sum_p)
_reduce_prod = _bound(_rp.reduce_prod_p)
_reduce_max = _bound(_rp.reduce_max_p)
_reduce_min = _bound(_rp.reduce_min_p)
_reduce_and = _bound(_rp.reduce_and_p)
_reduce_or = _bound(_rp.reduce_or_p)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"{name}: the out argument is not supported (plait arrays are immutable)")


def _keepdims(r: Array, axes: tuple[int, ...], keepdims: builtins.bool) -> Array:
    if not keepdims or not axes:
        return r
    return lax.expand_dims(r, tuple(sorted(axes)))


def _to_bool(x: Array) -> Array:
    dt = dtype_of(x)
    return x if dtypes.is_bool(dt) else _lenient.ne(x, convert(0, dt))


def _mask(name: str, x: Array, where: ArrayLike | None, fill: Any) -> Array:
    if where is None:
        return x
    w = broadcast_to_shape(_to_bool(as_array(where, name, "where")), x.shape, name)
    return _lenient.select_n(w, full_like_value(x, fill), x)


def _accumulation_dtype(dt: DType, promote_integers: builtins.bool) -> DType:
    """The dtype a sum or product of ``dt`` values accumulates in."""
    if dtypes.is_inexact(dt):
        return dt
    if dtypes.is_bool(dt):
        return dtypes.default_int_dtype()
    if promote_integers and dtypes.is_int(dt):
        default = dtypes.default_int_dtype()
        if dtypes.is_unsigned_int(dt):
            default = dtypes.canonicalize_dtype(dtypes.uint64)
        if dt.itemsize < default.itemsize:
            return default
    return dt


def _reduced_size(shape: tuple[Dim, ...], axes: tuple[int, ...]) -> Dim:
    n: Dim = 1
    for a in axes:
        n = n * shape[a]
    return n


# ---------------------------------------------------------------------------
# sum and prod


def _sum_like(name: str, reduce: Callable[[Array, tuple[int, ...]], Array],
              combine: Callable[[Array, Array], Array], unit: int,
              a: ArrayLike, axis: Any, dtype: Any, out: Any, keepdims: builtins.bool,
              initial: ArrayLike | None, where: ArrayLike | None, promote_integers: builtins.bool) -> Array:
    if out is not None:
        _no_out(name, out)
    x = as_array(a, name)
    aval = aval_of(x, name)
    axes = canonicalize_axes(axis, len(aval.shape), name)
    if dtype is not None:
        dt = dtypes.canonicalize_dtype(np.dtype(dtype))
    else:
        dt = _accumulation_dtype(aval.dtype, promote_integers)
    if dt == dtypes.bool_:
        # A boolean sum is "any" and a boolean product "all".
        b = _mask(name, _to_bool(x), where, unit != 0)
        r = (_reduce_and if unit else _reduce_or)(b, axes)
        if initial is not None:
            r = (lax.bitwise_and if unit else lax.bitwise_or)(r, _to_bool(convert(initial, dt)))
        return _keepdims(r, axes, keepdims)
    x = convert(x, dt)
    if where is not None:
        x = _mask(name, x, where, unit)
    r = reduce(x, axes)
    if initial is not None:
        r = combine(r, convert(initial, dt))
    return _keepdims(r, axes, keepdims) if keepdims else r


_in_place: dict[tuple[Any, ...], Any] = {}


def _in_place_params(aval: Any, promote_integers: builtins.bool) -> Any:
    """The params of reduce_sum over every axis of a strongly typed ``aval``
    whose sum accumulates in its own dtype (not bool), else ``False``; one
    dict per case (the eager shortcut may key on its identity)."""
    key = (aval.dtype, len(aval.shape), promote_integers, config.x64_enabled)
    hit = _in_place.get(key)
    if hit is None:
        dt = aval.dtype
        same = dt != dtypes.bool_ and _accumulation_dtype(dt, promote_integers) == dt
        hit = _in_place[key] = {"axes": tuple(range(len(aval.shape)))} if same else False
    return hit


def sum(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None,
        keepdims: builtins.bool = False, initial: ArrayLike | None = None,
        where: ArrayLike | None = None, promote_integers: builtins.bool = True) -> Array:
    """The sum over ``axis`` (all axes by default).  Booleans and narrow integers
    accumulate in the default integer width; ``initial`` is added to the result."""
    if (
        a.__class__ is _fast.array_type
        and axis is None
        and dtype is None
        and out is None
        and not keepdims
        and initial is None
        and where is None
        and _trace_state.trace.__class__ is _EvalTrace
    ):
        # The commonest eager call: a strongly typed array that accumulates in
        # its own dtype is reduce_sum bound over every axis (see _sum_like).
        aval = a.aval  # type: ignore[attr-defined]
        params = _in_place.get((aval.dtype, len(aval.shape), promote_integers, config.x64_enabled))
        if params is None:
            params = _in_place_params(aval, promote_integers)
        if params and not aval.weak_type:
            return _fast.unary(_rp.reduce_sum_p, params, a)
    return _sum_like("sum", _reduce_sum, lax.add, 0, a, axis, dtype, out, keepdims,
                     initial, where, promote_integers)


def prod(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None,
         keepdims: builtins.bool = False, initial: ArrayLike | None = None,
         where: ArrayLike | None = None, promote_integers: builtins.bool = True) -> Array:
    """The product over ``axis`` (all axes by default); integer rules as :func:`sum`."""
    return _sum_like("prod", _reduce_prod, lax.mul, 1, a, axis, dtype, out, keepdims,
                     initial, where, promote_integers)


# ---------------------------------------------------------------------------
# max, min, any, all


def _extremum(name: str, reduce: Callable[[Array, tuple[int, ...]], Array],
              combine: Callable[[Array, Array], Array], a: ArrayLike, axis: Any, out: Any,
              keepdims: builtins.bool, initial: ArrayLike | None, where: ArrayLike | None) -> Array:
    _no_out(name, out)
    x = as_array(a, name)
    axes = canonicalize_axes(axis, x.ndim, name)
    if dtypes.is_complex(dtype_of(x)):  # lexicographic, as JAX's
        reduce = reduce_max_complex if reduce is _reduce_max else reduce_min_complex
    x = convert(x, dtype_of(x))  # a reduction is strongly typed
    if initial is None:
        if where is not None:
            raise ValueError(f"{name}: a where mask needs an initial value (the reduction has no identity)")
        for ax in axes:
            d = x.shape[ax]
            if type(d) is int and d == 0:
                raise ValueError(f"{name}: zero-size array to a reduction with no identity "
                                 f"(axis {ax} of shape {shape_str(x.shape)} is empty); pass initial=")
    if initial is not None:
        init = convert(initial, dtype_of(x))
        if where is not None:
            w = broadcast_to_shape(_to_bool(as_array(where, name, "where")), x.shape, name)
            x = _lenient.select_n(w, broadcast_to_shape(init, x.shape, name), x)
        if builtins.any(type(x.shape[ax]) is int and x.shape[ax] == 0 for ax in axes):
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
            return _keepdims(broadcast_to_shape(init, shape, name), axes, keepdims)
        if dtypes.is_bool(dtype_of(x)):
            combine = lax.bitwise_or if reduce is _reduce_max else lax.bitwise_and
        r = combine(reduce(x, axes), init)
        return _keepdims(r, axes, keepdims)
    return _keepdims(reduce(x, axes), axes, keepdims)


def max(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False,
        initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """The maximum over ``axis``; NaN if any element is NaN.  An empty reduction
    needs ``initial`` (``ValueError`` otherwise).  Complex numbers are ordered
    lexicographically (real part, then imaginary part), as in JAX."""
    return _extremum("max", _reduce_max, lax.max, a, axis, out, keepdims, initial, where)


def min(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False,
        initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """The minimum over ``axis``; NaN if any element is NaN.  An empty reduction
    needs ``initial`` (``ValueError`` otherwise).  Complex numbers are ordered
    lexicographically (real part, then imaginary part), as in JAX."""
    return _extremum("min", _reduce_min, lax.min, a, axis, out, keepdims, initial, where)


amax, amin = max, min


def _logical_reduce(name: str, reduce: Callable[[Array, tuple[int, ...]], Array], unit: builtins.bool,
                    a: ArrayLike, axis: Any, out: Any, keepdims: builtins.bool,
                    where: ArrayLike | None) -> Array:
    _no_out(name, out)
    x = as_array(a, name)
    axes = canonicalize_axes(axis, x.ndim, name)
    b = _mask(name, _to_bool(x), where, unit)
    return _keepdims(reduce(b, axes), axes, keepdims)


def any(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False,
        *, where: ArrayLike | None = None) -> Array:
    """Whether any element over ``axis`` is true (non-zero)."""
    return _logical_reduce("any", _reduce_or, False, a, axis, out, keepdims, where)


def all(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False,
        *, where: ArrayLike | None = None) -> Array:
    """Whether every element over ``axis`` is true (non-zero)."""
    return _logical_reduce("all", _reduce_and, True, a, axis, out, keepdims, where)


def count_nonzero(a: ArrayLike, axis: Any = None, keepdims: builtins.bool = False) -> Array:
    """The number of non-zero elements over ``axis`` (default integer dtype)."""
    x = as_array(a, "count_nonzero")
    return sum(_to_bool(x), axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def ptp(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False) -> Array:
    """The range ``max - min`` over ``axis``."""
    _no_out("ptp", out)
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


# ---------------------------------------------------------------------------
# mean, var, std


def _float_computation(dt: DType) -> DType:
    """16-bit floats accumulate in float32, as in JAX."""
    return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt


def _count(name: str, x: Array, axes: tuple[int, ...], where: ArrayLike | None, dt: DType) -> Any:
    if where is None:
        return _dim_as_value(_reduced_size(tuple(x.shape), axes))
    w = broadcast_to_shape(_to_bool(as_array(where, name, "where")), x.shape, name)
    return _reduce_sum(convert(w, dt), axes)


@staged_when_eager
def mean(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None,
         keepdims: builtins.bool = False, *, where: ArrayLike | None = None) -> Array:
    """The arithmetic mean over ``axis``; integers and booleans give the default float."""
    _no_out("mean", out)
    x = as_array(a, "mean")
    axes = canonicalize_axes(axis, x.ndim, "mean")
    result_dt = dtypes.canonicalize_dtype(np.dtype(dtype)) if dtype is not None else to_inexact(dtype_of(x))
    comp = _float_computation(to_inexact(result_dt))
    xc = _mask("mean", convert(x, comp), where, 0)
    total = _reduce_sum(xc, axes)
    count = _count("mean", x, axes, where, comp)
    r = _lenient.div(total, convert(count, comp))
    return _keepdims(convert(r, result_dt), axes, keepdims)


@staged_when_eager
def var(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: builtins.bool = False, *, where: ArrayLike | None = None,
        correction: int | float | None = None) -> Array:
    """The variance over ``axis``, ``sum(|x - mean|**2) / (N - ddof)``
    (``correction`` is the array-API name of ``ddof``)."""
    _no_out("var", out)
    if correction is not None:
        ddof = correction  # type: ignore[assignment]
    x = as_array(a, "var")
    axes = canonicalize_axes(axis, x.ndim, "var")
    in_dt = dtype_of(x)
    result_dt = dtypes.canonicalize_dtype(np.dtype(dtype)) if dtype is not None else to_inexact(in_dt)
    comp = _float_computation(to_inexact(result_dt))
    xc = convert(x, comp)
    count = _count("var", x, axes, where, comp)
    count_arr = convert(count, comp)
    centre = _lenient.div(_reduce_sum(_mask("var", xc, where, 0), axes), count_arr)
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    centred = _lenient.sub(xc, lax.broadcast_in_dim(centre, tuple(x.shape), kept))
    if dtypes.is_complex(comp):
        squares = complex_part("real", _lenient.mul(centred, complex_part("conj", centred)))
    else:
        squares = _lenient.mul(centred, centred)
    total = _reduce_sum(_mask("var", squares, where, 0), axes)
    denom = _lenient.sub(count_arr, convert(ddof, dtype_of(count_arr)))
    r = _lenient.div(total, convert(denom, dtype_of(total)))
    out_dt = _real_dtype(result_dt)
    return _keepdims(convert(r, out_dt), axes, keepdims)


def _real_dtype(dt: DType) -> DType:
    if dt == dtypes.complex64:
        return dtypes.float32
    if dt == dtypes.complex128:
        return dtypes.canonicalize_dtype(dtypes.float64)
    return dt


@staged_when_eager
def std(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: builtins.bool = False, *, where: ArrayLike | None = None,
        correction: int | float | None = None) -> Array:
    """The standard deviation over ``axis``: ``sqrt(var(...))``."""
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction)
    return lax.sqrt(v)


@staged_when_eager
def average(a: ArrayLike, axis: Any = None, weights: ArrayLike | None = None,
            returned: builtins.bool = False, keepdims: builtins.bool = False) -> Any:
    """The weighted mean over ``axis``; ``weights`` is either shaped like ``a`` or
    1-D along a single ``axis``.  With ``returned`` also returns the sum of weights."""
    x = as_array(a, "average")
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        if not returned:
            return avg
        axes = canonicalize_axes(axis, x.ndim, "average")
        n = _dim_as_value(_reduced_size(tuple(x.shape), axes))
        return avg, full_like_value(avg, n)
    w = as_array(weights, "average", "weights")
    if tuple(w.shape) != tuple(x.shape):
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("average: weights shaped differently from a need a single integer axis")
        ax = canonicalize_axis(axis, x.ndim, "average")
        if w.ndim != 1 or w.shape[0] != x.shape[ax]:
            raise ValueError(f"average: 1-D weights must have the length of axis {ax} "
                             f"({x.shape[ax]}), got shape {shape_str(w.shape)}")
        w = lax.broadcast_in_dim(w, tuple(x.shape), (ax,))
    scale = sum(w, axis, keepdims=keepdims)
    avg = true_divide(sum(multiply(x, w), axis, keepdims=keepdims), scale)
    return (avg, scale) if returned else avg


# ---------------------------------------------------------------------------
# argmax, argmin


def _arg_extremum(name: str, lax_fn: Callable[..., Array], a: ArrayLike, axis: Any,
                  out: Any, keepdims: builtins.bool) -> Array:
    _no_out(name, out)
    x = as_array(a, name)
    if dtypes.is_complex(dtype_of(x)):
        raise TypeError(f"{name} does not accept complex inputs")
    if axis is None:
        flat = lax.reshape(x, (_reduced_size(tuple(x.shape), tuple(range(x.ndim))),))
        if type(flat.shape[0]) is int and flat.shape[0] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
        r = lax_fn(flat, 0, dtypes.default_int_dtype())
        if keepdims:
            r = lax.reshape(r, (1,) * x.ndim)
        return r
    ax = canonicalize_axis(axis, x.ndim, name)
    d = x.shape[ax]
    if type(d) is int and d == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence "
                         f"(axis {ax} of shape {shape_str(x.shape)} is empty)")
    r = lax_fn(x, ax, dtypes.default_int_dtype())
    return _keepdims(r, (ax,), keepdims)


def argmax(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False) -> Array:
    """The index of the first maximum over ``axis`` (of the flattened array when
    ``axis`` is None); a NaN counts as the maximum."""
    return _arg_extremum("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False) -> Array:
    """The index of the first minimum over ``axis`` (of the flattened array when
    ``axis`` is None); a NaN counts as the minimum."""
    return _arg_extremum("argmin", lax.argmin, a, axis, out, keepdims)


# ---------------------------------------------------------------------------
# Cumulative reductions


def _cumulative(name: str, scan: Callable[..., Array], a: ArrayLike, axis: Any, dtype: Any,
                out: Any, promote: builtins.bool) -> Array:
    _no_out(name, out)
    x = as_array(a, name)
    if axis is None:
        x = lax.reshape(x, (_reduced_size(tuple(x.shape), tuple(range(x.ndim))),))
        ax = 0
    else:
        ax = canonicalize_axis(axis, x.ndim, name)
    if dtype is not None:
        dt = dtypes.canonicalize_dtype(np.dtype(dtype))
    else:
        dt = dtype_of(x)
    if dtypes.is_bool(dt) and promote:
        dt = dtypes.default_int_dtype()
    return scan(convert(x, dt), ax, False)


def cumsum(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None) -> Array:
    """Running sums along ``axis`` (of the flattened array when ``axis`` is None);
    booleans count in the default integer, other dtypes are kept (as in JAX)."""
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype, out, True)


def cumprod(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None) -> Array:
    """Running products along ``axis`` (of the flattened array when ``axis`` is None)."""
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype, out, True)


def cummax(a: ArrayLike, axis: Any = None) -> Array:
    """Running maxima along ``axis`` (of the flattened array when ``axis`` is None)."""
    return _cumulative("cummax", lax.cummax, a, axis, None, None, False)


def cummin(a: ArrayLike, axis: Any = None) -> Array:
    """Running minima along ``axis`` (of the flattened array when ``axis`` is None)."""
    return _cumulative("cummin", lax.cummin, a, axis, None, None, False)


cumulative_sum, cumulative_prod = cumsum, cumprod


# ---------------------------------------------------------------------------
# NaN-ignoring reductions


def _nan_replaced(name: str, a: ArrayLike, value: Any) -> Array:
    x = as_array(a, name)
    if not dtypes.is_inexact(dtype_of(x)):
        return x
    return _lenient.select_n(_lenient.ne(x, x), x, full_like_value(x, value))


def nansum(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None,
           keepdims: builtins.bool = False, initial: ArrayLike | None = None,
           where: ArrayLike | None = None) -> Array:
    """:func:`sum` treating NaN as zero."""
    return sum(_nan_replaced("nansum", a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: builtins.bool = False, initial: ArrayLike | None = None,
            where: ArrayLike | None = None) -> Array:
    """:func:`prod` treating NaN as one."""
    return prod(_nan_replaced("nanprod", a, 1), axis, dtype, out, keepdims, initial, where)


def nanmean(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: builtins.bool = False) -> Array:
    """:func:`mean` over the non-NaN elements (NaN where there are none)."""
    _no_out("nanmean", out)
    x = as_array(a, "nanmean")
    if not dtypes.is_inexact(dtype_of(x)):
        return mean(x, axis, dtype, keepdims=keepdims)
    return mean(x, axis, dtype, keepdims=keepdims, where=_lenient.eq(x, x))


def _nan_extremum(name: str, fn: Callable[..., Array], fill: float, a: ArrayLike, axis: Any,
                  keepdims: builtins.bool) -> Array:
    x = as_array(a, name)
    if not dtypes.is_inexact(dtype_of(x)):
        return fn(x, axis, keepdims=keepdims)
    r = fn(_nan_replaced(name, x, fill), axis, keepdims=keepdims)
    all_nan = all(_lenient.ne(x, x), axis, keepdims=keepdims)
    return _lenient.select_n(all_nan, r, full_like_value(r, np.nan))


def nanmax(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False) -> Array:
    """:func:`max` ignoring NaN (NaN where every element is NaN)."""
    _no_out("nanmax", out)
    return _nan_extremum("nanmax", max, -np.inf, a, axis, keepdims)


def nanmin(a: ArrayLike, axis: Any = None, out: None = None, keepdims: builtins.bool = False) -> Array:
    """:func:`min` ignoring NaN (NaN where every element is NaN)."""
    _no_out("nanmin", out)
    return _nan_extremum("nanmin", min, np.inf, a, axis, keepdims)


# ---------------------------------------------------------------------------
# Order statistics


def median(a: ArrayLike, axis: Any = None, out: None = None, overwrite_input: builtins.bool = False,
           keepdims: builtins.bool = False) -> Array:
    """The median over ``axis`` (a single int or None), via a sort; NaN if any
    element is NaN."""
    del overwrite_input
    _no_out("median", out)
    x = as_array(a, "median")
    if dtypes.is_complex(dtype_of(x)):
        raise ValueError("median does not accept complex inputs (complex numbers have no natural order)")
    if axis is None:
        flat = lax.reshape(x, (_reduced_size(tuple(x.shape), tuple(range(x.ndim))),))
        r = _median_last(flat)
        return lax.reshape(r, (1,) * x.ndim) if keepdims else r
    ax = canonicalize_axis(axis, x.ndim, "median")
    moved = lax.transpose(x, tuple(i for i in range(x.ndim) if i != ax) + (ax,))
    r = _median_last(moved)
    return _keepdims(r, (ax,), keepdims)


def _median_last(x: Array) -> Array:
    n = x.shape[-1]
    if type(n) is builtins.int and n == 0:
        raise ValueError("median: cannot take the median of an empty axis")
    xf = convert(x, to_inexact(dtype_of(x)))
    s = lax.sort(xf, dimension=x.ndim - 1)
    last = x.ndim - 1
    if is_symbolic(n):
        # The middle of a symbolic length (mask, a ragged axis) is a position known as a value.
        idt = dtypes.default_int_dtype()
        size = convert(_dim_as_value(n), idt)
        two_i = np.asarray(2, idt)
        lo = lax.dynamic_index_in_dim(s, _lenient.div(_lenient.sub(size, np.asarray(1, idt)), two_i), last, False)
        hi = lax.dynamic_index_in_dim(s, _lenient.div(size, two_i), last, False)
    else:
        lo = lax.squeeze(slice_axis(s, (n - 1) // 2, (n - 1) // 2 + 1, last), (last,))
        hi = lax.squeeze(slice_axis(s, n // 2, n // 2 + 1, last), (last,))
    two = convert(2, dtype_of(lo))
    r = _lenient.div(_lenient.add(lo, hi), two)
    has_nan = lax.reduce_or(_lenient.ne(xf, xf), (last,))
    return _lenient.select_n(has_nan, r, full_like_value(r, np.nan))
