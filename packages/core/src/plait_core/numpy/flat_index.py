"""Flat C-order indices and coordinates: ``unravel_index`` and ``ravel_multi_index``,
index arithmetic built on the elementwise functions (and ``clip``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core.numpy._util import Array, ArrayLike, as_array
from plait_core.numpy.logic import clip
from plait_core.numpy.math import add, floor_divide, multiply, remainder
from plait_core.trace import concrete_or_error

__all__ = ["ravel_multi_index", "unravel_index"]


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Array, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices`` (C order)."""
    idx = as_array(indices, "unravel_index")
    out = []
    rest = idx
    for d in reversed(list(shape)):
        out.append(remainder(rest, d))
        rest = floor_divide(rest, d)
    return tuple(reversed(out))


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise") -> Array:
    """Flat C-order indices of the coordinate arrays ``multi_index`` in ``dims``
    (``mode``: ``"clip"`` or ``"wrap"``; ``"raise"`` checks concrete values)."""
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dimensions")
    flat: Any = 0
    for k, (coords, d) in enumerate(zip(multi_index, dims)):
        c = as_array(coords, "ravel_multi_index", k)
        if mode == "clip":
            c = clip(c, 0, d - 1)
        elif mode == "wrap":
            c = remainder(c, d)
        elif mode == "raise":
            value = np.asarray(concrete_or_error(c, "ravel_multi_index with mode='raise'"))
            if value.size and (value.min() < 0 or value.max() >= d):
                raise ValueError(f"ravel_multi_index: invalid entry in coordinates array {k}")
        flat = add(multiply(flat, d), c)
    return flat
