"""How a pile stores its values: padded, or packed.

A :class:`~plait_batching.pile.Pile` of ``B`` elements whose ragged axis has
the padded size ``N`` (its ``max_length``) stores its values in one of two
ways (``Pile.storage``):

* ``"padded"``: ``data`` of shape ``(B, ..., N, ...)``, every element padded
  to ``N`` along its ragged axis and stacked along a leading batch axis;
* ``"packed"``: ``values`` of the element shape with the ragged axis of size
  ``capacity`` (at least the sum of the lengths) and no batch axis: element
  ``b``'s true rows at ``[start_b, start_b + length_b)``, where ``start_b`` is
  the sum of the lengths before it.  Rows past the sum of the lengths hold
  zeros or other finite values that never reach a result.  It holds the sum
  of the lengths, not ``B x N``: ``TensorFlow``'s ragged values and PyTorch's
  jagged nested tensors store the same way, with the row offsets made from
  the lengths.

This module converts between the two, on concrete values with NumPy and on
traced ones (inside ``jit``) with gathers of :mod:`plait_core.numpy` whose
indices come from the lengths (the capacity and ``N`` are static).  It also
holds the default storage of piles built by
:meth:`~plait_batching.pile.Pile.from_arrays` (:func:`pile_storage`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_core import Tracer

__all__ = ["STORAGES", "default_storage", "packed_from_arrays", "packed_from_padded", "padded_from_packed",
           "pile_storage"]  # fmt: skip

#: How a pile may store its values.
STORAGES = ("padded", "packed")


def _storage_from_environment() -> str:
    given = os.environ.get("PLAIT_PILE_STORAGE", "padded")
    if given not in STORAGES:
        raise ValueError(f"PLAIT_PILE_STORAGE must be 'padded' or 'packed', got {given!r}")
    return given


_ENVIRONMENT_STORAGE = _storage_from_environment()
_default_storage: contextvars.ContextVar[str] = contextvars.ContextVar(
    "plait_pile_storage", default=_ENVIRONMENT_STORAGE
)


def default_storage() -> str:
    """The storage of piles built by ``Pile.from_arrays`` without ``storage``."""
    return _default_storage.get()


@contextlib.contextmanager
def pile_storage(storage: str) -> Iterator[None]:
    """Within the block, ``Pile.from_arrays`` without ``storage`` stores piles
    of one ragged axis as ``storage`` (``"padded"`` or ``"packed"``; piles of
    several ragged axes stay padded, which is the only storage they have).
    Meant for testing (it runs a test suite's piles packed); the default comes
    from the environment variable ``PLAIT_PILE_STORAGE`` (``padded`` when unset)."""
    if storage not in STORAGES:
        raise ValueError(f"pile_storage: storage must be 'padded' or 'packed', got {storage!r}")
    token = _default_storage.set(storage)
    try:
        yield
    finally:
        _default_storage.reset(token)


def concrete(x: Any) -> np.ndarray | None:
    """The concrete value of ``x`` as a NumPy array, or ``None`` if it is traced."""
    while isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    return np.asarray(x)


def _batch_first_mask(valid: Any, rank: int, axis: int) -> tuple[int, ...]:
    """The shape that broadcasts a ``(B, N)`` mask against ``(B, ..., N, ...)`` (``N`` at ``axis + 1``)."""
    return (valid.shape[0], *(1,) * axis, valid.shape[1], *(1,) * (rank - axis - 1))


def padded_from_packed(values: Any, lengths: Any, axis: int, max_length: int, full: bool = False) -> Any:
    """The padded data ``(B, ..., max_length, ...)`` of packed ``values``
    (ragged ``axis``), with zeros in the padding: NumPy when ``values`` and
    ``lengths`` are concrete, else a gather and a select (traced,
    differentiable), or a reshape when the pile is ``full`` (every length is
    ``max_length``)."""
    # NumPy only for values that are not tracers: a tracer with a concrete value (a JVP
    # tracer under eager grad) must stay traced, or its derivative is lost.  The lengths
    # may be read through tracers (integers have no derivative).
    cl = concrete(lengths)
    if not isinstance(values, Tracer) and cl is not None:
        return _padded_numpy(np.asarray(values), cl.astype(np.int64), axis, max_length)
    shape = tuple(values.shape)
    b, rank = int(lengths.shape[0]), len(shape)
    if full:  # every length is max_length: the rows are the elements one after another, unpadded
        rows = pnp.moveaxis(values, axis, 0)[: b * max_length]
        split = pnp.reshape(rows, (b, max_length, *shape[:axis], *shape[axis + 1 :]))
        return pnp.moveaxis(split, 1, axis + 1)
    out_shape = (b, *shape[:axis], max_length, *shape[axis + 1 :])
    if shape[axis] == 0 or b == 0 or max_length == 0:
        return pnp.zeros(out_shape, values.dtype)
    lens = pnp.asarray(lengths, np.int32)
    starts = pnp.cumsum(lens) - lens
    pos = pnp.arange(max_length, dtype=np.int32)
    rows = pnp.minimum(starts[:, None] + pos[None, :], shape[axis] - 1)  # (B, N)
    valid = pos[None, :] < lens[:, None]
    got = pnp.moveaxis(pnp.take(values, rows, axis=axis, mode="clip"), axis, 0)  # (B, ..., N, ...)
    mask = pnp.reshape(valid, _batch_first_mask(valid, rank, axis))
    return pnp.where(mask, got, pnp.zeros((), values.dtype))


def _padded_numpy(values: np.ndarray, lengths: np.ndarray, axis: int, max_length: int) -> np.ndarray:
    b, shape = lengths.shape[0], values.shape
    out = np.zeros((b, *shape[:axis], max_length, *shape[axis + 1 :]), values.dtype)
    start = 0
    for i, n in enumerate(lengths.tolist()):
        index: tuple[Any, ...] = (i, *(slice(None),) * axis, slice(0, n))
        out[index] = np.take(values, np.arange(start, start + n), axis=axis)
        start += n
    return out


def packed_from_arrays(elems: Sequence[np.ndarray], axis: int, dtype: Any, capacity: int) -> np.ndarray:
    """The elements concatenated along ``axis`` as ``dtype``, zero rows added up to ``capacity``."""
    shape = list(elems[0].shape)
    total = sum(e.shape[axis] for e in elems)
    shape[axis] = capacity
    out = np.zeros(shape, dtype)
    index: tuple[Any, ...] = (*(slice(None),) * axis, slice(0, total))
    out[index] = np.concatenate([np.asarray(e, dtype) for e in elems], axis=axis)
    return out


def packed_from_padded(data: Any, lengths: Any, axis: int, capacity: int) -> Any:
    """Padded ``data`` ``(B, ..., N, ...)`` (``N`` at ``axis + 1``) as packed
    values of ``capacity`` rows (at least the sum of the lengths), zeros past
    the sum: NumPy when concrete, else a gather and a select (traced)."""
    cl = concrete(lengths)
    if not isinstance(data, Tracer) and cl is not None:  # as in padded_from_packed: tracers stay traced
        cd = np.asarray(data)
        elems = [np.take(cd[i], np.arange(int(n)), axis=axis) for i, n in enumerate(cl.tolist())]
        empty = list(cd.shape[1:])
        empty[axis] = 0
        return packed_from_arrays(elems or [np.zeros(empty, cd.dtype)], axis, cd.dtype, capacity)
    shape = tuple(data.shape)
    b, n, rank = shape[0], shape[1 + axis], len(shape) - 1
    out_shape = (*shape[1 : axis + 1], capacity, *shape[axis + 2 :])
    if capacity == 0 or b == 0 or n == 0:
        return pnp.zeros(out_shape, data.dtype)
    lens = pnp.asarray(lengths, np.int32)
    ends = pnp.cumsum(lens)
    t = pnp.arange(capacity, dtype=np.int32)
    before = ends[None, :] <= t[:, None]  # (C, B): the elements that end at or before row t
    seg = pnp.minimum(pnp.sum(before, axis=1, dtype=np.int32), b - 1)
    start = pnp.take(ends - lens, seg)
    pos = pnp.clip(t - start, 0, n - 1)
    moved = pnp.moveaxis(data, 1 + axis, 1)  # (B, N, rest)
    got = moved[seg, pos]  # (C, rest)
    valid = pnp.reshape(t < ends[-1], (capacity, *(1,) * (rank - 1)))
    got = pnp.where(valid, got, pnp.zeros((), data.dtype))
    return pnp.moveaxis(got, 0, axis)
