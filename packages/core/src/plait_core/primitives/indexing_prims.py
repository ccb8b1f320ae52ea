"""``gather`` and the ``scatter`` family: XLA's general indexing primitives.

Conventions follow JAX's ``lax`` (and StableHLO): the index vector is the
*last* dimension of the indices array, and every other dimension of the
indices is a *batch* dimension.

**gather** (operand, indices) takes, for each batch position ``G`` of the
indices, the window of size ``slice_sizes`` that starts at the operand
position whose ``start_index_map[k]``-th coordinate is ``indices[G][k]``
(coordinates not in ``start_index_map`` start at 0, except operand batching
dimensions, which start at the matching coordinate of ``G``).  The output is
the batch shape with the window's dimensions placed at ``offset_dims``;
``collapsed_slice_dims`` and ``operand_batching_dims`` (slice size 1) are
dropped from the window.

**scatter** (operand, indices, updates) is the reverse: the updates'
dimensions that are not ``update_window_dims`` run over the batch positions
of the indices; each batch position's window of updates is combined into the
operand at the start computed as for gather (with
``scatter_dims_to_operand_dims``; ``inserted_window_dims`` are the size-1
window dimensions the updates do not have).  ``scatter`` replaces (the last
update wins when windows overlap), ``scatter_add/mul/min/max`` combine.

**Modes** (:class:`GatherScatterMode`): ``CLIP`` clamps every start so the
whole window is in bounds; ``FILL_OR_DROP`` makes gather return
``fill_value`` for every window that does not fit entirely, and scatter drop
such windows; ``PROMISE_IN_BOUNDS`` lets the implementation choose (gather
clamps and scatter drops, as XLA does).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

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
)
from plait_core.primitive import Primitive

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "default_fill_value",
    "gather_p",
    "scatter_add_p",
    "scatter_max_p",
    "scatter_min_p",
    "scatter_mul_p",
    "scatter_p",
]


class GatherDimensionNumbers(NamedTuple):
    """How a ``gather`` maps indices to operand windows (see the module docs).

    Every field is a tuple of ints:

    * ``offset_dims``: the output dimensions that hold the window dimensions;
    * ``collapsed_slice_dims``: operand dimensions of slice size 1 dropped from the output;
    * ``start_index_map``: for each entry of the index vector, the operand dimension it starts;
    * ``operand_batching_dims`` / ``start_indices_batching_dims``: paired operand and
      indices dimensions that are batched together (slice size 1, dropped from the output).
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a ``scatter`` maps indices and updates to operand windows.

    * ``update_window_dims``: the dimensions of the updates that are window dimensions;
    * ``inserted_window_dims``: operand dimensions of window size 1 the updates omit;
    * ``scatter_dims_to_operand_dims``: for each entry of the index vector, the operand
      dimension it starts;
    * ``operand_batching_dims`` / ``scatter_indices_batching_dims``: paired operand and
      indices dimensions that are batched together.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What ``gather``/``scatter`` do with windows that are not entirely in bounds."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """``None``, ``"fill"`` and ``"drop"`` mean ``FILL_OR_DROP``; ``"clip"`` and
        ``"promise_in_bounds"`` name the other modes."""
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "clip":
            return GatherScatterMode.CLIP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(
            f"unknown gather/scatter mode {s!r}: expected 'clip', 'fill', 'drop', "
            "'promise_in_bounds' or a GatherScatterMode"
        )

    def __repr__(self) -> str:
        return f"GatherScatterMode.{self.name}"


def default_fill_value(dtype: np.dtype[Any]) -> Any:
    """The value an out-of-bounds ``gather`` window takes by default: NaN for
    inexact types, the most negative value for signed integers, the largest for
    unsigned integers and ``True`` for booleans."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_signed_int(dtype):
        return int(dtypes.iinfo(dtype).min)
    if dtypes.is_unsigned_int(dtype):
        return int(dtypes.iinfo(dtype).max)
    return True


# ---------------------------------------------------------------------------
# Validation helpers




def _fail(prim: str, msg: str) -> ValueError:
    return ValueError(f"{prim}: {msg}")


def _axes(prim: str, field: str, axes: Any, bound: int, what: str, *, increasing: bool) -> tuple[int, ...]:
    if not isinstance(axes, tuple) or not all(type(a) is int for a in axes):
        raise TypeError(f"{prim}: dimension_numbers.{field} must be a tuple of ints, got {axes!r}")
    for a in axes:
        if not 0 <= a < bound:
            raise _fail(prim, f"dimension_numbers.{field}={axes} has the dimension {a}, out of range for "
                              f"{what} of rank {bound}")
    if len(set(axes)) != len(axes):
        raise _fail(prim, f"dimension_numbers.{field}={axes} repeats a dimension")
    if increasing and list(axes) != sorted(axes):
        raise _fail(prim, f"dimension_numbers.{field}={axes} must be sorted")
    return axes


def _disjoint(prim: str, a_name: str, a: tuple[int, ...], b_name: str, b: tuple[int, ...]) -> None:
    common = sorted(set(a) & set(b))
    if common:
        raise _fail(prim, f"dimension_numbers.{a_name}={a} and {b_name}={b} share the dimensions {common}")


def _check_indices(prim: str, indices: ShapedArray, index_map: tuple[int, ...], field: str) -> None:
    if not dtypes.is_int(indices.dtype):
        raise TypeError(f"{prim}: indices must have an integer dtype, got {indices.str_short()}")
    if indices.ndim < 1:
        raise _fail(prim, "indices must have at least one dimension (the last holds the index vectors), "
                          f"got {indices.str_short()}")
    if not definitely_equal(indices.shape[-1], len(index_map)):
        raise _fail(prim, f"the index vectors of indices {indices.str_short()} have {indices.shape[-1]} "
                          f"entries but dimension_numbers.{field}={index_map} names {len(index_map)}")


def _check_batching(
    prim: str, operand: ShapedArray, indices: ShapedArray, op_dims: tuple[int, ...], idx_dims: tuple[int, ...],
    idx_field: str,
) -> None:
    _axes(prim, idx_field, idx_dims, indices.ndim - 1, f"the batch dimensions of indices {indices.str_short()}",
          increasing=False)
    if len(op_dims) != len(idx_dims):
        raise _fail(prim, f"dimension_numbers.operand_batching_dims={op_dims} and {idx_field}={idx_dims} "
                          "must have the same length")
    for o, i in zip(op_dims, idx_dims):
        if not definitely_equal(operand.shape[o], indices.shape[i]):
            raise _fail(prim, f"operand batching dimension {o} of {operand.str_short()} and indices batching "
                              f"dimension {i} of {indices.str_short()} differ in size")


def _shape_rule(name: str) -> Callable[[Callable[..., ShapedArray]], Callable[..., ShapedArray]]:
    def deco(rule: Callable[..., ShapedArray]) -> Callable[..., ShapedArray]:
        @functools.wraps(rule)
        def wrapped(*args: Any, **kwargs: Any) -> ShapedArray:
            try:
                return rule(*args, **kwargs)
            except InconclusiveDimensionOperation as e:
                raise InconclusiveDimensionOperation(f"{name}: {e}") from None

        return wrapped

    return deco


def _le(a: Dim, b: Dim) -> bool:
    """``a <= b`` for every value of the sizes (False when unsure)."""
    try:
        return bool(a <= b)
    except InconclusiveDimensionOperation:
        return False


def _check_mode(prim: str, mode: Any) -> None:
    if not isinstance(mode, GatherScatterMode):
        raise TypeError(f"{prim}: mode must be a GatherScatterMode, got {mode!r}")


# ---------------------------------------------------------------------------
# Shared NumPy machinery


def _full_starts(
    indices: np.ndarray, rank: int, index_map: Sequence[int], op_batch: Sequence[int], idx_batch: Sequence[int]
) -> np.ndarray:
    """The start of each batch position's window in every operand dimension:
    an int64 array of shape ``indices.shape[:-1] + (rank,)``."""
    batch_shape = indices.shape[:-1]
    starts = np.zeros(batch_shape + (rank,), np.int64)
    idx = indices.astype(np.int64, copy=False)
    for k, d in enumerate(index_map):
        starts[..., d] = idx[..., k]
    for o, i in zip(op_batch, idx_batch):
        along = [1] * len(batch_shape)
        along[i] = batch_shape[i]
        starts[..., o] = np.arange(batch_shape[i]).reshape(along)
    return starts


def _window_indices(starts: np.ndarray, window: Sequence[int]) -> tuple[np.ndarray, ...]:
    """Advanced-index arrays addressing ``window`` at each start: each of shape
    ``starts.shape[:-1] + window`` after broadcasting."""
    nb = starts.ndim - 1
    rank = len(window)
    out = []
    for d, w in enumerate(window):
        s = starts[..., d].reshape(starts.shape[:-1] + (1,) * rank)
        r = np.arange(w).reshape((1,) * (nb + d) + (w,) + (1,) * (rank - d - 1))
        out.append(s + r)
    return tuple(out)


def _in_bounds(starts: np.ndarray, dims: Sequence[int], window: Sequence[int]) -> np.ndarray:
    upper = np.asarray(dims, np.int64) - np.asarray(window, np.int64)
    ok: np.ndarray = np.all((starts >= 0) & (starts <= upper), axis=-1)
    return ok


def _clip_starts(starts: np.ndarray, dims: Sequence[int], window: Sequence[int]) -> np.ndarray:
    upper = np.asarray(dims, np.int64) - np.asarray(window, np.int64)
    clipped: np.ndarray = np.clip(starts, 0, upper)
    return clipped


# ---------------------------------------------------------------------------
# gather

gather_p = Primitive("gather", family="structural")


@_shape_rule("gather")
def _gather_abstract_eval(
    operand: ShapedArray,
    indices: ShapedArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: GatherScatterMode,
    fill_value: Any,
) -> ShapedArray:
    name = "gather"
    dn = dimension_numbers
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a GatherDimensionNumbers, got {dn!r}")
    _check_mode(name, mode)
    rank = operand.ndim
    opnd = f"the operand {operand.str_short()}"
    collapsed = _axes(name, "collapsed_slice_dims", dn.collapsed_slice_dims, rank, opnd, increasing=True)
    op_batch = _axes(name, "operand_batching_dims", dn.operand_batching_dims, rank, opnd, increasing=True)
    index_map = _axes(name, "start_index_map", dn.start_index_map, rank, opnd, increasing=False)
    _disjoint(name, "collapsed_slice_dims", collapsed, "operand_batching_dims", op_batch)
    _disjoint(name, "start_index_map", index_map, "operand_batching_dims", op_batch)
    _check_indices(name, indices, index_map, "start_index_map")
    _check_batching(name, operand, indices, op_batch, dn.start_indices_batching_dims, "start_indices_batching_dims")
    if not isinstance(slice_sizes, tuple) or len(slice_sizes) != rank:
        raise _fail(name, f"slice_sizes={slice_sizes!r} must have one entry for each of the {rank} dimensions "
                          f"of {opnd}")
    for i, (s, d) in enumerate(zip(slice_sizes, operand.shape)):
        if not (type(s) is int or isinstance(s, SymbolicDim)):
            raise TypeError(f"{name}: slice_sizes={slice_sizes!r} has the non-integer entry {s!r}")
        if not (_le(0, s) and _le(s, d)):
            raise _fail(name, f"slice_sizes={slice_sizes} asks for {s} elements of dimension {i} of {opnd}")
        if (i in collapsed or i in op_batch) and not (type(s) is int and s <= 1):
            raise _fail(name, f"slice_sizes={slice_sizes} must be 1 (or 0) in the collapsed or batching "
                              f"dimension {i}, got {s}")
    window = [s for i, s in enumerate(slice_sizes) if i not in collapsed and i not in op_batch]
    batch = list(indices.shape[:-1])
    out_rank = len(batch) + len(window)
    offset = _axes(name, "offset_dims", dn.offset_dims, out_rank, "the output", increasing=True)
    if len(offset) != len(window):
        raise _fail(name, f"dimension_numbers.offset_dims={offset} must name {len(window)} output dimensions, "
                          "one for each operand dimension that is neither collapsed nor batching")
    w, b = iter(window), iter(batch)
    shape = tuple(next(w) if i in offset else next(b) for i in range(out_rank))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_impl(
    operand: np.ndarray,
    indices: np.ndarray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: GatherScatterMode,
    fill_value: Any,
) -> np.ndarray:
    dn = dimension_numbers
    sizes = [dim_as_int(s, "gather on concrete data") for s in slice_sizes]
    rank = operand.ndim
    batch_shape = indices.shape[:-1]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(rank) if d not in dropped]
    out_shape = _gather_out_shape(batch_shape, [sizes[d] for d in kept], dn.offset_dims)
    fill = default_fill_value(operand.dtype) if fill_value is None else fill_value
    if any(sizes[d] == 0 for d in dropped):  # an empty window collapsed away: nothing to read
        return np.full(out_shape, fill if mode is GatherScatterMode.FILL_OR_DROP else 0, operand.dtype)

    starts = _full_starts(indices, rank, dn.start_index_map, dn.operand_batching_dims,
                          dn.start_indices_batching_dims)
    ok = _in_bounds(starts, operand.shape, sizes) if mode is GatherScatterMode.FILL_OR_DROP else None
    starts = _clip_starts(starts, operand.shape, sizes)
    windows = _take_windows(operand, starts, sizes)  # batch_shape + sizes
    windows = windows.reshape(batch_shape + tuple(sizes[d] for d in kept))
    nb = len(batch_shape)
    w, b = iter(range(nb, nb + len(kept))), iter(range(nb))
    out = windows.transpose([next(w) if i in dn.offset_dims else next(b) for i in range(len(out_shape))])
    if ok is not None and not ok.all():
        mask_shape = [1 if i in dn.offset_dims else n for i, n in enumerate(out_shape)]
        out = np.where(ok.reshape(mask_shape), out, np.asarray(fill).astype(operand.dtype))
    return np.asarray(out, dtype=operand.dtype, order="C")  # windows are fresh: no aliasing


def _gather_out_shape(batch: Sequence[int], window: Sequence[int], offset: Sequence[int]) -> tuple[int, ...]:
    w, b = iter(window), iter(batch)
    return tuple(next(w) if i in offset else next(b) for i in range(len(batch) + len(window)))


def _take_windows(operand: np.ndarray, starts: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Windows of ``sizes`` at every (in-bounds) start: shape ``batch + sizes``.

    Dimensions taken whole are left to basic slicing, so ``x[:, idx]``-style
    gathers index only the dimensions they select."""
    rank = operand.ndim
    batch_shape = starts.shape[:-1]
    part = [d for d in range(rank) if sizes[d] != operand.shape[d]]
    whole = [d for d in range(rank) if sizes[d] == operand.shape[d]]
    moved = operand.transpose(part + whole)
    if part:
        idx = _window_indices(starts[..., part], [sizes[d] for d in part])
        taken = moved[idx]  # batch + part windows + whole dims
    else:
        taken = np.array(np.broadcast_to(moved, batch_shape + moved.shape))
    nb = len(batch_shape)
    order = part + whole
    back = [order.index(d) + nb for d in range(rank)]
    result: np.ndarray = taken.transpose(list(range(nb)) + back)
    return result


gather_p.def_impl(_gather_impl)
gather_p.def_abstract_eval(_gather_abstract_eval)


# ---------------------------------------------------------------------------
# scatter family


def _check_scatter(
    name: str,
    operand: ShapedArray,
    indices: ShapedArray,
    updates: ShapedArray,
    dn: ScatterDimensionNumbers,
    mode: GatherScatterMode,
) -> None:
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a ScatterDimensionNumbers, got {dn!r}")
    _check_mode(name, mode)
    if operand.dtype != updates.dtype:
        raise TypeError(f"{name}: the operand and the updates must have the same dtype, got "
                        f"{operand.str_short()} and {updates.str_short()}")
    rank = operand.ndim
    opnd = f"the operand {operand.str_short()}"
    upd = f"the updates {updates.str_short()}"
    window_dims = _axes(name, "update_window_dims", dn.update_window_dims, updates.ndim, upd, increasing=True)
    inserted = _axes(name, "inserted_window_dims", dn.inserted_window_dims, rank, opnd, increasing=True)
    op_batch = _axes(name, "operand_batching_dims", dn.operand_batching_dims, rank, opnd, increasing=True)
    index_map = _axes(name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, rank, opnd,
                      increasing=False)
    _disjoint(name, "inserted_window_dims", inserted, "operand_batching_dims", op_batch)
    _disjoint(name, "scatter_dims_to_operand_dims", index_map, "operand_batching_dims", op_batch)
    _check_indices(name, indices, index_map, "scatter_dims_to_operand_dims")
    _check_batching(name, operand, indices, op_batch, dn.scatter_indices_batching_dims,
                    "scatter_indices_batching_dims")
    if len(window_dims) + len(inserted) + len(op_batch) != rank:
        raise _fail(name, f"update_window_dims={window_dims}, inserted_window_dims={inserted} and "
                          f"operand_batching_dims={op_batch} must together account for the {rank} dimensions "
                          f"of {opnd}")
    batch = indices.shape[:-1]
    scatter_dims = [i for i in range(updates.ndim) if i not in window_dims]
    if len(scatter_dims) != len(batch) or not all(
        definitely_equal(updates.shape[i], n) for i, n in zip(scatter_dims, batch)
    ):
        raise _fail(name, f"the scatter dimensions {tuple(scatter_dims)} of {upd} must match the batch "
                          f"shape {tuple(batch)} of the indices {indices.str_short()}")
    op_window = [d for d in range(rank) if d not in inserted and d not in op_batch]
    for u, d in zip(window_dims, op_window):
        us, ds = updates.shape[u], operand.shape[d]
        if not _le(us, ds):
            raise _fail(name, f"window dimension {u} of {upd} (size {us}) is larger than dimension {d} of {opnd}")


def _scatter_abstract_eval(name: str) -> Callable[..., ShapedArray]:
    @_shape_rule(name)
    def rule(
        operand: ShapedArray,
        indices: ShapedArray,
        updates: ShapedArray,
        *,
        dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool,
        unique_indices: bool,
        mode: GatherScatterMode,
    ) -> ShapedArray:
        _check_scatter(name, operand, indices, updates, dimension_numbers, mode)
        return operand

    return rule


def _scatter_impl(combine: np.ufunc | None) -> Callable[..., np.ndarray]:
    def impl(
        operand: np.ndarray,
        indices: np.ndarray,
        updates: np.ndarray,
        *,
        dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool,
        unique_indices: bool,
        mode: GatherScatterMode,
    ) -> np.ndarray:
        dn = dimension_numbers
        rank = operand.ndim
        # Updates as batch + full window (size 1 at inserted and batching dimensions).
        scatter_axes = [i for i in range(updates.ndim) if i not in dn.update_window_dims]
        upd = updates.transpose(scatter_axes + list(dn.update_window_dims))
        win_sizes = iter(updates.shape[u] for u in dn.update_window_dims)
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        window = [1 if d in dropped else next(win_sizes) for d in range(rank)]
        count = int(np.prod(indices.shape[:-1], dtype=np.int64))
        upd = upd.reshape((count, *window))
        starts = _full_starts(indices, rank, dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                              dn.scatter_indices_batching_dims).reshape(count, rank)
        if mode is GatherScatterMode.CLIP:
            starts = _clip_starts(starts, operand.shape, window)
        else:
            ok = _in_bounds(starts, operand.shape, window)
            starts, upd = starts[ok], upd[ok]
        out = np.array(operand, copy=True)
        if rank == 0:  # no index arrays to carry the batch: combine one update at a time
            for value in upd:
                out[()] = value if combine is None else combine(out[()], value)
            return out
        idx = _window_indices(starts, window)
        if combine is None:
            out[idx] = upd
        else:
            combine.at(out, idx, upd)
        return out

    return impl


def _scatter_primitive(name: str, combine: np.ufunc | None) -> Primitive:
    p = Primitive(name, family="structural")
    p.def_impl(_scatter_impl(combine))
    p.def_abstract_eval(_scatter_abstract_eval(name))
    return p


scatter_p = _scatter_primitive("scatter", None)
scatter_add_p = _scatter_primitive("scatter_add", np.add)
scatter_mul_p = _scatter_primitive("scatter_mul", np.multiply)
scatter_min_p = _scatter_primitive("scatter_min", np.minimum)
scatter_max_p = _scatter_primitive("scatter_max", np.maximum)
