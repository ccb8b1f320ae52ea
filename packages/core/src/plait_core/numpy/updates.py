"""Functional index updates: ``x.at[idx].set/add/multiply/min/max/get/...``.

The index is parsed as for reading (:mod:`plait_core.numpy.indexing`) and the
update lowers to ``lax.scatter`` or its combining variants (``scatter_add``,
``scatter_mul``, ``scatter_min``, ``scatter_max``); repeated indices combine
(for ``set`` the update that wins is unspecified).  A slice with step 1 or -1
becomes a window of the scatter, any other step an index dimension; ``None``
axes are inserted into the operand and removed again.  Out-of-bounds updates
are dropped (``mode="drop"``, the default) or clamped (``mode="clip"``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import InconclusiveDimensionOperation, definitely_equal
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    broadcast_to_shape,
    convert,
    dtype_of,
    full_like_value,
    result_dtype,
    shape_str,
)
from plait_core.numpy.indexing import (
    _Adv,
    _check_mode,
    _Int,
    _normalize_index_array,
    _parse,
    _plan,
    _slice_bounds,
    _SliceBounds,
    _static_index,
    getitem,
)
from plait_core.numpy.math import negative, power, true_divide

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
    """``x`` with ``x[idx]`` combined with ``values`` (``kind``: set, add, mul, min, max).

    The combination computes in the promoted dtype of ``x`` and ``values`` (as
    JAX); the result has ``x``'s dtype and weak type."""
    name = f".at[...].{kind}"
    _check_mode(mode, ("clip", "drop", "fill", "promise_in_bounds"), name)
    x = as_array(x, name)
    xaval = get_aval(x)
    shape = tuple(xaval.shape)
    entries, new_axes, index_dims_first = _parse(shape, idx)
    xe = lax.expand_dims(x, tuple(new_axes)) if new_axes else x
    eshape = tuple(get_aval(xe).shape)
    plan_entries: list[_SliceBounds | _Adv] = []
    lone_slice_update = not builtins.any(isinstance(e, (_Int, _Adv)) for e in entries)
    for d, e in enumerate(entries):
        if isinstance(e, builtins.slice):
            bounds = _slice_bounds(e, eshape[d])
            positions = _positions_if_overrunning(bounds) if lone_slice_update else None
            plan_entries.append(bounds if positions is None else _Adv(_normalize_index_array(positions, eshape[d])))
        elif isinstance(e, _Int):
            # Out of bounds (after one wrap of a negative index) the update is dropped, as in JAX.
            plan_entries.append(_Adv(_normalize_index_array(_static_index(e.value), eshape[d])))
        else:
            plan_entries.append(_Adv(_normalize_index_array(e.value, eshape[d])))
    plan = _plan(eshape, plan_entries, index_dims_first)
    v = as_array(values, name, "values")
    # As JAX: the scatter computes in the promoted dtype of x and the values (a
    # float32 update of a float16 array compares and accumulates in float32, an
    # integer array times 0.5 multiplies in float), and its result is converted
    # back to x's type below.
    dt, weak = result_dtype(name, xe, v)
    xe, v = convert(xe, dt, weak), convert(v, dt, weak)
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
        if dtypes.is_bool(dt) and kind in ("add", "mul"):
            # Booleans add as "or" and multiply as "and": max and min do exactly that.
            kind = "max" if kind == "add" else "min"
        out = _SCATTERS[kind](xs, plan.indices, vs, dnums, mode=scatter_mode,
                              indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)
    out = lax.squeeze(out, tuple(new_axes)) if new_axes else out
    # The result has x's type whatever the values were (as JAX: weak only when x is).
    return convert(out, xaval.dtype, xaval.weak_type)


def _positions_if_overrunning(b: _SliceBounds) -> np.ndarray | None:
    """A static slice of a symbolic axis (an element of a pile, a masked size)
    that may run past the axis's end, as its positions: a scatter then drops
    only the positions past the end, one by one (the slice is clipped, as a
    loop over the elements would clip it), where a scatter of one window
    would drop the whole window.  ``None`` when the slice is not such a one."""
    if type(b.size) is builtins.int or type(b.start) is not builtins.int or type(b.length) is not builtins.int:
        return None
    if b.length == 0:
        return None
    positions = b.start + b.step * np.arange(b.length)
    try:
        if builtins.bool(b.size > builtins.int(positions.max())) and positions.min() >= 0:
            return None
    except InconclusiveDimensionOperation:
        pass
    return positions.astype(dtypes.default_int_dtype())


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
        x = as_array(self.array, ".at[...].subtract")
        v = as_array(values, ".at[...].subtract", "values")
        dt, weak = result_dtype(".at[...].subtract", x, v)
        # negated in the dtype the scatter computes in (as JAX's scatter_sub)
        return self._update("add", negative(convert(v, dt, weak)), mode, indices_are_sorted, unique_indices)

    def multiply(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
                 unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] *= values``; repeated indices accumulate."""
        return self._update("mul", values, mode, indices_are_sorted, unique_indices)

    mul = multiply

    def divide(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
               unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] /= values``, as JAX computes it: ``x`` divided by ones
        scattered-multiplied by ``values`` (so integer ``x`` gives a float result,
        and repeated indices divide repeatedly)."""
        return true_divide(self.array, self._ones_times(values, mode, indices_are_sorted, unique_indices))

    def power(self, values: ArrayLike, *, mode: Any = None, indices_are_sorted: builtins.bool = False,
              unique_indices: builtins.bool = False) -> Array:
        """``x`` with ``x[idx] **= values``, as JAX computes it: ``x`` to the power of
        ones scattered-multiplied by ``values`` (repeated indices multiply their exponents)."""
        return power(self.array, self._ones_times(values, mode, indices_are_sorted, unique_indices))

    def _ones_times(self, values: ArrayLike, mode: Any, indices_are_sorted: builtins.bool,
                    unique_indices: builtins.bool) -> Array:
        ones = full_like_value(as_array(self.array, ".at[...]"), 1)
        return scatter_update(ones, self.index, values, "mul", mode=mode, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices)

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
