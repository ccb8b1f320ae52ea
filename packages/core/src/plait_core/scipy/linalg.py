"""``plait.scipy.linalg``: SciPy's dense linear algebra with JAX's semantics,
built on core's factorisation primitives (through ``lax.linalg``) and
``plait.numpy.linalg``, so every transformation applies.

Matrices are the last two axes (leading axes batch, as in JAX).
``overwrite_*``, ``check_finite``, ``lwork`` and ``lapack_driver`` are
accepted and ignored, as JAX does: arrays are immutable and the kernels are
fixed.  ``expm`` is the scaling-and-squaring algorithm with a Padé
approximant (Higham 2005), made of matrix products and one solve, so it is
differentiable.  The matrix constructors (``toeplitz``, ``hilbert``, ...)
live in :mod:`plait_core.scipy._matrices`, ``sqrtm``, ``funm`` and
``hessenberg`` in :mod:`plait_core.scipy._reductions`; all are re-exported here.

Not supported (no primitive for LAPACK's Schur factorisation ``gees``):
``schur`` and ``rsf2csf``; calling them raises ``NotImplementedError``.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.eager_staging import staged_when_eager
from plait_core.lax import _lenient
from plait_core.lax import factorizations as _lf
from plait_core.numpy import creation
from plait_core.numpy import decompositions as _dec
from plait_core.numpy._util import Array, ArrayLike, dtype_of, promote_dtypes_inexact, shape_of
from plait_core.numpy.dots import matmul
from plait_core.numpy.logic import where
from plait_core.numpy.math import abs as _abs
from plait_core.numpy.math import multiply, subtract
from plait_core.numpy.reductions import max as _max
from plait_core.numpy.reductions import sum as _sum
from plait_core.numpy.shape import expand_dims, squeeze
from plait_core.scipy._matrices import (
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
from plait_core.scipy._reductions import funm, hessenberg, sqrtm

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix", "det",
    "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard",
    "hankel", "helmert", "hessenberg",
    "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve", "pascal", "polar", "qr",
    "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz",
]  # fmt: skip


def _matrices(name: str, a: ArrayLike, *, square: bool = True) -> Array:
    (x,) = promote_dtypes_inexact(f"scipy.linalg.{name}", a)
    s = shape_of(x)
    if len(s) < 2 or (square and s[-1] != s[-2]):
        what = "square matrices (..., n, n)" if square else "matrices (..., m, n)"
        raise ValueError(f"scipy.linalg.{name}: expected {what}, got an array of shape {tuple(s)}")
    return x


# ---------------------------------------------------------------------------
# Cholesky


@staged_when_eager
def cholesky(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Array:
    """The Cholesky factor of a Hermitian positive definite ``a``: upper ``U``
    with ``a = Uᴴ U`` (lower ``L``, ``a = L Lᴴ``, with ``lower=True``); NaNs
    where ``a`` is not positive definite."""
    x = _matrices("cholesky", a)
    factor = _lf.cholesky(x)
    return factor if lower else _lf.adjoint(factor)


def cho_factor(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:  # fmt: skip
    """``(c, lower)``: the Cholesky factor of ``a`` (zeros in its other triangle)
    and which triangle it is, the argument :func:`cho_solve` takes."""
    return cholesky(a, lower=lower), lower


def _vector_rhs(name: str, a_shape: Any, b: Array) -> tuple[Array, bool]:
    """``b`` as matrices ``(..., n, k)``: a vector (``b.ndim == a.ndim - 1``) gets a last axis."""
    vector = len(shape_of(b)) == len(a_shape) - 1
    if vector:
        b = expand_dims(b, -1)
    if shape_of(b)[-2] != a_shape[-1]:
        raise ValueError(
            f"scipy.linalg.{name}: incompatible shapes {tuple(a_shape)} and {tuple(shape_of(b))[: -1 if vector else None]}"
        )
    return b, vector


def _unvector(x: Array, vector: bool) -> Array:
    return squeeze(x, -1) if vector else x


@staged_when_eager
def cho_solve(c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:  # fmt: skip
    """Solve ``a x = b`` given ``(c, lower) = cho_factor(a)``: two triangular solves."""
    c, lower = c_and_lower
    c, b = promote_dtypes_inexact("scipy.linalg.cho_solve", c, b)
    cs = shape_of(c)
    rhs, vector = _vector_rhs("cho_solve", cs, b)
    # a = L Lᴴ: solve L y = b, then Lᴴ x = y (with U = Lᴴ when not lower).
    y = _lf.triangular_solve(
        c, rhs, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower
    )
    x = _lf.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)
    return _unvector(x, vector)


# ---------------------------------------------------------------------------
# Triangular and general solves


def _trans(name: str, trans: Any) -> int:
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}
    if isinstance(trans, bool) or trans not in codes:
        raise ValueError(f"scipy.linalg.{name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return codes[trans]


@staged_when_eager
def solve_triangular(a: ArrayLike, b: ArrayLike, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Array:  # fmt: skip
    """Solve ``op(a) x = b`` for triangular ``a`` (only its ``lower`` or upper
    triangle is read); ``trans`` 0/'N' solves with ``a``, 1/'T' with ``aᵀ``,
    2/'C' with ``aᴴ``.  ``b`` is ``(..., n)`` or ``(..., n, k)``."""
    code = _trans("solve_triangular", trans)
    a_, b_ = promote_dtypes_inexact("scipy.linalg.solve_triangular", a, b)
    as_ = shape_of(a_)
    if len(as_) < 2 or as_[-1] != as_[-2]:
        raise ValueError(f"scipy.linalg.solve_triangular: expected a square matrix a, got shape {tuple(as_)}")
    rhs, vector = _vector_rhs("solve_triangular", as_, b_)
    x = _lf.triangular_solve(a_, rhs, left_side=True, lower=lower, transpose_a=code > 0, conjugate_a=code == 2,
                             unit_diagonal=unit_diagonal)  # fmt: skip
    return _unvector(x, vector)


_ASSUME = ("gen", "sym", "her", "pos")


@staged_when_eager
def solve(a: ArrayLike, b: ArrayLike, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Array:  # fmt: skip
    """Solve ``a x = b``.  ``assume_a='pos'`` solves by Cholesky (``a``
    Hermitian positive definite); ``'gen'``, ``'sym'`` and ``'her'`` by LU.
    ``b`` is ``(n,)`` or ``(n, k)`` (batched like ``a``)."""
    if assume_a not in _ASSUME:
        raise ValueError(f"scipy.linalg.solve: assume_a must be one of {_ASSUME}, got {assume_a!r}")
    x, y = promote_dtypes_inexact("scipy.linalg.solve", a, b)
    xs = shape_of(_matrices("solve", x))
    if assume_a != "pos":
        rhs, vector = _vector_rhs("solve", xs, y)
        return _unvector(_dec.solve(x, rhs), vector)
    return cho_solve(cho_factor(x, lower=lower), y)


@staged_when_eager
def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant of square matrices."""
    return _dec.det(_matrices("det", a))


@staged_when_eager
def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse of square matrices."""
    return _dec.inv(_matrices("inv", a))


# ---------------------------------------------------------------------------
# LU


@staged_when_eager
def lu_factor(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Array, Array]:
    """``(lu, piv)``: ``L`` (unit diagonal, not stored) and ``U`` in one matrix,
    and the pivots (row ``i`` was swapped with row ``piv[i]``), for :func:`lu_solve`."""
    x = _matrices("lu_factor", a, square=False)
    lu_, pivots, _ = _lf.lu(x)
    return lu_, pivots


@staged_when_eager
def lu_solve(lu_and_piv: tuple[Array, ArrayLike], b: ArrayLike, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:  # fmt: skip
    """Solve ``a x = b`` (``trans=1``: ``aᵀ x = b``, ``2``: ``aᴴ x = b``) given
    ``lu_factor(a)``."""
    code = _trans("lu_solve", trans)
    lu_, piv = lu_and_piv
    lu_, b_ = promote_dtypes_inexact("scipy.linalg.lu_solve", lu_, b)
    ls = shape_of(lu_)
    rhs, vector = _vector_rhs("lu_solve", ls, b_)
    perm = _lf.lu_pivots_to_permutation(piv, int(ls[-1]))
    if code == 0:
        x = _lf.lu_solve(lu_, perm, rhs)
    else:
        # (P a = L U)  =>  op(a) = op(U) op(L) P, so solve op(U) y = b, op(L) z = y, then x = Pᵀ z.
        conj = code == 2
        y = _lf.triangular_solve(lu_, rhs, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        z = _lf.triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True, conjugate_a=conj,
                                 unit_diagonal=True)  # fmt: skip
        p = _lf.permutation_matrix(perm, dtype_of(z))
        x = matmul(_lf.swap_last(p, get_aval(p)), z)
    return _unvector(x, vector)


@staged_when_eager
def lu(a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """``(p, l, u)`` with ``a = p l u`` (``p`` a permutation matrix, ``l`` unit
    lower ``(..., m, k)``, ``u`` upper ``(..., k, n)``, ``k = min(m, n)``);
    ``(p l, u)`` with ``permute_l``."""
    x = _matrices("lu", a, square=False)
    s = shape_of(x)
    m, n = int(s[-2]), int(s[-1])
    k = builtins.min(m, n)
    lu_, _, perm = _lf.lu(x)
    aval = get_aval(lu_)
    lower = _lf.tril_mask(lu_, aval, -1)
    upper = _lf.tril_mask(lu_, aval, 0, lower=False)
    eye = creation.eye(m, n, dtype=dtype_of(x))
    l_ = lax.slice_in_dim(lower + eye, 0, k, axis=len(s) - 1)
    u_ = lax.slice_in_dim(upper, 0, k, axis=len(s) - 2)
    p = _lf.permutation_matrix(perm, dtype_of(x))
    p = _lf.swap_last(p, get_aval(p))  # a = pᵀ-permuted: a = p l u
    return (matmul(p, l_), u_) if permute_l else (p, l_, u_)


# ---------------------------------------------------------------------------
# QR, SVD, eigh, polar


@staged_when_eager
def qr(a: ArrayLike, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True) -> Any:  # fmt: skip
    """``(q, r)`` with ``a = q r``: ``mode='full'`` (``q`` square),
    ``'economic'`` (``q`` of shape ``(..., m, k)``), ``'r'`` (``(r,)``, a
    one-element tuple as in SciPy).  ``pivoting=True`` is not supported (no
    primitive for the column-pivoted factorisation)."""
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"scipy.linalg.qr: mode must be 'full', 'r' or 'economic', got {mode!r}")
    if pivoting:
        raise NotImplementedError(
            "scipy.linalg.qr: pivoting=True is not supported: plait has no primitive for the column-pivoted QR "
            "factorisation (LAPACK geqp3)"
        )
    x = _matrices("qr", a, square=False)
    q, r = _lf.qr(x, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def qr_multiply(a: ArrayLike, c: ArrayLike, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False) -> tuple[Array, Array]:  # fmt: skip
    """``(q @ c, r)`` (``mode='right'``: ``(c @ q, r)``) for the economic QR
    of ``a``; ``conjugate`` uses ``conj(q)``."""
    if mode not in ("left", "right"):
        raise ValueError(f"scipy.linalg.qr_multiply: mode must be 'left' or 'right', got {mode!r}")
    q, r = qr(a, mode="economic", pivoting=pivoting)
    if conjugate:
        q = lax.conj(q) if dtypes.is_complex(dtype_of(q)) else q
    (c_,) = promote_dtypes_inexact("scipy.linalg.qr_multiply", c)
    m, k = (int(d) for d in shape_of(q)[-2:])
    cs = tuple(shape_of(c_))
    need, have = (k, cs[0] if cs else None) if mode == "left" else (m, cs[-1] if cs else None)
    if have != need:
        op = "q @ c" if mode == "left" else "c @ q"
        raise ValueError(
            f"scipy.linalg.qr_multiply: shapes are not compatible for {op}: q is ({m}, {k}), c is {cs}"
        )
    if mode == "left":
        vector = len(shape_of(c_)) == 1
        out = matmul(q, expand_dims(c_, -1) if vector else c_)
        return (squeeze(out, -1) if vector else out), r
    return matmul(c_, q), r


@staged_when_eager
def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:  # fmt: skip
    """``(u, s, vh)`` with ``a = u diag(s) vh`` (``s`` descending), or ``s`` alone."""
    x = _matrices("svd", a, square=False)
    return _lf.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)


@staged_when_eager
def eigh(a: ArrayLike, b: ArrayLike | None = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None,
         type: int = 1, check_finite: bool = True) -> Any:  # fmt: skip
    """``(w, v)`` for Hermitian ``a`` (``a v = v diag(w)``, ``w`` ascending), or
    ``w`` alone; only the ``lower`` (or upper) triangle is read.  The
    generalised problem (``b``) and ``eigvals`` are not supported, as in JAX."""
    if b is not None:
        raise NotImplementedError(
            "scipy.linalg.eigh: only b=None is supported (no generalised eigenproblem), as in JAX"
        )
    if eigvals is not None:
        raise NotImplementedError("scipy.linalg.eigh: the eigvals argument is not supported, as in JAX")
    x = _matrices("eigh", a)
    v, w = _lf.eigh(x, lower=lower, symmetrize_input=False)
    return w if eigvals_only else (w, v)


def eigh_tridiagonal(d: ArrayLike, e: ArrayLike, *, eigvals_only: bool = False, select: str = "a",
                     select_range: Any = None, tol: float | None = None, key: Any = None) -> Any:  # fmt: skip
    """The eigenvalues (ascending) of the symmetric tridiagonal matrix with
    diagonal ``d`` and off-diagonal ``e``, computed by ``eigh`` of the dense
    matrix.  As in JAX only ``eigvals_only=True`` and ``select='a'`` are
    supported."""
    if not eigvals_only:
        raise NotImplementedError(
            "scipy.linalg.eigh_tridiagonal: only eigvals_only=True is supported, as in JAX"
        )
    if select != "a":
        raise NotImplementedError("scipy.linalg.eigh_tridiagonal: only select='a' is supported")
    d_, e_ = promote_dtypes_inexact("scipy.linalg.eigh_tridiagonal", d, e)
    n = int(shape_of(d_)[-1])
    if len(shape_of(d_)) != 1 or shape_of(e_) != (n - 1,):
        raise ValueError(
            f"scipy.linalg.eigh_tridiagonal: d must be (n,) and e (n - 1,), got {tuple(shape_of(d_))} and "
            f"{tuple(shape_of(e_))}"
        )
    off = lax.pad(e_, np.zeros((), dtype_of(e_)), [(0, 1, 0)])
    dense = _diag_matrix(d_) + _diag_matrix(off, 1, n) + _diag_matrix(off, -1, n)
    _, w = _lf.eigh(dense, symmetrize_input=False)
    return w


def _diag_matrix(v: Array, k: int = 0, n: int | None = None) -> Array:
    """The ``(n, n)`` matrix with ``v[:n - |k|]`` on diagonal ``k``."""
    size = int(shape_of(v)[0]) if n is None else n
    rows = lax.broadcasted_iota(dtypes.int32, (size, size), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (size, size), 1)
    src = lax.broadcast_in_dim(v, (size, size), (0 if k >= 0 else 1,))
    zero = lax.broadcast_in_dim(np.zeros((), dtype_of(v)), (size, size), ())
    return _lenient.select(_lenient.eq(_lenient.sub(cols, rows), np.int32(k)), src, zero)


@staged_when_eager
def polar(a: ArrayLike, side: str = "right", *, method: str = "svd", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Array, Array]:  # fmt: skip
    """The polar decomposition ``a = u p`` (``side='right'``) or ``a = p u``
    (``'left'``), ``u`` with orthonormal columns and ``p`` Hermitian positive
    semi-definite, from the SVD (``method='qdwh'`` is accepted and computed
    the same way)."""
    if side not in ("left", "right"):
        raise ValueError(f"scipy.linalg.polar: side must be 'left' or 'right', got {side!r}")
    if method not in ("svd", "qdwh"):
        raise ValueError(f"scipy.linalg.polar: method must be 'svd' or 'qdwh', got {method!r}")
    x = _matrices("polar", a, square=False)
    u_svd, s, vh = _lf.svd(x, full_matrices=False)
    u = matmul(u_svd, vh)
    if side == "right":
        v = _lf.adjoint(vh)
        return u, matmul(multiply(v, expand_dims(s, -2).astype(dtype_of(v))), vh)
    return u, matmul(multiply(u_svd, expand_dims(s, -2).astype(dtype_of(u_svd))), _lf.adjoint(u_svd))


# ---------------------------------------------------------------------------
# The matrix exponential

# Padé coefficients b_0..b_m of the [m/m] approximant of exp (Higham 2005).
_PADE = {
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
         1.0),
}  # fmt: skip
# The largest 1-norm for which the [m/m] approximant is accurate to the unit roundoff.
_THETA = {7: 3.925724783138660, 13: 5.371920351148152}


def _pade(a: Array, degree: int) -> tuple[Array, Array]:
    """The odd (``u``) and even (``v``) parts of the Padé approximant's numerator."""
    b = _PADE[degree]
    n = int(shape_of(a)[-1])
    eye = creation.eye(n, dtype=dtype_of(a))
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    if degree == 7:
        u = matmul(a, b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
        return u, v
    u = matmul(
        a, matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    )
    v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    return u, v


@staged_when_eager
def expm(A: ArrayLike, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """The matrix exponential of square ``A`` (batched over leading axes), by
    scaling and squaring: ``A / 2**s`` with ``s`` chosen from the 1-norm (at
    most ``max_squarings``), a [13/13] Padé approximant ([7/7] in single
    precision), then ``s`` squarings.  Built from products and one solve, so
    it differentiates (``jvp``, ``grad``) and batches.  ``upper_triangular``
    is accepted as a hint and not needed."""
    x = _matrices("expm", A)
    single = dtype_of(x) in (dtypes.float32, dtypes.complex64) or dtype_of(x).itemsize <= 4
    degree = 7 if single else 13
    norm = _max(_sum(_abs(x), axis=-2), axis=-1)
    ratio = _lenient.div(norm, np.asarray(_THETA[degree], dtype_of(norm)))
    # s = ceil(log2(norm / theta)) clamped to [0, max_squarings]; log2 of 0 is -inf and clamps to 0.
    s = _lenient.clamp(
        np.asarray(0, dtype_of(norm)), lax.ceil(_lenient.div(lax.log(ratio), float(np.log(2.0)))),
        np.asarray(max_squarings, dtype_of(norm)),
    )  # fmt: skip
    scale = lax.exp2(lax.neg(s))
    scaled = multiply(x, expand_dims(expand_dims(scale, -1), -1).astype(dtype_of(x)))
    u, v = _pade(scaled, degree)
    r = _dec.solve(subtract(v, u), v + u)
    s_b = expand_dims(expand_dims(s, -1), -1)
    for i in range(max_squarings):  # a fixed number of steps (differentiable), each kept only while i < s
        keep = _lenient.lt(np.asarray(i, dtype_of(s_b)), s_b)
        r = where(keep, matmul(r, r), r)
    return r


@staged_when_eager
def expm_frechet(A: ArrayLike, E: ArrayLike, *, method: str | None = None, compute_expm: bool = True) -> Any:
    """The Fréchet derivative of :func:`expm` at ``A`` in the direction ``E``
    (``(expm(A), L)``, or ``L`` alone without ``compute_expm``), read off the
    exponential of the block matrix ``[[A, E], [0, A]]``."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(
            f"scipy.linalg.expm_frechet: method must be None, 'SPS' or 'blockEnlarge', got {method!r}"
        )
    a, e = promote_dtypes_inexact("scipy.linalg.expm_frechet", A, E)
    sa, se = shape_of(_matrices("expm_frechet", a)), shape_of(e)
    if tuple(sa) != tuple(se):
        raise ValueError(
            f"scipy.linalg.expm_frechet: A and E must have the same shape, got {tuple(sa)} and {tuple(se)}"
        )
    n = int(sa[-1])
    nd = len(sa)
    zero = lax.broadcast_in_dim(np.zeros((), dtype_of(a)), tuple(sa), ())
    big = lax.concatenate([lax.concatenate([a, e], nd - 1), lax.concatenate([zero, a], nd - 1)], nd - 2)
    full = expm(big)
    top = lax.slice_in_dim(full, 0, n, axis=nd - 2)
    expm_a = lax.slice_in_dim(top, 0, n, axis=nd - 1)
    frechet = lax.slice_in_dim(top, n, 2 * n, axis=nd - 1)
    return (expm_a, frechet) if compute_expm else frechet


@staged_when_eager
def solve_sylvester(
    A: ArrayLike, B: ArrayLike, C: ArrayLike, *, method: str = "schur", tol: float = 1e-8
) -> Array:
    """The ``X`` with ``A X + X B = C`` (``A`` ``(m, m)``, ``B`` ``(n, n)``, ``C``
    ``(m, n)``), by solving the ``(m n)``-sized linear system
    ``(I ⊗ A + Bᵀ ⊗ I) vec(X) = vec(C)`` (meant for small matrices: plait has
    no Schur primitive).  NaNs when ``A`` and ``-B`` share an eigenvalue."""
    if method not in ("schur", "eigen"):
        raise ValueError(f"scipy.linalg.solve_sylvester: method must be 'schur' or 'eigen', got {method!r}")
    a, b, c = promote_dtypes_inexact("scipy.linalg.solve_sylvester", A, B, C)
    m, n = int(shape_of(a)[0]), int(shape_of(b)[0])
    if shape_of(a) != (m, m) or shape_of(b) != (n, n) or shape_of(c) != (m, n):
        raise ValueError(
            f"scipy.linalg.solve_sylvester: expected A (m, m), B (n, n) and C (m, n), got {tuple(shape_of(a))}, "
            f"{tuple(shape_of(b))} and {tuple(shape_of(c))}"
        )
    eye_m, eye_n = creation.eye(m, dtype=dtype_of(a)), creation.eye(n, dtype=dtype_of(a))
    system = _kron(eye_n, a) + _kron(_lf.swap_last(b, get_aval(b)), eye_m)
    # vec stacks columns: vec(X)[j * m + i] = X[i, j].
    vec_c = lax.reshape(lax.transpose(c, (1, 0)), (m * n,))
    x = _dec.solve(system, vec_c)
    return lax.transpose(lax.reshape(x, (n, m)), (1, 0))


def _kron(p: Array, q: Array) -> Array:
    (a, b), (c, d) = shape_of(p), shape_of(q)
    outer = multiply(lax.reshape(p, (a, 1, b, 1)), lax.reshape(q, (1, c, 1, d)))
    return lax.reshape(outer, (a * c, b * d))


def schur(a: ArrayLike, output: str = "real") -> tuple[Array, Array]:
    """Not supported: the Schur factorisation needs LAPACK's ``gees``, which no
    plait primitive lowers to (``NotImplementedError``)."""
    raise NotImplementedError(
        "scipy.linalg.schur is not supported: plait has no primitive for the Schur factorisation (LAPACK gees); "
        "sqrtm and funm use eig instead"
    )


def rsf2csf(T: ArrayLike, Z: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:
    """Not supported: it converts the output of :func:`schur`, which plait does
    not provide (``NotImplementedError``)."""
    raise NotImplementedError(
        "scipy.linalg.rsf2csf is not supported: it converts a real Schur form, and plait has no Schur "
        "factorisation (LAPACK gees)"
    )
