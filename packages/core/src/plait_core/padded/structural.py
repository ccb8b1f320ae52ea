"""Padded rules of the elementwise, AD-helper and structural families.

*Passthrough* primitives never move data between positions along a padded
axis, or keep the logical part in front of every padded axis (broadcasting,
transposes, adding or dropping unit axes, ``iota``): they run on the padded
data as they are, with every padded size in their params replaced by its
padded size.  What lands in the padding stays in the padding.  Each padded
axis is treated on its own (``per_axis``), so operands with padded axes of
different logical sizes meet (an ``n x m`` value).

``rev`` of a padded axis reverses the padded data, whose logical part then
ends the axis, and takes the window of the padded size that starts at
``padded - n``.  ``pad`` fills the operand's padding along each axis with
high padding with the padding value first: then the logical result is the
front of the padded one (interior and negative padding need nothing more).
Both treat each padded axis by its own size (``per_axis``), so they take an
``n x m`` value along either axis.

``concatenate`` writes the operands after the first one padded along the
axis at their logical offset (``dynamic_update_slice``), in order, so each
one's padding is overwritten by the next; along an axis no operand but the
last is padded along, it joins the padded data as it is.  ``slice`` with a
constant start along a padded axis slices the padded data, whose logical
part stays in front; a start with a padded size (``x[-1]``: ``n - 1``) takes
a window at the logical start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, ops
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, SymbolicDim
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitive import Primitive, all_primitives
from plait_core.primitives import ad_helpers as adh
from plait_core.primitives import structural as st
from plait_core.primitives.shapes import dim_as_value_p

__all__ = ["PASSTHROUGH", "padded_params"]


def padded_params(env: PaddedEnv, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every padded size (a dim, or one inside a tuple) replaced by its padded size."""

    def pad(value: Any) -> Any:
        if type(value) is SymbolicDim:
            if value.is_constant:
                return int(value)
            return env.padded_dim(value) if env.is_padded(value) else value
        if isinstance(value, tuple) and any(type(v) is SymbolicDim or isinstance(v, tuple) for v in value):
            return tuple(pad(v) for v in value)
        return value

    return {k: pad(v) for k, v in params.items()}


def _passthrough(prim: Primitive) -> Any:
    def rule(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        return prim.bind(*vals, **padded_params(env, params))

    rule.__name__ = f"{prim.name}_padded_rule"
    return rule


#: The primitives that run on the padded data as they are.
PASSTHROUGH: tuple[Primitive, ...] = (
    *[p for p in all_primitives() if p.family == "elementwise"],
    adh.stop_gradient_p, adh.add_any_p, adh.zeros_like_p,
    st.broadcast_in_dim_p, st.squeeze_p, st.expand_dims_p, st.transpose_p, st.iota_p, st.copy_p,
)  # fmt: skip

for _p in PASSTHROUGH:
    padded_rules.define(_passthrough(_p), _p, per_axis=True, passthrough=True)


def _rev(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimensions: Any) -> Any:
    (x,), (aval,) = vals, avals
    out = st.rev_p.bind(x, dimensions=dimensions)
    dt = dtypes.default_int_dtype()
    for axis in dimensions:
        d = aval.shape[axis]
        if env.is_padded(d):
            padded = env.padded_dim(d)
            # Reversed, the logical part ends the axis: it starts at padded - n.
            out = ops.window(out, axis, ops.sub(np.asarray(padded, dt), env.size(d, dt)), padded)
    return out


def _pad(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, padding_config: Any) -> Any:
    x, value = vals
    # Only high padding reads past the operand's logical end.
    x = env.fill(x, avals[0], [a for a, (_, hi, _) in enumerate(padding_config) if hi > 0], value)
    return st.pad_p.bind(x, value, padding_config=padding_config)


padded_rules.define(_rev, st.rev_p, per_axis=True)
padded_rules.define(_pad, st.pad_p, per_axis=True)


def _concatenate(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension: int) -> Any:
    out = st.concatenate_p.bind(*vals, dimension=dimension)
    sizes = [a.shape[dimension] for a in avals]
    first = next((k for k, s in enumerate(sizes) if env.is_padded(s)), len(sizes))
    if first >= len(sizes) - 1:
        return out  # every offset is the same padded or logical
    dt = dtypes.default_int_dtype()
    offset: Dim = sum(sizes[: first + 1], 0)
    zero = np.zeros((), dt)
    for k in range(first + 1, len(vals)):
        starts = [env.size(offset, dt) if a == dimension else zero for a in range(avals[k].ndim)]
        out = st.dynamic_update_slice_p.bind(out, vals[k], *starts)
        offset = offset + sizes[k]
    return out


def _slice(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, start_indices: Any, limit_indices: Any,
    strides: Any,
) -> Any:  # fmt: skip
    (x,), (aval,) = vals, avals
    steps = (1,) * aval.ndim if strides is None else tuple(strides)
    moving = [a for a, s in enumerate(start_indices) if env.is_padded(s)]
    padded = env.padded_shape(aval.shape)
    starts = tuple(0 if a in moving else int(s) for a, s in enumerate(start_indices))
    limits = tuple(padded[a] if a in moving else env.padded_dim(lim) for a, lim in enumerate(limit_indices))
    inner = tuple(1 if a in moving else s for a, s in enumerate(steps))
    if starts != (0,) * aval.ndim or limits != padded or any(s != 1 for s in inner):
        x = st.slice_p.bind(
            x, start_indices=starts, limit_indices=limits, strides=None if all(s == 1 for s in inner) else inner
        )
    dt = dtypes.default_int_dtype()
    for a in moving:
        size: Dim = limit_indices[a] - start_indices[a]
        count = -(-env.padded_dim(size) // steps[a]) if env.is_padded(size) else -(-int(size) // steps[a])
        span = (count - 1) * steps[a] + 1 if count else 0
        x = ops.window(x, a, env.size(start_indices[a], dt), span)
        x = ops.slice_axis(x, a, 0, span, steps[a])
    return x


def _dim_as_value(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dim: Dim) -> Any:
    # A dimension used as a value: its polynomial at the logical sizes, negative where it is
    # (``lax.dimension_as_value``), unlike an axis size (``env.size``), which is never negative.
    return env.value(dim, dtypes.default_int_dtype())


padded_rules.define(_dim_as_value, dim_as_value_p)
padded_rules.define(_concatenate, st.concatenate_p, per_axis=True)
padded_rules.define(_slice, st.slice_p, per_axis=True)
