"""Moving batch dimensions around: the few operations every rule is built from.

All of them bind core primitives on the current trace (rules run with the
parent trace current) and return the value unchanged when there is nothing
to do, so the common case costs no equation.

A batch dimension is an ``int`` (where the batch sits in the value) or
``None`` (the value is the same for every element and has no batch axis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import get_aval
from plait_core.dims import Dim
from plait_core.primitives.structural import broadcast_in_dim_p, reshape_p, transpose_p

BDim = int | None


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """``x`` with its dimension ``src`` moved to position ``dst``."""
    if src == dst:
        return x
    ndim = get_aval(x).ndim
    perm = list(range(ndim))
    del perm[src]
    perm.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(perm))


def broadcast_batch(x: Any, size: Dim, dst: int) -> Any:
    """An unbatched ``x`` repeated ``size`` times along a new dimension ``dst``."""
    aval = get_aval(x)
    shape = aval.shape[:dst] + (size,) + aval.shape[dst:]
    dims = tuple(i if i < dst else i + 1 for i in range(aval.ndim))
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def matchaxis(x: Any, src: BDim, dst: int, size: Dim) -> Any:
    """``x`` batched at ``dst``: moved there, or broadcast there if unbatched."""
    if src is None:
        return broadcast_batch(x, size, dst)
    return moveaxis(x, src, dst)


def to_front(x: Any, bdim: BDim, size: Dim) -> Any:
    """``x`` with its batch dimension first (broadcast if unbatched)."""
    return matchaxis(x, bdim, 0, size)


def front_if_batched(x: Any, bdim: BDim) -> Any:
    """``x`` with its batch dimension first; unbatched values unchanged."""
    return x if bdim is None else moveaxis(x, bdim, 0)


def shift(dim: int, bdim: int) -> int:
    """Where dimension ``dim`` of one element lies in a value batched at ``bdim``."""
    return dim if dim < bdim else dim + 1


def shift_all(dims: Sequence[int], bdim: int) -> tuple[int, ...]:
    """:func:`shift` for several dimensions."""
    return tuple(d if d < bdim else d + 1 for d in dims)


def split_dim(x: Any, dim: int, sizes: Sequence[Dim]) -> Any:
    """``x`` with dimension ``dim`` split into dimensions of ``sizes`` (row-major)."""
    shape = get_aval(x).shape
    new = shape[:dim] + tuple(sizes) + shape[dim + 1 :]
    return reshape_p.bind(x, new_sizes=new, dimensions=None)


def merge_dims(x: Any, dim: int, count: int) -> Any:
    """``x`` with the ``count`` dimensions starting at ``dim`` merged into one (row-major)."""
    if count == 1:
        return x
    shape = get_aval(x).shape
    size: Dim = 1
    for d in shape[dim : dim + count]:
        size = size * d
    new = shape[:dim] + (size,) + shape[dim + count :]
    return reshape_p.bind(x, new_sizes=new, dimensions=None)
