"""The special matrices of ``scipy.linalg`` (``toeplitz``, ``hankel``,
``circulant``, ``companion``, ``hilbert``, ``pascal``, ...), with JAX's
dtypes: matrices built from an argument keep its dtype, those built from a
size are in the default float dtype (``hadamard`` takes a dtype, ``dft`` is
complex).  ``toeplitz``, ``circulant`` and ``companion`` batch over leading
axes of their argument.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.numpy import creation
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    broadcast_shapes,
    broadcast_to_shape,
    dtype_of,
    promote_dtypes,
    promote_dtypes_inexact,
    shape_of,
)
from plait_core.numpy.math import abs as _abs
from plait_core.numpy.math import conjugate, negative, subtract, true_divide
from plait_core.numpy.selection import take
from plait_core.numpy.shape import concatenate, expand_dims
from plait_core.numpy.updates import scatter_update

__all__ = [
    "block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler", "fiedler_companion",
    "hadamard", "hankel", "helmert", "hilbert", "invhilbert", "invpascal", "leslie", "pascal", "toeplitz",
]  # fmt: skip


def _vector(name: str, x: ArrayLike, *, batched: bool = False) -> Array:
    v = as_array(x, f"scipy.linalg.{name}")
    nd = len(shape_of(v))
    if nd == 0 or (nd > 1 and not batched):
        raise ValueError(f"scipy.linalg.{name}: expected a 1-D array, got shape {tuple(shape_of(v))}")
    return v


def _gather_last(v: Array, index: np.ndarray) -> Array:
    """``v[..., index]`` for a static integer array ``index`` (any shape)."""
    return take(v, index, axis=-1)


def toeplitz(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Toeplitz matrix with first column ``c`` and first row ``r``
    (``conj(c)`` by default; ``r[0]`` is ignored): ``T[i, j] = c[i - j]`` on and
    below the diagonal, ``r[j - i]`` above.  Leading axes batch."""
    c_ = _vector("toeplitz", c, batched=True)
    r_ = conjugate(c_) if r is None else _vector("toeplitz", r, batched=True)
    c_, r_ = promote_dtypes("scipy.linalg.toeplitz", c_, r_)
    m, n = int(shape_of(c_)[-1]), int(shape_of(r_)[-1])
    batch = broadcast_shapes("scipy.linalg.toeplitz", shape_of(c_)[:-1], shape_of(r_)[:-1])
    c_, r_ = broadcast_to_shape(c_, (*batch, m)), broadcast_to_shape(r_, (*batch, n))
    last = len(batch)
    # One vector holding r reversed (without r[0]) then c: entry (i, j) is at n - 1 + i - j.
    both = concatenate([lax.rev(lax.slice_in_dim(r_, 1, n, axis=last), (last,)), c_], axis=-1)
    i, j = np.indices((m, n))
    return _gather_last(both, n - 1 + i - j)


def hankel(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Hankel matrix with first column ``c`` and last row ``r`` (zeros by
    default; ``r[0]`` is ignored): ``H[i, j] = c[i + j]`` while ``i + j < m``."""
    c_ = _vector("hankel", c)
    r_ = creation.zeros_like(c_) if r is None else _vector("hankel", r)
    c_, r_ = promote_dtypes("scipy.linalg.hankel", c_, r_)
    m, n = int(shape_of(c_)[0]), int(shape_of(r_)[0])
    both = concatenate([c_, lax.slice_in_dim(r_, 1, n)], axis=0)
    i, j = np.indices((m, n))
    return _gather_last(both, i + j)


def circulant(c: ArrayLike) -> Array:
    """The circulant matrix ``C[i, j] = c[(i - j) % n]``.  Leading axes batch."""
    c_ = _vector("circulant", c, batched=True)
    n = int(shape_of(c_)[-1])
    i, j = np.indices((n, n))
    return _gather_last(c_, (i - j) % n)


def companion(a: ArrayLike) -> Array:
    """The companion matrix of the polynomial with coefficients ``a`` (highest
    degree first, ``len(a) >= 2``): first row ``-a[1:] / a[0]``, ones below
    the diagonal.  Leading axes batch; the result is inexact."""
    (a_,) = promote_dtypes_inexact("scipy.linalg.companion", _vector("companion", a, batched=True))
    n = int(shape_of(a_)[-1])
    if n < 2:
        raise ValueError(f"scipy.linalg.companion: a needs at least 2 coefficients, got {n}")
    first = negative(true_divide(lax.slice_in_dim(a_, 1, n, axis=len(shape_of(a_)) - 1),
                                 lax.slice_in_dim(a_, 0, 1, axis=len(shape_of(a_)) - 1)))  # fmt: skip
    below = creation.eye(n - 2, n - 1, dtype=dtype_of(a_))
    batch = tuple(shape_of(a_)[:-1])
    below = lax.broadcast_in_dim(below, (*batch, n - 2, n - 1), (len(batch), len(batch) + 1))
    return concatenate([expand_dims(first, -2), below], axis=-2)


def fiedler(a: ArrayLike) -> Array:
    """The symmetric Fiedler matrix ``F[i, j] = |a[i] - a[j]|``."""
    a_ = _vector("fiedler", a)
    return _abs(subtract(expand_dims(a_, 1), expand_dims(a_, 0)))


def fiedler_companion(a: ArrayLike) -> Array:
    """The Fiedler companion matrix of the polynomial ``a`` (highest degree
    first): pentadiagonal, with the eigenvalues of :func:`companion`."""
    (a_,) = promote_dtypes_inexact("scipy.linalg.fiedler_companion", _vector("fiedler_companion", a))
    k = int(shape_of(a_)[0])
    n = k - 1
    if n < 1:
        return creation.zeros((0, 0), dtype_of(a_))
    c = negative(true_divide(lax.slice_in_dim(a_, 1, k), lax.slice_in_dim(a_, 0, 1)))
    entries = [(0, 0, 0)]  # (row, column, index into c) of the -c entries
    ones = []
    for r in range(0, n, 2):  # even rows hold the -c; odd rows one 1, two columns left of the diagonal
        if r >= 2:
            entries.append((r, r - 1, r))
        if r + 1 < n:
            entries.append((r, r + 1, r + 1))
            ones.append((r + 1, max(r - 1, 0)))
        if r + 2 < n:
            ones.append((r, r + 2))
    rows, cols, src = (np.array(t) for t in zip(*entries))
    out = creation.zeros((n, n), dtype_of(a_))
    out = scatter_update(out, (rows, cols), take(c, src), "set")
    if not ones:
        return out
    one_rows, one_cols = (np.array(t) for t in zip(*ones))
    return scatter_update(out, (one_rows, one_cols), np.ones((), dtype_of(a_)), "set")


def leslie(f: ArrayLike, s: ArrayLike) -> Array:
    """The Leslie matrix: fecundities ``f`` (length ``n``) in the first row,
    survival rates ``s`` (length ``n - 1``) on the subdiagonal."""
    f_, s_ = promote_dtypes("scipy.linalg.leslie", _vector("leslie", f), _vector("leslie", s))
    n = int(shape_of(f_)[0])
    if int(shape_of(s_)[0]) != n - 1:
        raise ValueError(
            f"scipy.linalg.leslie: s must have length len(f) - 1 = {n - 1}, got {shape_of(s_)[0]}"
        )
    out = scatter_update(creation.zeros((n, n), dtype_of(f_)), 0, f_, "set")
    idx = np.arange(1, n)
    return scatter_update(out, (idx, idx - 1), s_, "set")


def convolution_matrix(a: ArrayLike, n: int, mode: str = "full") -> Array:
    """The matrix ``A`` with ``A @ v == numpy.convolve(a, v, mode)`` for vectors
    ``v`` of length ``n``."""
    a_ = _vector("convolution_matrix", a)
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"scipy.linalg.convolution_matrix: n must be positive, got {n}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(
            f"scipy.linalg.convolution_matrix: mode must be 'full', 'same' or 'valid', got {mode!r}"
        )
    m = int(shape_of(a_)[0])
    full = m + n - 1
    size = {"full": full, "same": max(m, n), "valid": max(m, n) - min(m, n) + 1}[mode]
    start = (full - size) // 2
    i, j = np.indices((size, n))
    k = i + start - j
    padded = concatenate([a_, creation.zeros((1,), dtype_of(a_))], axis=0)
    return _gather_last(padded, np.where((k >= 0) & (k < m), k, m))


def block_diag(*arrs: ArrayLike) -> Array:
    """The block-diagonal matrix of the (at most 2-D) arrays ``arrs``; a scalar
    is a ``1 x 1`` block and a vector one row.  No blocks give shape ``(1, 0)``."""
    if not arrs:
        return creation.zeros((1, 0))
    blocks = list(promote_dtypes("scipy.linalg.block_diag", *arrs))
    for k, b in enumerate(blocks):
        nd = len(shape_of(b))
        if nd > 2:
            raise ValueError(
                f"scipy.linalg.block_diag: argument {k} has {nd} dimensions; blocks are at most 2-D"
            )
        blocks[k] = lax.reshape(b, (1, 1)) if nd == 0 else (expand_dims(b, 0) if nd == 1 else b)
    dt = dtype_of(blocks[0])
    total = sum(int(shape_of(b)[1]) for b in blocks)
    rows, before = [], 0
    for b in blocks:
        c = int(shape_of(b)[1])
        rows.append(lax.pad(b, np.zeros((), dt), [(0, 0, 0), (before, total - before - c, 0)]))
        before += c
    return concatenate(rows, axis=0)


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The discrete Fourier transform matrix ``exp(-2 pi i j k / n)``, divided by
    ``sqrt(n)`` (``scale='sqrtn'``) or ``n`` (``'n'``)."""
    n = operator.index(n)
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scipy.linalg.dft: scale must be None, 'sqrtn' or 'n', got {scale!r}")
    dt = dtypes.default_complex_dtype() if dtype is None else dtypes.canonicalize_dtype(np.dtype(dtype))
    j, k = np.indices((n, n))
    m = np.exp(-2j * np.pi * ((j * k) % max(n, 1)) / max(n, 1))
    m = m / {None: 1.0, "sqrtn": math.sqrt(n), "n": float(n)}[scale]
    return creation.asarray(m.astype(dt))


def hadamard(n: int, dtype: Any = int) -> Array:
    """The Sylvester-Hadamard matrix of order ``n`` (a power of 2)."""
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"scipy.linalg.hadamard: n must be a positive power of 2, got {n}")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return creation.asarray(h, dtype=dtype)


def _default_float(values: np.ndarray) -> Array:
    return creation.asarray(values.astype(dtypes.default_float_dtype()))


def hilbert(n: int) -> Array:
    """The Hilbert matrix ``H[i, j] = 1 / (i + j + 1)``."""
    i, j = np.indices((operator.index(n),) * 2)
    return _default_float(1.0 / (i + j + 1))


def invhilbert(n: int) -> Array:
    """The inverse of the Hilbert matrix, from its closed form (exact integers,
    rounded once to the default float dtype)."""
    n = operator.index(n)
    out = np.zeros((n, n), np.float64)
    for i in range(n):
        for j in range(n):
            v = (
                (i + j + 1)
                * math.comb(n + i, n - j - 1)
                * math.comb(n + j, n - i - 1)
                * math.comb(i + j, i) ** 2
            )
            out[i, j] = (-1) ** (i + j) * v
    return _default_float(out)


def _pascal_lower(n: int) -> np.ndarray:
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], np.float64)


_KINDS = ("symmetric", "lower", "upper")


def pascal(n: int, kind: str | None = None) -> Array:
    """The Pascal matrix: binomial coefficients, ``'symmetric'`` (default),
    ``'lower'`` or ``'upper'`` triangular."""
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise ValueError(f"scipy.linalg.pascal: kind must be one of {list(_KINDS)}, got {kind!r}")
    low = _pascal_lower(operator.index(n))
    return _default_float({"lower": low, "upper": low.T, "symmetric": low @ low.T}[kind])


def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of :func:`pascal` (integer entries)."""
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise ValueError(f"scipy.linalg.invpascal: kind must be one of {list(_KINDS)}, got {kind!r}")
    n = operator.index(n)
    i, j = np.indices((n, n))
    inv_low = _pascal_lower(n) * (-1.0) ** (i + j)
    return _default_float({"lower": inv_low, "upper": inv_low.T, "symmetric": inv_low.T @ inv_low}[kind])


def helmert(n: int, full: bool = False) -> Array:
    """The Helmert matrix of order ``n``: ``n - 1`` orthonormal contrasts (with
    ``full``, a first row of ``1 / sqrt(n)`` above them)."""
    n = operator.index(n)
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    out = h / np.sqrt(d)[:, None]
    return _default_float(out if full else out[1:])
