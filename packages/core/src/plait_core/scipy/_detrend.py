"""``scipy.signal.detrend``: an array less its mean or its piecewise least-squares
line. Apart from :mod:`plait_core.scipy.signal` because the spectral estimates of
:mod:`plait_core.scipy._spectral`, which that module re-exports, detrend too."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence

import numpy as np

from plait_core import lax
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    canonicalize_axis,
    dtype_of,
    promote_dtypes_inexact,
    shape_of,
)
from plait_core.numpy.math import divide, multiply, subtract
from plait_core.numpy.reductions import mean
from plait_core.numpy.shape import moveaxis

__all__ = ["detrend"]


def detrend(data: ArrayLike, axis: int = -1, type: str = "linear", bp: int | Sequence[int] = 0,
            overwrite_data: None = None) -> Array:  # fmt: skip
    """``data`` less its trend along ``axis``: its mean (``type='constant'``) or
    its least-squares line, fitted piece by piece between the breakpoints
    ``bp`` (``type='linear'``)."""
    if overwrite_data is not None:
        raise NotImplementedError(
            "scipy.signal.detrend: overwrite_data is not supported (arrays are immutable)"
        )
    if type not in ("linear", "constant"):
        raise ValueError(f"scipy.signal.detrend: type must be 'linear' or 'constant', got {type!r}")
    (x,) = promote_dtypes_inexact("scipy.signal.detrend", data)
    nd = len(shape_of(x))
    ax = canonicalize_axis(axis, nd, "scipy.signal.detrend")
    if type == "constant":
        return subtract(x, mean(x, axis=ax, keepdims=True))
    n = int(shape_of(x)[ax])
    points = sorted({0, n, *(operator.index(b) for b in np.atleast_1d(np.asarray(bp)))})
    if points[0] < 0 or points[-1] > n:
        raise ValueError(
            f"scipy.signal.detrend: breakpoints must lie in [0, {n}] along axis {ax}, got {bp!r}"
        )
    x = moveaxis(x, ax, -1)
    pieces = []
    for lo, hi in itertools.pairwise(points):
        seg = lax.slice_in_dim(x, lo, hi, axis=nd - 1)
        t = np.arange(1, hi - lo + 1) / (hi - lo)
        tc = (t - t.mean()).astype(dtype_of(x))
        centred = subtract(seg, mean(seg, axis=-1, keepdims=True))
        if hi - lo == 1:  # one point: the line through it leaves nothing
            pieces.append(centred)
            continue
        slope = divide(mean(multiply(centred, tc), axis=-1, keepdims=True), float(np.mean(tc**2)))
        pieces.append(subtract(centred, multiply(slope, tc)))
    return moveaxis(lax.concatenate(pieces, nd - 1), -1, ax)
