"""Ragged rules of the structural and indexing families that moving data
along a ragged axis needs: ``concatenate``, ``reshape``, ``slice``, dynamic
slices, ``gather`` and the ``scatter`` family.

What they compute on the padded data is core's padded semantics
(:mod:`plait_core.padded.structural`, :mod:`plait_core.padded.reshape`,
:mod:`plait_core.padded.indexing`), run by :func:`.ragged_padded.from_padded_rule`
with one logical size per element; each ragged axis is taken by its own
size, so an ``n x m`` value between two piles is sliced, indexed and
concatenated along either axis.  What only piles have is their element
types, so that is what this module adds (registered after
:mod:`.ragged_padded`, whose generic registration of these primitives it
replaces):

* ``concatenate`` along a ragged axis gives the sum of the pieces' sizes
  (``n + 1`` for a ``cls`` token, ``2 * n`` for ``x`` with itself); when the
  pieces have different ragged sizes (two piles of different lengths) the
  sum would mix names in one axis, which a ragged value may not, so the
  result gets a ragged size of its own, with lengths the sums of the pieces'
  lengths (one size per sum: ``[x, y]`` and ``[y, x]`` share it).
* A window of static size along a ragged axis (``lax.dynamic_slice_in_dim(x,
  i, 2)``, ``x[1]``, ``x[-2:]``) asks every element to have its entries;
  core's shape rules cannot prove it (sizes are only known to be at least
  1), so the element types are computed at the padded size and, when the
  lengths are concrete, an element too short is a ``ValueError`` naming its
  length.  Under ``jit`` the lengths are traced and cannot be checked: the
  window of such an element starts at 0 and its entries past the element's
  end are unspecified.  (Under ``mask`` the same window is a shape error:
  there is no concrete size to check it against.)
* ``reshape`` merging the ragged axes of an ``n x m`` value gives it a size
  of its own too, with lengths ``n * m``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    concrete_sizes,
    derived_size,
    element_abstract_eval,
    env_of,
    names_involved,
    ragged_axes,
    refuse,
    several_size_types,
)
from plait_batching.registries import ragged_rules
from plait_batching.rules.ragged_padded import from_padded_rule
from plait_batching.trace import BatchTrace
from plait_core import Primitive, ShapedArray, set_current_trace
from plait_core.dims import Dim
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import ScatterDimensionNumbers
from plait_core.primitives.structural import provably_le

# ---------------------------------------------------------------------------
# concatenate, reshape


def _own_sizes(
    trace: BatchTrace, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]
) -> list[ShapedArray]:
    """Core's result types, where an axis whose size mixes names (``n + m``,
    ``n * m``) gets a size of its own.  ``env.lengths`` memoises the lengths of
    a polynomial, so equal sizes (``x + y`` and ``y + x``, or the same pieces
    twice) get the same size, also when traced."""
    env = env_of(trace)
    (aval,) = several_size_types(env, prim, ops, params)
    mixed = [a for a, d in enumerate(aval.shape) if len(env.names_in(d)) > 1]
    if not mixed:
        return [aval]
    shape = list(aval.shape)
    with set_current_trace(trace.parent_trace):
        for a in mixed:
            shape[a] = derived_size(env, env.lengths(shape[a]), int(env.padded(shape[a])))
    return [aval.update(shape=tuple(shape))]


ragged_rules[st.concatenate_p] = from_padded_rule(st.concatenate_p, types=_own_sizes)
ragged_rules[st.reshape_p] = from_padded_rule(st.reshape_p, types=_own_sizes)


# ---------------------------------------------------------------------------
# Element types of windows that core cannot prove fit a ragged axis


class _Window(NamedTuple):
    """The entries ``[lo, hi)`` taken along the ragged ``axis`` of operand 0,
    which core's shape rule cannot prove every element has."""

    axis: int
    lo: Dim
    hi: Dim


def _static_windows(env: RaggedEnv, aval: ShapedArray, sizes: Sequence[Dim]) -> list[_Window]:
    """The windows of static size along ragged axes of ``aval`` that are not
    provably within the axis (a window of 2 along ``n``)."""
    if len(sizes) != aval.ndim:  # core's shape rule says what is wrong
        return []
    return [
        _Window(a, 0, s) for a in ragged_axes(env, aval) if type(s := sizes[a]) is int and not provably_le(s, aval.shape[a])
    ]  # fmt: skip


def _slice_windows(env: RaggedEnv, aval: ShapedArray, params: dict[str, Any]) -> list[_Window]:
    """The ragged axes a slice takes a window of static size from that core
    cannot prove every element has (``x[1]``, ``x[-2:]``)."""
    starts, limits = params["start_indices"], params["limit_indices"]
    if len(starts) != aval.ndim or len(limits) != aval.ndim:
        return []
    out = []
    for a in ragged_axes(env, aval):
        lo, hi = starts[a], limits[a]
        if not (provably_le(0, lo) and provably_le(hi, aval.shape[a])) and type(hi - lo) is int:
            out.append(_Window(a, lo, hi))
    return out


def _types_at_padded(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any], windows: Sequence[_Window],
    *, keeps_operand: bool,
) -> list[ShapedArray]:  # fmt: skip
    """The element types of the results, ragged axes with a window core cannot
    prove fits taken at their padded size (``params`` must not mention their
    size), checked against concrete lengths; ``keeps_operand``: the result has
    the type of operand 0."""
    x = ops[0]
    shape = list(x.aval.shape)
    for w in windows:
        shape[w.axis] = env.padded(shape[w.axis])
        known = concrete_sizes(env, (x.aval.shape[w.axis], w.lo, w.hi))
        if known is not None:
            n, lo, hi = known
            bad = (lo < 0) | (hi > n)
            if bad.any():
                raise refuse(
                    prim, ops, env,
                    f"takes the entries [{w.lo}, {w.hi}) of the ragged axis {w.axis}, which the elements of "
                    f"lengths {np.array2string(n[bad])} do not have",
                )  # fmt: skip
    relaxed = [x._replace(aval=x.aval.update(shape=tuple(shape))), *ops[1:]]
    out = several_size_types(env, prim, relaxed, params) if windows else several_size_types(env, prim, ops, params)
    return [a.update(shape=x.aval.shape) for a in out] if keeps_operand else out


def _gather_types(trace: BatchTrace, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> list[ShapedArray]:
    env = env_of(trace)
    return _types_at_padded(env, prim, ops, params, _static_windows(env, ops[0].aval, params["slice_sizes"]),
                            keeps_operand=False)  # fmt: skip


def _update_types(trace: BatchTrace, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> list[ShapedArray]:
    env = env_of(trace)
    x, upd = ops[0].aval, ops[1 if prim is st.dynamic_update_slice_p else 2].aval
    dn = params.get("dimension_numbers")
    if prim is st.dynamic_update_slice_p:
        sizes: Sequence[Dim] = upd.shape
    elif isinstance(dn, ScatterDimensionNumbers):
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        window = iter([upd.shape[u] for u in dn.update_window_dims if 0 <= u < upd.ndim])
        sizes = [1 if a in dropped else next(window, 1) for a in range(x.ndim)]  # (core's shape rule checks them)
    else:  # core's error
        return element_abstract_eval(env, prim, ops, params, names_involved(env, ops, params))
    return _types_at_padded(env, prim, ops, params, _static_windows(env, x, sizes), keeps_operand=True)


def _slice_types(trace: BatchTrace, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> list[ShapedArray]:
    env = env_of(trace)
    windows = _slice_windows(env, ops[0].aval, params)
    on = {w.axis for w in windows}
    relaxed = {
        key: tuple(env.padded(d) if a in on else d for a, d in enumerate(params[key]))
        for key in ("start_indices", "limit_indices")
    }
    return _types_at_padded(env, prim, ops, {**params, **relaxed}, windows, keeps_operand=False)


ragged_rules[st.slice_p] = from_padded_rule(st.slice_p, types=_slice_types)
ragged_rules[st.gather_p] = from_padded_rule(st.gather_p, types=_gather_types)
ragged_rules[st.dynamic_slice_p] = from_padded_rule(st.dynamic_slice_p, types=_gather_types)
for _p in (st.dynamic_update_slice_p, st.scatter_p, st.scatter_add_p, st.scatter_mul_p, st.scatter_min_p,
           st.scatter_max_p):  # fmt: skip
    ragged_rules[_p] = from_padded_rule(_p, types=_update_types)
