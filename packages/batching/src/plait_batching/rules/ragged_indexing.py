"""Ragged rules of the indexing primitives: dynamic slices, gather, scatter.

Every element's true entries sit at the start of each ragged axis, so an
index into a ragged axis means the same on the padded data as on the
element's true data *as long as it is in the element's range*.  What differs
is what happens out of range: the padded primitive clamps, fills or drops
relative to the padded size, the element's own program relative to its true
length.  One mechanism makes the two agree: before the ordinary batching rule
runs on the padded data, every start index into a ragged axis (of size ``n``,
with a window of static size ``w``) is rewritten per element from the lengths:

* clamped into ``[0, length - w]`` where the mode clamps (``dynamic_slice``,
  ``dynamic_update_slice``, ``mode="clip"``, and a gather's
  ``"promise_in_bounds"``);
* replaced by ``-1``, out of range of the padded data too, where the window
  does not fit the element and the mode fills or drops (a gather's ``"fill"``,
  a scatter's ``"drop"``/``"fill"`` and ``"promise_in_bounds"``).

The padded primitive then finds every rewritten window in range, or out of
range, exactly where the element's program would.  Negative indices need no
care here: core wraps them with the size as a value, which inside ``vmap`` over
piles is each element's true length (``x[-1]``, ``x[i]`` with ``i < 0``,
``x.at[i]``).  Windows whose size is ragged too (``n - 1`` along ``n``) clamp
the same on the padded data, and need no rewriting.

Scatters must also never write the padding of their updates.  Index vectors
in the padding of ragged indices (the ids of a segment sum,
``zeros(k).at[ids].add(vals)``) are dropped the same way (-1).  An update
window that is ragged but shorter than the ragged axis it writes into
(``x.at[:-1].set(y)``) would carry its padding onto true entries, so it is
split into windows of size 1, one per entry, and the entries past each
element's true window are dropped.  A clamping scatter that needs drops
clamps every start itself, then runs in drop mode.

A window of static size along a ragged axis (``lax.dynamic_slice_in_dim(x, i,
2)``, ``x[1]``, ``x[-2:]``) asks every element to have its entries; core's
shape rules cannot prove it (sizes are only known to be at least 1), so here
the element types are computed at the padded size and, when the lengths are
concrete, an element too short is a ``ValueError`` naming its length.  Under
``jit`` the lengths are traced and cannot be checked: the window of such an
element starts at 0 and its entries past the element's end are unspecified.

``x[-1]`` and ``x[-k:]`` lower to a ``slice`` that starts at a ragged offset
(``n - 1``): such slices run here as a window at each element's own start
(every other slice runs on the padded data, which keeps each element's
entries, after a check that its starts along ragged axes are fixed and its
strides there are 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from plait_batching.moves import BDim, to_front
from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    check_one_size,
    concrete_sizes,
    element_abstract_eval,
    env_of,
    fill_padding,
    operands,
    padded_rule,
    ragged_axes,
    refuse,
    run_batched,
    wrap_results,
)
from plait_batching.registries import ragged_rules
from plait_batching.trace import AxisData, BatchTrace
from plait_core import Primitive, ShapedArray, dtypes, get_aval, set_current_trace
from plait_core.dims import Dim, definitely_equal
from plait_core.primitives import structural as st
from plait_core.primitives.elementwise import (
    add_p,
    and_p,
    convert_element_type_p,
    ge_p,
    le_p,
    lt_p,
    max_p,
    min_p,
    select_n_p,
)
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from plait_core.primitives.structural import provably_le

_I32 = np.dtype(np.int32)
_CLIP, _FILL = GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP

# ---------------------------------------------------------------------------
# Element types: windows that core cannot prove fit a ragged axis


class _Window(NamedTuple):
    """The entries ``[lo, hi)`` taken along the ragged ``axis`` of operand ``op``,
    which core's shape rule cannot prove every element has."""

    op: int
    axis: int
    lo: Dim
    hi: Dim


def _static_windows(env: RaggedEnv, op: int, aval: ShapedArray, sizes: Sequence[Dim]) -> list[_Window]:
    """The windows of static size along ragged axes of ``aval`` that are not
    provably within the axis (a window of 2 along ``n``)."""
    if len(sizes) != aval.ndim:  # core's shape rule says what is wrong
        return []
    return [
        _Window(op, a, 0, s) for a in ragged_axes(env, aval)
        if type(s := sizes[a]) is int and not provably_le(s, aval.shape[a])
    ]  # fmt: skip


def _element_types(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any], windows: Sequence[_Window],
    *, keeps_operand: bool,
) -> list[ShapedArray]:  # fmt: skip
    """The element types of the results.  Ragged axes with a window core
    cannot prove fits are taken at their padded size (``params`` must not
    mention their size), and checked against concrete lengths;
    ``keeps_operand``: the result has the type of operand 0."""
    names = check_one_size(env, prim, ops, params)
    relaxed = list(ops)
    for w in windows:
        o = relaxed[w.op]
        shape = list(o.aval.shape)
        size = shape[w.axis]
        shape[w.axis] = env.padded(size)
        relaxed[w.op] = o._replace(aval=o.aval.update(shape=tuple(shape)))
        known = concrete_sizes(env, (size, w.lo, w.hi))
        if known is not None:
            n, lo, hi = known
            bad = (lo < 0) | (hi > n)
            if bad.any():
                raise refuse(
                    prim, ops, env,
                    f"takes the entries [{w.lo}, {w.hi}) of the ragged axis {w.axis}, which the elements of "
                    f"lengths {np.array2string(n[bad])} do not have",
                )  # fmt: skip
    out = element_abstract_eval(env, prim, relaxed, params, names)
    if keeps_operand:
        return [a.update(shape=ops[0].aval.shape) for a in out]
    return out


# ---------------------------------------------------------------------------
# Index vectors on the parent trace: batch first, one column per operand axis


def _front_indices(axis: AxisData, idx: Operand) -> Any:
    """The indices batch first, in a signed dtype (so -1 can mark a dropped window)."""
    v = to_front(idx.val, idx.bdim, axis.size)
    dt = get_aval(v).dtype
    if dtypes.is_unsigned_int(dt):
        if dt.itemsize >= 4:  # larger values are out of range of any axis anyway
            v = min_p.bind(v, np.asarray(np.iinfo(np.int32).max, dt))
        v = convert_element_type_p.bind(v, new_dtype=_I32, weak_type=False)
    return v


def _columns(v: Any) -> list[Any]:
    """The index vectors ``(B, ..., K)`` as ``K`` arrays ``(B, ...)``."""
    shape = get_aval(v).shape
    last = len(shape) - 1
    cols = []
    for k in range(int(shape[last])):
        start = (0,) * last + (k,)
        col = st.slice_p.bind(v, start_indices=start, limit_indices=(*shape[:last], k + 1), strides=None)
        cols.append(st.squeeze_p.bind(col, dimensions=(last,)))
    return cols


def _stack(cols: Sequence[Any]) -> Any:
    """The inverse of :func:`_columns`."""
    shape = get_aval(cols[0]).shape
    dims = tuple(range(len(shape)))
    parts = [st.broadcast_in_dim_p.bind(c, shape=(*shape, 1), broadcast_dimensions=dims) for c in cols]
    return parts[0] if len(parts) == 1 else st.concatenate_p.bind(*parts, dimension=len(shape))


def _per_element(env: RaggedEnv, d: Dim, like: Any) -> Any:
    """``d`` of every element broadcast like the batch-first ``like`` (its dtype)."""
    aval = get_aval(like)
    if type(d) is int:
        return np.asarray(d, aval.dtype)
    lengths = env.lengths(d)
    if aval.dtype != _I32:
        lengths = convert_element_type_p.bind(lengths, new_dtype=aval.dtype, weak_type=False)
    return st.broadcast_in_dim_p.bind(lengths, shape=aval.shape, broadcast_dimensions=(0,))


def _and(a: Any, b: Any) -> Any:
    return b if a is None else and_p.bind(a, b)


class _Starts:
    """The index columns of a gather or scatter being rewritten, and which
    of their windows to keep (``None``: all)."""

    def __init__(self, cols: list[Any]) -> None:
        self.cols = cols
        self.keep: Any = None

    def clamp(self, env: RaggedEnv, k: int, gap: Dim) -> None:
        """Clamp column ``k`` into ``[0, gap]`` (``gap`` per element when ragged;
        a negative gap, an element shorter than the window, gives 0)."""
        col = self.cols[k]
        zero = np.zeros((), get_aval(col).dtype)
        self.cols[k] = max_p.bind(min_p.bind(col, _per_element(env, gap, col)), zero)

    def check(self, env: RaggedEnv, k: int, gap: Dim) -> None:
        """Keep only the windows whose start ``k`` lies in ``[0, gap]``."""
        col = self.cols[k]
        zero = np.zeros((), get_aval(col).dtype)
        inside = and_p.bind(ge_p.bind(col, zero), le_p.bind(col, _per_element(env, gap, col)))
        self.keep = _and(self.keep, inside)

    def keep_where(self, mask: Any) -> None:
        if mask is not None:
            self.keep = _and(self.keep, mask)

    def finish(self, prim: Primitive, ops: Sequence[Operand], env: RaggedEnv) -> Any:
        """The rewritten index vectors: windows not kept start at -1."""
        if self.keep is not None:
            if not self.cols:
                raise refuse(
                    prim, ops, env,
                    "would have to drop the windows of index vectors in the padding, but its index vectors have "
                    "no entries to mark them with",
                )  # fmt: skip
            col = self.cols[0]
            out = st.broadcast_in_dim_p.bind(np.asarray(-1, get_aval(col).dtype), shape=get_aval(col).shape,
                                             broadcast_dimensions=())  # fmt: skip
            self.cols[0] = select_n_p.bind(self.keep, out, col)
        return _stack(self.cols)


def _ragged_gap(env: RaggedEnv, size: Dim, window: Dim) -> Dim | None:
    """``size - window`` when it depends on the lengths, else ``None`` (the
    padded primitive's own clamping or bounds check is then the element's)."""
    gap = size - window
    return gap if env.is_ragged(gap) else None


def _index_padding(env: RaggedEnv, idx: Operand, like: Any) -> Any:
    """True at the index vectors of ``idx`` that are not padding (``None``: all)."""
    mask: Any = None
    shape = get_aval(like).shape
    for i in range(idx.aval.ndim - 1):
        if env.is_ragged(idx.aval.shape[i]):
            m = env.mask(idx.aval.shape[i], True)
            mask = _and(mask, st.broadcast_in_dim_p.bind(m, shape=shape, broadcast_dimensions=(0, i + 1)))
    return mask


def _unordered(params: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Params for rewritten indices: clamping or dropping may repeat indices
    and breaks their order, so neither is promised any more."""
    return {**params, "indices_are_sorted": False, "unique_indices": False, **changes}


# ---------------------------------------------------------------------------
# gather (and dynamic_slice, slices at ragged offsets)


def _gather(
    env: RaggedEnv, axis: AxisData, prim: Primitive, x: Operand, idx: Operand, params: dict[str, Any],
    cols: list[Any] | None = None,
) -> tuple[Any, BDim]:  # fmt: skip
    """The gather on the padded data (parent trace current), its starts into
    ragged axes rewritten from the lengths (the index columns ``cols`` when
    given, else those of ``idx``)."""
    dn: GatherDimensionNumbers = params["dimension_numbers"]
    sizes, mode = params["slice_sizes"], params["mode"]
    padded = {k: env.pad_param(v) for k, v in params.items()}
    gaps = [
        (k, g)
        for k, d in enumerate(dn.start_index_map)
        if (g := _ragged_gap(env, x.aval.shape[d], sizes[d])) is not None
    ]
    if not gaps:
        assert idx.val is not None
        # Index vectors in the padding of ragged indices only make padding; set to 0 they stay in bounds.
        vals = [x.val, fill_padding(env, idx, range(idx.aval.ndim), 0)]
        outs, dims = run_batched(axis, st.gather_p, vals, [x.bdim, idx.bdim], padded)
        return outs[0], dims[0]
    starts = _Starts(cols if cols is not None else _columns(_front_indices(axis, idx)))
    for k, gap in gaps:
        if mode is _FILL:
            starts.check(env, k, gap)
        else:  # clip, and promise_in_bounds (which clamps, as XLA does)
            starts.clamp(env, k, gap)
    new_idx = starts.finish(prim, [x, idx], env)
    outs, dims = run_batched(axis, st.gather_p, [x.val, new_idx], [x.bdim, 0], _unordered(padded))
    return outs[0], dims[0]


def _gather_rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    env = env_of(trace)
    ops = operands(trace, prim, args)
    x, idx = ops
    windows = _static_windows(env, 0, x.aval, params["slice_sizes"])
    out_avals = _element_types(env, prim, ops, params, windows, keeps_operand=False)
    with set_current_trace(trace.parent_trace):
        out, d = _gather(env, trace.axis, prim, x, idx, params)
    return wrap_results(trace, prim, [out], [d], out_avals)


ragged_rules[st.gather_p] = _gather_rule


def _start_columns(axis: AxisData, starts: Sequence[Any], dims: Sequence[BDim]) -> tuple[Operand, list[Any]]:
    """Scalar starts (some batched, or values of every element) as the index
    vector ``int32[r]`` of a one-window gather or scatter: its element type
    (with no value: only its columns ``int32[B]`` are used) and its columns."""
    cols = []
    for s, d in zip(starts, dims):
        if get_aval(s).dtype != _I32:
            s = convert_element_type_p.bind(s, new_dtype=_I32, weak_type=False)
        cols.append(to_front(s, d, axis.size))
    return Operand(None, 0, ShapedArray((len(cols),), _I32)), cols


def _window_gather_params(rank: int, sizes: Sequence[Dim]) -> dict[str, Any]:
    """A gather of one window of ``sizes`` at an index vector of ``rank`` starts (dynamic_slice's form)."""
    dn = GatherDimensionNumbers(
        offset_dims=tuple(range(rank)), collapsed_slice_dims=(), start_index_map=tuple(range(rank))
    )
    return {
        "dimension_numbers": dn, "slice_sizes": tuple(sizes), "indices_are_sorted": True, "unique_indices": True,
        "mode": _CLIP, "fill_value": None,
    }  # fmt: skip


def _dynamic_slice_rule(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
) -> Any:
    env = env_of(trace)
    ops = operands(trace, prim, args)
    x, sizes = ops[0], params["slice_sizes"]
    windows = _static_windows(env, 0, x.aval, sizes)
    out_avals = _element_types(env, prim, ops, params, windows, keeps_operand=False)
    ragged_starts = any(_ragged_gap(env, x.aval.shape[a], sizes[a]) is not None for a in range(x.aval.ndim))
    with set_current_trace(trace.parent_trace):
        if not ragged_starts:
            padded = {k: env.pad_param(v) for k, v in params.items()}
            outs, dims = run_batched(trace.axis, prim, [o.val for o in ops], [o.bdim for o in ops], padded)
            return wrap_results(trace, prim, outs, dims, out_avals)
        idx, cols = _start_columns(trace.axis, [o.val for o in ops[1:]], [o.bdim for o in ops[1:]])
        out, d = _gather(env, trace.axis, prim, x, idx, _window_gather_params(x.aval.ndim, sizes), cols)
    return wrap_results(trace, prim, [out], [d], out_avals)


ragged_rules[st.dynamic_slice_p] = _dynamic_slice_rule


def _slice_windows(
    env: RaggedEnv, x: ShapedArray, starts: Sequence[Dim], limits: Sequence[Dim]
) -> list[_Window] | None:
    """The ragged axes a slice takes a window of static size from that core
    cannot prove every element has (``x[1]``, ``x[-2:]``); ``None`` when one
    such window has a ragged size."""
    out = []
    for a in ragged_axes(env, x):
        lo, hi = starts[a], limits[a]
        if provably_le(0, lo) and provably_le(hi, x.shape[a]):
            continue
        if type(hi - lo) is not int:
            return None
        out.append(_Window(0, a, lo, hi))
    return out


def _slice_at_ragged_offsets(base: Callable[..., Any]) -> Callable[..., Any]:
    """The ``slice`` rule: along ragged axes, with unit strides, a slice that
    starts at a ragged offset (``x[-1]``: ``n - 1``) is a window at each
    element's own start, and one that core cannot prove in range
    (``x[1]``, ``x[-2:]``) is checked against concrete lengths; every other
    slice goes to ``base``."""

    def rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        env = env_of(trace)
        ops = operands(trace, prim, args)
        x = ops[0]
        starts, limits, strides = params["start_indices"], params["limit_indices"], params["strides"]
        if len(ops) != 1 or len(starts) != x.aval.ndim or len(limits) != x.aval.ndim:
            return base(trace, prim, args, params)  # core's shape rule says what is wrong
        unit = strides is None or all(s == 1 for s in strides)
        windows = _slice_windows(env, x.aval, starts, limits)
        offsets = [a for a in ragged_axes(env, x.aval) if env.is_ragged(starts[a])]
        if not unit or windows is None or not (windows or offsets):
            return base(trace, prim, args, params)
        relaxed = dict(params)
        for key in ("start_indices", "limit_indices"):
            relaxed[key] = tuple(
                env.padded(d) if a in {w.axis for w in windows} else d for a, d in enumerate(params[key])
            )
        out_avals = _element_types(env, prim, ops, relaxed, windows, keeps_operand=False)
        with set_current_trace(trace.parent_trace):
            if not offsets:  # static starts: the padded slice reads each element's own entries
                padded = {k: env.pad_param(v) for k, v in params.items()}
                outs, dims = run_batched(trace.axis, prim, [x.val], [x.bdim], padded)
                return wrap_results(trace, prim, outs, dims, out_avals)
            sizes = tuple(hi - lo for lo, hi in zip(starts, limits))
            cols = [env.lengths(s) if env.is_ragged(s) else np.asarray(s, _I32) for s in starts]
            idx, cols = _start_columns(trace.axis, cols, [0 if env.is_ragged(s) else None for s in starts])
            out, d = _gather(env, trace.axis, prim, x, idx, _window_gather_params(x.aval.ndim, sizes), cols)
        return wrap_results(trace, prim, [out], [d], out_avals)

    return rule


def _check_slice(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    (x,) = ops
    strides = params["strides"]
    for a in ragged_axes(env, x.aval):
        start = params["start_indices"][a]
        if type(start) is not int:
            raise refuse(
                prim, ops, env,
                f"starts axis {a} at the ragged offset {start}; slices of a ragged axis must start at a fixed offset",
            )  # fmt: skip
        if strides is not None and strides[a] != 1:
            raise refuse(prim, ops, env, f"has stride {strides[a]} along the ragged axis {a}; only stride 1 is supported")


ragged_rules[st.slice_p] = _slice_at_ragged_offsets(padded_rule(_check_slice))


# ---------------------------------------------------------------------------
# scatter family (and dynamic_update_slice)


def _window_sizes(x: ShapedArray, upd: ShapedArray, dn: ScatterDimensionNumbers) -> list[Dim]:
    """The size of a scatter's windows along every operand axis (1 where inserted or batching)."""
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    sizes = iter([upd.shape[u] for u in dn.update_window_dims if 0 <= u < upd.ndim])
    return [1 if a in dropped else next(sizes, 1) for a in range(x.ndim)]  # (core's shape rule checks them)


def _split_window(
    env: RaggedEnv, starts: _Starts, dn: ScatterDimensionNumbers, rank: int, upd: ShapedArray, a: int, size: Dim,
) -> ScatterDimensionNumbers:  # fmt: skip
    """Split the ragged window along operand axis ``a`` into windows of size 1,
    one per entry (an index batch dimension more), keeping only the entries
    within each element's true window."""
    window_axes = [
        d for d in range(rank) if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims
    ]
    u = dn.update_window_dims[window_axes.index(a)]
    scatter_dims = sorted([i for i in range(upd.ndim) if i not in dn.update_window_dims] + [u])
    p = scatter_dims.index(u)  # the new index batch dimension, batch first: p + 1
    col_shape = get_aval(starts.cols[0]).shape
    new_shape = (*col_shape[: p + 1], env.padded(size), *col_shape[p + 1 :])
    keep_dims = tuple(i for i in range(len(new_shape)) if i != p + 1)
    entry = st.iota_p.bind(dtype=get_aval(starts.cols[0]).dtype, shape=new_shape, dimension=p + 1)
    starts.cols = [
        st.broadcast_in_dim_p.bind(c, shape=new_shape, broadcast_dimensions=keep_dims) for c in starts.cols
    ]
    index_map = dn.scatter_dims_to_operand_dims
    if a in index_map:
        k = index_map.index(a)
        starts.cols[k] = add_p.bind(starts.cols[k], entry)
    else:
        starts.cols.append(entry)
        index_map = (*index_map, a)
    if starts.keep is not None:
        starts.keep = st.broadcast_in_dim_p.bind(starts.keep, shape=new_shape, broadcast_dimensions=keep_dims)
    starts.keep_where(lt_p.bind(entry, _per_element(env, size, entry)))
    return ScatterDimensionNumbers(
        update_window_dims=tuple(w for w in dn.update_window_dims if w != u),
        inserted_window_dims=tuple(sorted((*dn.inserted_window_dims, a))),
        scatter_dims_to_operand_dims=index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=tuple(i + 1 if i >= p else i for i in dn.scatter_indices_batching_dims),
    )


def _scatter(
    env: RaggedEnv, axis: AxisData, prim: Primitive, x: Operand, idx: Operand, upd: Operand, params: dict[str, Any],
    cols: list[Any] | None = None,
) -> tuple[Any, BDim]:  # fmt: skip
    """The scatter on the padded data (parent trace current): starts into
    ragged axes rewritten from the lengths (the index columns ``cols`` when
    given, else those of ``idx``), padding never written."""
    dn: ScatterDimensionNumbers = params["dimension_numbers"]
    mode = params["mode"]
    ops = [x, idx, upd]
    padded = {k: env.pad_param(v) for k, v in params.items()}
    sizes = _window_sizes(x.aval, upd.aval, dn)
    shape = x.aval.shape
    gaps = [
        (k, g)
        for k, a in enumerate(dn.scatter_dims_to_operand_dims)
        if (g := _ragged_gap(env, shape[a], sizes[a])) is not None
    ]
    # Ragged windows shorter than their axis would write their padding onto true entries.
    split = [
        a for a in range(x.aval.ndim) if env.is_ragged(sizes[a]) and not definitely_equal(sizes[a], shape[a])
    ]
    index_padding = any(env.is_ragged(d) for d in idx.aval.shape[:-1])
    drops = bool(split) or index_padding or (mode is not _CLIP and bool(gaps))
    if not gaps and not drops:
        assert idx.val is not None
        outs, dims = run_batched(axis, prim, [o.val for o in ops], [o.bdim for o in ops], padded)
        return outs[0], dims[0]
    starts = _Starts(cols if cols is not None else _columns(_front_indices(axis, idx)))
    if mode is _CLIP:
        # Clamped here when some windows must be dropped (the scatter then runs in drop mode).
        for k, a in enumerate(dn.scatter_dims_to_operand_dims):
            gap = shape[a] - sizes[a]
            if env.is_ragged(gap) or (drops and type(gap) is int):
                starts.clamp(env, k, gap)
    else:
        # A split window is dropped whole when it does not fit, not entry by entry.
        checked = dict(gaps)
        for k, a in enumerate(dn.scatter_dims_to_operand_dims):
            if a in split and type(gap := shape[a] - sizes[a]) is int:
                checked[k] = gap
        for k, gap in checked.items():
            starts.check(env, k, gap)
    if starts.cols:
        starts.keep_where(_index_padding(env, idx, starts.cols[0]))
    for a in split:
        dn = _split_window(env, starts, dn, x.aval.ndim, upd.aval, a, sizes[a])
    new_idx = starts.finish(prim, ops, env)
    new_params = _unordered(padded, dimension_numbers=dn, mode=_FILL if drops else mode)
    outs, dims = run_batched(axis, prim, [x.val, new_idx, upd.val], [x.bdim, 0, upd.bdim], new_params)
    return outs[0], dims[0]


def _scatter_rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    env = env_of(trace)
    ops = operands(trace, prim, args)
    x, idx, upd = ops
    if not isinstance(params.get("dimension_numbers"), ScatterDimensionNumbers):
        element_abstract_eval(env, prim, ops, params, check_one_size(env, prim, ops, params))  # core's error
    sizes = _window_sizes(x.aval, upd.aval, params["dimension_numbers"])
    windows = _static_windows(env, 0, x.aval, sizes)
    out_avals = _element_types(env, prim, ops, params, windows, keeps_operand=True)
    with set_current_trace(trace.parent_trace):
        out, d = _scatter(env, trace.axis, prim, x, idx, upd, params)
    return wrap_results(trace, prim, [out], [d], out_avals)


for _p in (st.scatter_p, st.scatter_add_p, st.scatter_mul_p, st.scatter_min_p, st.scatter_max_p):
    ragged_rules[_p] = _scatter_rule


def _dynamic_update_slice_rule(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
) -> Any:
    env = env_of(trace)
    ops = operands(trace, prim, args)
    x, upd = ops[0], ops[1]
    sizes = upd.aval.shape
    windows = _static_windows(env, 0, x.aval, sizes)
    out_avals = _element_types(env, prim, ops, params, windows, keeps_operand=True)
    # On the padded data the update lands where it should when it spans each ragged axis whole.
    whole = all(definitely_equal(sizes[a], x.aval.shape[a]) for a in ragged_axes(env, x.aval))
    with set_current_trace(trace.parent_trace):
        if whole:
            outs, dims = run_batched(trace.axis, prim, [o.val for o in ops], [o.bdim for o in ops], params)
            return wrap_results(trace, prim, outs, dims, out_avals)
        rank = x.aval.ndim
        idx, cols = _start_columns(trace.axis, [o.val for o in ops[2:]], [o.bdim for o in ops[2:]])
        dn = ScatterDimensionNumbers(
            update_window_dims=tuple(range(rank)),
            inserted_window_dims=(),
            scatter_dims_to_operand_dims=tuple(range(rank)),
        )
        as_scatter = {
            "dimension_numbers": dn,
            "indices_are_sorted": True,
            "unique_indices": True,
            "mode": _CLIP,
        }
        out, d = _scatter(env, trace.axis, st.scatter_p, x, idx, upd, as_scatter, cols)
    return wrap_results(trace, prim, [out], [d], out_avals)


ragged_rules[st.dynamic_update_slice_p] = _dynamic_update_slice_rule
