"""``lax.reduce_window`` and ``lax.reduce_window_shape_tuple``, with JAX's
names and signatures.

A sum, maximum or minimum from its identity (``lax.add`` from 0,
``lax.max`` from ``-inf`` or the dtype's lowest value, ``lax.min`` from
``+inf`` or the highest) binds the dedicated primitive, which every
transformation knows (gradients of max/min windows go to the first selected
element of each window, like JAX's).  Any other computation, several
operands (pytrees), or another init value binds the generic
``reduce_window`` with the computation traced to a jaxpr on scalars.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core.abstract import ShapedArray, get_aval, to_numpy
from plait_core.dims import Dim, is_constant_dim
from plait_core.lax import elementwise as _ew
from plait_core.lax.linalg import padtype_to_pads
from plait_core.lax.reductions import operand_aval
from plait_core.primitives import reduce_window as _p
from plait_core.primitives._elementwise_helpers import convert as _convert
from plait_core.primitives.linalg import dilated_size
from plait_core.staging import trace_to_jaxpr
from plait_core.trace import Tracer
from plait_core.tree_util import tree_flatten, tree_unflatten

Array = Any

__all__ = ["reduce_window", "reduce_window_shape_tuple"]


def _ints(arg: str, value: Any, rank: int, default: int) -> tuple[int, ...]:
    if value is None:
        return (default,) * rank
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"lax.reduce_window: {arg} must be a sequence of ints, got {value!r}") from None
    if len(items) != rank:
        raise TypeError(
            f"lax.reduce_window: {arg} must have one entry per operand axis ({rank}), got {value!r}"
        )
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"lax.reduce_window: {arg} must hold ints, got {value!r}")
    return tuple(int(v) for v in items)


def _padding(padding: Any, shape: Sequence[Dim], window: Sequence[int], strides: Sequence[int]) -> tuple[tuple[int, int], ...]:
    if isinstance(padding, str):
        pads = []
        for axis, (d, w, s) in enumerate(zip(shape, window, strides)):
            if w == 1 and s == 1:
                pads.append((0, 0))  # a batch axis of the windows: any size
                continue
            if not is_constant_dim(d):
                raise NotImplementedError(
                    f"not supported: lax.reduce_window with padding {padding!r} along axis {axis} of symbolic size {d} "
                    "(windows may only span axes of static size)"
                )
            ((lo, hi),) = padtype_to_pads([d], [w], [s], padding)
            pads.append((int(lo), int(hi)))
        return tuple(pads)
    try:
        pairs = tuple((lo, hi) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"lax.reduce_window: padding must be a string or (low, high) pairs, got {padding!r}") from None
    if len(pairs) != len(shape):
        raise TypeError(f"lax.reduce_window: padding must have one pair per operand axis ({len(shape)}), got {padding!r}")
    return tuple((int(lo), int(hi)) for lo, hi in pairs)


def _concrete(x: Any) -> np.ndarray | None:
    if isinstance(x, Tracer):
        return None
    return np.asarray(to_numpy(x))


def _monoid(computation: Any, init: Any, dtype: np.dtype[Any]) -> Any:
    """The dedicated primitive for ``computation`` from ``init``, if any."""
    value = _concrete(init)
    if value is None or value.shape != ():
        return None
    for fn, kind, prim in (
        (_ew.add, "sum", _p.reduce_window_sum_p),
        (_ew.max, "max", _p.reduce_window_max_p),
        (_ew.min, "min", _p.reduce_window_min_p),
    ):
        if computation is fn and value == _p.identity(kind, dtype):
            return prim
    return None


def _init_like(init: Any, aval: ShapedArray) -> Any:
    ia = operand_aval("reduce_window", init, "init_value")
    if ia.ndim != 0:
        raise TypeError(f"lax.reduce_window: init values must be scalars, got one of shape {ia.shape}")
    if ia.dtype == aval.dtype:
        return init
    if not ia.weak_type:
        raise TypeError(
            f"lax.reduce_window: the init value's dtype {ia.dtype.name} differs from its operand's dtype {aval.dtype.name}"
        )
    # A weakly typed init value converts as lax.convert_element_type does (as JAX): a float
    # into an integer dtype saturates, so -inf is the integer minimum (equinox's MaxPool).  A
    # concrete one converts now (the same exact conversion), so that it stays a constant under a
    # trace and the sum/max/min forms are still recognised (0.0 into a float16 operand's sum).
    value = _concrete(init)
    if value is not None:
        return _convert(value, new_dtype=aval.dtype, weak_type=False)
    return _ew.convert_element_type(init, aval.dtype)


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce every window of ``operand`` with ``computation`` from
    ``init_value`` (XLA's ReduceWindow).

    ``operand`` and ``init_value`` are arrays / scalars or pytrees of them
    with one structure; ``computation(accumulators, elements)`` returns the
    new accumulators in that structure.  ``window_dimensions`` has one size
    per operand axis; ``window_strides`` (default 1), ``base_dilation``
    (holes between operand elements) and ``window_dilation`` (gaps between
    window taps) too.  ``padding`` is ``'VALID'``, ``'SAME'``,
    ``'SAME_LOWER'`` or one ``(low, high)`` pair per axis; padding and holes
    hold the init value.  An axis of symbolic size (under ``mask``) may only
    have a window of 1 with stride 1 and no padding or dilation.
    """
    flat_ops, tree = tree_flatten(operand)
    flat_inits, init_tree = tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"lax.reduce_window: operand has the structure {tree} but init_value has {init_tree}")
    if not flat_ops:
        raise ValueError("lax.reduce_window: needs at least one operand")
    avals = [operand_aval("reduce_window", x) for x in flat_ops]
    shape = avals[0].shape
    rank = len(shape)
    dims = _ints("window_dimensions", window_dimensions, rank, 1)
    strides = _ints("window_strides", window_strides, rank, 1)
    base = _ints("base_dilation", base_dilation, rank, 1)
    wdil = _ints("window_dilation", window_dilation, rank, 1)
    spans = [int(dilated_size(w, d)) for w, d in zip(dims, wdil)]
    pads = _padding(padding, shape, spans, strides)
    params = dict(window_dimensions=dims, window_strides=strides, padding=pads, base_dilation=base, window_dilation=wdil)
    inits = [_init_like(i, a) for i, a in zip(flat_inits, avals)]
    if len(flat_ops) == 1:
        prim = _monoid(computation, inits[0], avals[0].dtype)
        if prim is not None:
            return tree_unflatten(tree, [prim.bind(flat_ops[0], **params)])
    scalars = [ShapedArray((), a.dtype) for a in avals]
    n = len(flat_ops)

    def body(*args: Any) -> list[Any]:
        out = computation(tree_unflatten(tree, list(args[:n])), tree_unflatten(tree, list(args[n:])))
        flat_out, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"lax.reduce_window: the computation returned the structure {out_tree}, expected {tree}")
        return [_ew.convert_element_type(o, a.dtype) if get_aval(o).dtype != a.dtype else o
                for o, a in zip(flat_out, scalars)]  # fmt: skip

    jaxpr = trace_to_jaxpr(body, scalars * 2)
    outs = _p.reduce_window_p.bind(*flat_ops, *inits, jaxpr=jaxpr, **params)
    return tree_unflatten(tree, list(outs))


def reduce_window_shape_tuple(
    operand_shape: Sequence[Dim],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[Dim, ...]:
    """The shape :func:`reduce_window` gives an operand of ``operand_shape``
    (``padding`` as explicit pairs)."""
    rank = len(operand_shape)
    params = dict(
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides),
        padding=tuple((lo, hi) for lo, hi in padding),
        base_dilation=(1,) * rank if base_dilation is None else tuple(base_dilation),
        window_dilation=(1,) * rank if window_dilation is None else tuple(window_dilation),
    )
    return _p.window_shape("reduce_window_shape_tuple", operand_shape, params)
