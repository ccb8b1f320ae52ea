"""Vector and tensor products beyond ``linalg``: ``cross`` and ``kron``.

Both are elementwise products of broadcast (or interleaved) operands, so
they keep every transformation's rules those already have.
"""

from __future__ import annotations

from typing import Any

from plait_core import lax
from plait_core.abstract import get_aval
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    canonicalize_axis,
    convert,
    dtype_of,
    promote_dtypes,
    shape_str,
)
from plait_core.numpy.math import multiply, subtract
from plait_core.numpy.shape import broadcast_arrays, moveaxis, stack


def _components(x: Array) -> list[Array]:
    last = get_aval(x).ndim - 1
    return [lax.index_in_dim(x, i, last, False) for i in range(get_aval(x).shape[last])]


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Array:
    """The cross product of 2- or 3-vectors along ``axisa`` of ``a`` and
    ``axisb`` of ``b`` (``axis`` sets all three axes), the other axes
    broadcast.  Two 2-vectors give the scalar z-component; otherwise the
    3-vector result lies along ``axisc``.  A 2-vector counts as having z = 0."""
    name = "cross"
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = promote_dtypes(name, as_array(a, name, "a"), as_array(b, name, "b"))
    vecs = []
    for v, ax, argname in ((x, axisa, "axisa"), (y, axisb, "axisb")):
        if get_aval(v).ndim == 0:
            raise ValueError(f"{name}: the operands must be at least 1-D, got a scalar")
        v = moveaxis(v, canonicalize_axis(ax, get_aval(v).ndim, name, argname), -1)
        length = get_aval(v).shape[-1]
        if length not in (2, 3):
            raise ValueError(f"{name}: the vectors along {argname} must have 2 or 3 components, got shape "
                             f"{shape_str(get_aval(v).shape)} with {length}")
        vecs.append(v)
    ca, cb = _components(vecs[0]), _components(vecs[1])
    z = subtract(multiply(ca[0], cb[1]), multiply(ca[1], cb[0]))
    if len(ca) == 2 and len(cb) == 2:
        return z  # weak for weak operands, as in JAX (a 3-vector result is strong)
    a2: Any = ca[2] if len(ca) == 3 else 0
    b2: Any = cb[2] if len(cb) == 3 else 0
    cx = subtract(multiply(ca[1], b2), multiply(a2, cb[1]))
    cy = subtract(multiply(a2, cb[0]), multiply(ca[0], b2))
    c = stack(broadcast_arrays(cx, cy, z), axis=-1)
    c = convert(c, dtype_of(c))  # never weak, as in JAX
    return moveaxis(c, -1, canonicalize_axis(axisc, get_aval(c).ndim, name, "axisc"))


def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """The Kronecker product: blocks ``a[i, j, ...] * b`` laid out in ``a``'s
    pattern; the operand of lower rank gets leading axes of length 1."""
    name = "kron"
    x, y = promote_dtypes(name, as_array(a, name, "a"), as_array(b, name, "b"))
    nd = max(get_aval(x).ndim, get_aval(y).ndim)
    xs = (1,) * (nd - get_aval(x).ndim) + tuple(get_aval(x).shape)
    ys = (1,) * (nd - get_aval(y).ndim) + tuple(get_aval(y).shape)
    # Interleave: x as (x0, 1, x1, 1, ...), y as (1, y0, 1, y1, ...).
    xi = lax.reshape(x, tuple(d for s in xs for d in (s, 1)))
    yi = lax.reshape(y, tuple(d for s in ys for d in (1, s)))
    return lax.reshape(multiply(xi, yi), tuple(p * q for p, q in zip(xs, ys)))
