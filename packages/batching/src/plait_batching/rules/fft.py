"""Batching rule of ``fft``: it transforms trailing axes and treats leading
ones as a batch, so the vmapped axis is moved to the front."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim, moveaxis
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core.primitives.fft import fft_p


def _fft_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any
) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    assert d is not None
    return fft_p.bind(moveaxis(x, d, 0), **params), 0


batching_rules[fft_p] = _fft_rule
