"""Primitives of the structural family: they move, copy and select elements
without doing arithmetic on them.

``broadcast_in_dim reshape squeeze expand_dims transpose rev pad concatenate
slice dynamic_slice dynamic_update_slice iota copy`` live here; ``gather`` and
the ``scatter`` family live in :mod:`plait_core.primitives.indexing_prims` and
are re-exported.  Semantics are XLA's (StableHLO's) operation semantics.

Shape rules compute with dimensions generically, so symbolic dimensions
(:class:`~plait_core.dims.SymbolicDim`) flow through them wherever the answer
does not depend on the sizes.  Parameters are normalised by the ``lax``
wrappers (tuples of non-negative ints); the rules validate them and raise
``ValueError`` (bad shapes or axes) or ``TypeError`` (bad dtypes or parameter
types) naming the primitive, the parameter and the shapes involved.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import (
    Dim,
    InconclusiveDimensionOperation,
    Shape,
    SymbolicDim,
    definitely_equal,
    dim_as_int,
    max_dim,
    shape_size,
)
from plait_core.primitive import Primitive
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
)

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "broadcast_in_dim_p",
    "concatenate_p",
    "copy_p",
    "dynamic_slice_p",
    "dynamic_update_slice_p",
    "expand_dims_p",
    "gather_p",
    "iota_p",
    "pad_p",
    "reshape_p",
    "rev_p",
    "scatter_add_p",
    "scatter_max_p",
    "scatter_min_p",
    "scatter_mul_p",
    "scatter_p",
    "slice_p",
    "squeeze_p",
    "transpose_p",
]

F = TypeVar("F", bound=Callable[..., Any])


# ---------------------------------------------------------------------------
# Helpers shared by the shape rules


def fmt_shape(shape: Sequence[Dim]) -> str:
    """``(2, n, 3)``: a shape as users write it (one-element tuples keep their comma)."""
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _shape_rule(name: str) -> Callable[[F], F]:
    """Decorate a shape rule so an inconclusive comparison of symbolic
    dimensions names the primitive it happened in."""

    def deco(rule: F) -> F:
        @functools.wraps(rule)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                return rule(*args, **kwargs)
            except InconclusiveDimensionOperation as e:
                raise InconclusiveDimensionOperation(f"{name}: {e}") from None

        return wrapped  # type: ignore[return-value]

    return deco


def int_tuple(prim: str, param: str, value: Any, length: int | None = None) -> tuple[int, ...]:
    """Validate a parameter that must be a tuple of Python ints (of ``length``)."""
    if not isinstance(value, tuple) or not all(type(v) is int for v in value):
        raise TypeError(f"{prim}: {param} must be a tuple of ints, got {value!r}")
    if length is not None and len(value) != length:
        raise ValueError(f"{prim}: {param}={value} must have {length} entries, got {len(value)}")
    return value


def dim_tuple(prim: str, param: str, value: Any) -> tuple[Dim, ...]:
    """Validate a parameter that must be a tuple of dimensions (ints or symbolic)."""
    if not isinstance(value, tuple) or not all(type(v) is int or isinstance(v, SymbolicDim) for v in value):
        raise TypeError(f"{prim}: {param} must be a tuple of dimensions (ints or symbolic), got {value!r}")
    return value


def check_axes(
    prim: str, param: str, axes: tuple[int, ...], ndim: int, what: str, *, increasing: bool = False
) -> None:
    """Axes must be unique, in ``[0, ndim)``, and (if ``increasing``) strictly increasing."""
    for a in axes:
        if not 0 <= a < ndim:
            raise ValueError(f"{prim}: {param}={axes} has the axis {a}, out of range for {what} of rank {ndim}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{prim}: {param}={axes} repeats an axis")
    if increasing and list(axes) != sorted(axes):
        raise ValueError(f"{prim}: {param}={axes} must be strictly increasing")


def provably_le(a: Dim, b: Dim) -> bool:
    """``a <= b`` for every value of the sizes (False when unsure)."""
    if type(a) is int and type(b) is int:
        return a <= b
    try:
        return bool(a <= b)
    except InconclusiveDimensionOperation:
        return False


def same_dtype(prim: str, what: str, a: ShapedArray, b: ShapedArray) -> None:
    """Operands of a primitive share a dtype (no implicit promotion here)."""
    if a.dtype != b.dtype:
        raise TypeError(
            f"{prim}: {what} must have the same dtype, got {a.str_short()} and {b.str_short()}"
        )


def check_int_scalar_indices(prim: str, indices: Sequence[ShapedArray], ndim: int) -> None:
    """Start indices of dynamic slicing: one integer scalar per operand dimension."""
    if len(indices) != ndim:
        raise ValueError(f"{prim}: an operand of rank {ndim} needs {ndim} start indices, got {len(indices)}")
    for i, a in enumerate(indices):
        if a.shape != ():
            raise ValueError(f"{prim}: start index {i} must be a scalar, got {a.str_short()}")
        if not dtypes.is_int(a.dtype):
            raise TypeError(f"{prim}: start index {i} must be an integer, got {a.str_short()}")


def concrete_shape(shape: Sequence[Dim], prim: str) -> tuple[int, ...]:
    """A shape as ints, for implementations that must allocate."""
    return tuple(dim_as_int(d, f"{prim} on concrete data") for d in shape)


def _fresh(x: np.ndarray) -> np.ndarray:
    """Results never alias their inputs (arrays are immutable values)."""
    return np.array(x, copy=True)


def _unary(prim: Primitive, rule: Callable[..., Shape]) -> None:
    """Define the abstract eval of a one-operand primitive from its shape rule."""

    def abstract_eval(x: ShapedArray, **params: Any) -> ShapedArray:
        return x.update(shape=rule(x, **params))

    prim.def_abstract_eval(abstract_eval)


# ---------------------------------------------------------------------------
# broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim", family="structural")


@_shape_rule("broadcast_in_dim")
def _broadcast_in_dim_shape(x: ShapedArray, *, shape: Shape, broadcast_dimensions: tuple[int, ...]) -> Shape:
    name = "broadcast_in_dim"
    dim_tuple(name, "shape", shape)
    bdims = int_tuple(name, "broadcast_dimensions", broadcast_dimensions)
    if len(bdims) != x.ndim:
        raise ValueError(
            f"{name}: broadcast_dimensions={bdims} must name one dimension of the result for each "
            f"of the {x.ndim} dimensions of the operand {x.str_short()}"
        )
    check_axes(name, "broadcast_dimensions", bdims, len(shape), f"the result shape {fmt_shape(shape)}",
               increasing=True)
    for i, (d, b) in enumerate(zip(x.shape, bdims)):
        if not (definitely_equal(d, 1) or definitely_equal(d, shape[b])):
            raise ValueError(
                f"{name}: operand dimension {i} of size {d} (operand {x.str_short()}) cannot be broadcast "
                f"to dimension {b} of size {shape[b]} of the shape {fmt_shape(shape)}: it must be 1 or {shape[b]}"
            )
    return shape


def _broadcast_in_dim_impl(x: np.ndarray, *, shape: Shape, broadcast_dimensions: tuple[int, ...]) -> np.ndarray:
    out_shape = concrete_shape(shape, "broadcast_in_dim")
    expanded = [1] * len(out_shape)
    for i, b in enumerate(broadcast_dimensions):
        expanded[b] = x.shape[i]
    return _fresh(np.broadcast_to(x.reshape(expanded), out_shape))


broadcast_in_dim_p.def_impl(_broadcast_in_dim_impl)
_unary(broadcast_in_dim_p, _broadcast_in_dim_shape)


# ---------------------------------------------------------------------------
# reshape

reshape_p = Primitive("reshape", family="structural")


@_shape_rule("reshape")
def _reshape_shape(x: ShapedArray, *, new_sizes: Shape, dimensions: tuple[int, ...] | None) -> Shape:
    name = "reshape"
    dim_tuple(name, "new_sizes", new_sizes)
    for d in new_sizes:
        if type(d) is int and d < 0:
            raise ValueError(f"{name}: new_sizes={fmt_shape(new_sizes)} has the negative size {d}")
    if dimensions is not None:
        perm = int_tuple(name, "dimensions", dimensions)
        _check_permutation(name, "dimensions", perm, x)
    old_n, new_n = shape_size(x.shape), shape_size(new_sizes)
    if not definitely_equal(old_n, new_n):
        raise ValueError(
            f"{name}: cannot reshape {x.str_short()} ({old_n} elements) into "
            f"{fmt_shape(new_sizes)} ({new_n} elements)"
        )
    return new_sizes


def _reshape_impl(x: np.ndarray, *, new_sizes: Shape, dimensions: tuple[int, ...] | None) -> np.ndarray:
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return _fresh(np.reshape(x, concrete_shape(new_sizes, "reshape")))


reshape_p.def_impl(_reshape_impl)
_unary(reshape_p, _reshape_shape)


# ---------------------------------------------------------------------------
# squeeze / expand_dims

squeeze_p = Primitive("squeeze", family="structural")


@_shape_rule("squeeze")
def _squeeze_shape(x: ShapedArray, *, dimensions: tuple[int, ...]) -> Shape:
    name = "squeeze"
    dims = int_tuple(name, "dimensions", dimensions)
    check_axes(name, "dimensions", dims, x.ndim, f"the operand {x.str_short()}")
    for d in dims:
        if not definitely_equal(x.shape[d], 1):
            raise ValueError(
                f"{name}: cannot squeeze dimension {d} of the operand {x.str_short()}: its size is "
                f"{x.shape[d]}, not 1"
            )
    return tuple(s for i, s in enumerate(x.shape) if i not in dims)


def _squeeze_impl(x: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
    return _fresh(np.squeeze(x, axis=dimensions))


squeeze_p.def_impl(_squeeze_impl)
_unary(squeeze_p, _squeeze_shape)

expand_dims_p = Primitive("expand_dims", family="structural")


@_shape_rule("expand_dims")
def _expand_dims_shape(x: ShapedArray, *, dimensions: tuple[int, ...]) -> Shape:
    name = "expand_dims"
    dims = int_tuple(name, "dimensions", dimensions)
    out_rank = x.ndim + len(dims)
    check_axes(name, "dimensions", dims, out_rank, "the result")
    rest = iter(x.shape)
    return tuple(1 if i in dims else next(rest) for i in range(out_rank))


def _expand_dims_impl(x: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
    return _fresh(np.expand_dims(x, dimensions))


expand_dims_p.def_impl(_expand_dims_impl)
_unary(expand_dims_p, _expand_dims_shape)


# ---------------------------------------------------------------------------
# transpose / rev

transpose_p = Primitive("transpose", family="structural")


def _check_permutation(prim: str, param: str, perm: tuple[int, ...], x: ShapedArray) -> None:
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(
            f"{prim}: {param}={perm} is not a permutation of the dimensions of the operand "
            f"{x.str_short()} (it must order each of 0..{x.ndim - 1} once)"
        )


@_shape_rule("transpose")
def _transpose_shape(x: ShapedArray, *, permutation: tuple[int, ...]) -> Shape:
    perm = int_tuple("transpose", "permutation", permutation)
    _check_permutation("transpose", "permutation", perm, x)
    return tuple(x.shape[p] for p in perm)


def _transpose_impl(x: np.ndarray, *, permutation: tuple[int, ...]) -> np.ndarray:
    return _fresh(np.transpose(x, permutation))


transpose_p.def_impl(_transpose_impl)
_unary(transpose_p, _transpose_shape)

rev_p = Primitive("rev", family="structural")


@_shape_rule("rev")
def _rev_shape(x: ShapedArray, *, dimensions: tuple[int, ...]) -> Shape:
    dims = int_tuple("rev", "dimensions", dimensions)
    check_axes("rev", "dimensions", dims, x.ndim, f"the operand {x.str_short()}")
    return x.shape


def _rev_impl(x: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
    return _fresh(np.flip(x, dimensions)) if dimensions else _fresh(x)


rev_p.def_impl(_rev_impl)
_unary(rev_p, _rev_shape)


# ---------------------------------------------------------------------------
# pad

pad_p = Primitive("pad", family="structural")

PaddingConfig = tuple[tuple[int, int, int], ...]


def _padded_dim(d: Dim, lo: int, hi: int, interior: int) -> Dim:
    if not interior:  # no need to know whether d is 0 (n - 1 may be)
        return lo + hi + d
    return lo + hi + d + max_dim(d - 1, 0) * interior


@_shape_rule("pad")
def _pad_abstract_eval(x: ShapedArray, padding_value: ShapedArray, *, padding_config: PaddingConfig) -> ShapedArray:
    name = "pad"
    if padding_value.shape != ():
        raise ValueError(f"{name}: padding_value must be a scalar, got {padding_value.str_short()}")
    same_dtype(name, "the operand and padding_value", x, padding_value)
    if not isinstance(padding_config, tuple) or len(padding_config) != x.ndim:
        raise ValueError(
            f"{name}: padding_config must have one (low, high, interior) triple for each of the "
            f"{x.ndim} dimensions of the operand {x.str_short()}, got {padding_config!r}"
        )
    out: list[Dim] = []
    for i, (d, cfg) in enumerate(zip(x.shape, padding_config)):
        lo, hi, interior = int_tuple(name, f"padding_config[{i}]", cfg, 3)
        if interior < 0:
            raise ValueError(f"{name}: padding_config[{i}]={cfg} has negative interior padding {interior}")
        n = _padded_dim(d, lo, hi, interior)
        if not provably_le(0, n):
            raise ValueError(
                f"{name}: padding_config[{i}]={cfg} gives dimension {i} of the operand {x.str_short()} "
                f"the negative size {n}"
            )
        out.append(n)
    return x.update(shape=tuple(out))


def _pad_impl(x: np.ndarray, padding_value: np.ndarray, *, padding_config: PaddingConfig) -> np.ndarray:
    # Grow by the positive padding (interior included), then crop the negative.
    grown: list[int] = []
    place: list[slice] = []
    crop: list[slice] = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        lo_p, hi_p = max(lo, 0), max(hi, 0)
        extent = d + max(d - 1, 0) * interior
        size = lo_p + extent + hi_p
        grown.append(size)
        place.append(slice(lo_p, lo_p + extent, interior + 1))
        crop.append(slice(max(-lo, 0), size - max(-hi, 0)))
    out = np.full(grown, padding_value, dtype=x.dtype)
    out[tuple(place)] = x
    return _fresh(out[tuple(crop)])


pad_p.def_impl(_pad_impl)
pad_p.def_abstract_eval(_pad_abstract_eval)


# ---------------------------------------------------------------------------
# concatenate

concatenate_p = Primitive("concatenate", family="structural")


@_shape_rule("concatenate")
def _concatenate_abstract_eval(*xs: ShapedArray, dimension: int) -> ShapedArray:
    name = "concatenate"
    if not xs:
        raise ValueError(f"{name}: needs at least one operand")
    if type(dimension) is not int:
        raise TypeError(f"{name}: dimension must be an int, got {dimension!r}")
    first = xs[0]
    shapes = ", ".join(x.str_short() for x in xs)
    if not 0 <= dimension < first.ndim:
        raise ValueError(f"{name}: dimension={dimension} is out of range for operands {shapes}")
    total: Dim = 0
    for k, x in enumerate(xs):
        same_dtype(name, "all operands", first, x)
        if x.ndim != first.ndim:
            raise ValueError(f"{name}: operands must have the same rank, got {shapes}")
        for i, (a, b) in enumerate(zip(first.shape, x.shape)):
            if i != dimension and not definitely_equal(a, b):
                raise ValueError(
                    f"{name}: operand {k} differs from operand 0 in dimension {i}, which is not the "
                    f"concatenation dimension {dimension}: got {shapes}"
                )
        total = total + x.shape[dimension]
    shape = list(first.shape)
    shape[dimension] = total
    return ShapedArray(tuple(shape), first.dtype, all(x.weak_type for x in xs))


def _concatenate_impl(*xs: np.ndarray, dimension: int) -> np.ndarray:
    return np.concatenate(xs, axis=dimension)


concatenate_p.def_impl(_concatenate_impl)
concatenate_p.def_abstract_eval(_concatenate_abstract_eval)


# ---------------------------------------------------------------------------
# slice

slice_p = Primitive("slice", family="structural")


@_shape_rule("slice")
def _slice_shape(
    x: ShapedArray, *, start_indices: Shape, limit_indices: Shape, strides: tuple[int, ...] | None
) -> Shape:
    name = "slice"
    starts = dim_tuple(name, "start_indices", start_indices)
    limits = dim_tuple(name, "limit_indices", limit_indices)
    for param, v in (("start_indices", starts), ("limit_indices", limits)):
        if len(v) != x.ndim:
            raise ValueError(
                f"{name}: {param}={fmt_shape(v)} must have one entry for each of the {x.ndim} "
                f"dimensions of the operand {x.str_short()}"
            )
    steps = (1,) * x.ndim if strides is None else int_tuple(name, "strides", strides, x.ndim)
    out: list[Dim] = []
    for i, (d, s, lim, st) in enumerate(zip(x.shape, starts, limits, steps)):
        if st < 1:
            raise ValueError(f"{name}: strides={steps} has the non-positive stride {st} in dimension {i}")
        # A bound that is inconclusive (x[:2] of an axis of size n) is refused like a false one:
        # mask trusts these rules to hold for every logical size and has no check of its own, so
        # accepting it would read the padding for n = 1.  vmap over piles accepts such windows in its
        # own rules, checking each element's length; autodiff stages their tangents on grown
        # operands (plait_autodiff.rules.windows).
        if not (provably_le(0, s) and provably_le(s, lim) and provably_le(lim, d)):
            raise ValueError(
                f"{name}: dimension {i} of the operand {x.str_short()} cannot be sliced from {s} to {lim}: "
                f"need 0 <= start <= limit <= {d}"
            )
        out.append((lim - s + st - 1) // st)
    return tuple(out)


def _slice_impl(
    x: np.ndarray, *, start_indices: Shape, limit_indices: Shape, strides: tuple[int, ...] | None
) -> np.ndarray:
    steps = strides or (1,) * x.ndim
    starts = concrete_shape(start_indices, "slice")
    limits = concrete_shape(limit_indices, "slice")
    return _fresh(x[tuple(slice(s, lim, st) for s, lim, st in zip(starts, limits, steps))])


slice_p.def_impl(_slice_impl)
_unary(slice_p, _slice_shape)


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice

dynamic_slice_p = Primitive("dynamic_slice", family="structural")


@_shape_rule("dynamic_slice")
def _dynamic_slice_abstract_eval(x: ShapedArray, *indices: ShapedArray, slice_sizes: Shape) -> ShapedArray:
    name = "dynamic_slice"
    check_int_scalar_indices(name, indices, x.ndim)
    sizes = dim_tuple(name, "slice_sizes", slice_sizes)
    if len(sizes) != x.ndim:
        raise ValueError(
            f"{name}: slice_sizes={fmt_shape(sizes)} must have one entry for each of the {x.ndim} "
            f"dimensions of the operand {x.str_short()}"
        )
    for i, (s, d) in enumerate(zip(sizes, x.shape)):
        if not (provably_le(0, s) and provably_le(s, d)):
            raise ValueError(
                f"{name}: slice_sizes={fmt_shape(sizes)} asks for {s} elements of dimension {i} of the "
                f"operand {x.str_short()}, which has {d}"
            )
    return x.update(shape=sizes)


def clamped_starts(indices: Sequence[np.ndarray], dims: Sequence[int], sizes: Sequence[int]) -> tuple[int, ...]:
    """XLA's rule for dynamic slicing: each start is clamped into ``[0, dim - size]``."""
    return tuple(min(max(int(i), 0), d - s) for i, d, s in zip(indices, dims, sizes))


def _dynamic_slice_impl(x: np.ndarray, *indices: np.ndarray, slice_sizes: Shape) -> np.ndarray:
    sizes = concrete_shape(slice_sizes, "dynamic_slice")
    starts = clamped_starts(indices, x.shape, sizes)
    return _fresh(x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))])


dynamic_slice_p.def_impl(_dynamic_slice_impl)
dynamic_slice_p.def_abstract_eval(_dynamic_slice_abstract_eval)

dynamic_update_slice_p = Primitive("dynamic_update_slice", family="structural")


@_shape_rule("dynamic_update_slice")
def _dynamic_update_slice_abstract_eval(x: ShapedArray, update: ShapedArray, *indices: ShapedArray) -> ShapedArray:
    name = "dynamic_update_slice"
    same_dtype(name, "the operand and the update", x, update)
    if update.ndim != x.ndim:
        raise ValueError(
            f"{name}: the update {update.str_short()} must have the rank of the operand {x.str_short()}"
        )
    check_int_scalar_indices(name, indices, x.ndim)
    for i, (u, d) in enumerate(zip(update.shape, x.shape)):
        if not provably_le(u, d):
            raise ValueError(
                f"{name}: the update {update.str_short()} is larger than the operand {x.str_short()} "
                f"in dimension {i}"
            )
    # as JAX: weak only when every operand is, the start indices included (as strong int32 arrays, they never are)
    return x.update(weak_type=x.weak_type and update.weak_type and all(i.weak_type for i in indices))


def _dynamic_update_slice_impl(x: np.ndarray, update: np.ndarray, *indices: np.ndarray) -> np.ndarray:
    starts = clamped_starts(indices, x.shape, update.shape)
    out = _fresh(x)
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


dynamic_update_slice_p.def_impl(_dynamic_update_slice_impl)
dynamic_update_slice_p.def_abstract_eval(_dynamic_update_slice_abstract_eval)


# ---------------------------------------------------------------------------
# iota / copy

iota_p = Primitive("iota", family="structural")


@_shape_rule("iota")
def _iota_abstract_eval(*, dtype: np.dtype[Any], shape: Shape, dimension: int) -> ShapedArray:
    name = "iota"
    if not isinstance(dtype, np.dtype):
        raise TypeError(f"{name}: dtype must be a numpy dtype, got {dtype!r}")
    if not (dtypes.is_int(dtype) or dtypes.is_inexact(dtype)):
        raise TypeError(f"{name}: dtype must be an integer, floating or complex type, got {dtype}")
    dim_tuple(name, "shape", shape)
    if type(dimension) is not int:
        raise TypeError(f"{name}: dimension must be an int, got {dimension!r}")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"{name}: dimension={dimension} is out of range for the shape {fmt_shape(shape)}")
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype: np.dtype[Any], shape: Shape, dimension: int) -> np.ndarray:
    out_shape = concrete_shape(shape, "iota")
    line = np.arange(out_shape[dimension]).astype(dtype)
    along = [1] * len(out_shape)
    along[dimension] = out_shape[dimension]
    return _fresh(np.broadcast_to(line.reshape(along), out_shape))


iota_p.def_impl(_iota_impl)
iota_p.def_abstract_eval(_iota_abstract_eval)

copy_p = Primitive("copy", family="structural")
copy_p.def_impl(_fresh)
copy_p.def_abstract_eval(lambda x: x)
