"""``plait.ops``: segment reductions (JAX's ``jax.ops``).

``segment_sum(data, segment_ids, num_segments)`` adds the rows of ``data``
(its leading axis) that share a segment id: ``out[s] = sum(data[i] for i
with segment_ids[i] == s)``.  ``segment_max``, ``segment_min`` and
``segment_prod`` reduce with maximum, minimum and product.  An empty segment
holds the reduction's identity: 0 for sums, 1 for products, the lowest value
of the dtype (``-inf`` for floats) for maxima and the highest for minima.

``num_segments`` is the number of output rows; when it is ``None`` it is
``max(segment_ids) + 1``, which needs concrete ids (a
``ConcretizationTypeError`` under ``jit``: pass ``num_segments`` there).
``mode`` says what happens to ids outside ``[0, num_segments)``: ``None`` or
``"drop"``/``"fill"`` (``GatherScatterMode.FILL_OR_DROP``, the default) leaves
their rows out; ``"clip"`` clamps the id into range; ``"promise_in_bounds"``
promises there are none (rows with such ids are then left out too).
``indices_are_sorted`` and ``unique_indices`` are promises about the ids that
may speed up the scatter; ``bucket_size`` reduces the rows in consecutive
buckets of that many rows and combines the buckets' results (as JAX does, to
bound the size of each scatter), which can change the rounding of sums and
products but not their meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import plait_core.numpy as jnp
from plait_core import dtypes
from plait_core.lax import GatherScatterMode
from plait_core.numpy._util import Array
from plait_core.trace import concrete_or_error

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]

_Combine = Callable[[Any, Any], Any]


def _mode(mode: Any, name: str) -> GatherScatterMode:
    if mode is None:
        return GatherScatterMode.FILL_OR_DROP
    try:
        return GatherScatterMode.from_any(mode)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{name}: unknown mode {mode!r}; expected None, 'clip', 'drop', 'fill' "
                         "or 'promise_in_bounds' (or a lax.GatherScatterMode)") from err


def _num_segments(segment_ids: Array, num_segments: Any, name: str) -> int:
    if num_segments is None:
        ids = concrete_or_error(segment_ids, f"{name}() `num_segments` argument")
        ids = np.asarray(ids)
        return int(ids.max()) + 1 if ids.size else 0
    n = concrete_or_error(num_segments, f"{name}() `num_segments` argument")
    if not isinstance(n, (int, np.integer)) and not (np.ndim(n) == 0 and np.issubdtype(np.asarray(n).dtype, np.integer)):
        raise TypeError(f"{name}: num_segments must be an integer, got {num_segments!r}")
    n = int(n)
    if n < 0:
        raise ValueError(f"{name}: num_segments must be non-negative, got {n}")
    return n


def _segment_reduce(name: str, data: Any, segment_ids: Any, identity: Callable[[np.dtype[Any]], Any],
                    scatter: Callable[[Any, Any, Any, bool, bool], Any], combine: _Combine,
                    num_segments: Any, indices_are_sorted: bool, unique_indices: bool,
                    bucket_size: int | None, mode: Any) -> Array:
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if not dtypes.issubdtype(segment_ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {segment_ids.dtype}")
    if segment_ids.ndim != 1 or data.ndim < 1 or data.shape[0] != segment_ids.shape[0]:
        raise ValueError(f"{name}: segment_ids must be one-dimensional with one id per row of data; got ids of "
                         f"shape {tuple(segment_ids.shape)} for data of shape {tuple(data.shape)}")
    scatter_mode = _mode(mode, name)
    n = _num_segments(segment_ids, num_segments, name)
    if scatter_mode is GatherScatterMode.CLIP:
        ids = jnp.clip(segment_ids, 0, max(n - 1, 0))
    else:  # out-of-range ids, negative ones included, go to row n, which the scatter drops
        ids = jnp.where((segment_ids < 0) | (segment_ids >= n), n, segment_ids)
    init = jnp.full((n, *data.shape[1:]), identity(data.dtype), dtype=data.dtype)

    def reduce(rows: Any, row_ids: Any) -> Any:
        return scatter(init, row_ids, rows, indices_are_sorted, unique_indices)

    if bucket_size is None:
        return reduce(data, ids)
    if not isinstance(bucket_size, int) or bucket_size < 1:
        raise ValueError(f"{name}: bucket_size must be a positive integer or None, got {bucket_size!r}")
    out = None
    for start in range(0, data.shape[0], bucket_size):
        part = reduce(data[start:start + bucket_size], ids[start:start + bucket_size])
        out = part if out is None else combine(out, part)
    return init if out is None else out


def _lowest(dtype: np.dtype[Any]) -> Any:
    if dtypes.issubdtype(dtype, np.inexact):
        return -np.inf
    return dtypes.iinfo(dtype).min if dtype != np.bool_ else False


def _highest(dtype: np.dtype[Any]) -> Any:
    if dtypes.issubdtype(dtype, np.inexact):
        return np.inf
    return dtypes.iinfo(dtype).max if dtype != np.bool_ else True


def _scatter(method: str) -> Callable[[Any, Any, Any, bool, bool], Any]:
    def scatter(init: Any, ids: Any, rows: Any, sorted_: bool, unique: bool) -> Any:
        return getattr(init.at[ids], method)(rows, mode="drop", indices_are_sorted=sorted_, unique_indices=unique)
    return scatter


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Array:
    """The sum of ``data``'s rows per segment: ``out[s]`` adds every ``data[i]``
    with ``segment_ids[i] == s`` (0 for an empty segment).  See the module's
    documentation for ``num_segments``, ``mode`` and ``bucket_size``."""
    return _segment_reduce("segment_sum", data, segment_ids, lambda d: 0, _scatter("add"), jnp.add,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                 unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Array:
    """The product of ``data``'s rows per segment (1 for an empty segment)."""
    return _segment_reduce("segment_prod", data, segment_ids, lambda d: 1, _scatter("multiply"), jnp.multiply,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Array:
    """The maximum of ``data``'s rows per segment (the dtype's lowest value,
    ``-inf`` for floats, for an empty segment)."""
    return _segment_reduce("segment_max", data, segment_ids, _lowest, _scatter("max"), jnp.maximum,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Array:
    """The minimum of ``data``'s rows per segment (the dtype's highest value,
    ``inf`` for floats, for an empty segment)."""
    return _segment_reduce("segment_min", data, segment_ids, _highest, _scatter("min"), jnp.minimum,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)
