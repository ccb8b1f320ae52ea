"""``conv_general_dilated`` (``dot_general``'s rule is core's padded rule,
:mod:`plait_core.padded.linalg`).

A convolution zero-fills the lhs's symbolic
spatial and feature dimensions, since the padding a convolution adds is
zeros, and the rhs's input features; its batch dimension passes through.
Three cases are refused with the reason: a kernel of symbolic spatial size
(the padded output could be shorter than the logical one), and feature or
batch groups over a dimension of symbolic size (the groups' layout differs
between the padded and the logical operand).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.padded.linalg import zero_of
from plait_core.primitives.linalg import ConvDimensionNumbers, conv_general_dilated_p
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules


def _refuse(why: str, la: ShapedArray, ra: ShapedArray) -> NotImplementedError:
    return NotImplementedError(
        f"mask: conv_general_dilated of lhs {la.str_short()} and rhs {ra.str_short()} is not supported: {why}"
    )


def _conv_rule(
    env: MaskEnv,
    vals: Sequence[Any],
    avals: Sequence[ShapedArray],
    *,
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    **params: Any,
) -> Any:
    (lhs, rhs), (la, ra) = vals, avals
    lhs_spec, rhs_spec = dimension_numbers.lhs_spec, dimension_numbers.rhs_spec
    for d in rhs_spec[2:]:
        if is_ragged(ra.shape[d]):
            raise _refuse(f"the kernel's spatial dimension {d} has the symbolic size {ra.shape[d]}", la, ra)
    out_features = ra.shape[rhs_spec[0]]
    if feature_group_count > 1 and (is_ragged(la.shape[lhs_spec[1]]) or is_ragged(out_features)):
        raise _refuse(
            f"feature_group_count={feature_group_count} splits features of symbolic size into groups", la, ra
        )
    if batch_group_count > 1 and (is_ragged(la.shape[lhs_spec[0]]) or is_ragged(out_features)):
        raise _refuse(f"batch_group_count={batch_group_count} splits a batch of symbolic size into groups", la, ra)
    lhs = env.fill(lhs, la, lhs_spec[1:], zero_of(la))
    rhs = env.fill(rhs, ra, (rhs_spec[1],), zero_of(ra))
    return conv_general_dilated_p.bind(
        lhs, rhs, dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, **params,
    )


masking_rules[conv_general_dilated_p] = _conv_rule
