"""NumPy indexing, ``x[idx]``, and the index parsing shared with ``x.at[idx]``
(:mod:`plait_core.numpy.updates`) and ``take`` (:mod:`plait_core.numpy.selection`).

An index is parsed into one entry per operand dimension (after ``None`` adds
size-1 dimensions and ``...`` expands to full slices):

* basic indexing (ints, slices with any step, ``None``, ``...``) on static
  positions lowers to ``lax.slice``/``lax.rev``/``lax.squeeze``; a traced
  integer scalar uses ``lax.dynamic_slice`` (clamped into range);
* advanced indexing (integer arrays, concrete boolean masks, and the ints that
  accompany them) lowers to ``lax.gather``, with NumPy's placement rule: the
  broadcast index dimensions replace the indexed dimensions when those are
  adjacent, and go first otherwise.

Out of bounds, as in JAX: reads clamp (``mode="clip"``, the default, for
static ints and arrays alike: ``x[7]`` of a length-5 ``x`` is ``x[4]``), or
give ``fill_value`` with ``mode="fill"``; updates through ``x.at[...]`` drop
out-of-bounds positions (see :mod:`plait_core.numpy.updates`).  Only an
integer index into an empty axis is an ``IndexError``.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import Dim, InconclusiveDimensionOperation, SymbolicDim, definitely_equal, is_symbolic
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    broadcast_shapes,
    broadcast_to_shape,
    convert,
    dtype_of,
    is_array,
    shape_str,
)
from plait_core.primitives.shapes import dimension_as_value
from plait_core.trace import Tracer, concrete_or_error

_FULL = builtins.slice(None)


# ---------------------------------------------------------------------------
# Parsed index entries (one per operand dimension once parsing is done)


class _NewAxis:
    """``None`` (``adv`` is set for a boolean scalar, which also indexes the new axis)."""

    __slots__ = ("adv",)

    def __init__(self, adv: np.ndarray | None = None) -> None:
        self.adv = adv


class _Ellipsis:
    __slots__ = ()


class _Int:
    """A static integer index."""

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value


class _DynInt:
    """A traced integer scalar index."""

    __slots__ = ("value",)

    def __init__(self, value: Array) -> None:
        self.value = value


class _Adv:
    """An integer index array (concrete NumPy or traced)."""

    __slots__ = ("value",)

    def __init__(self, value: Array) -> None:
        self.value = value


class _Mask:
    """A concrete boolean mask (consumes ``ndim`` dimensions)."""

    __slots__ = ("value",)

    def __init__(self, value: np.ndarray) -> None:
        self.value = value


_Entry = Any


def _index_error_type(item: Any) -> TypeError:
    t = type(item)
    return TypeError(
        "index entries must be integers, slices, None, Ellipsis, or integer or boolean arrays; "
        f"got {t.__module__}.{t.__qualname__} {item!r}"[:300]
    )


def _slice_part(value: Any, what: str) -> int | None:
    if value is None:
        return None
    value = concrete_or_error(value, f"slice {what}")
    if isinstance(value, (builtins.bool, np.bool_)):
        raise TypeError(f"slice {what} must be an integer or None, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"slice {what} must be an integer or None, got {value!r}") from None


def _classify_array(item: Any) -> _Entry:
    aval = get_aval(item, "an index")
    dt = aval.dtype
    if dtypes.is_bool(dt):
        value = concrete_or_error(
            item, "indexing with a boolean mask (the result's shape depends on its values; "
            "use plait.numpy.where instead)")
        arr = np.asarray(value, dtype=bool)
        if arr.ndim == 0:
            return _NewAxis(np.zeros((1 if arr else 0,), np.int32))
        return _Mask(arr)
    if not dtypes.is_int(dt):
        raise TypeError(f"index arrays must have an integer or boolean dtype, got {dt.name} "
                        f"(an array of shape {shape_str(aval.shape)})")
    if aval.ndim == 0:
        if isinstance(item, Tracer) or not isinstance(item, (np.ndarray, np.generic)):
            return _DynInt(item)
        return _Int(builtins.int(item))
    return _Adv(item)


def _sequence_index(item: Sequence[Any]) -> _Entry:
    if builtins.any(is_array(v) and not isinstance(v, (np.ndarray, np.generic)) for v in _flatten(item)):
        # Lazy on purpose: creation (array of a list of arrays stacks them) sits above
        # shape, which slices through this module's getitem; a top-level import would
        # make the cycle creation -> shape -> indexing -> creation.
        from plait_core.numpy.creation import array

        return _classify_array(array(item))
    arr = np.asarray(item)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int32)
    if arr.dtype == object:
        raise TypeError(f"cannot index with the sequence {item!r}"[:300])
    if arr.dtype.kind in "iu":
        arr = arr.astype(dtypes.canonicalize_dtype(arr.dtype))
    return _classify_array(arr)


def _flatten(seq: Any) -> list[Any]:
    if isinstance(seq, (list, tuple)):
        out: list[Any] = []
        for s in seq:
            out.extend(_flatten(s))
        return out
    return [seq]


def _classify(item: Any) -> _Entry:
    if item is None:
        return _NewAxis()
    if item is Ellipsis:
        return _Ellipsis()
    if isinstance(item, builtins.slice):
        return builtins.slice(_slice_part(item.start, "start"), _slice_part(item.stop, "stop"),
                              _slice_part(item.step, "step"))
    if isinstance(item, (builtins.bool, np.bool_)):
        return _NewAxis(np.zeros((1 if item else 0,), np.int32))
    if isinstance(item, (builtins.int, np.integer)):
        return _Int(builtins.int(item))
    if is_symbolic(item):  # x[x.shape[0] - 1] under mask: the size is a traced value
        return _classify_array(dimension_as_value(item))
    if isinstance(item, (list, tuple)):
        return _sequence_index(item)
    if is_array(item):
        return _classify_array(item)
    raise _index_error_type(item)


def _index_dims_first(raw: Sequence[_Entry]) -> builtins.bool:
    """NumPy's placement rule: the broadcast index dimensions go first when the
    advanced entries (with the ints among them) are not next to each other in the
    index as written; an ``...`` or ``None`` between them separates them even
    when it stands for no dimension."""

    def is_advanced(e: _Entry) -> builtins.bool:
        return isinstance(e, (_Adv, _Mask)) or (isinstance(e, _NewAxis) and e.adv is not None)

    if not builtins.any(is_advanced(e) for e in raw):
        return False
    positions = [i for i, e in enumerate(raw) if is_advanced(e) or isinstance(e, (_Int, _DynInt))]
    return positions != list(range(positions[0], positions[0] + len(positions)))


def _parse(shape: Sequence[Dim], idx: Any) -> tuple[list[_Entry], list[int], builtins.bool]:
    """Entries, one per dimension of the operand with ``None`` axes inserted; the
    positions of those inserted axes; whether the index dimensions go first."""
    if isinstance(idx, list):
        raise TypeError(
            f"indexing with the list {idx!r}"[:200] + " (a non-tuple sequence) is not allowed, as in JAX: "
            "write x[pnp.array(seq)] for an array index, or x[tuple(seq)] for one index per axis")
    items = idx if type(idx) is tuple else (idx,)
    raw = [_classify(item) for item in items]
    index_dims_first = _index_dims_first(raw)
    n_ellipsis = builtins.sum(isinstance(e, _Ellipsis) for e in raw)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for e in raw:
        if isinstance(e, _Mask):
            consumed += e.value.ndim
        elif not isinstance(e, (_NewAxis, _Ellipsis)):
            consumed += 1
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    fill = [_FULL] * (ndim - consumed)
    if n_ellipsis:
        at = next(i for i, e in enumerate(raw) if isinstance(e, _Ellipsis))
        raw = raw[:at] + fill + raw[at + 1:]
    else:
        raw = raw + fill
    entries: list[_Entry] = []
    new_axes: list[int] = []
    dim = 0
    for e in raw:
        if isinstance(e, _NewAxis):
            new_axes.append(len(entries))
            entries.append(_FULL if e.adv is None else _Adv(e.adv))
        elif isinstance(e, _Mask):
            mask = e.value
            for k in range(mask.ndim):
                size = shape[dim + k]
                if not definitely_equal(size, mask.shape[k]):
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {dim + k}; size of axis "
                        f"is {size} but size of corresponding boolean axis is {mask.shape[k]}")
            for coords in np.nonzero(mask):
                entries.append(_Adv(coords.astype(dtypes.default_int_dtype())))
            dim += mask.ndim
        else:
            entries.append(e)
            dim += 1
    return entries, new_axes, index_dims_first


def _clamped_int(i: int, size: Dim, axis: int) -> Dim:
    """A static integer index read as JAX reads it: negative indices wrap once,
    then out-of-bounds positions clamp into range (gathers clamp).  Only an
    empty axis, which has no position to clamp to, is an ``IndexError``."""
    if type(size) is builtins.int:
        if size == 0:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size 0")
        return builtins.min(builtins.max(i + size if i < 0 else i, 0), size - 1)
    if i < 0:
        return size + i
    return i


def _provably_inside(i: Dim, size: Dim) -> builtins.bool:
    """Whether position ``i`` lies in ``[0, size)`` for every value of the sizes."""
    if type(size) is builtins.int:
        return True  # _clamped_int already clamped it
    try:
        return builtins.bool(i >= 0) and builtins.bool(size - i >= 1)
    except InconclusiveDimensionOperation:
        return False


# ---------------------------------------------------------------------------
# Slices


class _SliceBounds:
    """A static slice of one dimension: ``length`` elements from ``start`` in steps
    of ``step`` (negative steps run backwards)."""

    __slots__ = ("length", "size", "start", "step")

    def __init__(self, start: Dim, length: Dim, step: int, size: Dim) -> None:
        self.start, self.length, self.step, self.size = start, length, step, size

    def is_full(self) -> builtins.bool:
        """Whether the slice keeps the whole dimension in order."""
        return self.step == 1 and definitely_equal(self.start, 0) and definitely_equal(self.length, self.size)

    def forward_window(self) -> tuple[Dim, Dim]:
        """First and one-past-last positions covered, for |step| == 1."""
        if self.step == 1:
            return self.start, self.start + self.length
        first = self.start - (self.length - 1) if not definitely_equal(self.length, 0) else 0
        return first, first + self.length


def _slice_bounds(s: builtins.slice, size: Dim) -> _SliceBounds:
    step = 1 if s.step is None else s.step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if type(size) is builtins.int:
        start, stop, step = s.indices(size)
        return _SliceBounds(start, len(range(start, stop, step)), step, size)
    # Bounds are positions in the axis (a negative bound counts from the end);
    # unlike concrete slices they are not clipped, so lax.slice refuses a
    # window it cannot prove lies inside every size.
    if step > 0:
        lo: Dim = 0 if s.start is None else (size + s.start if s.start < 0 else s.start)
        hi: Dim = size if s.stop is None else (size + s.stop if s.stop < 0 else s.stop)
        span = hi - lo
    else:
        lo = size - 1 if s.start is None else (size + s.start if s.start < 0 else s.start)
        hi = -1 if s.stop is None else (size + s.stop if s.stop < 0 else s.stop)
        span = lo - hi
    length = _ceil_div(span, builtins.abs(step))
    if length is None:
        raise TypeError(
            f"slicing the symbolic dimension {size} supports only unit steps or slices whose length is "
            f"a polynomial in the sizes (x[::2] of a dimension 2 * n); the slice {s} has length "
            f"ceil(({span}) / {builtins.abs(step)}), which is not one: a symbolic dimension is an integer "
            "polynomial and cannot round a division")
    if type(length) is builtins.int and length < 0:  # x[-1:-3]: empty for every size, as in NumPy
        length = 0
    return _SliceBounds(lo, length, step, size)


def _ceil_div(num: Dim, k: int) -> Dim | None:
    """``ceil(num / k)`` for a positive int ``k`` as a dimension, or ``None`` when
    it is not a polynomial: ``(2 * n - 1) / 2`` rounds up to ``n``, ``n / 2`` to
    nothing a polynomial can say for every ``n``."""
    if k == 1:
        return num
    top = num + (k - 1)
    for r in range(k):
        # top = k * q + r with 0 <= r < k and integer coefficients: floor(top / k) is q for every size.
        try:
            return (top - r) // k
        except InconclusiveDimensionOperation:
            continue
    return None


def _apply_static_slices(x: Array, bounds: Sequence[_SliceBounds | None]) -> Array:
    """``x`` sliced by ``bounds`` (``None``: dimension untouched)."""
    shape = tuple(get_aval(x).shape)
    if builtins.all(b is None or b.is_full() for b in bounds):
        return x
    starts: list[Dim] = []
    limits: list[Dim] = []
    strides: list[int] = []
    reverse: list[int] = []
    for d, b in enumerate(bounds):
        if b is None or b.is_full():
            starts.append(0)
            limits.append(shape[d])
            strides.append(1)
            continue
        if type(b.length) is builtins.int and b.length == 0:
            starts.append(0)
            limits.append(0)
            strides.append(1)
            continue
        if b.step > 0:
            first: Dim = b.start
            stride = b.step
        else:
            first = b.start + (b.length - 1) * b.step
            stride = -b.step
            reverse.append(d)
        starts.append(first)
        limits.append(first + (b.length - 1) * stride + 1)
        strides.append(stride)
    out = lax.slice(x, tuple(starts), tuple(limits), tuple(strides))
    return lax.rev(out, tuple(reverse)) if reverse else out


# ---------------------------------------------------------------------------
# Index arrays


def _index_dtype() -> np.dtype[Any]:
    return dtypes.default_int_dtype()


def _static_index(i: Dim) -> Any:
    """A static integer index as an index array; a symbolic position (``n - 1``)
    stays a dimension, which :func:`_normalize_index_array` turns into a value."""
    return i if is_symbolic(i) else np.asarray(i)


def _normalize_index_array(a: Array, size: Dim) -> Array:
    """An integer index array in the index dtype with negative entries wrapped."""
    idt = _index_dtype()
    if is_symbolic(a):  # a position such as n - 1 (x.at[-1] under mask): its value
        return _position_value(a, idt)
    if isinstance(a, (np.ndarray, np.generic)):
        arr = np.asarray(a)
        if arr.size and arr.min() < 0:
            if is_symbolic(size):
                # The size has no static value: the wrapped entries add it as a value.
                wrap = (arr < 0).astype(idt)
                return _lenient.add(arr.astype(idt), _lenient.mul(wrap, convert(_dim_as_value(size), idt)))
            arr = np.where(arr < 0, arr + builtins.int(size), arr)
        return arr.astype(idt)
    dt = dtype_of(a)
    if dtypes.is_unsigned_int(dt):
        return convert(a, idt)
    a = convert(a, idt)
    n = _dim_as_value(size)
    negative = _lenient.lt(a, convert(0, idt))
    return _lenient.select_n(negative, a, _lenient.add(a, convert(n, idt)))


def _broadcast_in_dim(a: Array, shape: tuple[Dim, ...], dims: tuple[int, ...]) -> Array:
    if isinstance(a, np.ndarray) and builtins.all(type(d) is builtins.int for d in shape):
        expanded = [1] * len(shape)
        for k, d in enumerate(dims):
            expanded[d] = a.shape[k]
        return np.broadcast_to(a.reshape(expanded), shape)  # type: ignore[arg-type]
    return lax.broadcast_in_dim(a, shape, dims)


def _stack_last(parts: Sequence[Array]) -> Array:
    if builtins.all(isinstance(p, np.ndarray) for p in parts):
        return np.stack(parts, axis=-1)
    cols = [lax.expand_dims(p, (get_aval(p).ndim,)) for p in parts]
    return lax.concatenate(cols, len(get_aval(parts[0]).shape)) if len(cols) > 1 else cols[0]


def _broadcast_index_shapes(shapes: list[tuple[Dim, ...]]) -> tuple[Dim, ...]:
    try:
        return broadcast_shapes("indexing", *shapes) if shapes else ()
    except ValueError:
        listed = " ".join(shape_str(s) for s in shapes)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                         f"{listed}") from None


def _symbolic_start(e: _SliceBounds) -> builtins.bool:
    return not e.is_full() and is_symbolic(e.forward_window()[0])


def _strided_positions(e: _SliceBounds, idt: np.dtype[Any]) -> Array:
    """The positions ``start + step * arange(length)`` a strided slice covers
    (computed from the size's value when the slice has a symbolic length)."""
    if type(e.length) is builtins.int and type(e.start) is builtins.int:
        return (np.arange(e.length, dtype=np.int64) * e.step + e.start).astype(idt)
    steps = _lenient.mul(lax.iota(idt, e.length), convert(e.step, idt))
    return _lenient.add(steps, _position_value(e.start, idt))


def _position_value(p: Dim, idt: np.dtype[Any]) -> Array:
    """A position along an axis (``n - 1``, ``n - 3``) as an index value.

    Only the part without the constant term becomes a dimension's value, so
    positions that differ by a constant (``n - 1``, ``n - 3``) share one
    ``dim_as_value[dim=n]`` and the constants stay literals; a position may be
    negative for a short element (out of range, so dropped by updates)."""
    if type(p) is not SymbolicDim:
        return np.asarray(p, idt)
    const = p.constant_term
    rest = convert(_dim_as_value(p - const), idt)
    return _lenient.add(rest, convert(const, idt)) if const else rest


class _Plan:
    """How an index maps onto gather/scatter: the result layout, the indices array
    and the dimension numbers (see the module docs)."""

    __slots__ = (
        "collapsed",
        "index_map",
        "indices",
        "offset_dims",
        "out_shape",
        "reversed_out",
        "slice_sizes",
    )

    out_shape: tuple[Dim, ...]
    indices: Array
    offset_dims: tuple[int, ...]
    collapsed: tuple[int, ...]
    index_map: tuple[int, ...]
    slice_sizes: tuple[Dim, ...]
    reversed_out: tuple[int, ...]


def _plan(shape: Sequence[Dim], entries: Sequence[_SliceBounds | _Adv], index_dims_first: builtins.bool) -> _Plan:
    """Build the plan for entries that are static slices or (normalised) index arrays;
    ``index_dims_first`` puts the broadcast index dimensions at the front."""
    adv_dims = [d for d, e in enumerate(entries) if isinstance(e, _Adv)]
    adv_arrays = [e.value for e in entries if isinstance(e, _Adv)]
    bshape = _broadcast_index_shapes([tuple(get_aval(a).shape) for a in adv_arrays])
    adjacent = not index_dims_first and (
        adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims))) if adv_dims else True)
    # The result layout: ("w", dim) windows, ("s", dim) strided slices, ("b", k) index dims.
    # A unit-step slice starting at a symbolic position (x.at[-2:] under mask) is
    # written through its positions, as a strided slice is: a window's start would
    # be clamped into range, while positions before 0 (n - 3 for n = 2) are dropped
    # as NumPy's slice clips them away.
    layout: list[tuple[str, int]] = []
    if not adjacent:
        layout += [("b", k) for k in range(len(bshape))]
    for d, e in enumerate(entries):
        if isinstance(e, _Adv):
            if adjacent and d == adv_dims[0]:
                layout += [("b", k) for k in range(len(bshape))]
        elif builtins.abs(e.step) == 1 and not _symbolic_start(e):
            layout.append(("w", d))
        else:
            layout.append(("s", d))

    def size_of(item: tuple[str, int]) -> Dim:
        kind, k = item
        if kind == "b":
            return bshape[k]
        e = entries[k]
        assert isinstance(e, _SliceBounds)
        return e.length

    out_shape = tuple(size_of(item) for item in layout)
    batch_pos = [p for p, (kind, _) in enumerate(layout) if kind != "w"]
    batch_shape = tuple(out_shape[p] for p in batch_pos)
    b_axes = tuple(batch_pos.index(p) for p, (kind, _) in enumerate(layout) if kind == "b")
    components: dict[int, Array] = {}
    for d, a in zip(adv_dims, adv_arrays):
        if isinstance(a, np.ndarray):
            a = np.broadcast_to(a, bshape)  # type: ignore[arg-type]
        else:
            a = broadcast_to_shape(a, bshape, "indexing")
        components[d] = _broadcast_in_dim(a, batch_shape, b_axes)
    idt = _index_dtype()
    collapsed = list(adv_dims)
    slice_sizes: list[Dim] = []
    reversed_out: list[int] = []
    for d, e in enumerate(entries):
        if isinstance(e, _Adv):
            slice_sizes.append(1)
            continue
        if ("s", d) in layout:
            pos = batch_pos.index(layout.index(("s", d)))
            components[d] = _broadcast_in_dim(_strided_positions(e, idt), batch_shape, (pos,))
            collapsed.append(d)
            slice_sizes.append(1)
            continue
        first, _ = e.forward_window()
        slice_sizes.append(e.length)
        if e.step == -1:
            reversed_out.append(layout.index(("w", d)))
        if not e.is_full():
            components[d] = _broadcast_in_dim(np.asarray(first, idt), batch_shape, ())
    index_map = tuple(sorted(components))
    plan = _Plan()
    plan.out_shape = out_shape
    plan.indices = _stack_last([components[d] for d in index_map]) if index_map else None
    plan.offset_dims = tuple(p for p, (kind, _) in enumerate(layout) if kind == "w")
    plan.collapsed = tuple(sorted(collapsed))
    plan.index_map = index_map
    plan.slice_sizes = tuple(slice_sizes)
    plan.reversed_out = tuple(reversed_out)
    return plan


# ---------------------------------------------------------------------------
# Reading


def _check_mode(mode: Any, allowed: Sequence[str], what: str) -> None:
    if mode is not None and not isinstance(mode, lax.GatherScatterMode) and mode not in allowed:
        raise ValueError(f"{what}: unknown mode {mode!r}; expected one of {', '.join(map(repr, allowed))}")


def getitem(x: ArrayLike, idx: Any, *, mode: Any = None, fill_value: Any = None,
            indices_are_sorted: builtins.bool = False, unique_indices: builtins.bool = False) -> Array:
    """``x[idx]`` with NumPy's semantics (see the module docs).  ``mode`` is ``None``
    (out-of-bounds positions clamp, static ints as array indices), ``"clip"``, ``"fill"``
    (out-of-bounds reads give ``fill_value``: NaN, the most negative integer, ...)
    or ``"promise_in_bounds"``.  An empty result is zeros of its shape, whatever the
    operand (as in JAX; a non-empty one from an empty axis is an error)."""
    _check_mode(mode, ("clip", "fill", "promise_in_bounds", "drop"), "indexing")
    x = as_array(x, "indexing")
    shape = tuple(get_aval(x).shape)
    entries, new_axes, index_dims_first = _parse(shape, idx)
    if new_axes:
        x = lax.expand_dims(x, tuple(new_axes))
        shape = tuple(get_aval(x).shape)
    has_adv = builtins.any(isinstance(e, _Adv) for e in entries)
    if not has_adv and mode is None:
        return _basic(x, shape, entries)
    # Slices first (static), then one gather for the advanced part; ints (static
    # or traced) take part in the advanced indexing as 0-d index arrays.
    bounds: list[_SliceBounds | None] = []
    adv_entries: list[_SliceBounds | _Adv] = []
    for d, e in enumerate(entries):
        if isinstance(e, builtins.slice):
            b = _slice_bounds(e, shape[d])
            bounds.append(b)
        else:
            bounds.append(None)
    x = _apply_static_slices(x, bounds)
    shape = tuple(get_aval(x).shape)
    for d, e in enumerate(entries):
        if isinstance(e, builtins.slice):
            adv_entries.append(_SliceBounds(0, shape[d], 1, shape[d]))
        elif isinstance(e, _Int):
            adv_entries.append(_Adv(_normalize_index_array(_static_index(e.value), shape[d])))
        else:
            adv_entries.append(_Adv(_normalize_index_array(e.value, shape[d])))
    plan = _plan(shape, adv_entries, index_dims_first)
    if builtins.any(type(d) is int and d == 0 for d in plan.out_shape):
        # As JAX: an empty result needs no gather (``zeros((0, 3))[array([], int)]``,
        # whose operand could not serve a slice of one row).
        aval = get_aval(x)
        return lax.broadcast_in_dim(lax._convert_element_type(0, aval.dtype, aval.weak_type), plan.out_shape, ())
    dnums = lax.GatherDimensionNumbers(offset_dims=plan.offset_dims, collapsed_slice_dims=plan.collapsed,
                                       start_index_map=plan.index_map)
    gather_mode = "clip" if mode is None else ("fill" if mode == "drop" else mode)
    return lax.gather(x, plan.indices, dnums, plan.slice_sizes, mode=gather_mode, fill_value=fill_value,
                      indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


def _basic(x: Array, shape: tuple[Dim, ...], entries: Sequence[_Entry]) -> Array:
    """Basic indexing: static slices and ints, and traced integer scalars."""
    bounds: list[_SliceBounds | None] = []
    squeeze: list[int] = []
    dynamic: dict[int, Array] = {}
    for d, e in enumerate(entries):
        if isinstance(e, builtins.slice):
            bounds.append(_slice_bounds(e, shape[d]))
        elif isinstance(e, _Int):
            i = _clamped_int(e.value, shape[d], d)
            if _provably_inside(i, shape[d]):
                bounds.append(_SliceBounds(i, 1, 1, shape[d]))
            else:  # x[-6] of a symbolic size that may be shorter: a clamped dynamic read, as JAX reads
                bounds.append(None)  # (clamped at 0 first: dynamic_slice would wrap a negative start)
                dynamic[d] = _lenient.max(_position_value(i, _index_dtype()), np.zeros((), _index_dtype()))
            squeeze.append(d)
        else:
            assert isinstance(e, _DynInt)
            if type(shape[d]) is int and shape[d] == 0:  # no position to clamp to, as JAX says
                raise IndexError(f"index is out of bounds for axis {d} with size 0")
            bounds.append(None)
            dynamic[d] = e.value
            squeeze.append(d)
    out = _apply_static_slices(x, bounds)
    if dynamic:
        out_shape = tuple(get_aval(out).shape)
        starts = [dynamic.get(d, 0) for d in range(len(out_shape))]
        sizes = [1 if d in dynamic else out_shape[d] for d in range(len(out_shape))]
        out = lax.dynamic_slice(out, starts, sizes)
    return lax.squeeze(out, tuple(squeeze)) if squeeze else out
