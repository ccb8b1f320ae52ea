"""NumPy indexing: ``x[idx]``, ``x.at[idx].set/add/multiply/min/max/get``, ``take``,
``take_along_axis`` and ``nonzero``.

An index is parsed into one entry per operand dimension (after ``None`` adds
size-1 dimensions and ``...`` expands to full slices):

* basic indexing (ints, slices with any step, ``None``, ``...``) on static
  positions lowers to ``lax.slice``/``lax.rev``/``lax.squeeze``; a traced
  integer scalar uses ``lax.dynamic_slice`` (clamped into range);
* advanced indexing (integer arrays, concrete boolean masks, and the ints that
  accompany them) lowers to ``lax.gather``, with NumPy's placement rule: the
  broadcast index dimensions replace the indexed dimensions when those are
  adjacent, and go first otherwise;
* ``.at[...]`` updates lower to ``lax.scatter`` and its combining variants; a
  slice with step 1 or -1 becomes a window of the scatter, any other step an
  index dimension.

A static integer index out of bounds is an ``IndexError``.  Out-of-bounds
array indices are clamped when reading (``mode="clip"``, the default; or
``"fill"`` with a ``fill_value``), and dropped when updating (``mode="drop"``,
the default; or ``"clip"``), as in JAX.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import Dim, definitely_equal, is_symbolic
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    broadcast_shapes,
    broadcast_to_shape,
    canonicalize_axis,
    concrete_int,
    convert,
    dtype_of,
    is_array,
    shape_str,
)
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
        import operator

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
    if isinstance(item, (list, tuple)):
        return _sequence_index(item)
    if is_array(item):
        return _classify_array(item)
    raise _index_error_type(item)


def _parse(shape: Sequence[Dim], idx: Any) -> tuple[list[_Entry], list[int]]:
    """Entries, one per dimension of the operand with ``None`` axes inserted, and
    the positions of those inserted axes."""
    items = idx if type(idx) is tuple else (idx,)
    raw = [_classify(item) for item in items]
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
    return entries, new_axes


def _normalize_int(i: int, size: Dim, axis: int) -> Dim:
    if type(size) is builtins.int:
        if not -size <= i < size:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
        return i + size if i < 0 else i
    if i < 0:
        return size + i
    return i


# ---------------------------------------------------------------------------
# Slices


class _SliceBounds:
    """A static slice of one dimension: ``length`` elements from ``start`` in steps
    of ``step`` (negative steps run backwards)."""

    __slots__ = ("length", "size", "start", "step")

    def __init__(self, start: Dim, length: Dim, step: int, size: Dim) -> None:
        self.start, self.length, self.step, self.size = start, length, step, size

    def is_full(self) -> builtins.bool:
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
    if step == 1:
        lo: Dim = 0 if s.start is None else (size + s.start if s.start < 0 else s.start)
        hi: Dim = size if s.stop is None else (size + s.stop if s.stop < 0 else s.stop)
        return _SliceBounds(lo, hi - lo, 1, size)
    if step == -1 and s.start is None and s.stop is None:
        return _SliceBounds(size - 1, size, -1, size)
    raise TypeError(f"slicing the symbolic dimension {size} supports only unit steps "
                    f"(or [::-1]), got the slice {s}")


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


def _normalize_index_array(a: Array, size: Dim) -> Array:
    """An integer index array in the index dtype with negative entries wrapped."""
    idt = _index_dtype()
    if isinstance(a, (np.ndarray, np.generic)):
        arr = np.asarray(a)
        if arr.size and arr.min() < 0:
            if is_symbolic(size):
                raise TypeError(f"a negative index cannot be wrapped against the symbolic size {size}")
            arr = np.where(arr < 0, arr + builtins.int(size), arr)
        return arr.astype(idt)
    dt = dtype_of(a)
    if dtypes.is_unsigned_int(dt):
        return convert(a, idt)
    a = convert(a, idt)
    from plait_core.numpy._util import dim_as_value

    n = dim_as_value(size)
    negative = lax.lt(a, convert(0, idt))
    return lax.select_n(negative, a, lax.add(a, convert(n, idt)))


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


def _plan(shape: Sequence[Dim], entries: Sequence[_SliceBounds | _Adv]) -> _Plan:
    """Build the plan for entries that are static slices or (normalised) index arrays."""
    adv_dims = [d for d, e in enumerate(entries) if isinstance(e, _Adv)]
    adv_arrays = [e.value for e in entries if isinstance(e, _Adv)]
    bshape = broadcast_shapes("indexing", *[get_aval(a).shape for a in adv_arrays]) if adv_arrays else ()
    adjacent = adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims))) if adv_dims else True
    # The result layout: ("w", dim) windows, ("s", dim) strided slices, ("b", k) index dims.
    layout: list[tuple[str, int]] = []
    if not adjacent:
        layout += [("b", k) for k in range(len(bshape))]
    for d, e in enumerate(entries):
        if isinstance(e, _Adv):
            if adjacent and d == adv_dims[0]:
                layout += [("b", k) for k in range(len(bshape))]
        elif builtins.abs(e.step) == 1:
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
        if builtins.abs(e.step) != 1:
            pos = batch_pos.index(layout.index(("s", d)))
            if type(e.length) is not builtins.int or type(e.start) is not builtins.int:
                raise TypeError(f"a strided slice of the symbolic dimension {e.size} is not supported here")
            values = np.arange(e.length, dtype=np.int64) * e.step + e.start
            components[d] = _broadcast_in_dim(values.astype(idt), batch_shape, (pos,))
            collapsed.append(d)
            slice_sizes.append(1)
            continue
        first, _ = e.forward_window()
        slice_sizes.append(e.length)
        if e.step == -1:
            reversed_out.append(layout.index(("w", d)))
        if not e.is_full():
            if is_symbolic(first):
                raise TypeError(f"a slice starting at the symbolic position {first} is not supported here")
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
    (static ints are bounds-checked, array indices clamped), ``"clip"``, ``"fill"``
    (out-of-bounds reads give ``fill_value``: NaN, the most negative integer, ...)
    or ``"promise_in_bounds"``."""
    _check_mode(mode, ("clip", "fill", "promise_in_bounds", "drop"), "indexing")
    x = as_array(x, "indexing")
    shape = tuple(get_aval(x).shape)
    entries, new_axes = _parse(shape, idx)
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
            value = e.value if mode is not None else _normalize_int(e.value, shape[d], d)
            adv_entries.append(_Adv(_normalize_index_array(np.asarray(value), shape[d])))
        else:
            adv_entries.append(_Adv(_normalize_index_array(e.value, shape[d])))
    plan = _plan(shape, adv_entries)
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
            i = _normalize_int(e.value, shape[d], d)
            bounds.append(_SliceBounds(i, 1, 1, shape[d]))
            squeeze.append(d)
        else:
            assert isinstance(e, _DynInt)
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


# ---------------------------------------------------------------------------
# Updating


_SCATTERS: dict[str, Callable[..., Array]] = {
    "set": lax.scatter,
    "add": lax.scatter_add,
    "mul": lax.scatter_mul,
    "min": lax.scatter_min,
    "max": lax.scatter_max,
}


def _combine_whole(kind: str, x: Array, v: Array) -> Array:
    if kind == "set":
        return v
    dt = dtype_of(x)
    if dtypes.is_bool(dt):
        op = {"add": lax.bitwise_or, "mul": lax.bitwise_and, "min": lax.bitwise_and, "max": lax.bitwise_or}[kind]
    else:
        op = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}[kind]
    return op(x, v)


def scatter_update(x: ArrayLike, idx: Any, values: ArrayLike, kind: str, *, mode: Any = None,
                   indices_are_sorted: builtins.bool = False, unique_indices: builtins.bool = False) -> Array:
    """``x`` with ``x[idx]`` combined with ``values`` (``kind``: set, add, mul, min, max)."""
    name = f".at[...].{kind}"
    _check_mode(mode, ("clip", "drop", "fill", "promise_in_bounds"), name)
    x = as_array(x, name)
    xaval = get_aval(x)
    shape = tuple(xaval.shape)
    entries, new_axes = _parse(shape, idx)
    xe = lax.expand_dims(x, tuple(new_axes)) if new_axes else x
    eshape = tuple(get_aval(xe).shape)
    plan_entries: list[_SliceBounds | _Adv] = []
    for d, e in enumerate(entries):
        if isinstance(e, builtins.slice):
            plan_entries.append(_slice_bounds(e, eshape[d]))
        elif isinstance(e, _Int):
            i = _normalize_int(e.value, eshape[d], d) if mode is None else e.value
            plan_entries.append(_Adv(_normalize_index_array(np.asarray(i), eshape[d])))
        else:
            plan_entries.append(_Adv(_normalize_index_array(e.value, eshape[d])))
    plan = _plan(eshape, plan_entries)
    v = as_array(values, name, "values")
    v = convert(v, xaval.dtype)
    vshape = tuple(get_aval(v).shape)
    extra = len(vshape) - len(plan.out_shape)
    if extra > 0 and builtins.all(definitely_equal(d, 1) for d in vshape[:extra]):
        v = lax.reshape(v, vshape[extra:])
    try:
        v = broadcast_to_shape(v, plan.out_shape, name)
    except ValueError:
        raise ValueError(f"{name}: values of shape {shape_str(vshape)} cannot be broadcast to the "
                         f"indexed shape {shape_str(plan.out_shape)}") from None
    if plan.reversed_out:
        v = lax.rev(v, plan.reversed_out)
    if not plan.index_map:
        out = _combine_whole(kind, xe, v)
    else:
        dnums = lax.ScatterDimensionNumbers(update_window_dims=plan.offset_dims,
                                            inserted_window_dims=plan.collapsed,
                                            scatter_dims_to_operand_dims=plan.index_map)
        scatter_mode = "drop" if mode is None else mode
        xs, vs = xe, v
        if dtypes.is_bool(xaval.dtype) and kind in ("add", "mul"):
            # Booleans add as "or" and multiply as "and": max and min do exactly that.
            kind = "max" if kind == "add" else "min"
        out = _SCATTERS[kind](xs, plan.indices, vs, dnums, mode=scatter_mode,
                              indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)
    return lax.squeeze(out, tuple(new_axes)) if new_axes else out


class _IndexUpdateRef:
    """``x.at[idx]``: the functional counterparts of ``x[idx] = y``, ``x[idx] += y``, ..."""

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, mode: Any = None, fill_value: Any = None, indices_are_sorted: builtins.bool = False,
            unique_indices: builtins.bool = False) -> Array:
        """``x[idx]`` (``mode="fill"`` returns ``fill_value`` for out-of-bounds indices)."""
        return getitem(self.array, self.index, mode=mode, fill_value=fill_value,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)

    def _update(self, kind: str, values: ArrayLike, mode: Any, indices_are_sorted: builtins.bool,
                unique_indices: builtins.bool) -> Array:
        return scatter_update(self.array, self.index, values, kind, mode=mode,
                              indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)

    def set(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
            unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] = values`` (values cast to ``x``'s dtype)."""
        return self._update("set", values, mode, indices_are_sorted, unique_indices)

    def add(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
            unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] += values``; repeated indices accumulate."""
        return self._update("add", values, mode, indices_are_sorted, unique_indices)

    def subtract(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
                 unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] -= values``; repeated indices accumulate."""
        from plait_core.numpy.math import negative

        v = convert(as_array(values, ".at[...].subtract", "values"), dtype_of(self.array))
        return self._update("add", negative(v), mode, indices_are_sorted, unique_indices)

    def multiply(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
                 unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] *= values``; repeated indices accumulate."""
        return self._update("mul", values, mode, indices_are_sorted, unique_indices)

    mul = multiply

    def divide(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
               unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] /= values`` (inexact dtypes only)."""
        from plait_core.numpy.math import reciprocal

        if not dtypes.is_inexact(dtype_of(self.array)):
            raise TypeError(".at[...].divide needs a floating-point array; "
                            f"got {dtype_of(self.array).name}")
        v = convert(as_array(values, ".at[...].divide", "values"), dtype_of(self.array))
        return self._update("mul", reciprocal(v), mode, indices_are_sorted, unique_indices)

    def power(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
              unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] **= values`` (indices should be unique)."""
        from plait_core.numpy.math import power

        current = getitem(self.array, self.index, mode="clip" if mode is None else mode)
        return self._update("set", power(current, values), mode, indices_are_sorted, unique_indices)

    def min(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
            unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] = minimum(x[idx], values)``; repeated indices combine."""
        return self._update("min", values, mode, indices_are_sorted, unique_indices)

    def max(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
            unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] = maximum(x[idx], values)``; repeated indices combine."""
        return self._update("max", values, mode, indices_are_sorted, unique_indices)

    def apply(self, func: Callable[[Array], Array], *, mode: Any = None,
              indices_are_sorted: builtins.bool = False, unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] = func(x[idx])`` (indices should be unique)."""
        current = getitem(self.array, self.index, mode="clip" if mode is None else mode)
        return self._update("set", func(current), mode, indices_are_sorted, unique_indices)


class IndexUpdateHelper:
    """The object ``x.at`` returns; index it to get the update methods."""

    __slots__ = ("array",)

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"IndexUpdateHelper({self.array!r})"


# ---------------------------------------------------------------------------
# take, take_along_axis


def _take_mode(mode: Any, name: str) -> str:
    mode = "fill" if mode is None else mode
    if mode not in ("fill", "clip", "wrap", "raise", "drop", "promise_in_bounds"):
        raise ValueError(f"{name}: unknown mode {mode!r}; expected 'fill', 'clip', 'wrap' or 'raise'")
    return "fill" if mode == "drop" else str(mode)


def _prepare_take_indices(indices: Array, size: Dim, mode: str, name: str) -> tuple[Array, str]:
    if mode == "raise":
        value = concrete_or_error(indices, f"{name} with mode='raise'")
        arr = np.asarray(value)
        n = builtins.int(size)
        if arr.size and (arr.min() < -n or arr.max() >= n):
            bad = arr[(arr < -n) | (arr >= n)].flat[0]
            raise IndexError(f"{name}: index {bad} is out of bounds for an axis of size {n}")
        return arr, "promise_in_bounds"
    if mode == "wrap":
        from plait_core.numpy._util import dim_as_value
        from plait_core.numpy.math import remainder

        return remainder(indices, dim_as_value(size)), "promise_in_bounds"
    return indices, mode


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, out: None = None,
         mode: str | None = None, unique_indices: builtins.bool = False,
         indices_are_sorted: builtins.bool = False, fill_value: Any = None) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when
    ``axis`` is None).  ``mode``: ``"fill"`` (default, as JAX: out-of-bounds gives
    ``fill_value``), ``"clip"``, ``"wrap"`` or ``"raise"`` (concrete indices only)."""
    if out is not None:
        raise TypeError("take: the out argument is not supported (plait arrays are immutable)")
    x = as_array(a, "take")
    idx = as_array(indices, "take", "indices")
    if not dtypes.is_int(dtype_of(idx)):
        raise TypeError(f"take: indices must be integers, got {dtype_of(idx).name}")
    if axis is None:
        from plait_core.numpy.shape import ravel

        x = ravel(x)
        ax = 0
    else:
        ax = canonicalize_axis(axis, get_aval(x).ndim, "take")
    m = _take_mode(mode, "take")
    idx, m = _prepare_take_indices(idx, get_aval(x).shape[ax], m, "take")
    key: tuple[Any, ...] = (*(_FULL,) * ax, idx)
    if get_aval(idx).ndim == 0:
        one = np.asarray(idx).reshape(1) if isinstance(idx, np.ndarray) else lax.expand_dims(idx, (0,))
        key = (*(_FULL,) * ax, one)
        res = getitem(x, key, mode=m, fill_value=fill_value, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted)
        return lax.squeeze(res, (ax,))
    return getitem(x, key, mode=m, fill_value=fill_value, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted)


def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Array:
    """``arr`` gathered along ``axis`` by ``indices`` of the same rank (other
    dimensions broadcast), as ``numpy.take_along_axis``.  Out-of-bounds indices
    follow ``mode`` as in :func:`take`."""
    x = as_array(arr, "take_along_axis")
    idx = as_array(indices, "take_along_axis", "indices")
    if not dtypes.is_int(dtype_of(idx)):
        raise TypeError(f"take_along_axis: indices must be integers, got {dtype_of(idx).name}")
    if axis is None:
        from plait_core.numpy.shape import ravel

        x = ravel(x)
        if get_aval(idx).ndim != 1:
            raise ValueError("take_along_axis: with axis=None the indices must be 1-D")
        ax = 0
    else:
        ax = canonicalize_axis(axis, get_aval(x).ndim, "take_along_axis")
    xshape = tuple(get_aval(x).shape)
    ishape = tuple(get_aval(idx).shape)
    if len(xshape) != len(ishape):
        raise ValueError(f"take_along_axis: indices and arr must have the same number of dimensions; "
                         f"got shapes {shape_str(ishape)} and {shape_str(xshape)}")
    out_shape = list(broadcast_shapes("take_along_axis", xshape[:ax] + (1,) + xshape[ax + 1:],
                                      ishape[:ax] + (1,) + ishape[ax + 1:]))
    out_shape[ax] = ishape[ax]
    m = _take_mode(mode, "take_along_axis")
    idx, m = _prepare_take_indices(idx, xshape[ax], m, "take_along_axis")
    idx = broadcast_to_shape(idx, tuple(out_shape), "take_along_axis")
    bx_shape = list(out_shape)
    bx_shape[ax] = xshape[ax]
    x = broadcast_to_shape(x, tuple(bx_shape), "take_along_axis")
    key: list[Any] = []
    for d in range(len(out_shape)):
        if d == ax:
            key.append(idx)
        else:
            key.append(lax.broadcasted_iota(_index_dtype(), tuple(out_shape), d))
    return getitem(x, tuple(key), mode=m, fill_value=fill_value)


# ---------------------------------------------------------------------------
# nonzero and friends


def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> tuple[Array, ...]:
    """The indices of the non-zero elements, one array per dimension.

    Without ``size`` the input must be concrete (the result's length depends on
    its values).  With ``size`` the result has exactly that length: truncated, or
    padded with ``fill_value`` (default 0); this works on traced values too."""
    x = as_array(a, "nonzero")
    aval = get_aval(x)
    if aval.ndim == 0:
        raise ValueError("nonzero: calling nonzero on a 0-d array is not allowed; use atleast_1d first")
    idt = _index_dtype()
    if size is None:
        value = concrete_or_error(x, "nonzero without size= (the result's shape depends on the values; "
                                  "pass size=)")
        return tuple(_materialize_indices(c.astype(idt)) for c in np.nonzero(np.asarray(value)))
    size = concrete_int(size, "nonzero: size")
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * aval.ndim
    from plait_core.numpy.reductions import cumsum
    from plait_core.numpy.shape import ravel

    flat = ravel(x)
    mask = lax.ne(flat, convert(0, dtype_of(flat))) if not dtypes.is_bool(dtype_of(flat)) else flat
    position = lax.sub(cumsum(mask), convert(1, dtypes.default_int_dtype()))
    target = lax.select_n(mask, lax.broadcast_in_dim(convert(size, dtype_of(position)), position.shape, ()),
                          position)
    target = lax.expand_dims(convert(target, idt), (1,))
    total = get_aval(flat).shape[0]
    coords = []
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    remaining = lax.iota(idt, total)
    strides = []
    s: Dim = 1
    for d in reversed(aval.shape):
        strides.append(s)
        s = s * d
    strides.reverse()
    for k, d in enumerate(aval.shape):
        from plait_core.numpy._util import dim_as_value

        coord = lax.div(remaining, convert(dim_as_value(strides[k]), idt))
        coord = lax.rem(coord, convert(dim_as_value(d), idt))
        fill = 0 if fills[k] is None else fills[k]
        base = lax.broadcast_in_dim(convert(fill, idt), (size,), ())
        coords.append(lax.scatter(base, target, coord, dnums, mode="drop"))
    return tuple(coords)


def _materialize_indices(value: np.ndarray) -> Array:
    from plait_core.numpy.creation import asarray

    return asarray(value)


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The indices of the non-zero elements of the flattened array."""
    from plait_core.numpy.shape import ravel

    return nonzero(ravel(as_array(a, "flatnonzero")), size=size, fill_value=fill_value)[0]


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The indices of the non-zero elements as an ``(N, ndim)`` array."""
    x = as_array(a, "argwhere")
    if get_aval(x).ndim == 0:
        from plait_core.numpy.creation import zeros

        value = np.asarray(concrete_or_error(x, "argwhere of a 0-d array"))
        n = (1 if value else 0) if size is None else size
        return zeros((n, 0), _index_dtype())
    cols = nonzero(x, size=size, fill_value=fill_value)
    return _stack_last(list(cols))


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Array, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices`` (C order)."""
    from plait_core.numpy.math import floor_divide, remainder

    idx = as_array(indices, "unravel_index")
    out = []
    rest = idx
    for d in reversed(list(shape)):
        out.append(remainder(rest, d))
        rest = floor_divide(rest, d)
    return tuple(reversed(out))


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise") -> Array:
    """Flat C-order indices of the coordinate arrays ``multi_index`` in ``dims``
    (``mode``: ``"clip"`` or ``"wrap"``; ``"raise"`` checks concrete values)."""
    from plait_core.numpy.math import add, multiply, remainder

    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dimensions")
    flat: Any = 0
    for k, (coords, d) in enumerate(zip(multi_index, dims)):
        c = as_array(coords, "ravel_multi_index", k)
        if mode == "clip":
            from plait_core.numpy.logic import clip

            c = clip(c, 0, d - 1)
        elif mode == "wrap":
            c = remainder(c, d)
        elif mode == "raise":
            value = np.asarray(concrete_or_error(c, "ravel_multi_index with mode='raise'"))
            if value.size and (value.min() < 0 or value.max() >= d):
                raise ValueError(f"ravel_multi_index: invalid entry in coordinates array {k}")
        flat = add(multiply(flat, d), c)
    return flat
