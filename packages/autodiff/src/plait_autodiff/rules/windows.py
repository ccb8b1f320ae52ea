"""Windows of static size along symbolic axes, in tangent programs.

Core's shape rules refuse a window they cannot prove lies in its axis for
every value of the sizes (``x[:2]`` or ``x[-2:]`` of an axis of size ``n``,
which may be 1; ``x.at[:2].set(v)``; ``lax.dynamic_slice_in_dim(x, i, 2)``),
and ``mask`` relies on that refusal: it has no other check of the logical
sizes.  Inside ``vmap`` over piles the ragged rules accept such windows for
the primal program and check them against each element's true length.  The
tangent program, though, is staged with core's rules, so the JVP rules of
the slicing and indexing primitives apply the same primitive to a tangent
*grown* by constant margins, on which core can prove the window in range.
Where the primal's window is in range the grown tangent holds the same
entries, so the result is the same; start indices are first clamped (or, in
``FILL_OR_DROP`` mode, moved out of range) against the true sizes, as the
primitive would treat them on the ungrown operand.

Where core can already prove the window in range (always, for concrete
shapes) nothing is grown and the primitive is bound as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import ops
from plait_core.dims import Dim, InconclusiveDimensionOperation, SymbolicDim
from plait_core.primitive import Primitive
from plait_core.primitives.indexing_prims import GatherScatterMode
from plait_core.primitives.structural import provably_le

__all__ = ["clamped_starts", "grow", "grows", "indexed", "shrink", "window_margins"]

Margins = Sequence[tuple[int, int]]


def _bound(d: Dim, lower: bool) -> int | None:
    if isinstance(d, SymbolicDim):
        return d.lower_bound() if lower else d.upper_bound()
    return int(d)


def window_margins(d: Dim, lo: Dim, hi: Dim, prim: str) -> tuple[int, int]:
    """How much to grow an axis of size ``d``, in front and at the end, so that
    core can prove the window ``[lo, hi)`` lies in it (``(0, 0)`` when it
    already can)."""
    if provably_le(0, lo) and provably_le(hi, d):
        return 0, 0
    low, high = _bound(lo, True), _bound(hi - d, False)
    if low is None or high is None:
        raise InconclusiveDimensionOperation(
            f"the derivative of {prim}: the window [{lo}, {hi}) of an axis of size {d} is not known to be in "
            "range for every value of the sizes, and no constant margin makes it so"
        )
    return max(-low, 0), max(high, 0)


def grows(margins: Margins) -> bool:
    """Whether any axis is grown."""
    return any(b or a for b, a in margins)


def grow(x: Any, margins: Margins) -> Any:
    """``x`` with zeros added in front of and after each axis."""
    return ops.pad(x, ops.const(x, 0), [(b, a, 0) for b, a in margins])


def shrink(x: Any, shape: Sequence[Dim], margins: Margins) -> Any:
    """Undo :func:`grow`: the entries of ``x`` that an operand of ``shape`` has."""
    if not grows(margins):
        return x
    return ops.slice_(x, [b for b, _ in margins], [b + d for (b, _), d in zip(margins, shape)])


def clamped_starts(indices: Sequence[Any], shape: Sequence[Dim], sizes: Sequence[Dim], margins: Margins) -> list[Any]:
    """Scalar starts of dynamic slicing clamped into ``[0, d - s]`` along every
    grown axis, as the primitive clamps them on the ungrown operand."""
    out = []
    for i, d, s, (_, after) in zip(indices, shape, sizes, margins):
        if after:
            dt = ops.aval(i).dtype
            i = ops.clamp(np.zeros((), dt), i, ops.dim_value(d - s, dt))
        out.append(i)
    return out


def _index_bounds(indices: Any, hi: Sequence[Any]) -> Any:
    """The largest in-range start of each index-vector entry, broadcast to the
    shape of ``indices`` (whose last axis is the index vector)."""
    shape = ops.aval(indices).shape
    parts = [ops.broadcast_in_dim(h, (1,), ()) for h in hi]
    vector = ops.concatenate(parts, 0)
    return ops.broadcast_in_dim(vector, shape, (len(shape) - 1,))


def _fit_indices(indices: Any, hi: Sequence[Any], clip: bool) -> Any:
    """Index vectors as the true sizes treat them: clamped into ``[0, hi]``, or
    (``clip`` false) replaced by -1, out of range of any operand, where a start
    is out of ``[0, hi]`` so that the window is filled or dropped."""
    dt = ops.aval(indices).dtype
    bound = _index_bounds(indices, hi)
    zero = np.zeros((), dt)
    if clip:
        return ops.clamp(zero, indices, bound)
    shape = ops.aval(indices).shape
    fits = ops.logical_and(ops.ge(indices, ops.full(shape, 0, dt)), ops.le(indices, bound))
    return ops.select(fits, indices, ops.full(shape, -1, dt))


def indexed(
    prim: Primitive, operand: Any, indices: Any, updates: Any | None, window: Sequence[Dim], index_map: Sequence[int],
    **params: Any,
) -> Any:  # fmt: skip
    """``prim`` (``gather`` when ``updates`` is ``None``, else a scatter) bound
    on ``operand`` grown so that its ``window`` (the window size along every
    operand axis) provably fits, with the index vectors fitted to the true
    sizes first; a scatter's result is cut back to the operand's shape."""
    shape = ops.aval(operand).shape
    margins = [window_margins(d, 0, w, prim.name) for d, w in zip(shape, window)]
    args = (operand, indices) if updates is None else (operand, indices, updates)
    if not grows(margins):
        return prim.bind(*args, **params)
    dt = ops.aval(indices).dtype
    hi = [ops.dim_value(shape[a] - window[a], dt) for a in index_map]
    mode = params["mode"]
    # Gather clamps in PROMISE_IN_BOUNDS mode and scatter drops, as XLA does.
    clip = mode is GatherScatterMode.CLIP or (updates is None and mode is GatherScatterMode.PROMISE_IN_BOUNDS)
    fitted = _fit_indices(indices, hi, clip) if hi else indices
    out = prim.bind(grow(operand, margins), fitted, *args[2:], **params)
    return out if updates is None else shrink(out, shape, margins)
