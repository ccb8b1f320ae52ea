"""Packed values: a pile's elements concatenated along their ragged axis.

Inside ``vmap`` over piles a ragged value of element type ``(..., n, ...)``
(one ragged axis, of the size ``n``) exists in one or both of two layouts:

* **padded** (``BatchTracer.val``): the elements padded to the padded size
  ``N`` of ``n`` and stacked along a batch axis, ``B x N`` rows;
* **packed** (``BatchTracer.packed``, a :class:`Packed`): the elements'
  true rows concatenated along the ragged axis, element ``b`` at rows
  ``[start_b, start_b + length_b)`` where ``start_b`` is the sum of the
  lengths before it, in a buffer of ``capacity`` rows (static: the sum of
  the lengths when they are known while tracing, else the pile's
  ``capacity``, else ``B x N``).  Rows past the sum of the lengths hold
  unspecified finite values that never reach a true result.

Operations that treat the positions along the ragged axis independently
compute on the packed values, as if the ragged size were the capacity
(:mod:`plait_batching.packed_rules`); the others read the padded layout.
The conversions are placed by plait (:func:`pack`, :meth:`Packed.unpack`),
each made at most once per value, as ``bijective_gather`` equations
(:mod:`plait_core.primitives.bijective_gather`): gathers that are a
bijection between the true rows of the two layouts, so that the transpose
of each is the other (a gather, with the padding or the rows past the true
ones zeroed), never a ``scatter_add``; the padding and the rows past the true
ones have no derivative.  Their indices are computed from the lengths (so
they work under ``jit`` with traced lengths) and memoised per ragged size.

Which layout an operation uses is chosen while tracing: see :func:`layout_of`
and :func:`pile_layout`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from plait_batching.moves import moveaxis
from plait_batching.pile import LAYOUTS
from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    RaggedSize,
    env_of,
    fill_key,
    fill_padding,
    packed_storage_hooks,
)
from plait_batching.trace import BatchTracer
from plait_core import get_aval, set_current_trace
from plait_core.dims import SymbolicDim
from plait_core.primitives.bijective_gather import bijective_gather_p
from plait_core.primitives.elementwise import (
    add_p,
    convert_element_type_p,
    le_p,
    lt_p,
    min_p,
    sub_p,
)
from plait_core.primitives.indexing_prims import GatherDimensionNumbers
from plait_core.primitives.linalg import dot_general_p
from plait_core.primitives.reductions import cumsum_p, reduce_sum_p
from plait_core.primitives.structural import broadcast_in_dim_p, concatenate_p, iota_p, reshape_p

__all__ = ["PACK_RATIO", "Packed", "default_layout", "layout_of", "pack", "pile_layout"]

_I32 = np.dtype(np.int32)

#: The automatic choice packs a ragged size only when its capacity is at most
#: this fraction of ``B x N`` (the padded rows): below it a dense layer on the
#: packed rows saves more than the gathers that convert between layouts cost.
#: (Measured on the benchmark's transformer layer, width 32, with every size
#: packed, in CPU time: ``grad`` 0.86-0.95x the padded layout's at capacities
#: of 0.52-0.95 of the padded rows, since the conversions' transposes are
#: gathers too; the forward pass 0.73-0.99x up to 0.88 and 1.04x at 0.95.
#: The forward pass sets the threshold.)
PACK_RATIO = 0.85


def _layout_from_environment() -> str | None:
    given = os.environ.get("PLAIT_PILE_LAYOUT", "auto")
    if given not in ("auto", "packed", "padded"):
        raise ValueError(f"PLAIT_PILE_LAYOUT must be 'auto', 'packed' or 'padded', got {given!r}")
    return None if given == "auto" else given


_ENVIRONMENT_LAYOUT = _layout_from_environment()
_default_layout: contextvars.ContextVar[tuple[str | None]] = contextvars.ContextVar(
    "plait_pile_layout", default=(_ENVIRONMENT_LAYOUT,)
)


def default_layout() -> str | None:
    """The layout of piles that do not ask for one (``None``: automatic)."""
    return _default_layout.get()[0]


@contextlib.contextmanager
def pile_layout(layout: str | None) -> Iterator[None]:
    """Within the block, piles that do not ask for a layout (``Pile(...,
    layout=None)``) use ``layout``: ``"packed"``, ``"padded"``, or ``None``
    / ``"auto"`` for plait's choice.  The default comes from the environment
    variable ``PLAIT_PILE_LAYOUT`` (``auto`` when unset).  The layout is
    read while tracing: a ``jit`` reuses what it traced before."""
    if layout == "auto":
        layout = None
    if layout not in LAYOUTS:
        raise ValueError(f"pile_layout: layout must be 'auto', 'packed', 'padded' or None, got {layout!r}")
    token = _default_layout.set((layout,))
    try:
        yield
    finally:
        _default_layout.reset(token)


def layout_of(size: RaggedSize) -> str | None:
    """The layout values of ``size`` use: the pile's, else the default
    (``None``: automatic, see :data:`PACK_RATIO`)."""
    return size.layout if size.layout is not None else default_layout()


def packs_well(env: RaggedEnv, size: RaggedSize) -> bool:
    """Whether the automatic choice packs ``size``: its capacity saves enough rows."""
    total = int(env.axis.size) * size.padded
    return total > 0 and size.capacity <= PACK_RATIO * total


# ---------------------------------------------------------------------------
# Indices (values of the parent trace, memoised per size)


def _ends(env: RaggedEnv, size: RaggedSize) -> Any:
    """Each element's end row in the packed buffer: the cumulative lengths."""
    key = (size.name, "ends")
    hit = env.packing.get(key)
    if hit is None:
        hit = env.packing[key] = cumsum_p.bind(size.lengths, axis=0, reverse=False)
    return hit


def _unpack_index(env: RaggedEnv, size: RaggedSize) -> Any:
    """``int32[B, N, 1]``: the packed row of each padded position (clamped into the buffer)."""
    key = (size.name, "unpack")
    hit = env.packing.get(key)
    if hit is not None:
        return hit
    b, n = int(env.axis.size), size.padded
    starts = sub_p.bind(_ends(env, size), size.lengths)
    pos = iota_p.bind(dtype=_I32, shape=(b, n), dimension=1)
    rows = add_p.bind(broadcast_in_dim_p.bind(starts, shape=(b, n), broadcast_dimensions=(0,)), pos)
    rows = min_p.bind(rows, np.asarray(size.capacity - 1, _I32))
    out = env.packing[key] = reshape_p.bind(rows, new_sizes=(b, n, 1), dimensions=None)
    return out


def _padded_valid(env: RaggedEnv, size: RaggedSize) -> Any:
    """``bool[B, N]``: whether each padded position is a true row."""
    key = (size.name, "padded valid")
    hit = env.packing.get(key)
    if hit is None:
        b, n = int(env.axis.size), size.padded
        pos = iota_p.bind(dtype=_I32, shape=(b, n), dimension=1)
        lengths = broadcast_in_dim_p.bind(size.lengths, shape=(b, n), broadcast_dimensions=(0,))
        hit = env.packing[key] = lt_p.bind(pos, lengths)
    return hit


def _pack_index(env: RaggedEnv, size: RaggedSize) -> tuple[Any, Any]:
    """``(int32[C, 2], bool[C])``: the padded position ``(element, row)`` of
    each packed row, and whether the packed row is a true row (not past the
    sum of the lengths; those read the last true row again, so that they hold
    true values, finite wherever the true values are, and the indices stay
    sorted).

    Row ``t`` belongs to element ``seg = #{b : end_b <= t}`` at position
    ``t - start_seg``, where ``start_seg = sum of the lengths of the elements
    ending at or before t``; both come from one ``C x B`` comparison."""
    key = (size.name, "pack")
    hit = env.packing.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    b, c = int(env.axis.size), size.capacity
    ends = _ends(env, size)
    total = reduce_sum_p.bind(size.lengths, axes=(0,))
    t = iota_p.bind(dtype=_I32, shape=(c,), dimension=0)
    valid = lt_p.bind(t, total)
    t = min_p.bind(t, sub_p.bind(total, np.asarray(1, _I32)))
    rows = broadcast_in_dim_p.bind(t, shape=(c, b), broadcast_dimensions=(0,))
    ends = broadcast_in_dim_p.bind(ends, shape=(c, b), broadcast_dimensions=(1,))
    before = convert_element_type_p.bind(le_p.bind(ends, rows), new_dtype=_I32, weak_type=False)
    seg = reduce_sum_p.bind(before, axes=(1,))
    start = dot_general_p.bind(
        before, size.lengths, dimension_numbers=(((1,), (0,)), ((), ())), precision=None,
        preferred_element_type=_I32,
    )  # fmt: skip
    index = concatenate_p.bind(
        reshape_p.bind(seg, new_sizes=(c, 1), dimensions=None),
        reshape_p.bind(sub_p.bind(t, start), new_sizes=(c, 1), dimensions=None),
        dimension=1,
    )  # fmt: skip
    out = env.packing[key] = (index, valid)
    return out


def _unpack(env: RaggedEnv, size: RaggedSize, val: Any, axis: int) -> Any:
    """Packed values (ragged ``axis`` of ``capacity`` rows) to padded data
    ``(B, ..., N, ...)`` (the batch first, ``N`` at ``axis + 1``)."""
    shape = get_aval(val).shape
    rank = len(shape)
    pack_index, packed_valid = _pack_index(env, size)
    forward = GatherDimensionNumbers(
        offset_dims=tuple(range(1, axis + 1)) + tuple(range(axis + 2, rank + 1)), collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )  # fmt: skip
    inverse = GatherDimensionNumbers(
        offset_dims=tuple(d for d in range(rank) if d != axis), collapsed_slice_dims=(0, axis + 1),
        start_index_map=(0, axis + 1),
    )  # fmt: skip
    padded_shape = (int(env.axis.size), *shape[:axis], size.padded, *shape[axis + 1 :])
    return bijective_gather_p.bind(
        val, _unpack_index(env, size), _padded_valid(env, size), pack_index, packed_valid,
        dimension_numbers=forward, slice_sizes=_ones_at(shape, (axis,)), inverse_dimension_numbers=inverse,
        inverse_slice_sizes=_ones_at(padded_shape, (0, axis + 1)), indices_are_sorted=True, masked=False,
    )  # fmt: skip


def _pack(env: RaggedEnv, size: RaggedSize, val: Any, axis: int) -> Any:
    """Padded data ``(B, ..., N, ...)`` (``N`` at ``axis + 1``) to packed values
    (the ragged ``axis`` of ``capacity`` rows): the inverse of :func:`_unpack`."""
    shape = get_aval(val).shape
    rank = len(shape) - 1
    pack_index, packed_valid = _pack_index(env, size)
    forward = GatherDimensionNumbers(
        offset_dims=tuple(d for d in range(rank) if d != axis), collapsed_slice_dims=(0, axis + 1),
        start_index_map=(0, axis + 1),
    )  # fmt: skip
    inverse = GatherDimensionNumbers(
        offset_dims=tuple(range(1, axis + 1)) + tuple(range(axis + 2, rank + 1)), collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )  # fmt: skip
    packed_shape = (*shape[1 : axis + 1], size.capacity, *shape[axis + 2 :])
    return bijective_gather_p.bind(
        val, pack_index, packed_valid, _unpack_index(env, size), _padded_valid(env, size),
        dimension_numbers=forward, slice_sizes=_ones_at(shape, (0, axis + 1)), inverse_dimension_numbers=inverse,
        inverse_slice_sizes=_ones_at(packed_shape, (axis,)), indices_are_sorted=True, masked=False,
    )  # fmt: skip


def _ones_at(shape: tuple[Any, ...], axes: tuple[int, ...]) -> tuple[Any, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


# ---------------------------------------------------------------------------
# The two layouts of one value


class Packed:
    """A ragged value's elements packed: ``val`` (a value of the parent trace)
    has the element type's shape with the ragged ``axis`` of size ``capacity``
    and no batch axis."""

    __slots__ = ("axis", "val")

    def __init__(self, val: Any, axis: int) -> None:
        self.val, self.axis = val, axis

    def unpack(self, x: BatchTracer) -> Any:
        """The padded data of ``x`` (batched at ``x.bdim``, which is 0):
        one gather of packed rows (its transpose packs the cotangent).  The padding of element ``b`` holds the
        rows that follow its own (the next elements' true values, or the
        buffer's last row): unspecified as padding is, and finite wherever
        the true values are.  (Zeros there would not do: a division by a
        padded sum made from them is 0/0, whose NaN a derivative taken outside
        the ``vmap`` multiplies into true entries.)"""
        trace = x._trace
        env = env_of(trace)
        size = env.sizes[_name(x.aval.shape[self.axis])]
        with set_current_trace(trace.parent_trace):
            return _unpack(env, size, self.val, self.axis)


def _name(d: Any) -> str:
    names = d.free_names()
    assert type(d) is SymbolicDim and len(names) == 1
    return str(next(iter(names)))


def pack(x: BatchTracer, axis: int) -> Any:
    """The packed values of the ragged tracer ``x`` along its ragged ``axis``
    (parent trace current): its own, or gathered from its padded data once
    (the transpose unpacks the cotangent, with zeros in the padding)."""
    if x.packed is not None:
        assert x.packed.axis == axis
        return x.packed.val
    env = env_of(x._trace)
    size = env.sizes[_name(x.aval.shape[axis])]
    out = _pack(env, size, moveaxis(x.val, x.bdim, 0), axis)  # (B, ..., N, ...): N at axis + 1
    x.packed = Packed(out, axis)
    return out


def packed_tracer(trace: Any, val: Any, axis: int, aval: Any) -> BatchTracer:
    """A ragged tracer holding packed values only (its padded data is made when read)."""
    out = BatchTracer(trace, None, 0, aval)
    out.packed = Packed(val, axis)
    return out


# ---------------------------------------------------------------------------
# Piles stored packed (see plait_batching.storage): entering and leaving vmap


def enter_packed(trace: Any, size: RaggedSize, values: Any, axis: int, aval: Any) -> BatchTracer:
    """The tracer of a packed pile's ``values`` (``capacity`` rows; parent
    trace current): the values as they are, so operations that treat positions
    independently compute on them with no conversion.  Where the layout is
    ``"padded"`` (no operation runs packed) they are unpacked now, with zero
    padding, as a padded pile enters."""
    out = packed_tracer(trace, values, axis, aval)
    if size.capacity == 0 or size.padded == 0:  # no true rows: the padded data is zeros (nothing to gather)
        shape = (int(env_of(trace).axis.size), *get_aval(values).shape[:axis], size.padded,
                 *get_aval(values).shape[axis + 1 :])  # fmt: skip
        out.val = broadcast_in_dim_p.bind(np.zeros((), aval.dtype), shape=shape, broadcast_dimensions=())
        out.filled = {axis: fill_key(0, aval.dtype)}
    elif layout_of(size) == "padded":
        env = env_of(trace)
        out.val = fill_padding(env, Operand(_unpack(env, size, values, axis), 0, aval), (axis,), 0)
        out.filled = {axis: fill_key(0, aval.dtype)}
    return out


def packed_values(x: Any, axis: int) -> Any:
    """A ragged result's packed values along its ragged ``axis`` (parent trace current): see :func:`pack`
    (zero rows where the capacity is 0: there is nothing to gather)."""
    size = env_of(x._trace).sizes[_name(x.aval.shape[axis])]
    if x.packed is None and size.capacity == 0:
        shape = tuple(0 if k == axis else d for k, d in enumerate(x.aval.shape))
        return broadcast_in_dim_p.bind(np.zeros((), x.aval.dtype), shape=shape, broadcast_dimensions=())
    return pack(x, axis)


packed_storage_hooks["enter"] = enter_packed
packed_storage_hooks["values"] = packed_values
