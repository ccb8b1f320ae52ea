"""Matrix factorisations: ``cholesky``, ``triangular_solve``, ``lu``, ``qr``,
``eigh``, ``svd`` and ``eig``.

Every one acts on the last two dimensions of its operands and batches over
the leading ones, and accepts float32, float64, complex64 and complex128
(integers, booleans and 16-bit floats are a ``TypeError``, as in JAX: LAPACK
has no kernels for them).  Shapes and outputs follow JAX's primitives:

* ``cholesky(a)``: the lower Cholesky factor ``L`` with ``a = L Lᴴ``, read
  from the lower triangle of ``a``; where ``a`` is not positive definite, NaN
  on and below the diagonal (zeros above), as in JAX.
* ``triangular_solve(a, b; left_side, lower, transpose_a, conjugate_a,
  unit_diagonal)``: ``x`` with ``op(a) x = b`` (``x op(a) = b`` when not
  ``left_side``), reading only the ``lower`` (or upper) triangle of ``a``
  (with ones on its diagonal if ``unit_diagonal``); ``op`` transposes when
  ``transpose_a`` and conjugates when ``conjugate_a``.
* ``lu(a)``: ``(lu, pivots, permutation)`` of the partially pivoted LU
  factorisation of an ``(m, n)`` matrix: ``lu`` holds ``L`` (unit lower,
  below the diagonal) and ``U``; ``pivots`` (int32, ``min(m, n)``) says
  which row was swapped with row ``i`` at step ``i``; ``permutation`` (int32,
  ``m``) is the row order they amount to: ``a[permutation] = L U``.
* ``qr(a; full_matrices)``: ``(q, r)`` with ``a = q r``, ``q`` of shape
  ``(m, m)`` (``(m, k)`` with ``k = min(m, n)`` when not ``full_matrices``).
* ``eigh(a; lower, sort_eigenvalues)``: ``(v, w)`` with ``a v = v diag(w)``
  for the Hermitian matrix held in the ``lower`` (or upper) triangle; real
  eigenvalues in ascending order.
* ``svd(a; full_matrices, compute_uv)``: ``(s,)`` or ``(s, u, vh)`` with
  ``a = u diag(s) vh``, ``s`` real and descending.
* ``eig(a; compute_left_eigenvectors, compute_right_eigenvectors)``:
  ``(w, [vl], [vr])``, complex, with ``a vr = vr diag(w)`` and
  ``vlᴴ a = diag(w) vlᴴ``; eigenvectors have unit norm.

The NumPy implementations are the reference semantics (LAPACK's, through
NumPy, plus plain substitution loops where NumPy has no batched routine).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, InconclusiveDimensionOperation
from plait_core.primitive import Primitive
from plait_core.primitives.reductions import dims_match, shape_text

DType = np.dtype[Any]

_LAPACK_DTYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def check_lapack_dtype(name: str, aval: ShapedArray, position: int = 0) -> None:
    """A TypeError unless ``aval`` has a dtype LAPACK factorises."""
    if aval.dtype not in _LAPACK_DTYPES:
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name} at position {position}; accepted dtypes are "
            "float32, float64, complex64 and complex128 (convert integers with astype first)"
        )


def check_matrix(name: str, aval: ShapedArray, *, square: bool) -> tuple[Dim, Dim]:
    """The last two sizes of ``aval``; a ValueError unless it is a (square) matrix or stack of them."""
    if aval.ndim < 2:
        raise ValueError(f"{name}: the operand must have at least 2 dimensions (..., m, n), got shape {shape_text(aval.shape)}")
    m, n = aval.shape[-2], aval.shape[-1]
    if square and not dims_match(m, n):
        raise ValueError(f"{name}: the operand must be a square matrix (..., n, n), got shape {shape_text(aval.shape)}")
    return m, n


def real_dtype(dtype: DType) -> DType:
    """The real dtype of a complex one (float32 for complex64); itself otherwise."""
    if dtype == dtypes.complex64:
        return dtypes.float32
    if dtype == dtypes.complex128:
        return dtypes.float64
    return dtype


def complex_dtype(dtype: DType) -> DType:
    """The complex dtype holding ``dtype``'s values (complex64 for float32)."""
    return dtypes.complex128 if dtype in (dtypes.float64, dtypes.complex128) else dtypes.complex64


def min_dim(a: Dim, b: Dim, name: str = "a factorisation") -> Dim:
    """The smaller of two sizes; for symbolic sizes whose order is not known,
    an ``InconclusiveDimensionOperation`` that says why it matters."""
    try:
        return a if a <= b else b
    except InconclusiveDimensionOperation:
        raise InconclusiveDimensionOperation(
            f"{name}: the size min({a}, {b}) of a factor is not known for a matrix of symbolic size "
            f"({a}, {b}); factorisations need matrix sizes whose order is known (under mask or vmap over "
            "piles, only the leading, stacked axes may be symbolic)"
        ) from None


def _operand(name: str, a: ShapedArray, *, square: bool) -> tuple[Dim, Dim]:
    check_lapack_dtype(name, a)
    return check_matrix(name, a, square=square)


def _batched(fn: Any, a: np.ndarray, *params: Any) -> list[np.ndarray]:
    """Apply ``fn(matrix, *params) -> tuple of arrays`` to each matrix of a stack."""
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = [fn(m, *params) for m in flat]
    if not outs:
        raise AssertionError("empty batches are handled by the callers")
    return [np.stack([o[k] for o in outs]).reshape(batch + outs[0][k].shape) for k in range(len(outs[0]))]


def _or_nan(fn: Callable[[np.ndarray], list[np.ndarray]], a: np.ndarray) -> list[np.ndarray]:
    """``fn`` of a stack of matrices; where NumPy's LAPACK fails on a matrix (it
    does not converge, or the matrix holds NaN), that matrix's results are NaN,
    as the kernels' ``info`` flags make them under XLA."""
    try:
        return fn(a)
    except np.linalg.LinAlgError:
        pass
    flat = a.reshape((-1,) + a.shape[-2:])
    template = fn(np.zeros_like(flat[:1]))
    per: list[list[np.ndarray]] = []
    for m in flat:
        try:
            per.append(fn(m[None]))
        except np.linalg.LinAlgError:
            per.append([np.full(t.shape, np.nan, t.dtype) for t in template])
    return [
        np.concatenate([o[k] for o in per]).reshape(a.shape[:-2] + template[k].shape[1:])
        for k in range(len(template))
    ]


# ---------------------------------------------------------------------------
# cholesky


def _cholesky_rule(a: ShapedArray) -> ShapedArray:
    _operand("cholesky", a, square=True)
    return ShapedArray(a.shape, a.dtype)


def _hermitian_from(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrix whose ``lower`` (or upper) triangle is that of ``a``."""
    tri = np.tril(a) if lower else np.triu(a)
    diag = np.real(np.diagonal(a, axis1=-2, axis2=-1))
    full = tri + np.conj(np.swapaxes(tri, -1, -2))
    idx = np.arange(a.shape[-1])
    full[..., idx, idx] = diag
    return np.asarray(full)


def _cholesky_one(a: np.ndarray) -> tuple[np.ndarray]:
    try:
        return (np.linalg.cholesky(a),)
    except np.linalg.LinAlgError:
        return (np.tril(np.full(a.shape, np.nan, a.dtype)),)


def _cholesky(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        return a.copy()
    h = _hermitian_from(a, lower=True)
    try:
        out = np.linalg.cholesky(h)
    except np.linalg.LinAlgError:
        (out,) = _batched(_cholesky_one, h)
    return np.asarray(out, a.dtype)


cholesky_p = Primitive("cholesky", family="linalg")
cholesky_p.def_abstract_eval(_cholesky_rule)
cholesky_p.def_impl(_cholesky)


# ---------------------------------------------------------------------------
# triangular_solve


def _triangular_solve_rule(
    a: ShapedArray,
    b: ShapedArray,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> ShapedArray:
    name = "triangular_solve"
    for pos, x in ((0, a), (1, b)):
        check_lapack_dtype(name, x, pos)
    if a.dtype != b.dtype:
        raise TypeError(f"{name} requires a and b of the same dtype, got {a.dtype.name} and {b.dtype.name}")
    n, _ = check_matrix(name, a, square=True)
    if b.ndim != a.ndim:
        raise ValueError(
            f"{name}: a and b must have the same rank, got shapes {shape_text(a.shape)} and {shape_text(b.shape)}"
        )
    common = b.shape[-2] if left_side else b.shape[-1]
    batch_ok = all(dims_match(x, y) for x, y in zip(a.shape[:-2], b.shape[:-2]))
    if not batch_ok or not dims_match(common, n):
        side = "rows" if left_side else "columns"
        raise ValueError(
            f"{name}: incompatible shapes {shape_text(a.shape)} and {shape_text(b.shape)} "
            f"(with left_side={left_side}, b's {side} must match a's size {n}, and the batch dimensions must be equal)"
        )
    return ShapedArray(b.shape, b.dtype)


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """Solve ``t x = b`` for triangular ``t`` by substitution (inf/nan when singular, as LAPACK's trsm)."""
    n = t.shape[-1]
    x = np.zeros(b.shape, np.result_type(t, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in order:
            known = slice(0, i) if lower else slice(i + 1, n)
            acc = b[..., i, :] - np.einsum("...k,...kj->...j", t[..., i, known], x[..., known, :])
            x[..., i, :] = acc / t[..., i, i][..., None]
    return x


def _triangular_solve(
    a: np.ndarray,
    b: np.ndarray,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    if conjugate_a:
        t = np.conj(t)
    if transpose_a:
        t, lower = np.swapaxes(t, -1, -2), not lower
    if left_side:
        return np.asarray(_substitute(t, b, lower), b.dtype)
    # x t = b  <=>  tᵀ xᵀ = bᵀ
    xt = _substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not lower)
    return np.asarray(np.swapaxes(xt, -1, -2), b.dtype)


triangular_solve_p = Primitive("triangular_solve", family="linalg")
triangular_solve_p.def_abstract_eval(_triangular_solve_rule)
triangular_solve_p.def_impl(_triangular_solve)


# ---------------------------------------------------------------------------
# lu


def _lu_rule(a: ShapedArray) -> list[ShapedArray]:
    m, n = _operand("lu", a, square=False)
    batch = a.shape[:-2]
    return [
        ShapedArray(a.shape, a.dtype),
        ShapedArray((*batch, min_dim(m, n, "lu")), dtypes.int32),
        ShapedArray((*batch, m), dtypes.int32),
    ]


def _pivot_magnitude(x: np.ndarray) -> np.ndarray:
    """LAPACK's pivot choice measure: ``|re| + |im|``."""
    return np.asarray(np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x))


def _lu(a: np.ndarray) -> list[np.ndarray]:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    x = a.reshape((int(np.prod(batch, dtype=np.int64)), m, n)).copy()
    count = x.shape[0]
    pivots = np.zeros((count, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (count, 1))
    rows = np.arange(count)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(k):
            p = j + np.argmax(_pivot_magnitude(x[:, j:, j]), axis=1)
            pivots[:, j] = p
            x[rows, j], x[rows, p] = x[rows, p].copy(), x[rows, j].copy()
            perm[rows, j], perm[rows, p] = perm[rows, p].copy(), perm[rows, j].copy()
            pivot = x[:, j, j]
            nonzero = pivot != 0
            scaled = x[:, j + 1 :, j] / np.where(nonzero, pivot, 1)[:, None]
            x[:, j + 1 :, j] = np.where(nonzero[:, None], scaled, x[:, j + 1 :, j])
            x[:, j + 1 :, j + 1 :] -= x[:, j + 1 :, j : j + 1] * x[:, j : j + 1, j + 1 :]
    return [x.reshape(a.shape), pivots.reshape((*batch, k)), perm.reshape((*batch, m))]


lu_p = Primitive("lu", family="linalg", multiple_results=True)
lu_p.def_abstract_eval(_lu_rule)
lu_p.def_impl(_lu)


# ---------------------------------------------------------------------------
# qr


def _qr_rule(a: ShapedArray, *, full_matrices: bool) -> list[ShapedArray]:
    m, n = _operand("qr", a, square=False)
    k = m if full_matrices else min_dim(m, n, "qr")
    batch = a.shape[:-2]
    return [ShapedArray((*batch, m, k), a.dtype), ShapedArray((*batch, k, n), a.dtype)]


def _qr(a: np.ndarray, *, full_matrices: bool) -> list[np.ndarray]:
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    batch = a.shape[:-2]
    if a.size == 0:
        q = np.broadcast_to(np.eye(m, k, dtype=a.dtype), (*batch, m, k)).copy()
        return [q, np.zeros((*batch, k, n), a.dtype)]
    def decompose(x: np.ndarray) -> list[np.ndarray]:
        q, r = np.linalg.qr(x, mode="complete") if full_matrices else np.linalg.qr(x, mode="reduced")
        return [np.asarray(q, a.dtype), np.asarray(r, a.dtype)]

    return _or_nan(decompose, a)


qr_p = Primitive("qr", family="linalg", multiple_results=True)
qr_p.def_abstract_eval(_qr_rule)
qr_p.def_impl(_qr)


# ---------------------------------------------------------------------------
# eigh


def _eigh_rule(a: ShapedArray, *, lower: bool, sort_eigenvalues: bool) -> list[ShapedArray]:
    n, _ = _operand("eigh", a, square=True)
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*a.shape[:-2], n), real_dtype(a.dtype))]


def _eigh(a: np.ndarray, *, lower: bool, sort_eigenvalues: bool) -> list[np.ndarray]:
    if a.size == 0:
        return [a.copy(), np.zeros(a.shape[:-1], real_dtype(a.dtype))]
    def decompose(x: np.ndarray) -> list[np.ndarray]:
        w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
        return [np.asarray(v, a.dtype), np.asarray(w, real_dtype(a.dtype))]

    return _or_nan(decompose, a)


eigh_p = Primitive("eigh", family="linalg", multiple_results=True)
eigh_p.def_abstract_eval(_eigh_rule)
eigh_p.def_impl(_eigh)


# ---------------------------------------------------------------------------
# svd


def _svd_rule(a: ShapedArray, *, full_matrices: bool, compute_uv: bool) -> list[ShapedArray]:
    m, n = _operand("svd", a, square=False)
    k = min_dim(m, n, "svd")
    batch = a.shape[:-2]
    s = ShapedArray((*batch, k), real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, ku), a.dtype), ShapedArray((*batch, kv, n), a.dtype)]


def _svd(a: np.ndarray, *, full_matrices: bool, compute_uv: bool) -> list[np.ndarray]:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    rdt = real_dtype(a.dtype)
    if a.size == 0:
        s = np.zeros((*batch, k), rdt)
        if not compute_uv:
            return [s]
        ku, kv = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, ku, dtype=a.dtype), (*batch, m, ku)).copy()
        vh = np.broadcast_to(np.eye(kv, n, dtype=a.dtype), (*batch, kv, n)).copy()
        return [s, u, vh]
    if not compute_uv:
        return _or_nan(lambda x: [np.asarray(np.linalg.svd(x, compute_uv=False), rdt)], a)

    def decompose(x: np.ndarray) -> list[np.ndarray]:
        u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
        return [np.asarray(s, rdt), np.asarray(u, a.dtype), np.asarray(vh, a.dtype)]

    return _or_nan(decompose, a)


svd_p = Primitive("svd", family="linalg", multiple_results=True)
svd_p.def_abstract_eval(_svd_rule)
svd_p.def_impl(_svd)


# ---------------------------------------------------------------------------
# eig


def _eig_rule(
    a: ShapedArray, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool
) -> list[ShapedArray]:
    n, _ = _operand("eig", a, square=True)
    c = complex_dtype(a.dtype)
    vectors = [ShapedArray(a.shape, c)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))
    return [ShapedArray((*a.shape[:-2], n), c), *vectors]


def _unit_columns(v: np.ndarray) -> np.ndarray:
    """Scale each column to unit norm with its largest component real (LAPACK's geev convention)."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    big = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return np.asarray(v * (np.conj(big) / np.abs(big)))


def _eig(
    a: np.ndarray, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool
) -> list[np.ndarray]:
    c = complex_dtype(a.dtype)
    if a.size == 0:
        return [np.zeros(a.shape[:-1], c)] + [np.zeros(a.shape, c)] * (
            int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
        )

    def decompose(x: np.ndarray) -> list[np.ndarray]:
        w, vr = np.linalg.eig(x)
        out = [np.asarray(w, c)]
        if compute_left_eigenvectors:
            # The rows of vr⁻¹ are left eigenvectors (conjugated): vr⁻¹ a = diag(w) vr⁻¹.
            vl = np.conj(np.swapaxes(np.linalg.inv(vr), -1, -2))
            out.append(np.asarray(_unit_columns(vl), c))
        if compute_right_eigenvectors:
            out.append(np.asarray(_unit_columns(vr), c))
        return out

    return _or_nan(decompose, a)


eig_p = Primitive("eig", family="linalg", multiple_results=True)
eig_p.def_abstract_eval(_eig_rule)
eig_p.def_impl(_eig)

__all__ = [
    "check_lapack_dtype",
    "check_matrix",
    "cholesky_p",
    "complex_dtype",
    "eig_p",
    "eigh_p",
    "lu_p",
    "min_dim",
    "qr_p",
    "real_dtype",
    "svd_p",
    "triangular_solve_p",
]
