"""Ragged rules of the structural family.

The padded layout keeps each element's true entries at the start of every
ragged axis.  Broadcasting, transposes, adding or dropping unit axes,
``iota``, ``rev`` and ``pad`` are core's padded rules
(:mod:`plait_core.padded.structural`, run by :mod:`.ragged_padded`).
Concatenating along static axes and reshapes that regroup the axes around a
ragged axis run on the padded data unchanged;

* ``concatenate`` along a ragged axis joins the padded pieces, then gathers,
  per element, each piece's true entries right after the previous piece's.
  The result's size is the sum of the pieces' sizes (``n + 1`` for a
  ``cls`` token, ``2 * n`` for ``x`` with itself); when the pieces have
  different ragged sizes (two piles of different lengths) the sum would mix
  names, so the result gets a ragged size of its own, with lengths the sums
  of the pieces' lengths (one size per sum: ``[x, y]`` and ``[y, x]`` share
  it).

Still refused with a reason: a reshape that merges a
ragged axis with others.

Slicing and indexing (``slice``, dynamic slices, gather, scatter) are in
:mod:`ragged_indexing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_batching.moves import to_front
from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    check_one_size,
    derived_size,
    element_abstract_eval,
    env_of,
    operands,
    padded_rule,
    refuse,
    wrap_results,
)
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import Primitive, get_aval, set_current_trace
from plait_core.dims import Dim, definitely_equal
from plait_core.primitives import structural as st
from plait_core.primitives.elementwise import add_p, ge_p, select_n_p, sub_p
from plait_core.primitives.indexing_prims import GatherDimensionNumbers, GatherScatterMode

_I32 = np.dtype(np.int32)
# Each axis on its own: these also take values with ragged axes of different sizes (n x m).
_padded = padded_rule(several_sizes=True)



# ---------------------------------------------------------------------------
# Per-element positions and gathers (parent trace current; batch first)


def _positions(env: RaggedEnv, size: int) -> Any:
    """``int32[B, size]``: the position along an axis, for every element."""
    return st.iota_p.bind(dtype=_I32, shape=(env.axis.size, size), dimension=1)


def _rows(v: Any, size: int) -> Any:
    """A per-element ``int32[B]`` value repeated along a new axis of ``size``."""
    return st.broadcast_in_dim_p.bind(v, shape=(get_aval(v).shape[0], size), broadcast_dimensions=(0,))


def _spread(m: Any, full: Sequence[Dim], axis: int) -> Any:
    """A ``[B, size]`` value broadcast to ``full`` (batch first) along ``axis``."""
    return st.broadcast_in_dim_p.bind(m, shape=tuple(full), broadcast_dimensions=(0, axis))


def take_along(x: Any, axis: int, index: Any) -> Any:
    """``out[b, ..., j, ...] = x[b, ..., index[b, j], ...]``: ``x`` (batch first)
    gathered along its dimension ``axis`` by a per-element ``int32[B, J]`` index."""
    shape = get_aval(x).shape
    dn = GatherDimensionNumbers(
        offset_dims=tuple(d for d in range(len(shape)) if d not in (0, axis)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,),
    )  # fmt: skip
    sizes = tuple(1 if d in (0, axis) else s for d, s in enumerate(shape))
    idx = st.expand_dims_p.bind(index, dimensions=(2,))
    return st.gather_p.bind(
        x, idx, dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=False, unique_indices=False,
        mode=GatherScatterMode.CLIP, fill_value=None,
    )  # fmt: skip


# ---------------------------------------------------------------------------
# reshape, slice


def _segments(env: RaggedEnv, shape: Sequence[Dim]) -> tuple[list[Dim], list[Dim]] | None:
    """The ragged sizes of ``shape`` in order and the products of the static
    runs between them (``None`` when a run is not static)."""
    ragged: list[Dim] = []
    runs: list[Dim] = [1]
    for d in shape:
        if env.is_ragged(d):
            ragged.append(d)
            runs.append(1)
        else:
            runs[-1] = runs[-1] * d
    return ragged, runs


def _check_reshape(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    (x,) = ops
    shape = x.aval.shape
    if params.get("dimensions") is not None:
        shape = tuple(shape[i] for i in params["dimensions"])
    a, b = _segments(env, shape), _segments(env, params["new_sizes"])
    same = (
        a is not None and b is not None and len(a[0]) == len(b[0])
        and all(definitely_equal(p, q) for p, q in zip(a[0], b[0]))
        and all(type(p) is int and definitely_equal(p, q) for p, q in zip(a[1], b[1]))
    )  # fmt: skip
    if not same:
        raise refuse(
            prim, ops, env,
            f"to the shape {tuple(params['new_sizes'])} would mix a ragged axis with other axes; a reshape of a "
            "ragged value must keep each ragged axis and regroup only the static axes around it",
        )  # fmt: skip


ragged_rules[st.reshape_p] = padded_rule(_check_reshape, several_sizes=True)




# ---------------------------------------------------------------------------
# concatenate


def _concatenate(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    env = env_of(trace)
    ops = operands(trace, prim, args)
    k = params["dimension"]
    along = [env.names_in(o.aval.shape[k]) for o in ops]
    if not any(along[:-1]):  # only the last piece is ragged along k: its padding stays at the end
        return _padded(trace, prim, args, params)
    others = frozenset().union(*(env.names_in(d) for o in ops for i, d in enumerate(o.aval.shape) if i != k))
    joined = frozenset().union(*along)
    if others:
        check_one_size(env, prim, ops, params)
    (aval,) = element_abstract_eval(env, prim, ops, params, joined | others)
    with set_current_trace(trace.parent_trace):
        vals = [to_front(o.val, o.bdim, env.axis.size) for o in ops]
        joined_val = st.concatenate_p.bind(*vals, dimension=k + 1)
        total = int(get_aval(joined_val).shape[k + 1])
        pos = _positions(env, total)
        # Position j of piece i's true entries: j - start_i in the piece, which
        # starts at offset_i of the joined padded pieces.
        index, start, offset = pos, None, 0
        for o in ops:
            if start is not None:
                at = _rows(start, total)
                moved = add_p.bind(sub_p.bind(pos, at), np.int32(offset))
                index = select_n_p.bind(ge_p.bind(pos, at), index, moved)
            n = env.lengths(o.aval.shape[k])
            start = n if start is None else add_p.bind(start, n)
            offset += int(env.padded(o.aval.shape[k]))
        val = take_along(joined_val, k + 1, index)
        if len(joined) > 1:  # a size of its own, not a sum of names
            # env.lengths memoises the lengths of the sum, so equal sums (x + y and
            # y + x, or the same pieces twice) get the same size, also when traced.
            shape = list(aval.shape)
            shape[k] = derived_size(env, env.lengths(aval.shape[k]), total)
            aval = aval.update(shape=tuple(shape))
    return wrap_results(trace, prim, [val], [0], [aval])


ragged_rules[st.concatenate_p] = _concatenate
