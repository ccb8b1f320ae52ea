"""Batching rules of the linalg family: ``dot_general`` and ``conv_general_dilated``.

``dot_general``: with both operands batched the batch becomes one more
(leading) batch dimension of the product; with one batched operand it is
one more free dimension of that operand, which the product keeps in place.

``conv_general_dilated`` folds the batch into a dimension the convolution
already maps over:

* batched lhs only: into the lhs batch dimension (inside each batch group);
* batched rhs only: into the rhs output features (inside each group);
* both batched: into the feature groups (``feature_group_count`` times the
  batch), lhs features and rhs output features alike.

The one case this cannot express (both batched with ``batch_group_count >
1``) runs the convolution once per element and stacks the results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim, merge_dims, moveaxis, shift_all, split_dim
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core import get_aval
from plait_core.dims import Dim, dim_as_int
from plait_core.primitives.linalg import ConvDimensionNumbers, conv_general_dilated_p, dot_general_p
from plait_core.primitives.structural import concatenate_p, expand_dims_p, squeeze_p
from plait_core.primitives.structural import slice_p as slice_prim

# ---------------------------------------------------------------------------
# dot_general


def _free_position(ndim: int, used: Sequence[int], d: int) -> int:
    """The rank of dimension ``d`` among the free dimensions (those not in ``used``)."""
    return sum(1 for k in range(d) if k not in used)


def _dot_general_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimension_numbers: Any, **params: Any
) -> tuple[Any, BDim]:
    (lhs, rhs), (dl, dr) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if dl is not None and dr is not None:
        lhs, rhs = moveaxis(lhs, dl, 0), moveaxis(rhs, dr, 0)
        dn = ((tuple(a + 1 for a in lc), tuple(a + 1 for a in rc)),
              ((0,) + tuple(a + 1 for a in lb), (0,) + tuple(a + 1 for a in rb)))  # fmt: skip
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), 0
    if dl is not None:
        lc2, lb2 = shift_all(lc, dl), shift_all(lb, dl)
        out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc2, rc), (lb2, rb)), **params)
        return out, len(lb) + _free_position(get_aval(lhs).ndim, lc2 + lb2, dl)
    assert dr is not None
    rc2, rb2 = shift_all(rc, dr), shift_all(rb, dr)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc2), (lb, rb2)), **params)
    lhs_free = get_aval(lhs).ndim - len(lc) - len(lb)
    return out, len(lb) + lhs_free + _free_position(get_aval(rhs).ndim, rc2 + rb2, dr)


batching_rules[dot_general_p] = _dot_general_rule


# ---------------------------------------------------------------------------
# conv_general_dilated


def _fold(x: Any, bdim: int, target: int, groups: int) -> Any:
    """Fold the batch (at ``bdim``) into dimension ``target`` of one element,
    whose entries form ``groups`` contiguous groups: the merged dimension is
    ordered (group, batch, rest of the group), so each group stays contiguous."""
    x = moveaxis(x, bdim, target)  # (..., batch, target, ...)
    if groups > 1:
        size = get_aval(x).shape[target + 1]
        x = split_dim(x, target + 1, (groups, size // groups))
        x = moveaxis(x, target + 1, target)  # (..., groups, batch, rest, ...)
        return merge_dims(x, target, 3)
    return merge_dims(x, target, 2)


def _unfold(x: Any, target: int, groups: int, batch: Dim) -> tuple[Any, int]:
    """Undo :func:`_fold` on a result dimension ``target`` ordered (group,
    batch, rest): the batch comes out in front of it.  Returns the value and
    its batch dimension."""
    size = get_aval(x).shape[target]
    if groups > 1:
        x = split_dim(x, target, (groups, batch, size // (groups * batch)))
        x = moveaxis(x, target + 1, target)  # (batch, groups, rest)
        return merge_dims(x, target + 1, 2), target
    return split_dim(x, target, (batch, size // batch)), target


def _conv_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int, batch_group_count: int, **params: Any,
) -> tuple[Any, BDim]:  # fmt: skip
    (lhs, rhs), (dl, dr) = args, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    size = axis.size

    def conv(lhs: Any, rhs: Any, fgc: int = feature_group_count) -> Any:
        return conv_general_dilated_p.bind(
            lhs, rhs, dimension_numbers=dimension_numbers, feature_group_count=fgc,
            batch_group_count=batch_group_count, **params,
        )  # fmt: skip

    if dr is None:  # into the lhs batch dimension, inside each batch group
        assert dl is not None
        out = conv(_fold(lhs, dl, lhs_spec[0], batch_group_count), rhs)
        return _unfold(out, out_spec[0], 1, size)
    if dl is None:  # into the rhs output features, inside each (feature or batch) group
        groups = feature_group_count * batch_group_count
        out = conv(lhs, _fold(rhs, dr, rhs_spec[0], groups))
        return _unfold(out, out_spec[1], groups, size)
    if batch_group_count > 1:
        return _conv_per_element(lhs, dl, rhs, dr, size, conv), 0
    # Into the feature groups: element b's features form groups b * G .. b * G + G - 1.
    lhs2 = _fold(lhs, dl, lhs_spec[1], 1)
    rhs2 = _fold(rhs, dr, rhs_spec[0], 1)
    n = dim_as_int(size, "batching a convolution over both operands")
    return _unfold(conv(lhs2, rhs2, feature_group_count * n), out_spec[1], 1, size)


def _conv_per_element(lhs: Any, dl: int, rhs: Any, dr: int, size: Dim, conv: Any) -> Any:
    n = dim_as_int(size, "batching a convolution with batch_group_count > 1 over both operands")
    outs = []
    for b in range(n):
        x = _take(lhs, dl, b)
        w = _take(rhs, dr, b)
        outs.append(expand_dims_p.bind(conv(x, w), dimensions=(0,)))
    return outs[0] if n == 1 else concatenate_p.bind(*outs, dimension=0)


def _take(x: Any, d: int, b: int) -> Any:
    shape = get_aval(x).shape
    starts = tuple(b if k == d else 0 for k in range(len(shape)))
    limits = tuple(b + 1 if k == d else s for k, s in enumerate(shape))
    return squeeze_p.bind(slice_prim.bind(x, start_indices=starts, limit_indices=limits, strides=None), dimensions=(d,))


batching_rules[conv_general_dilated_p] = _conv_rule
