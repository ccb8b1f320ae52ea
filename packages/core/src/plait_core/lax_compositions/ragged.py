"""``lax.ragged_dot_general`` and ``lax.RaggedDotDimensionNumbers``: the general
grouped matrix product (``lax.ragged_dot`` is its first mode without batch
dimensions), as a ``dot_general`` with the groups turned into masks, so every
transformation applies.

The ragged dimension of ``lhs`` is split into consecutive groups of
``group_sizes`` (shape ``[g]``; JAX's broadcast forms with leading dimensions
are not supported: a ``NotImplementedError``).  Three modes, after the kind of
that dimension (as in JAX):

1. a non-contracting dimension ``m``: ``rhs`` has one group dimension of size
   ``g`` and the rows of group ``i`` are multiplied by ``rhs``'s group ``i``
   (rows past the groups give 0);
2. a contracting dimension ``k``: the product is taken per group over that
   group's part of ``k``, giving a new leading output dimension of size ``g``;
3. a batch dimension: the groups partition the batch, which is the ordinary
   ``dot_general``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from plait_core import numpy as pnp
from plait_core.lax.linalg import dot_general

Array = Any


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The dimensions of :func:`ragged_dot_general`: ``dot_dimension_numbers``
    (``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, as for
    ``dot_general``), the ``lhs_ragged_dimensions`` (exactly one) and the
    ``rhs_group_dimensions`` (one in mode 1, none otherwise).  Sequences are
    stored as tuples, so the value is hashable."""

    dot_dimension_numbers: tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]
    lhs_ragged_dimensions: tuple[int, ...]
    rhs_group_dimensions: tuple[int, ...]

    def __init__(self, dot_dimension_numbers: Any, lhs_ragged_dimensions: Sequence[int],
                 rhs_group_dimensions: Sequence[int]) -> None:
        (lc, rc), (lb, rb) = dot_dimension_numbers
        dims = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
        object.__setattr__(self, "dot_dimension_numbers", dims)
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(map(int, lhs_ragged_dimensions)))
        object.__setattr__(self, "rhs_group_dimensions", tuple(map(int, rhs_group_dimensions)))


def _members(group_sizes: Array, size: int) -> Array:
    """``[g, size]`` booleans: position ``j`` belongs to group ``i``."""

    sizes = pnp.asarray(group_sizes)
    ends = pnp.cumsum(sizes)
    starts = ends - sizes
    pos = pnp.arange(size)
    return (pos[None, :] >= starts[:, None]) & (pos[None, :] < ends[:, None])


def ragged_dot_general(lhs: Array, rhs: Array, group_sizes: Array,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers, precision: Any = None,
                       preferred_element_type: Any = None, group_offset: Array | None = None,
                       out_sharding: Any = None) -> Array:
    """The grouped matrix product of ``lhs`` and ``rhs`` along the ragged
    dimension of ``lhs`` split by ``group_sizes`` (see the module's three modes);
    the output is ``dot_general``'s, with a leading group dimension when the
    ragged dimension is contracting.  ``group_offset`` and ``out_sharding`` are
    not supported (``NotImplementedError``)."""

    if group_offset is not None or out_sharding is not None:
        raise NotImplementedError("lax.ragged_dot_general: group_offset= and out_sharding= are not supported")
    if not isinstance(ragged_dot_dimension_numbers, RaggedDotDimensionNumbers):
        raise TypeError("lax.ragged_dot_general: ragged_dot_dimension_numbers must be a RaggedDotDimensionNumbers, "
                        f"got {type(ragged_dot_dimension_numbers).__name__}")
    dn = ragged_dot_dimension_numbers
    a, b = pnp.asarray(lhs), pnp.asarray(rhs)
    sizes = pnp.asarray(group_sizes)
    if sizes.ndim != 1:
        raise NotImplementedError(
            f"lax.ragged_dot_general: group_sizes must have shape [g], got {sizes.shape} (the broadcast forms with "
            "leading dimensions are not supported)"
        )
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError(f"lax.ragged_dot_general: lhs must have exactly one ragged dimension, got "
                        f"{dn.lhs_ragged_dimensions}")
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    ragged = dn.lhs_ragged_dimensions[0] % a.ndim
    groups = dn.rhs_group_dimensions
    ngroups = sizes.shape[0]
    kw: dict[str, Any] = {"precision": precision, "preferred_element_type": preferred_element_type}
    lc_n, lb_n = [d % a.ndim for d in lc], [d % a.ndim for d in lb]
    if ragged in lc_n or ragged in lb_n:
        if groups:
            raise TypeError("lax.ragged_dot_general: rhs must have no group dimension when the lhs ragged dimension "
                            f"is contracting or batch, got rhs_group_dimensions={groups}")
        if ragged in lb_n:  # mode 3: the groups partition the batch
            return dot_general(a, b, ((lc, rc), (lb, rb)), **kw)
        # mode 2: one product per group over its part of the contracting dimension
        shape = [1] * a.ndim
        shape[ragged] = a.shape[ragged]
        masks = _members(sizes, a.shape[ragged]).reshape((ngroups, *shape))
        stacked = pnp.where(masks, a[None], pnp.zeros((), a.dtype))
        inc = [d + 1 for d in lc_n]
        out = dot_general(stacked, b, ((inc, rc), ([d + 1 for d in lb_n], rb)), **kw)
        return pnp.moveaxis(out, len(lb_n), 0)
    # mode 1: a non-contracting dimension of lhs; rhs has one group dimension
    if len(groups) != 1:
        raise TypeError("lax.ragged_dot_general: rhs must have exactly one group dimension when the lhs ragged "
                        f"dimension is non-contracting, got rhs_group_dimensions={groups}")
    gdim = groups[0] % b.ndim
    if b.shape[gdim] != ngroups:
        raise TypeError(f"lax.ragged_dot_general: rhs group dimension {gdim} has size {b.shape[gdim]}, but there "
                        f"are {ngroups} groups")
    out = dot_general(a, b, ((lc, rc), (lb, rb)), **kw)
    lhs_free = [d for d in range(a.ndim) if d not in lc_n and d not in lb_n]
    rhs_free = [d for d in range(b.ndim) if d not in [x % b.ndim for x in rc] and d not in [x % b.ndim for x in rb]]
    row_axis = len(lb_n) + lhs_free.index(ragged)
    group_axis = len(lb_n) + len(lhs_free) + rhs_free.index(gdim)
    out = pnp.moveaxis(out, (row_axis, group_axis), (-1, -2))  # [..., g, m]
    picked = pnp.sum(pnp.where(_members(sizes, a.shape[ragged]), out, pnp.zeros((), out.dtype)), axis=-2)
    return pnp.moveaxis(picked, -1, row_axis)


__all__ = ["RaggedDotDimensionNumbers", "ragged_dot_general"]
