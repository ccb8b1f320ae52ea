"""``jax.nn.initializers.orthogonal`` and ``delta_orthogonal``: (semi-)orthogonal
weight matrices from the QR factorisation of a standard normal draw, with the
signs fixed by ``R``'s diagonal so that the distribution is uniform (Haar)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes, random
from plait_core import numpy as pnp
from plait_core.numpy.updates import scatter_update

Array = Any
Initializer = Callable[..., Array]


def _float(dtype: Any, name: str) -> Any:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_float_dtype())
    if not dtypes.is_float(dt):
        raise TypeError(f"nn.initializers.{name}: dtype must be a floating type, got {dt}")
    return dt


def _orthogonal_matrix(key: Array, rows: int, cols: int, dt: Any) -> Array:
    """A ``rows x cols`` matrix with orthonormal rows or columns (whichever are fewer)."""
    tall = (max(rows, cols), min(rows, cols))
    a = random.normal(key, tall, dt)
    q, r = pnp.linalg.qr(a)
    q = q * pnp.sign(pnp.diagonal(r))[None, :]
    return q.T if rows < cols else q


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer drawing a (semi-)orthogonal matrix times ``scale``: the array is
    viewed as a matrix whose columns run along ``column_axis`` and whose rows are all
    the other axes; the shape needs at least 2 dimensions."""

    def init(key: Array, shape: Any, dtype: Any = dtype) -> Array:
        dt = _float(dtype, "orthogonal")
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError(f"nn.initializers.orthogonal: the shape needs at least 2 dimensions, got {shape}")
        axis = column_axis % len(shape)
        cols = shape[axis]
        rows = int(np.prod(shape)) // cols
        q = _orthogonal_matrix(key, rows, cols, dt)
        rest = tuple(d for i, d in enumerate(shape) if i != axis)
        q = pnp.reshape(q, (*rest, cols))
        return pnp.moveaxis(q, -1, axis) * np.asarray(scale, dt)

    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer for convolution kernels of 3 to 5 dimensions (spatial axes, then
    in, out channels): an orthogonal ``in x out`` matrix (``in <= out``) times ``scale``
    at the centre of the spatial window, zeros elsewhere."""

    def init(key: Array, shape: Any, dtype: Any = dtype) -> Array:
        dt = _float(dtype, "delta_orthogonal")
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"nn.initializers.delta_orthogonal: the shape needs 3 to 5 dimensions, got {shape}")
        if shape[-2] > shape[-1]:
            raise ValueError("nn.initializers.delta_orthogonal: `fan_in` must be less or equal than `fan_out`, "
                             f"got shape {shape}")
        ortho = orthogonal(scale, column_axis, dt)(key, shape[-2:])
        centre = tuple(d // 2 for d in shape[:-2])
        out = pnp.zeros(shape, dt)
        return scatter_update(out, centre, ortho, "set")

    return init


__all__ = ["delta_orthogonal", "orthogonal"]
