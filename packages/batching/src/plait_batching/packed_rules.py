"""Which operations run on packed values, and the choice of layout.

An equation runs on packed values (:mod:`plait_batching.packed`) when

* every batched operand is a ragged value with one ragged axis, all of one
  ragged size ``n`` (whose params mention no other), and the other operands
  are unbatched;
* the primitive treats the positions along that axis independently
  (:data:`PACKED_CHECKS`): elementwise operations and the AD helpers,
  broadcasts, reshapes that keep the ragged axis whole, transposes,
  reductions, cumulative operations, slices, pads and concatenations along
  other axes, ``dot_general`` contracting other axes against an unbatched
  operand (a dense layer), with one ragged axis in each result;
* and the layout says so (:func:`~plait_batching.packed.layout_of`):
  ``"padded"`` never packs; ``"packed"`` packs every such equation; the
  automatic choice packs only a size whose capacity is at most
  :data:`~plait_batching.packed.PACK_RATIO` of its padded rows, and then
  an equation with an operand already packed, or a ``dot_general`` (whose
  saved work pays for the gather of its operand).

Then the primitive is bound on the packed values with ``n`` replaced by the
capacity.  Equations that make a ragged value from unbatched operands only
(a broadcast to ``(n, d)``) keep their padded result and get a packed one
too: both are broadcasts, and the one never read costs nothing under ``jit``.
Everything else runs on the padded data (its ragged rule), whose values are
unpacked once when first read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_batching.packed import Packed, layout_of, pack, packed_tracer, packs_well
from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    RaggedSize,
    element_abstract_eval,
    env_of,
    packed_dispatch,
    process_ragged_padded,
)
from plait_batching.trace import BatchTrace, BatchTracer
from plait_core import Primitive, ShapedArray, Tracer, all_primitives, get_aval, set_current_trace
from plait_core.dims import SymbolicDim
from plait_core.primitives import ad_helpers, reductions, structural
from plait_core.primitives.elementwise import bitcast_convert_type_p
from plait_core.primitives.linalg import dot_general_p

__all__ = ["PACKED_CHECKS", "try_packed"]

#: ``check(axes, avals, params, out_axes)``: whether the primitive, with
#: operands of element types ``avals`` whose ragged axis is ``axes[i]``
#: (``None``: unbatched), treats the ragged positions independently and maps
#: them to the results' ragged axes ``out_axes``.
Check = Callable[[Sequence[int | None], Sequence[ShapedArray], dict[str, Any], Sequence[int]], bool]


def _elementwise(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
                 out_axes: Sequence[int]) -> bool:  # fmt: skip
    shapes = {a.shape for a, ax in zip(avals, axes) if ax is not None}
    others_scalar = all(a.ndim == 0 for a, ax in zip(avals, axes) if ax is None)
    return len(shapes) == 1 and others_scalar and all(o == next(a for a in axes if a is not None) for o in out_axes)


def _broadcast_in_dim(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
                      out_axes: Sequence[int]) -> bool:  # fmt: skip
    a = axes[0]
    return a is None or params["broadcast_dimensions"][a] == out_axes[0]


def _reshape(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
             out_axes: Sequence[int]) -> bool:  # fmt: skip
    a, k = axes[0], out_axes[0]
    if a is None or params.get("dimensions") is not None:
        return False
    before, after = avals[0].shape[:a], params["new_sizes"][:k]
    if not all(type(d) is int for d in (*before, *after)):
        return False
    return _prod(before) == _prod(after)


def _prod(dims: Sequence[Any]) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out


def _transpose(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
               out_axes: Sequence[int]) -> bool:  # fmt: skip
    return axes[0] is not None and params["permutation"][out_axes[0]] == axes[0]


def _reduce(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
            out_axes: Sequence[int]) -> bool:  # fmt: skip
    return axes[0] is not None and axes[0] not in params["axes"]


def _cumulative(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
                out_axes: Sequence[int]) -> bool:  # fmt: skip
    return axes[0] is not None and axes[0] != params["axis"]


def _same_rank(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
               out_axes: Sequence[int]) -> bool:  # fmt: skip
    """Squeeze and expand_dims: the ragged axis is never squeezed (it is not 1)."""
    return axes[0] is not None


def _slice(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
           out_axes: Sequence[int]) -> bool:  # fmt: skip
    a = axes[0]
    if a is None:
        return False
    strides = params.get("strides")
    start, limit = params["start_indices"][a], params["limit_indices"][a]
    whole = type(start) is int and start == 0 and bare_name(limit) is not None and bare_name(limit) == bare_name(
        avals[0].shape[a]
    )
    return whole and (strides is None or strides[a] == 1)


def _pad(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
         out_axes: Sequence[int]) -> bool:  # fmt: skip
    a = axes[0]
    return a is not None and axes[1] is None and tuple(params["padding_config"][a]) == (0, 0, 0)


def _concatenate(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
                 out_axes: Sequence[int]) -> bool:  # fmt: skip
    a = axes[0]
    return a is not None and all(x == a for x in axes) and params["dimension"] != a


def _dot_general(axes: Sequence[int | None], avals: Sequence[ShapedArray], params: dict[str, Any],
                 out_axes: Sequence[int]) -> bool:  # fmt: skip
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    la, ra = axes
    if la is not None and ra is None:
        return la not in lc and la not in lb
    if ra is not None and la is None:
        return ra not in rc and ra not in rb
    return False


#: The primitives that may run on packed values, with their checks.
PACKED_CHECKS: dict[Primitive, Check] = {
    structural.broadcast_in_dim_p: _broadcast_in_dim,
    structural.reshape_p: _reshape,
    structural.transpose_p: _transpose,
    structural.squeeze_p: _same_rank,
    structural.expand_dims_p: _same_rank,
    structural.copy_p: _elementwise,
    structural.slice_p: _slice,
    structural.pad_p: _pad,
    structural.concatenate_p: _concatenate,
    dot_general_p: _dot_general,
}
for _p in all_primitives():
    if _p.family == "elementwise" and _p is not bitcast_convert_type_p:  # a bitcast may change the rank
        PACKED_CHECKS[_p] = _elementwise
for _p in (ad_helpers.stop_gradient_p, ad_helpers.add_any_p, ad_helpers.zeros_like_p):
    PACKED_CHECKS[_p] = _elementwise
for _p in (reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p, reductions.reduce_min_p,
           reductions.reduce_and_p, reductions.reduce_or_p, reductions.argmax_p, reductions.argmin_p):  # fmt: skip
    PACKED_CHECKS[_p] = _reduce
for _p in (reductions.cumsum_p, reductions.cumprod_p, reductions.cummax_p, reductions.cummin_p):
    PACKED_CHECKS[_p] = _cumulative

#: Primitives whose saved work pays for packing an operand that is still padded.
HEAVY = frozenset({dot_general_p})


def bare_name(d: Any) -> str | None:
    """The name when the dimension ``d`` is a bare size ``n`` (compared by
    structure: ``==`` on sizes may be inconclusive), else ``None``."""
    if type(d) is not SymbolicDim or len(d.terms) != 1:
        return None
    mono, coeff = d.terms[0]
    if coeff != 1 or len(mono) != 1 or mono[0][1] != 1:
        return None
    return str(mono[0][0])


def _one_ragged_axis(env: RaggedEnv, aval: ShapedArray) -> tuple[int, str] | None:
    """``(axis, name)`` when ``aval`` has exactly one ragged axis, of size a bare name."""
    found: tuple[int, str] | None = None
    for i, d in enumerate(aval.shape):
        if not env.names_in(d):
            continue
        name = bare_name(d)
        if found is not None or name is None:
            return None
        found = (i, name)
    return found


def _at_capacity(value: Any, name: str, capacity: int) -> Any:
    """A param value with the size ``name`` replaced by ``capacity``; ``None``
    when it mentions the size in another way (``2 n``, ``n - 1``)."""
    if type(value) is SymbolicDim:
        if bare_name(value) == name:
            return capacity
        return None if name in value.free_names() else value
    if isinstance(value, tuple):
        out = tuple(_at_capacity(v, name, capacity) for v in value)
        bad = any(o is None and v is not None for o, v in zip(out, value))
        return None if bad else out
    return value


def try_packed(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """The equation's results computed on packed values, or ``None`` when it
    runs on the padded data (see the module docs)."""
    check = PACKED_CHECKS.get(prim)
    if check is None:
        return None
    env = env_of(trace)
    names: set[str] = set()
    for x in args:
        if type(x) is BatchTracer and x._trace is trace:
            if not x.ragged:
                return None
            names |= env.names_in_shape(x.aval.shape)
    for v in params.values():
        names |= env.names_in_params(v)
    if len(names) != 1:
        return None
    size = env.sizes[next(iter(names))]
    layout = layout_of(size)
    if layout == "padded" or size.capacity == 0 or size.padded == 0:
        return None
    if layout is None and not packs_well(env, size):
        return None
    axes: list[int | None] = []
    ops: list[Operand] = []
    for x in args:
        if type(x) is BatchTracer and x._trace is trace:
            if not x.ragged:
                return None
            found = _one_ragged_axis(env, x.aval)
            if found is None:
                return None
            axes.append(found[0])
            ops.append(Operand(None, found[0], x.aval))
        else:
            if isinstance(x, Tracer):
                trace.check_foreign_tracer(x, prim)
            axes.append(None)
            ops.append(Operand(x, None, get_aval(x, f"an argument of {prim.name}")))
    packed_params = {k: _at_capacity(v, size.name, size.capacity) for k, v in params.items()}
    if any(packed_params[k] is None and v is not None for k, v in params.items()):
        return None
    try:
        out_avals = element_abstract_eval(env, prim, ops, params, frozenset(names))
    except (TypeError, ValueError, ArithmeticError):
        return None  # the padded rule reports it, in its words
    out_axes: list[int] = []
    for a in out_avals:
        found = _one_ragged_axis(env, a)
        if found is None:
            return None
        out_axes.append(found[0])
    if not check(axes, [o.aval for o in ops], params, out_axes):
        return None
    if all(ax is None for ax in axes):
        return _also_packed(trace, prim, args, params, packed_params, out_axes, out_avals)
    if layout is None and prim not in HEAVY and not any(
        type(x) is BatchTracer and x._trace is trace and x.packed is not None for x in args
    ):
        return None
    return _run_packed(trace, prim, args, axes, packed_params, out_axes, out_avals, size)


def _run_packed(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], axes: Sequence[int | None],
    packed_params: dict[str, Any], out_axes: Sequence[int], out_avals: Sequence[ShapedArray], size: RaggedSize,
) -> Any:  # fmt: skip
    with set_current_trace(trace.parent_trace):
        vals = [x if ax is None else pack(x, ax) for x, ax in zip(args, axes)]
        res = prim.bind(*vals, **packed_params)
    outs = list(res) if prim.multiple_results else [res]
    tracers = [
        packed_tracer(trace, v, k, ShapedArray(a.shape, get_aval(v).dtype, a.weak_type))
        for v, k, a in zip(outs, out_axes, out_avals)
    ]
    return tracers if prim.multiple_results else tracers[0]


def _also_packed(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any],
    packed_params: dict[str, Any], out_axes: Sequence[int], out_avals: Sequence[ShapedArray],
) -> Any:  # fmt: skip
    """A ragged value made from unbatched operands: its padded result, with
    the packed one attached."""
    padded = process_ragged_padded(trace, prim, args, params)
    outs = list(padded) if prim.multiple_results else [padded]
    with set_current_trace(trace.parent_trace):
        res = prim.bind(*args, **packed_params)
    packed = list(res) if prim.multiple_results else [res]
    for o, v, k in zip(outs, packed, out_axes):
        if type(o) is BatchTracer and o.ragged:
            o.packed = Packed(v, k)
    return padded


packed_dispatch.append(try_packed)
