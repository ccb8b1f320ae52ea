"""Rules of the named-axis collectives.

``psum``, ``pmean``, ``all_gather``, ``ppermute``, ``psum_scatter`` and
``all_to_all`` are linear: the transpose of a sum over the axis is a sum over the axis, and the transpose of gathering is summing
the gathered cotangents and keeping this position's slot.  ``pmax``/``pmin``
share the tangent among the positions attaining the extreme (as
``reduce_max`` does); ``axis_index`` is integer-valued.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import declare_nonlinear, defjvp_zero, deflinear
from plait_core import dtypes, ops
from plait_core.primitives import collectives as co
from plait_core.primitives import structural as st

defjvp_zero(co.axis_index_p)


def _reduction_transpose(mean: bool) -> Any:
    """``psum``/``pmean``'s transpose.  Over the axes the operand varies over (a
    ``shard_map`` body with ``check_vma``), the sum made it invariant and the
    transpose hands each device the cotangent itself (``pvary``: a copy), divided
    by the count for the mean; over the axes it does not vary over (or where no
    varying axes are tracked: ``vmap``, ``pmap``), the transpose is the same sum
    again, as the sum of equal copies is ``n`` times each."""

    def rule(ct: Any, x: Any, *, axes: Any) -> list[Any]:
        varying = tuple(a for a in co.axis_names(axes) if a in x.aval.vma)
        rest = tuple(a for a in co.axis_names(axes) if a not in x.aval.vma)
        out = ct
        if rest:
            out = (co.pmean_p if mean else co.psum_p).bind(out, axes=rest)
        if varying:
            if mean:
                n = co.axis_size(varying, "pmean")
                out = ops.div(out, ops.full((), n, ops.aval(out).dtype))
            out = co.pvary_p.bind(out, axes=varying)
        return [out]

    return rule


deflinear(co.psum_p, _reduction_transpose(False))
deflinear(co.pmean_p, _reduction_transpose(True))
# pvary is the identity on values; its transpose sums the varying cotangent
# over the devices, where the invariant operand was one value for all of them.
deflinear(co.pvary_p, lambda ct, x, *, axes: [co.psum_p.bind(ct, axes=axes)])


def _extremum_jvp(prim: Any) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], *, axes: Any) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        a = ops.aval(x)
        at_extreme = ops.eq(x, ans)
        one, zero = ops.full(a.shape, 1, a.dtype), ops.full(a.shape, 0, a.dtype)
        count = co.psum_p.bind(ops.select(at_extreme, one, zero), axes=axes)
        share = co.psum_p.bind(ops.select(at_extreme, t, zero), axes=axes)
        return ans, ops.div(share, count)

    return rule


jvp_rules[co.pmax_p] = _extremum_jvp(co.pmax_p)
jvp_rules[co.pmin_p] = _extremum_jvp(co.pmin_p)


def _all_gather_transpose(ct: Any, x: Any, *, axis_name: Any, axis: int, tiled: bool) -> list[Any]:
    names = co.axis_names(axis_name)
    summed = co.psum_p.bind(ct, axes=names)
    me = co.axis_index_p.bind(axis_name=axis_name)
    shape = x.aval.shape
    zero = np.zeros((), dtypes.int32)
    if tiled:
        starts = [zero] * len(shape)
        starts[axis] = ops.mul(me, ops.dim_value(shape[axis], dtypes.int32))
        return [st.dynamic_slice_p.bind(summed, *starts, slice_sizes=tuple(shape))]
    starts = [zero] * (len(shape) + 1)
    starts[axis] = me
    sizes = (*shape[:axis], 1, *shape[axis:])
    piece = st.dynamic_slice_p.bind(summed, *starts, slice_sizes=tuple(sizes))
    return [st.squeeze_p.bind(piece, dimensions=(axis,))]


deflinear(co.all_gather_p, _all_gather_transpose)

declare_nonlinear(co.pmax_p, co.pmin_p, co.axis_index_p)


# ppermute, psum_scatter and all_to_all are linear: the transpose sends the
# cotangents back (the inverse permutation; gathering the scattered blocks;
# the all-to-all with split and concat exchanged).
deflinear(
    co.ppermute_p,
    lambda ct, x, *, axis_name, perm: [co.ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((b, a) for a, b in perm))],
)
deflinear(
    co.psum_scatter_p,
    lambda ct, x, *, axis_name, scatter_dimension, tiled: [
        co.all_gather_p.bind(ct, axis_name=axis_name, axis=scatter_dimension, tiled=tiled)
    ],
)
deflinear(
    co.all_to_all_p,
    lambda ct, x, *, axis_name, split_axis, concat_axis, tiled: [
        co.all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis, concat_axis=split_axis, tiled=tiled)
    ],
)
