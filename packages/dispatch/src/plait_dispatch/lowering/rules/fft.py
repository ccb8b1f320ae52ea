"""Lowering of ``fft``: one ``stablehlo.fft`` over the trailing axes."""

from __future__ import annotations

from typing import Any

from plait_core.primitives.fft import FftType, fft_p
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value, i64_array


@lowering_rules.register(fft_p)
def _fft(ctx: RuleContext, x: Value, *, fft_type: Any, fft_lengths: tuple[int, ...]) -> list[Value]:
    attrs = {
        "fft_type": f"#stablehlo<fft_type {FftType(int(fft_type)).name}>",
        "fft_length": i64_array(fft_lengths),
    }
    return [ctx.op1("stablehlo.fft", [x], ctx.avals_out[0], attrs)]
