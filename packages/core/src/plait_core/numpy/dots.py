"""Products: ``dot``, ``matmul``, ``tensordot``, ``inner``, ``outer``, ``vdot``
and ``vecdot`` (``einsum`` is :mod:`plait_core.numpy.einsum`). They sit below
:mod:`plait_core.numpy.linalg`, the ``plait.numpy.linalg`` namespace, so that the
factorisations and ``einsum``, which are built on them, need not import that namespace.

Each lowers to one ``lax.dot_general`` after promoting the operands to a
common dtype.  ``precision`` and ``preferred_element_type`` are passed to it.
Booleans multiply as "and" and add as "or" (computed in integers).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import Dim, definitely_equal
from plait_core.eager_staging import staged_when_eager
from plait_core.explicit_sharding import with_out_sharding
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    broadcast_shapes,
    broadcast_to_shape,
    canonicalize_axis,
    convert,
    dtype_of,
    promote_dtypes,
    shape_str,
)
from plait_core.numpy.math import conjugate, multiply
from plait_core.numpy.shape import ravel

Contraction = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


def dot_general_promoted(name: str, a: Array, b: Array, dims: Contraction, precision: Any,
                         preferred_element_type: Any) -> Array:
    """``lax.dot_general`` on promoted operands, booleans computed in integers,
    with a ``TypeError`` (as JAX) naming ``name`` when contracted sizes differ."""
    (ac, bc), (ab, bb) = dims
    ashape, bshape = tuple(get_aval(a).shape), tuple(get_aval(b).shape)
    for i, j in list(zip(ac, bc)) + list(zip(ab, bb)):
        if not definitely_equal(ashape[i], bshape[j]):
            raise TypeError(f"{name}: shapes {shape_str(ashape)} and {shape_str(bshape)} are not aligned: "
                             f"{ashape[i]} (dim {i}) != {bshape[j]} (dim {j})")
    dnums = ((tuple(ac), tuple(bc)), (tuple(ab), tuple(bb)))
    want = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    if dtypes.is_bool(dtype_of(a)):
        # Booleans: sums of products counted in integers; non-zero is true.
        a, b = convert(a, dtypes.int32), convert(b, dtypes.int32)
        if want is None or dtypes.is_bool(want):
            out = lax.dot_general(a, b, dnums, precision=precision)
            return _lenient.ne(out, convert(0, dtype_of(out)))
    return lax.dot_general(a, b, dnums, precision=precision, preferred_element_type=want)


def _promoted(name: str, a: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
    x, y = promote_dtypes(name, a, b)
    return as_array(x, name, 0), as_array(y, name, 1)


@staged_when_eager
def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Array:
    """The dot product: a product for scalars, the inner product of vectors, the
    matrix product of matrices, and in general a sum over the last axis of ``a``
    and the second-to-last of ``b`` (the last, if ``b`` is 1-D).  ``out_sharding``:
    the result's layout and type under explicit sharding (see ``lax.dot_general``)."""
    if out_sharding is not None:
        return with_out_sharding(lambda: dot(a, b, precision=precision, preferred_element_type=preferred_element_type),
                                 out_sharding)
    x, y = _promoted("dot", a, b)
    xn, yn = get_aval(x).ndim, get_aval(y).ndim
    if xn == 0 or yn == 0:
        return multiply(x, y)
    yc = 0 if yn == 1 else yn - 2
    return dot_general_promoted("dot", x, y, (((xn - 1,), (yc,)), ((), ())), precision, preferred_element_type)


@staged_when_eager
def matmul(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None,
           out_sharding: Any = None) -> Array:
    """The matrix product with batch broadcasting (``a @ b``): 1-D operands are
    treated as a row (``a``) or a column (``b``) vector and that axis is removed.
    ``out_sharding``: the result's layout and type under explicit sharding (see
    ``lax.dot_general``)."""
    if out_sharding is not None:
        return with_out_sharding(
            lambda: matmul(a, b, precision=precision, preferred_element_type=preferred_element_type), out_sharding
        )
    x, y = _promoted("matmul", a, b)
    xs, ys = tuple(get_aval(x).shape), tuple(get_aval(y).shape)
    if not xs or not ys:
        raise ValueError(f"matmul: input operands must have at least 1 dimension, got shapes "
                         f"{shape_str(xs)} and {shape_str(ys)}")
    x_vec, y_vec = len(xs) == 1, len(ys) == 1
    if x_vec:
        x = lax.expand_dims(x, (0,))
        xs = (1, *xs)
    if y_vec:
        y = lax.expand_dims(y, (1,))
        ys = (*ys, 1)
    if len(ys) == 2:
        # (..., m, k) @ (k, n): no batch dimensions needed.
        out = dot_general_promoted("matmul", x, y, (((len(xs) - 1,), (0,)), ((), ())), precision,
                                   preferred_element_type)
    else:
        batch = broadcast_shapes("matmul", xs[:-2], ys[:-2])
        x = broadcast_to_shape(x, (*batch, *xs[-2:]), "matmul")
        y = broadcast_to_shape(y, (*batch, *ys[-2:]), "matmul")
        nb = len(batch)
        bdims = tuple(range(nb))
        out = dot_general_promoted("matmul", x, y, (((nb + 1,), (nb,)), (bdims, bdims)), precision,
                                   preferred_element_type)
    nd = get_aval(out).ndim
    squeeze = ([nd - 2] if x_vec else []) + ([nd - 1] if y_vec else [])
    return lax.squeeze(out, tuple(squeeze)) if squeeze else out


@staged_when_eager
def tensordot(a: ArrayLike, b: ArrayLike, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """Sum products over the ``axes`` of ``a`` and ``b``: an int ``N`` pairs the last
    ``N`` axes of ``a`` with the first ``N`` of ``b``; a pair of sequences names them."""
    x, y = _promoted("tensordot", a, b)
    xn, yn = get_aval(x).ndim, get_aval(y).ndim
    if isinstance(axes, (builtins.int,)) and not isinstance(axes, builtins.bool):
        if axes < 0 or axes > builtins.min(xn, yn):
            raise ValueError(f"tensordot: axes={axes} is invalid for operands of rank {xn} and {yn}")
        xa: tuple[int, ...] = tuple(range(xn - axes, xn))
        ya: tuple[int, ...] = tuple(range(axes))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of axis sequences, got {axes!r}") from None
        seq_a = ax_a if isinstance(ax_a, (tuple, list)) else (ax_a,)
        seq_b = ax_b if isinstance(ax_b, (tuple, list)) else (ax_b,)
        if len(seq_a) != len(seq_b):
            raise ValueError(f"tensordot: the axes {axes!r} name different numbers of axes")
        xa = tuple(canonicalize_axis(i, xn, "tensordot", "axes") for i in seq_a)
        ya = tuple(canonicalize_axis(i, yn, "tensordot", "axes") for i in seq_b)
    return dot_general_promoted("tensordot", x, y, ((xa, ya), ((), ())), precision, preferred_element_type)


@staged_when_eager
def inner(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """The sum of products over the last axes of ``a`` and ``b``."""
    x, y = _promoted("inner", a, b)
    xn, yn = get_aval(x).ndim, get_aval(y).ndim
    if xn == 0 or yn == 0:
        return multiply(x, y)
    return dot_general_promoted("inner", x, y, (((xn - 1,), (yn - 1,)), ((), ())), precision,
                                preferred_element_type)


@staged_when_eager
def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Array:
    """The outer product of the flattened ``a`` and ``b``: ``result[i, j] = a[i] * b[j]``."""
    if out is not None:
        raise TypeError("outer: the out argument is not supported (plait arrays are immutable)")
    x, y = _promoted("outer", a, b)
    x, y = ravel(x), ravel(y)
    n: Dim = get_aval(x).shape[0]
    m: Dim = get_aval(y).shape[0]
    return multiply(lax.broadcast_in_dim(x, (n, m), (0,)), lax.broadcast_in_dim(y, (n, m), (1,)))


@staged_when_eager
def vdot(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """The dot product of the flattened arrays, conjugating ``a``."""
    x, y = _promoted("vdot", a, b)
    x, y = ravel(conjugate(x)), ravel(y)
    return dot_general_promoted("vdot", x, y, (((0,), (0,)), ((), ())), precision, preferred_element_type)


@staged_when_eager
def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Array:
    """The dot product of vectors along ``axis``, broadcasting the other axes
    (conjugating ``x1``)."""
    x, y = _promoted("vecdot", x1, x2)
    xs, ys = tuple(get_aval(x).shape), tuple(get_aval(y).shape)
    ax_x = canonicalize_axis(axis, len(xs), "vecdot")
    ax_y = canonicalize_axis(axis, len(ys), "vecdot")
    xm = lax.transpose(x, tuple(i for i in range(len(xs)) if i != ax_x) + (ax_x,))
    ym = lax.transpose(y, tuple(i for i in range(len(ys)) if i != ax_y) + (ax_y,))
    xs, ys = tuple(get_aval(xm).shape), tuple(get_aval(ym).shape)
    batch = broadcast_shapes("vecdot", xs[:-1], ys[:-1])
    xm = broadcast_to_shape(xm, (*batch, xs[-1]), "vecdot")
    ym = broadcast_to_shape(ym, (*batch, ys[-1]), "vecdot")
    nb = len(batch)
    bdims = tuple(range(nb))
    return dot_general_promoted("vecdot", conjugate(xm), ym, (((nb,), (nb,)), (bdims, bdims)), precision,
                                preferred_element_type)
