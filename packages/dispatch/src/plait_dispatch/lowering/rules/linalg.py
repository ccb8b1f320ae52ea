"""Lowering of ``dot_general`` and ``conv_general_dilated``.

Both compute in the accumulation type core's NumPy implementation uses, then
convert to the result type: 16-bit floats (and integer or boolean operands
with a floating ``preferred_element_type``) are multiplied and summed in
float32 (float64 when an operand or the result is), integers in the integer
result type (wrapping around), booleans as a count of pairwise ands in int32
that is then compared with 0 ("any").  ``precision`` becomes the operation's
``precision_config`` (DEFAULT, HIGH or HIGHEST per operand); on CPU it does
not change the results.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.primitives.linalg import ConvDimensionNumbers, conv_general_dilated_p, dot_general_p
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value, concrete_shape, i64_array, int_list

DType = np.dtype[Any]

_PRECISION = {
    None: "DEFAULT",
    "default": "DEFAULT",
    "fastest": "DEFAULT",
    "bfloat16": "DEFAULT",
    "high": "HIGH",
    "tensorfloat32": "HIGH",
    "highest": "HIGHEST",
    "float32": "HIGHEST",
}


def _precision_config(precision: Any) -> str:
    pair = precision if isinstance(precision, tuple) else (precision, precision)
    names = [_PRECISION.get(p if p is None else str(getattr(p, "name", p)).lower(), "DEFAULT") for p in pair]
    return "[" + ", ".join(f"#stablehlo<precision {n}>" for n in names) + "]"


def _accumulation_dtype(operand: DType, result: DType) -> DType:
    """The dtype the product is computed in (core's choice; int32 counts for booleans)."""
    if result == ops.BOOL:
        return ops.I32
    if dtypes.is_int(result):
        return result
    if dtypes.is_complex(result):
        wide = np.dtype(np.complex128) in (operand, result)
        return np.dtype(np.complex128 if wide else np.complex64)
    f64 = np.dtype(np.float64)
    return f64 if f64 in (operand, result) else ops.F32


def _product(ctx: RuleContext, lhs: Value, rhs: Value, op: str, attrs: dict[str, str]) -> Value:
    """Run the product ``op`` in the accumulation dtype and convert to the result's."""
    out = ctx.avals_out[0]
    acc = _accumulation_dtype(lhs.dtype, out.dtype)
    a, b = ops.convert(ctx, lhs, acc), ops.convert(ctx, rhs, acc)
    r = ctx.op1(op, [a, b], ops.aval(concrete_shape(out), acc), attrs)
    if out.dtype == ops.BOOL:
        return ops.compare(ctx, r, ops.full(ctx, 0, acc, r.shape), "NE")
    return ops.convert(ctx, r, out.dtype)


@lowering_rules.register(dot_general_p)
def _dot_general(
    ctx: RuleContext, lhs: Value, rhs: Value, *, dimension_numbers: Any, precision: Any, preferred_element_type: Any
) -> list[Value]:
    (lc, rc), (lb, rb) = dimension_numbers
    dnums = (
        f"#stablehlo.dot<lhs_batching_dimensions = {int_list(lb)}, rhs_batching_dimensions = {int_list(rb)}, "
        f"lhs_contracting_dimensions = {int_list(lc)}, rhs_contracting_dimensions = {int_list(rc)}>"
    )
    attrs = {"dot_dimension_numbers": dnums, "precision_config": _precision_config(precision)}
    return [_product(ctx, lhs, rhs, "stablehlo.dot_general", attrs)]


def _conv_dnums(dn: ConvDimensionNumbers) -> str:
    lhs, rhs, out = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    return (
        f"#stablehlo.conv<raw input_batch_dimension = {lhs[0]}, input_feature_dimension = {lhs[1]}, "
        f"input_spatial_dimensions = {int_list(lhs[2:])}, kernel_input_feature_dimension = {rhs[1]}, "
        f"kernel_output_feature_dimension = {rhs[0]}, kernel_spatial_dimensions = {int_list(rhs[2:])}, "
        f"output_batch_dimension = {out[0]}, output_feature_dimension = {out[1]}, "
        f"output_spatial_dimensions = {int_list(out[2:])}>"
    )


@lowering_rules.register(conv_general_dilated_p)
def _conv_general_dilated(
    ctx: RuleContext,
    lhs: Value,
    rhs: Value,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: Any,
) -> list[Value]:
    nsp = len(window_strides)
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    attrs = {
        "dimension_numbers": _conv_dnums(dimension_numbers),
        "window_strides": i64_array(window_strides),
        "padding": f"dense<[{pads}]> : tensor<{nsp}x2xi64>" if nsp else "dense<> : tensor<0x2xi64>",
        "lhs_dilation": i64_array(lhs_dilation),
        "rhs_dilation": i64_array(rhs_dilation),
        "feature_group_count": f"{feature_group_count} : i64",
        "batch_group_count": f"{batch_group_count} : i64",
        "precision_config": _precision_config(precision),
    }
    return [_product(ctx, lhs, rhs, "stablehlo.convolution", attrs)]
