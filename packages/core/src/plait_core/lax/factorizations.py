"""``lax.linalg``'s factorisations, with JAX's names, signatures and output
conventions: ``cholesky``, ``triangular_solve``, ``lu``,
``lu_pivots_to_permutation``, ``qr``, ``eigh``, ``svd``, ``eig``; and the
helpers the other layers share (``adjoint``, ``swap_last``, ``tril_mask``,
``permute_rows``, ``permutation_matrix``, ``lu_solve``), which are not part of JAX's ``lax.linalg``.

Each acts on the last two axes and batches over the leading ones; the
primitives they bind are described in
:mod:`plait_core.primitives.factorizations`.  As in JAX, ``cholesky`` and
``eigh`` symmetrise their input first (``(x + xᴴ) / 2``) unless asked not to,
``eigh`` returns ``(eigenvectors, eigenvalues)``, ``svd`` returns
``(u, s, vh)`` (or ``s`` alone) and ``eig`` a list ``[w, vl, vr]`` of what
was asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.lax import complex_numbers as _cx
from plait_core.lax import control_flow as _cf
from plait_core.lax import elementwise as _ew
from plait_core.lax import structural as _st
from plait_core.lax.reductions import operand_aval
from plait_core.primitives import factorizations as _f
from plait_core.primitives.indexing_prims import GatherDimensionNumbers, ScatterDimensionNumbers

Array = Any

__all__ = [
    "cholesky",
    "eig",
    "eigh",
    "lu",
    "lu_pivots_to_permutation",
    "qr",
    "svd",
    "triangular_solve",
]


def _conj(x: Array, aval: ShapedArray) -> Array:
    return _cx.conj(x) if dtypes.is_complex(aval.dtype) else x


def swap_last(x: Array, aval: ShapedArray) -> Array:
    """``xᵀ``: the transpose of the last two axes."""
    perm = (*range(aval.ndim - 2), aval.ndim - 1, aval.ndim - 2)
    return _st.transpose(x, perm)


def _adjoint(x: Array, aval: ShapedArray) -> Array:
    """``xᴴ``: the conjugate transpose of the last two axes."""
    return _conj(swap_last(x, aval), aval)


def adjoint(x: Array) -> Array:
    """``xᴴ``: the conjugate transpose of the last two axes of ``x``."""
    return _adjoint(x, operand_aval("adjoint", x, "x"))


def permutation_matrix(perm: Array, dtype: Any) -> Array:
    """The ``(..., m, m)`` matrix ``P`` of ``dtype`` with ``P[..., i, perm[..., i]] = 1``
    (so ``P x`` is ``x[perm]``)."""
    aval = operand_aval("permutation_matrix", perm, "perm")
    m = aval.shape[-1]
    shape = (*aval.shape, m)
    cols = _st.broadcasted_iota(dtypes.int32, shape, aval.ndim)
    rows = _st.broadcast_in_dim(_ew.convert_element_type(perm, dtypes.int32), shape, tuple(range(aval.ndim)))
    return _ew.convert_element_type(_ew.eq(rows, cols), dtype)


def permute_rows(x: Array, perm: Array) -> Array:
    """``x[..., perm[...], :]``: the rows of each ``(..., n, k)`` matrix in the
    order ``perm`` (``(..., n)``) gives (a gather, cheaper than ``P x``)."""
    aval = operand_aval("permute_rows", x, "x")
    nd = aval.ndim
    batch = tuple(range(nd - 2))
    dnums = GatherDimensionNumbers(
        offset_dims=(nd - 1,), collapsed_slice_dims=(nd - 2,), start_index_map=(nd - 2,),
        operand_batching_dims=batch, start_indices_batching_dims=batch,
    )  # fmt: skip
    index = _st.expand_dims(_ew.convert_element_type(perm, dtypes.int32), (nd - 1,))
    sizes = (1,) * (nd - 1) + (aval.shape[-1],)
    return _st.gather(x, index, dnums, sizes, mode="clip", unique_indices=True)


def lu_solve(lu_factors: Array, permutation: Array, b: Array) -> Array:
    """Solve ``a x = b`` for ``(..., n, k)`` ``b`` given ``lu(a)``'s factors and permutation."""
    y = triangular_solve(lu_factors, permute_rows(b, permutation), left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_factors, y, left_side=True, lower=False)


def _matrix_aval(fn: str, x: Array, *, square: bool) -> ShapedArray:
    aval = operand_aval(fn, x, "x")
    _f.check_matrix(f"lax.linalg.{fn}", aval, square=square)
    return aval


def _as_inexact(fn: str, x: Array, aval: ShapedArray) -> tuple[Array, ShapedArray]:
    """Integers and booleans become the default float dtype (as JAX's
    symmetrisation does); other dtypes are left to the primitive's check."""
    if dtypes.is_int(aval.dtype) or dtypes.is_bool(aval.dtype):
        dt = dtypes.default_float_dtype()
        return _ew.convert_element_type(x, dt), ShapedArray(aval.shape, dt)
    return x, aval


def symmetrize(x: Array, aval: ShapedArray) -> Array:
    """``(x + xᴴ) / 2``, the Hermitian part of ``x``."""
    total = _ew.add(x, _adjoint(x, aval))
    return _ew.div(total, np.asarray(2, aval.dtype))


def tril_mask(x: Array, aval: ShapedArray, k: int = 0, *, lower: bool = True) -> Array:
    """``x`` with the entries above diagonal ``k`` (below, if not ``lower``) set to zero."""
    shape = tuple(aval.shape)
    rows = _st.broadcasted_iota(dtypes.int32, shape, aval.ndim - 2)
    cols = _st.broadcasted_iota(dtypes.int32, shape, aval.ndim - 1)
    shifted = _ew.add(rows, np.asarray(k, dtypes.int32))
    keep = _ew.ge(shifted, cols) if lower else _ew.le(shifted, cols)
    zero = _st.broadcast_in_dim(np.asarray(0, aval.dtype), shape, ())
    return _ew.select(keep, x, zero)


def cholesky(x: Array, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor ``L`` of a Hermitian positive definite ``x``
    (``x = L Lᴴ``), batched over leading axes; NaNs where ``x`` is not
    positive definite.  With ``symmetrize_input`` the factorised matrix is
    ``(x + xᴴ) / 2``; without, only the lower triangle of ``x`` is read."""
    aval = _matrix_aval("cholesky", x, square=True)
    x, aval = _as_inexact("cholesky", x, aval)
    if symmetrize_input:
        x = symmetrize(x, aval)
    return _f.cholesky_p.bind(x)


def triangular_solve(
    a: Array,
    b: Array,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Array:
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for ``x``, with
    ``a`` triangular (only its ``lower`` or upper triangle is read; its
    diagonal is taken as ones with ``unit_diagonal``) and ``op`` transposing
    when ``transpose_a`` and conjugating when ``conjugate_a``.  ``a`` is
    ``(..., m, m)`` and ``b`` ``(..., m, n)`` (``(..., n, m)`` when solving
    from the right), with equal batch axes; a ``b`` of one dimension less is one
    vector per matrix (``(..., m)``), and so is the result."""
    a_aval = operand_aval("triangular_solve", a, "a")
    b_aval = operand_aval("triangular_solve", b, "b")
    vector = b_aval.ndim == a_aval.ndim - 1
    if vector:
        b = _st.expand_dims(b, (b_aval.ndim if left_side else b_aval.ndim - 1,))
    x = _f.triangular_solve_p.bind(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a),
        unit_diagonal=bool(unit_diagonal),
    )
    if vector:
        x = _st.squeeze(x, (b_aval.ndim if left_side else b_aval.ndim - 1,))
    return x


def lu(x: Array) -> tuple[Array, Array, Array]:
    """The LU factorisation with partial pivoting of ``(..., m, n)`` ``x``:
    ``(lu, pivots, permutation)`` where ``lu`` holds the unit lower factor
    ``L`` below its diagonal and ``U`` on and above it, ``pivots`` (int32,
    ``(..., min(m, n))``) the row swapped with row ``i`` at step ``i``, and
    ``permutation`` (int32, ``(..., m)``) the row order: ``x[perm] = L U``."""
    _matrix_aval("lu", x, square=False)
    out, pivots, perm = _f.lu_p.bind(x)
    return out, pivots, perm


def lu_pivots_to_permutation(pivots: Array, permutation_size: int) -> Array:
    """The permutation (int32, ``(..., permutation_size)``) that applying the
    row swaps ``pivots`` (``(..., k)``, as returned by :func:`lu`) in order
    to ``0, 1, ..., permutation_size - 1`` produces."""
    aval = operand_aval("lu_pivots_to_permutation", pivots, "pivots")
    if aval.ndim < 1 or not dtypes.is_int(aval.dtype):
        raise TypeError(
            "lax.linalg.lu_pivots_to_permutation: pivots must be an integer array of shape (..., k), "
            f"got {aval.str_short()}"
        )
    if isinstance(permutation_size, bool) or not isinstance(permutation_size, (int, np.integer)):
        raise TypeError(f"lax.linalg.lu_pivots_to_permutation: permutation_size must be an int, got {permutation_size!r}")
    k = aval.shape[-1]
    if not k <= permutation_size:
        raise ValueError(
            f"lax.linalg.lu_pivots_to_permutation: permutation_size ({permutation_size}) must be at least "
            f"the number of pivots ({k})"
        )
    shape = (*aval.shape[:-1], int(permutation_size))
    last = len(shape) - 1
    batch = tuple(range(last))
    pivots = _ew.convert_element_type(pivots, dtypes.int32)
    # perm[..., j[...]] for a per-matrix index j: a gather (and a scatter) with the
    # leading dims as batching dims, one element per matrix.
    take = GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(last,), start_index_map=(last,),
        operand_batching_dims=batch, start_indices_batching_dims=batch,
    )  # fmt: skip
    put = ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(last,), scatter_dims_to_operand_dims=(last,),
        operand_batching_dims=batch, scatter_indices_batching_dims=batch,
    )  # fmt: skip

    def swap(i: Array, perm: Array) -> Array:
        j = _st.dynamic_index_in_dim(pivots, i, last, keepdims=True)
        p_i = _st.dynamic_index_in_dim(perm, i, last, keepdims=False)
        p_j = _st.gather(perm, j, take, (1,) * len(shape), mode="clip")
        perm = _st.scatter(perm, j, p_i, put, mode="clip")
        return _st.dynamic_update_index_in_dim(perm, p_j, i, last)

    return _cf.fori_loop(0, k, swap, _st.broadcasted_iota(dtypes.int32, shape, last))


def qr(x: Array, *, pivoting: bool = False, full_matrices: bool = True, use_magma: Any = None) -> tuple[Array, Array]:
    """The QR factorisation ``x = q r`` of ``(..., m, n)`` ``x``: ``q`` has
    orthonormal columns (``(..., m, m)``, or ``(..., m, min(m, n))`` when not
    ``full_matrices``) and ``r`` is upper triangular.  Column pivoting is not
    supported (``NotImplementedError``): plait has no primitive for LAPACK's
    ``geqp3``."""
    if pivoting:
        raise NotImplementedError(
            "lax.linalg.qr: pivoting=True is not supported: plait has no primitive for the column-pivoted "
            "QR factorisation (LAPACK geqp3)"
        )
    _matrix_aval("qr", x, square=False)
    q, r = _f.qr_p.bind(x, full_matrices=bool(full_matrices))
    return q, r


def eigh(
    x: Array,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index: Any = None,
) -> tuple[Array, Array]:
    """The eigendecomposition of a Hermitian ``(..., n, n)`` ``x``: ``(v, w)``
    with ``x v = v diag(w)``, ``w`` real and ascending, ``v``'s columns
    orthonormal.  With ``symmetrize_input`` ``(x + xᴴ) / 2`` is decomposed;
    without, only the ``lower`` (or upper) triangle is read.
    ``subset_by_index`` other than ``None`` or ``(0, n)`` is not supported
    (LAPACK's ``syevd`` computes every eigenpair)."""
    aval = _matrix_aval("eigh", x, square=True)
    n = aval.shape[-1]
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        raise NotImplementedError(
            f"lax.linalg.eigh: subset_by_index={subset_by_index!r} is not supported: the CPU kernel (LAPACK syevd) "
            "computes every eigenpair; slice the result instead"
        )
    x, aval = _as_inexact("eigh", x, aval)
    if symmetrize_input:
        x = symmetrize(x, aval)
    v, w = _f.eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    return v, w


def svd(
    x: Array,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index: Any = None,
    algorithm: Any = None,
) -> Any:
    """The singular value decomposition ``x = u diag(s) vh`` of ``(..., m, n)``
    ``x``: ``(u, s, vh)`` (``s`` alone without ``compute_uv``), ``s`` real and
    descending; ``u`` is ``(..., m, m)`` and ``vh`` ``(..., n, n)`` with
    ``full_matrices``, else ``(..., m, k)`` and ``(..., k, n)`` for
    ``k = min(m, n)``.  ``subset_by_index`` and a non-default ``algorithm``
    are not supported (the CPU kernel is LAPACK's ``gesdd``)."""
    aval = _matrix_aval("svd", x, square=False)
    if subset_by_index is not None and tuple(subset_by_index) != (0, _f.min_dim(aval.shape[-2], aval.shape[-1])):
        raise NotImplementedError(
            f"lax.linalg.svd: subset_by_index={subset_by_index!r} is not supported: the CPU kernel (LAPACK gesdd) "
            "computes every singular value; slice the result instead"
        )
    if algorithm is not None and str(getattr(algorithm, "name", algorithm)).upper() not in ("DEFAULT",):
        raise NotImplementedError(
            f"lax.linalg.svd: algorithm={algorithm!r} is not supported: plait's CPU lowering is LAPACK's gesdd"
        )
    if not compute_uv:
        (s,) = _f.svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=False)
        return s
    s, u, vh = _f.svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=True)
    return u, s, vh


def eig(
    x: Array,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    use_magma: Any = None,
) -> list[Array]:
    """The eigendecomposition of a general square ``x`` (CPU only, as in
    JAX): a list of the complex eigenvalues ``w`` and, as asked, the left
    eigenvectors ``vl`` (``vlᴴ x = diag(w) vlᴴ``) and the right ones ``vr``
    (``x vr = vr diag(w)``), each column of unit norm."""
    _matrix_aval("eig", x, square=True)
    out = _f.eig_p.bind(
        x,
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
    )
    return list(out)
