"""Lowering of ``bijective_gather``: a ``stablehlo.gather`` (as ``gather`` in
``CLIP`` mode), and with ``masked`` a select zeroing the invalid positions.
The inverse gather only matters to its transpose, which is bound as the same
primitive."""

from __future__ import annotations

from typing import Any

from plait_core.primitives.bijective_gather import batch_dims_of, bijective_gather_p, gather_params
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value
from plait_dispatch.lowering.rules.structural import _gather


@lowering_rules.register(bijective_gather_p)
def _bijective_gather(
    ctx: RuleContext, operand: Value, indices: Value, valid: Value, inverse: Value, inverse_valid: Value, **params: Any
) -> list[Value]:  # fmt: skip
    (out,) = _gather(ctx, operand, indices, **gather_params(params))
    if not params["masked"]:
        return [out]
    shape = tuple(out.shape)
    keep = ops.broadcast_in_dim(ctx, valid, shape, batch_dims_of(params, len(shape)))
    return [ops.select(ctx, keep, out, ops.full(ctx, 0, out.dtype, shape))]
