"""lax functions of the reductions family, with JAX's names and signatures.

``reduce_sum(operand, axes)`` and friends reduce over ``axes`` (negative axes
count from the end); ``reduce(operands, init_values, computation,
dimensions)`` recognises the monoids ``lax.add``, ``lax.mul``, ``lax.max``,
``lax.min``, ``lax.bitwise_and`` and ``lax.bitwise_or`` and maps them to those
reductions.  Scans (``cumsum`` ...), ``argmax`` / ``argmin``, ``sort`` (one
array or several sorted together), ``sort_key_val``, ``top_k`` and
``stop_gradient`` complete the family.

Limitation: ``lax.reduce`` with any other Python computation (or with
several operands) is not supported and raises ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval, to_numpy
from plait_core.dims import dim_as_int, is_symbolic
from plait_core.lax import control_flow as _cf
from plait_core.lax import elementwise as _ew
from plait_core.lax import structural as _st
from plait_core.lax._logaddexp import logaddexp as _logaddexp
from plait_core.primitive import Primitive
from plait_core.primitives import ad_helpers as _ad
from plait_core.primitives import reductions as _p
from plait_core.primitives.shapes import dim_as_value_p
from plait_core.primitives.structural import iota_p
from plait_core.trace import Tracer
from plait_core.tree_util import tree_flatten, tree_map, tree_unflatten

Array = Any

__all__ = [
    "argmax",
    "argmin",
    "cumlogsumexp",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "reduce",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "sort",
    "sort_key_val",
    "stop_gradient",
    "top_k",
]


# ---------------------------------------------------------------------------
# Argument checking


def operand_aval(fn: str, x: Any, arg: str = "operand") -> ShapedArray:
    """The abstract value of an argument; TypeError naming ``lax.fn`` and the
    argument for values that are not arrays."""
    return get_aval(x, f"argument {arg} of lax.{fn}")


def normalize_axis(fn: str, aval: ShapedArray, axis: Any, arg: str = "axis") -> int:
    """``axis`` as a non-negative int (negative counts from the end); errors
    name the function, the axis and the operand's shape."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"lax.{fn}: {arg} must be an int, got {axis!r} of type {type(axis).__name__}")
    a = int(axis)
    if not -aval.ndim <= a < aval.ndim:
        raise ValueError(
            f"lax.{fn}: {arg} {a} is out of range for an operand of shape {_p.shape_text(aval.shape)} (rank {aval.ndim})"
        )
    return a % aval.ndim if aval.ndim else a


def normalize_axes(fn: str, aval: ShapedArray, axes: Any) -> tuple[int, ...]:
    """A sequence of axes as a tuple of non-negative ints."""
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        axes = (axes,)
    if not isinstance(axes, Sequence) or isinstance(axes, str):
        raise TypeError(f"lax.{fn}: axes must be a sequence of ints, got {type(axes).__name__}")
    return tuple(normalize_axis(fn, aval, a, "axis") for a in axes)


# ---------------------------------------------------------------------------
# Reductions


def _reducer(prim: Primitive, fn: str) -> Callable[[Array, Sequence[int]], Array]:
    def reduce_fn(operand: Array, axes: Sequence[int]) -> Array:
        aval = operand_aval(fn, operand)
        return prim.bind(operand, axes=normalize_axes(fn, aval, axes))

    reduce_fn.__name__ = reduce_fn.__qualname__ = fn
    return reduce_fn


reduce_sum = _reducer(_p.reduce_sum_p, "reduce_sum")
reduce_sum.__doc__ = "Sum of ``operand`` over ``axes`` (integers wrap around; bool is rejected)."
reduce_prod = _reducer(_p.reduce_prod_p, "reduce_prod")
reduce_prod.__doc__ = "Product of ``operand`` over ``axes`` (integers wrap around; bool is rejected)."
reduce_max = _reducer(_p.reduce_max_p, "reduce_max")
reduce_max.__doc__ = "Maximum over ``axes``; NaN propagates; an empty reduction gives the dtype's lowest value."
reduce_min = _reducer(_p.reduce_min_p, "reduce_min")
reduce_min.__doc__ = "Minimum over ``axes``; NaN propagates; an empty reduction gives the dtype's highest value."
reduce_and = _reducer(_p.reduce_and_p, "reduce_and")
reduce_and.__doc__ = "Logical (bool) or bitwise (integer) AND over ``axes``."
reduce_or = _reducer(_p.reduce_or_p, "reduce_or")
reduce_or.__doc__ = "Logical (bool) or bitwise (integer) OR over ``axes``."

# The computations lax.reduce recognises, the reduction each stands for, and
# that reduction's identity for a dtype.
_MONOIDS: tuple[tuple[Callable[..., Any], Primitive], ...] = (
    (_ew.add, _p.reduce_sum_p),
    (_ew.mul, _p.reduce_prod_p),
    (_ew.max, _p.reduce_max_p),
    (_ew.min, _p.reduce_min_p),
    (_ew.bitwise_and, _p.reduce_and_p),
    (_ew.bitwise_or, _p.reduce_or_p),
)


def _identity(prim: Primitive, dtype: np.dtype[Any]) -> Any:
    if prim is _p.reduce_sum_p or prim is _p.reduce_or_p:
        return np.zeros((), dtype)
    if prim is _p.reduce_prod_p:
        return np.ones((), dtype)
    if prim is _p.reduce_and_p:
        return ~np.zeros((), dtype)
    if dtypes.is_bool(dtype):
        return np.asarray(prim is _p.reduce_min_p)
    if dtypes.is_int(dtype):
        info = dtypes.iinfo(dtype)
        return np.asarray(info.min if prim is _p.reduce_max_p else info.max, dtype)
    return np.asarray(dtypes.lowest(dtype) if prim is _p.reduce_max_p else dtypes.highest(dtype), dtype)


def _monoid(computation: Any) -> Primitive | None:
    for fn, prim in _MONOIDS:
        if computation is fn:
            return prim
    return None


def _is_identity(init: Any, prim: Primitive, dtype: np.dtype[Any]) -> bool:
    value = init.to_concrete_value() if isinstance(init, Tracer) else init
    if value is None:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.asarray(to_numpy(value)) == _identity(prim, dtype))


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any], dimensions: Sequence[int]) -> Any:
    """Reduce ``operands`` over ``dimensions`` with ``computation`` starting
    from ``init_values`` (pytrees of matching structure).

    Supported computations are the monoids ``lax.add``, ``lax.mul``,
    ``lax.max``, ``lax.min``, ``lax.bitwise_and`` and ``lax.bitwise_or`` on
    one operand; an ``init_values`` that is not the monoid's identity is
    combined once with the reduced result.  Any other Python computation, or
    several operands, raises ``NotImplementedError`` (a documented limitation).
    """
    flat_ops, tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"lax.reduce: operands have the structure {tree} but init_values have {init_tree}")
    prim = _monoid(computation)
    if prim is None or len(flat_ops) != 1:
        what = f"{len(flat_ops)} operands" if prim is not None else f"the computation {computation!r}"
        raise NotImplementedError(
            f"not supported: lax.reduce with an arbitrary Python computation ({what}); plait's lax.reduce "
            "supports one operand with lax.add, lax.mul, lax.max, lax.min, lax.bitwise_and or lax.bitwise_or"
        )
    x, init = flat_ops[0], flat_inits[0]
    aval = operand_aval("reduce", x, "operands")
    init_aval = operand_aval("reduce", init, "init_values")
    if init_aval.ndim != 0:
        raise ValueError(f"lax.reduce: init_values must be scalars, got an init value of shape {_p.shape_text(init_aval.shape)}")
    if not init_aval.weak_type and init_aval.dtype != aval.dtype:
        raise TypeError(
            f"lax.reduce: the init value's dtype {init_aval.dtype.name} differs from the operand's dtype {aval.dtype.name}"
        )
    out = prim.bind(x, axes=normalize_axes("reduce", aval, dimensions))
    if not _is_identity(init, prim, aval.dtype):
        out_shape = get_aval(out).shape
        if out_shape and not isinstance(init, (int, float, complex, bool)):
            init = _st.broadcast_in_dim(init, out_shape, ())
        out = computation(out, init)
    return tree_unflatten(tree, [out])


# ---------------------------------------------------------------------------
# argmax / argmin


def _index_dtype(fn: str, index_dtype: Any) -> np.dtype[Any]:
    try:
        d = dtypes.canonicalize_dtype(np.dtype(index_dtype))
    except TypeError:
        raise TypeError(f"lax.{fn}: index_dtype must be an integer dtype, got {index_dtype!r}") from None
    if not dtypes.is_int(d):
        raise TypeError(f"lax.{fn}: index_dtype must be an integer dtype, got {d.name}")
    return d


def argmax(operand: Array, axis: int, index_dtype: Any) -> Array:
    """Index of the first maximum along ``axis`` (NaN counts as the maximum)."""
    aval = operand_aval("argmax", operand)
    a = normalize_axis("argmax", aval, axis)
    return _p.argmax_p.bind(operand, axes=(a,), index_dtype=_index_dtype("argmax", index_dtype))


def argmin(operand: Array, axis: int, index_dtype: Any) -> Array:
    """Index of the first minimum along ``axis`` (NaN counts as the minimum)."""
    aval = operand_aval("argmin", operand)
    a = normalize_axis("argmin", aval, axis)
    return _p.argmin_p.bind(operand, axes=(a,), index_dtype=_index_dtype("argmin", index_dtype))


# ---------------------------------------------------------------------------
# Scans


def _cumulative(prim: Primitive, fn: str, doc: str) -> Callable[..., Array]:
    def scan(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
        aval = operand_aval(fn, operand)
        return prim.bind(operand, axis=normalize_axis(fn, aval, axis), reverse=bool(reverse))

    scan.__name__ = scan.__qualname__ = fn
    scan.__doc__ = doc
    return scan


cumsum = _cumulative(_p.cumsum_p, "cumsum", "Running sum along ``axis`` (from the end when ``reverse``).")
cumprod = _cumulative(_p.cumprod_p, "cumprod", "Running product along ``axis`` (from the end when ``reverse``).")
cummax = _cumulative(_p.cummax_p, "cummax", "Running maximum along ``axis``; NaN propagates.")
cummin = _cumulative(_p.cummin_p, "cummin", "Running minimum along ``axis``; NaN propagates.")


def cumlogsumexp(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Running ``log(sum(exp(x)))`` along ``axis``, computed stably (a
    log-depth scan of pairwise ``logaddexp``).  Needs a floating operand.  A
    symbolic length along ``axis`` (under ``mask``, or a ragged axis inside
    ``vmap`` over piles) runs as a sequential ``lax.scan`` of that length, since
    the number of doubling steps would depend on the size's value."""
    aval = operand_aval("cumlogsumexp", operand)
    a = normalize_axis("cumlogsumexp", aval, axis)
    if not dtypes.is_float(aval.dtype):
        raise TypeError(f"lax.cumlogsumexp: the operand must have a floating dtype, got {aval.dtype.name}")
    if is_symbolic(aval.shape[a]):
        return _cumlogsumexp_scan(operand, aval, a, reverse)
    n = dim_as_int(aval.shape[a], "the length of the scanned axis of lax.cumlogsumexp")
    x = _st.rev(operand, (a,)) if reverse else operand
    shift = 1
    while shift < n:
        # Each position from ``shift`` on takes in the one ``shift`` before it (slices,
        # not padding with -inf, so that no -inf enters the derivative's weights).
        head = _st.slice_in_dim(x, 0, shift, 1, a)
        later = _st.slice_in_dim(x, shift, n, 1, a)
        earlier = _st.slice_in_dim(x, 0, n - shift, 1, a)
        x = _st.concatenate([head, _logaddexp(later, earlier)], a)
        shift *= 2
    return _st.rev(x, (a,)) if reverse else x


def _cumlogsumexp_scan(operand: Array, aval: ShapedArray, a: int, reverse: bool) -> Array:
    """:func:`cumlogsumexp` as a loop over ``axis`` carrying the running value."""
    perm = (a, *(d for d in range(aval.ndim) if d != a))
    xs = _st.transpose(operand, perm) if a else operand
    rest = tuple(aval.shape[d] for d in perm[1:])
    # The running value starts at -inf, of the operand's weak type (a strong start would make a weak operand's
    # result strong, as the doubling path's never is).
    start = _ew._convert_element_type(np.asarray(-np.inf, aval.dtype), aval.dtype, weak_type=aval.weak_type)
    init = _st.broadcast_in_dim(start, rest, ())

    def step(carry: Array, x: Array) -> tuple[Array, Array]:
        total = _logaddexp(carry, x)
        return total, total

    _, ys = _cf.scan(step, init, xs, reverse=reverse)
    return _st.transpose(ys, tuple(int(i) for i in np.argsort(perm))) if a else ys


# ---------------------------------------------------------------------------
# Sorting


def sort(operand: Array | Sequence[Array], dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort along ``dimension``.  ``operand`` is one array (returned sorted) or
    a sequence of same-shaped arrays sorted together, lexicographically by the
    first ``num_keys`` of them (a tuple is returned).  Floats order NaN last;
    the sort is stable."""
    several = isinstance(operand, (list, tuple))
    operands = list(operand) if several else [operand]
    if not operands:
        raise ValueError("lax.sort: needs at least one operand")
    avals = [operand_aval("sort", x, f"operand[{i}]") for i, x in enumerate(operands)]
    d = normalize_axis("sort", avals[0], dimension, "dimension")
    if isinstance(num_keys, bool) or not isinstance(num_keys, (int, np.integer)):
        raise TypeError(f"lax.sort: num_keys must be an int, got {num_keys!r}")
    out = _p.sort_p.bind(*operands, dimension=d, is_stable=bool(is_stable), num_keys=int(num_keys))
    return tuple(out) if several else out[0]


def sort_key_val(keys: Array, values: Array, dimension: int = -1, is_stable: bool = True) -> tuple[Array, Array]:
    """Sort ``keys`` along ``dimension`` and permute ``values`` the same way."""
    k, v = sort((keys, values), dimension, is_stable, 1)
    return k, v


def top_k(operand: Array, k: int) -> tuple[Array, Array]:
    """The ``k`` largest entries along the last axis, largest first, and their
    int32 indices; equal entries keep their original order and NaN counts as
    the largest."""
    aval = operand_aval("top_k", operand)
    if aval.ndim == 0:
        raise ValueError("lax.top_k: the operand must have at least one dimension, got a scalar")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"lax.top_k: k must be an int, got {k!r}")
    last = aval.ndim - 1
    if any(is_symbolic(d) for d in aval.shape):
        return _top_k_symbolic(operand, aval, int(k))
    n = dim_as_int(aval.shape[last], "the last dimension of lax.top_k's operand")
    if not 0 <= k <= n:
        raise ValueError(f"lax.top_k: k={k} must be between 0 and the last dimension ({n}) of shape {_p.shape_text(aval.shape)}")
    shape = tuple(dim_as_int(d, "the shape of lax.top_k's operand") for d in aval.shape)
    index = np.broadcast_to(np.arange(n, dtype=np.int32), shape)
    # Sort ascending by (value, descending index) so that reversing gives
    # descending values with equal values in ascending index order.
    values, _, indices = _p.sort_p.bind(
        operand, np.ascontiguousarray(index[..., ::-1]), np.ascontiguousarray(index), dimension=last, is_stable=True, num_keys=2
    )
    start, limit = [0] * aval.ndim, list(shape)
    start[last] = n - k
    top_values = _st.rev(_st.slice(values, start, limit), (last,))
    top_indices = _st.rev(_st.slice(indices, start, limit), (last,))
    return top_values, top_indices


def _top_k_symbolic(operand: Array, aval: ShapedArray, k: int) -> tuple[Array, Array]:
    """``top_k`` when the operand's shape is symbolic (under ``mask`` or
    ``vmap`` over piles): the same ordering keys built from ``iota`` and the
    last size as a value, sorted, reversed, and the first ``k`` kept (the
    interpreter checks ``k`` against the true size where it knows it)."""
    if k < 0:
        raise ValueError(f"lax.top_k: k={k} must be non-negative")
    last = aval.ndim - 1
    index = iota_p.bind(dtype=np.dtype(np.int32), shape=tuple(aval.shape), dimension=last)
    n = _ew.convert_element_type(dim_as_value_p.bind(dim=aval.shape[last]), np.int32)
    descending = _ew.sub(_ew.sub(n, np.int32(1)), index)
    values, _, indices = _p.sort_p.bind(operand, descending, index, dimension=last, is_stable=True, num_keys=2)
    start, limit = [0] * aval.ndim, list(aval.shape)
    limit[last] = k
    top_values = _st.slice(_st.rev(values, (last,)), start, limit)
    top_indices = _st.slice(_st.rev(indices, (last,)), start, limit)
    return top_values, top_indices


# ---------------------------------------------------------------------------
# AD helper


def stop_gradient(x: Any) -> Any:
    """``x`` itself, with a zero derivative: applied to every leaf of a pytree;
    integer and boolean leaves are returned unchanged."""

    def leaf(v: Any) -> Any:
        aval = get_aval(v, "argument x of lax.stop_gradient")
        return _ad.stop_gradient_p.bind(v) if dtypes.is_inexact(aval.dtype) else v

    return tree_map(leaf, x)
