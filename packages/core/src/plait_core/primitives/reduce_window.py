"""Primitives of the windows family: reductions over sliding windows and the
helpers their derivatives need.

Every window primitive reads its operand through the same five params, one
entry per operand axis: ``window_dimensions`` (the window's size),
``window_strides``, ``padding`` (``(low, high)`` pairs, added after
``base_dilation`` inserts ``d - 1`` holes between neighbouring elements) and
``window_dilation`` (the gap between window taps).  Padding and holes hold
the reduction's identity, so they never win.

* ``reduce_window_sum`` / ``reduce_window_max`` / ``reduce_window_min``: one
  operand reduced with ``+``, ``max`` or ``min`` from the identity.
* ``reduce_window``: the generic form: ``n`` operands and ``n`` scalar init
  values (the first ``n`` and last ``n`` arguments), reduced with
  ``jaxpr``, a closed jaxpr mapping ``2n`` scalars (accumulators, then
  elements) to ``n``; padding and holes are skipped, so each window combines
  the init values once with the operand elements it covers.
* ``select_and_gather_add(tangent, operand)``: for each window, the entry of
  ``tangent`` at the position ``select`` picks in ``operand`` (``'ge'``: the
  first maximum, ``'le'``: the first minimum) — the JVP of max/min windows.
* ``select_and_scatter_add(source, operand)``: its transpose: each entry of
  ``source`` (one per window) added at the position the window selects in
  ``operand``; the result has the operand's shape.  It has no dilations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim
from plait_core.jaxpr import ClosedJaxpr, eval_jaxpr
from plait_core.primitive import Primitive
from plait_core.primitives.linalg import dilated_size
from plait_core.primitives.reductions import check_int_param, shape_text

__all__ = [
    "WINDOW_PARAMS",
    "identity",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_sum_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
    "window_shape",
]

#: The params every window primitive has, in order.
WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")


def identity(kind: str, dtype: Any) -> Any:
    """The identity of ``kind`` (``'sum'``, ``'max'``, ``'min'``) for ``dtype``."""
    dt = np.dtype(dtype)
    if kind == "sum":
        return np.zeros((), dt)
    if kind == "min":
        return np.asarray(dtypes.highest(dt), dt)
    small = dtypes.lowest(dt)
    return np.asarray(small, dt)


# ---------------------------------------------------------------------------
# Shapes


def _tuple(name: str, param: str, value: Any, rank: int, minimum: int) -> tuple[int, ...]:
    if not isinstance(value, tuple) or len(value) != rank:
        raise TypeError(f"{name}: {param} must be a tuple of {rank} ints (one per operand axis), got {value!r}")
    for v in value:
        if check_int_param(name, param, v) < minimum:
            raise ValueError(f"{name}: every entry of {param} must be at least {minimum}, got {value}")
    return value


def _pairs(name: str, padding: Any, rank: int) -> tuple[tuple[int, int], ...]:
    if not isinstance(padding, tuple) or len(padding) != rank:
        raise TypeError(f"{name}: padding must be a tuple of {rank} (low, high) pairs, got {padding!r}")
    for pair in padding:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"{name}: every padding entry must be a (low, high) pair, got {pair!r}")
        for p in pair:
            check_int_param(name, "padding", p)
    return padding


def _out_size(name: str, size: Dim, w: int, s: int, pad: tuple[int, int], b: int, d: int) -> Dim:
    if w == 1 and s == 1 and pad == (0, 0) and b == 1:
        return size
    padded = dilated_size(size, b) + pad[0] + pad[1]
    span = dilated_size(w, d)
    if type(padded) is int:
        if padded < 0:
            raise ValueError(f"{name}: the padding {pad} removes more than the axis of size {size} holds")
        return (padded - span) // s + 1 if padded >= span else 0
    return (padded - span) // s + 1


def window_shape(name: str, shape: Sequence[Dim], params: dict[str, Any]) -> tuple[Dim, ...]:
    """The shape of the windows' results over an operand of ``shape``,
    checking the window params."""
    rank = len(shape)
    dims = _tuple(name, "window_dimensions", params["window_dimensions"], rank, 1)
    strides = _tuple(name, "window_strides", params["window_strides"], rank, 1)
    pads = _pairs(name, params["padding"], rank)
    base = _tuple(name, "base_dilation", params["base_dilation"], rank, 1)
    wdil = _tuple(name, "window_dilation", params["window_dilation"], rank, 1)
    return tuple(_out_size(name, *args) for args in zip(shape, dims, strides, pads, base, wdil))


# ---------------------------------------------------------------------------
# NumPy: every window as a view


def _dilate_and_pad(x: np.ndarray, fill: Any, base: Sequence[int], pads: Sequence[tuple[int, int]]) -> np.ndarray:
    """``x`` with holes between neighbours and padding, both holding ``fill``
    (negative padding crops)."""
    for axis, (b, (lo, hi)) in enumerate(zip(base, pads)):
        n = x.shape[axis]
        size = int(dilated_size(n, b))
        shape = list(x.shape)
        shape[axis] = size + max(lo, 0) + max(hi, 0)
        out = np.full(shape, fill, x.dtype)
        index: list[Any] = [slice(None)] * x.ndim
        index[axis] = slice(max(lo, 0), max(lo, 0) + size, b)
        out[tuple(index)] = x
        index[axis] = slice(max(-lo, 0), shape[axis] - max(-hi, 0))
        x = out[tuple(index)]
    return x


def _windows(x: np.ndarray, fill: Any, params: dict[str, Any]) -> np.ndarray:
    """A view of shape ``out_shape + window_dimensions`` holding every window."""
    out_shape = window_shape("reduce_window", x.shape, params)
    dims, strides = params["window_dimensions"], params["window_strides"]
    wdil = params["window_dilation"]
    padded = _dilate_and_pad(x, fill, params["base_dilation"], params["padding"])
    spans = [int(dilated_size(w, d)) for w, d in zip(dims, wdil)]
    if any(o == 0 for o in out_shape):
        return np.full((*out_shape, *dims), fill, x.dtype)
    view = sliding_window_view(padded, spans)
    index = tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in wdil)
    return view[index]


def _monoid_impl(kind: str) -> Callable[..., np.ndarray]:
    reduce: Any = {"sum": np.sum, "max": np.max, "min": np.min}[kind]

    def impl(x: np.ndarray, **params: Any) -> np.ndarray:
        views = _windows(x, identity(kind, x.dtype), params)
        axes = tuple(range(x.ndim, 2 * x.ndim))
        wide = np.float32 if x.dtype in (np.float16, dtypes.bfloat16) and kind == "sum" else None
        return np.asarray(reduce(views, axis=axes, dtype=wide) if wide else reduce(views, axis=axes), x.dtype)

    return impl


def _monoid_rule(name: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, **params: Any) -> ShapedArray:
        return x.update(shape=window_shape(name, x.shape, params))

    return rule


reduce_window_sum_p = Primitive("reduce_window_sum", family="windows")
reduce_window_max_p = Primitive("reduce_window_max", family="windows")
reduce_window_min_p = Primitive("reduce_window_min", family="windows")
for _p, _kind in ((reduce_window_sum_p, "sum"), (reduce_window_max_p, "max"), (reduce_window_min_p, "min")):
    _p.def_abstract_eval(_monoid_rule(_p.name))
    _p.def_impl(_monoid_impl(_kind))


# ---------------------------------------------------------------------------
# The generic reduce_window


def _generic_rule(*avals: ShapedArray, jaxpr: ClosedJaxpr, **params: Any) -> list[ShapedArray]:
    name = "reduce_window"
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    shape = operands[0].shape
    for a in operands[1:]:
        if a.shape != shape:
            raise ValueError(f"{name}: every operand must have one shape, got {shape_text(shape)} and {shape_text(a.shape)}")
    for a, i in zip(operands, inits):
        if i.ndim != 0 or i.dtype != a.dtype:
            raise TypeError(
                f"{name}: each init value must be a scalar of its operand's dtype {a.dtype.name}, got {i.str_short()}"
            )
    if len(jaxpr.in_avals) != 2 * n or len(jaxpr.out_avals) != n:
        raise TypeError(f"{name}: the computation must map {2 * n} scalars to {n}, got {len(jaxpr.in_avals)} -> {len(jaxpr.out_avals)}")
    for a, o in zip(operands, jaxpr.out_avals):
        if o.shape != () or o.dtype != a.dtype:
            raise TypeError(
                f"{name}: the computation must return scalars of the operands' dtypes, got {o.str_short()} for {a.dtype.name}"
            )
    out = window_shape(name, shape, params)
    return [ShapedArray(out, a.dtype) for a in operands]


def _generic_impl(*args: np.ndarray, jaxpr: ClosedJaxpr, **params: Any) -> list[np.ndarray]:
    n = len(args) // 2
    operands, inits = [np.asarray(x) for x in args[:n]], args[n:]
    views = [_windows(x, np.asarray(i).item(), params) for x, i in zip(operands, inits)]
    # Padding and holes are skipped (XLA's semantics), not combined.
    valid = _windows(np.ones(operands[0].shape, bool), False, params)
    rank = operands[0].ndim
    out_shape = views[0].shape[:rank]
    acc = [np.full(out_shape, i, x.dtype) for x, i in zip(operands, inits)]
    for tap in np.ndindex(*views[0].shape[rank:]):
        where = valid[(Ellipsis, *tap)]
        elems = [v[(Ellipsis, *tap)] for v in views]
        for k in zip(*np.nonzero(where)):
            # The computation works on scalars: apply it window by window.
            outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *(a[k] for a in acc), *(e[k] for e in elems))
            for a, o in zip(acc, outs):
                a[k] = np.asarray(o)
    return acc


reduce_window_p = Primitive("reduce_window", family="windows", multiple_results=True)
reduce_window_p.def_abstract_eval(_generic_rule)
reduce_window_p.def_impl(_generic_impl)


# ---------------------------------------------------------------------------
# select_and_gather_add / select_and_scatter_add


def _check_select(name: str, select: Any) -> None:
    if select not in ("ge", "le"):
        raise ValueError(f"{name}: select must be 'ge' (maximum) or 'le' (minimum), got {select!r}")


def _gather_rule(tangent: ShapedArray, operand: ShapedArray, *, select: str, **params: Any) -> ShapedArray:
    name = "select_and_gather_add"
    _check_select(name, select)
    if tangent.shape != operand.shape:
        raise ValueError(f"{name}: tangent {shape_text(tangent.shape)} and operand {shape_text(operand.shape)} differ in shape")
    return tangent.update(shape=window_shape(name, operand.shape, params), weak_type=False)


def _selected(operand: np.ndarray, select: str, params: dict[str, Any]) -> np.ndarray:
    """Per window, the flat index (within the window) that ``select`` picks."""
    kind = "max" if select == "ge" else "min"
    views = _windows(operand, identity(kind, operand.dtype), params)
    rank = operand.ndim
    flat = views.reshape((*views.shape[:rank], -1))
    picked: np.ndarray = np.argmax(flat, axis=-1) if kind == "max" else np.argmin(flat, axis=-1)
    return picked


def _gather_impl(tangent: np.ndarray, operand: np.ndarray, *, select: str, **params: Any) -> np.ndarray:
    pick = _selected(operand, select, params)
    views = _windows(tangent, 0, params)
    flat = views.reshape((*views.shape[: tangent.ndim], -1))
    return np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]


select_and_gather_add_p = Primitive("select_and_gather_add", family="windows")
select_and_gather_add_p.def_abstract_eval(_gather_rule)
select_and_gather_add_p.def_impl(_gather_impl)

def _scatter_params(params: dict[str, Any], rank: int) -> dict[str, Any]:
    return {**params, "base_dilation": (1,) * rank, "window_dilation": (1,) * rank}


def _scatter_rule(source: ShapedArray, operand: ShapedArray, *, select: str, **params: Any) -> ShapedArray:
    name = "select_and_scatter_add"
    _check_select(name, select)
    expected = window_shape(name, operand.shape, _scatter_params(params, operand.ndim))
    if source.shape != expected:
        raise ValueError(
            f"{name}: source {shape_text(source.shape)} must have the windows' shape {shape_text(expected)}"
        )
    return source.update(shape=operand.shape, weak_type=False)


def _scatter_impl(source: np.ndarray, operand: np.ndarray, *, select: str, **params: Any) -> np.ndarray:
    full = _scatter_params(params, operand.ndim)
    pick = _selected(operand, select, full)
    # Every window's operand positions (-1 in the padding), picked as above.
    positions = np.arange(operand.size).reshape(operand.shape)
    where = _windows(positions, -1, full)
    flat = where.reshape((*where.shape[: operand.ndim], -1))
    targets = np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0].ravel()
    values = np.asarray(source).ravel()
    inside = targets >= 0
    out = np.zeros(operand.size, source.dtype)
    np.add.at(out, targets[inside], values[inside])
    result: np.ndarray = out.reshape(operand.shape)
    return result


select_and_scatter_add_p = Primitive("select_and_scatter_add", family="windows")
select_and_scatter_add_p.def_abstract_eval(_scatter_rule)
select_and_scatter_add_p.def_impl(_scatter_impl)
