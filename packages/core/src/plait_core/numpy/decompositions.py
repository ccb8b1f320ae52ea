"""``numpy.linalg`` functions built on the factorisation primitives (see
:mod:`plait_core.lax.factorizations`), with ``jax.numpy.linalg``'s names,
signatures and result types: ``cholesky``, ``qr``, ``eigh``, ``eigvalsh``,
``eig``, ``eigvals``, ``svd``, ``svdvals``, ``det``, ``slogdet``, ``solve``,
``inv``, ``lstsq``, ``pinv``, ``matrix_rank``, ``matrix_power``, ``cond``,
``tensorsolve``, ``tensorinv``, ``multi_dot``, and the array-API helpers
``trace``, ``diagonal``, ``matrix_transpose`` and ``cross``.

Every function works on stacks of matrices (``(..., m, n)``), promotes
integer and boolean inputs to the default float dtype, and differentiates
through the primitives' JVP rules.  ``solve`` follows NumPy 2 / JAX: ``b``
is a vector only when it is 1-D; otherwise ``(..., n, k)`` with batch
dimensions broadcast against ``a``'s.
"""

from __future__ import annotations

import builtins
import math as _math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.custom_derivatives import custom_jvp
from plait_core.eager_staging import staged_when_eager
from plait_core.lax import _lenient
from plait_core.lax import factorizations as _lf
from plait_core.numpy import creation, logic, reductions, sorting
from plait_core.numpy import math as _m
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    broadcast_shapes,
    broadcast_to_shape,
    convert,
    dtype_of,
    promote_dtypes_inexact,
    shape_str,
)
from plait_core.numpy.dots import dot
from plait_core.numpy.norms import norm
from plait_core.numpy.products import cross as _cross
from plait_core.numpy.selection import take_along_axis
from plait_core.numpy.shape import concatenate as _concatenate
from plait_core.numpy.shape import diagonal as _diagonal
from plait_core.numpy.shape import flip as _flip
from plait_core.numpy.shape import matrix_transpose as _matrix_transpose
from plait_core.numpy.shape import trace as _trace
from plait_core.primitives.factorizations import real_dtype


class EighResult(NamedTuple):
    """``eigh``'s result: ascending real ``eigenvalues`` and the ``eigenvectors`` in columns."""

    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    """``eig``'s result: complex ``eigenvalues`` and right ``eigenvectors`` in columns."""

    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """``qr``'s result: orthonormal ``Q`` and upper triangular ``R``."""

    Q: Array
    R: Array


class SVDResult(NamedTuple):
    """``svd``'s result: ``a = U diag(S) Vh``."""

    U: Array
    S: Array
    Vh: Array


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: ``det = sign * exp(logabsdet)``."""

    sign: Array
    logabsdet: Array


# ---------------------------------------------------------------------------
# Arguments


def _inexact(name: str, *args: ArrayLike) -> list[Array]:
    """The arguments as arrays of their common inexact dtype (strongly typed)."""
    out = promote_dtypes_inexact(f"linalg.{name}", *args)
    return [convert(x, dtype_of(x)) for x in out]


def _matrices(name: str, a: ArrayLike, *, square: bool = True) -> Array:
    (x,) = _inexact(name, a)
    s = tuple(get_aval(x).shape)
    if len(s) < 2 or (square and s[-1] != s[-2]):
        want = "(..., n, n)" if square else "(..., m, n)"
        raise ValueError(f"linalg.{name}: the argument must have shape {want}, got {shape_str(s)}")
    return x


def _last(x: Array, index: int) -> Array:
    """``x[..., index]``."""
    nd = get_aval(x).ndim
    return lax.index_in_dim(x, index, nd - 1, keepdims=False)


def _mm(a: Array, b: Array) -> Array:
    return lax.batch_matmul(a, b)


def _col_mul(a: Array, v: Array) -> Array:
    """``a * v[..., None, :]``: scale the columns of ``a``."""
    aval = get_aval(a)
    nb = aval.ndim - 2
    return _lenient.mul(a, lax.broadcast_in_dim(convert(v, aval.dtype), tuple(aval.shape), (*range(nb), nb + 1)))


def _diag(a: Array) -> Array:
    """The diagonals ``(..., k)`` of ``(..., m, n)`` matrices."""
    nd = get_aval(a).ndim
    return _diagonal(a, 0, nd - 2, nd - 1)


def _eps(dtype: Any) -> float:
    return builtins.float(dtypes.finfo(real_dtype(np.dtype(dtype))).eps)


# ---------------------------------------------------------------------------
# Factorisations


@staged_when_eager
def cholesky(a: ArrayLike, *, upper: builtins.bool = False, symmetrize_input: builtins.bool = True) -> Array:
    """The Cholesky factor of Hermitian positive definite matrices: lower
    ``L`` with ``a = L Lᴴ`` (``U = Lᴴ`` with ``upper``); NaNs where ``a`` is not
    positive definite.  ``symmetrize_input`` factorises ``(a + aᴴ) / 2``."""
    x = _matrices("cholesky", a)
    L = _lf.cholesky(x, symmetrize_input=symmetrize_input)
    return _lf.adjoint(L) if upper else L


@staged_when_eager
def qr(a: ArrayLike, mode: str = "reduced") -> Any:
    """The QR factorisation: ``QRResult(Q, R)`` with ``a = Q R``; ``mode`` is
    ``'reduced'`` (``Q`` of shape ``(..., m, k)``, ``k = min(m, n)``),
    ``'complete'`` (``Q`` square) or ``'r'`` (``R`` alone).  ``'raw'`` (the
    Householder reflectors) is not supported: no primitive exposes them."""
    if mode == "raw":
        raise NotImplementedError(
            "linalg.qr: mode='raw' is not supported: plait's qr primitive returns Q and R, not the Householder "
            "reflectors of LAPACK's geqrf"
        )
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: unsupported QR decomposition mode {mode!r}; use 'reduced', 'complete' or 'r'")
    x = _matrices("qr", a, square=False)
    q, r = _lf.qr(x, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


@staged_when_eager
def eigh(a: ArrayLike, UPLO: str | None = None, symmetrize_input: builtins.bool = True) -> EighResult:
    """The eigendecomposition of Hermitian matrices: ``EighResult(eigenvalues,
    eigenvectors)``, eigenvalues real and ascending; ``UPLO`` (``'L'``, the
    default, or ``'U'``) is the triangle read when not ``symmetrize_input``."""
    lower = _uplo(UPLO)
    x = _matrices("eigh", a)
    v, w = _lf.eigh(x, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def _uplo(UPLO: str | None) -> builtins.bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")


@staged_when_eager
def eigvalsh(a: ArrayLike, UPLO: str | None = "L", *, symmetrize_input: builtins.bool = True) -> Array:
    """The (real, ascending) eigenvalues of Hermitian matrices."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


@staged_when_eager
def eig(a: ArrayLike) -> EigResult:
    """The eigendecomposition of general square matrices (CPU only):
    ``EigResult(eigenvalues, eigenvectors)``, both complex, right eigenvectors
    of unit norm in columns."""
    x = _matrices("eig", a)
    w, v = _lf.eig(x, compute_left_eigenvectors=False)
    return EigResult(w, v)


@staged_when_eager
def eigvals(a: ArrayLike) -> Array:
    """The complex eigenvalues of general square matrices (CPU only)."""
    x = _matrices("eigvals", a)
    return _lf.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


@staged_when_eager
def svd(
    a: ArrayLike,
    full_matrices: builtins.bool = True,
    compute_uv: builtins.bool = True,
    hermitian: builtins.bool = False,
    subset_by_index: tuple[int, int] | None = None,
) -> Any:
    """The singular value decomposition: ``SVDResult(U, S, Vh)`` with
    ``a = U diag(S) Vh`` and ``S`` descending (``S`` alone without
    ``compute_uv``).  ``hermitian`` computes it from an eigendecomposition."""
    x = _matrices("svd", a, square=hermitian)
    if hermitian:
        return _hermitian_svd(x, compute_uv)
    out = _lf.svd(x, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def _hermitian_svd(x: Array, compute_uv: builtins.bool) -> Any:
    v, w = _lf.eigh(x)
    s = _m.abs(w)
    order = sorting.argsort(lax.neg(s), axis=-1)
    s = lax.sort(s, dimension=get_aval(s).ndim - 1)
    s = lax.rev(s, (get_aval(s).ndim - 1,))
    if not compute_uv:
        return s
    nd = get_aval(v).ndim
    idx = lax.broadcast_in_dim(order, tuple(get_aval(v).shape), (*range(nd - 2), nd - 1))
    u = take_along_axis(v, idx, axis=-1)
    signs = take_along_axis(_m.sign(w), order, axis=-1)
    vh = _lf.adjoint(_col_mul(u, signs))
    return SVDResult(u, s, vh)


@staged_when_eager
def svdvals(x: ArrayLike, /) -> Array:
    """The singular values, descending."""
    out: Array = svd(x, compute_uv=False)
    return out


# ---------------------------------------------------------------------------
# Determinants, solves and inverses (through LU)


def _pivot_parity_sign(pivots: Array, dtype: Any) -> Array:
    """``(-1) ** (number of row swaps)`` of an LU's pivots, in ``dtype``."""
    nd = get_aval(pivots).ndim
    steps = lax.broadcasted_iota(dtypes.int32, tuple(get_aval(pivots).shape), nd - 1)
    swaps = lax.reduce_sum(convert(_lenient.ne(pivots, steps), dtypes.int32), (nd - 1,))
    odd = _lenient.eq(_lenient.rem(swaps, np.asarray(2, dtypes.int32)), np.asarray(1, dtypes.int32))
    shape_ = tuple(get_aval(odd).shape)
    plus = lax.broadcast_in_dim(np.asarray(1, dtype), shape_, ())
    return _lenient.select(odd, lax.neg(plus), plus)


def _slogdet_parts(x: Array, lu: Array, pivots: Array) -> tuple[Array, Array]:
    dt = dtype_of(x)
    diag = _diag(lu)
    mag = _m.abs(diag)
    logabsdet = reductions.sum(_m.log(mag), axis=-1)
    parity = _pivot_parity_sign(pivots, dt)
    unit = _m.divide(diag, convert(mag, dt)) if dtypes.is_complex(dt) else _m.sign(diag)
    sign = _m.multiply(parity, reductions.prod(unit, axis=-1))
    singular = reductions.any(_lenient.eq(mag, convert(0, dtype_of(mag))), axis=-1)
    sign = logic.where(singular, convert(0, dt), sign)
    logabsdet = logic.where(singular, convert(-np.inf, dtype_of(mag)), logabsdet)
    return sign, logabsdet


@custom_jvp
def _slogdet(x: Array) -> tuple[Array, Array]:
    lu, pivots, _ = _lf.lu(x)
    return _slogdet_parts(x, lu, pivots)


def _slogdet_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Any, Any]:
    # d log|det x| = re tr(x⁻¹ dx); the sign turns by i im tr(x⁻¹ dx) (complex x).
    (x,), (t,) = primals, tangents
    lu, pivots, perm = _lf.lu(x)
    sign, logabsdet = _slogdet_parts(x, lu, pivots)
    nd = get_aval(x).ndim
    tr = _trace(_lf.lu_solve(lu, perm, t), 0, nd - 2, nd - 1)
    if not dtypes.is_complex(dtype_of(x)):
        return (sign, logabsdet), (_lenient.mul(sign, convert(0, dtype_of(sign))), tr)
    re = _m.real(tr)
    return (sign, logabsdet), (_m.multiply(sign, _lenient.sub(tr, convert(re, dtype_of(tr)))), re)


_slogdet.defjvp(_slogdet_jvp)


@staged_when_eager
def slogdet(a: ArrayLike, *, method: str | None = None) -> SlogdetResult:
    """The sign and the log of the absolute value of the determinant:
    ``SlogdetResult(sign, logabsdet)``, computed from an LU factorisation
    (``method`` ``None`` or ``'lu'``; ``sign`` is 0 and ``logabsdet`` -inf for
    a singular matrix; for complex matrices ``sign`` has modulus 1).  Its
    derivative is ``re tr(a⁻¹ da)``, from the same LU factorisation."""
    if method not in (None, "lu"):
        raise ValueError(f"linalg.slogdet: unknown method {method!r}; plait computes it from an LU factorisation ('lu')")
    sign, logabsdet = _slogdet(_matrices("slogdet", a))
    return SlogdetResult(sign, logabsdet)


def _det_from_lu(x: Array) -> Array:
    lu, pivots, _ = _lf.lu(x)
    return _m.multiply(_pivot_parity_sign(pivots, dtype_of(x)), reductions.prod(_diag(lu), axis=-1))


def _exclusive_products(s: Array) -> Array:
    """``p[..., i] = prod(s[..., j] for j != i)``, without dividing (exact for zeros)."""
    nd = get_aval(s).ndim
    one = lax.broadcast_in_dim(np.asarray(1, dtype_of(s)), (*get_aval(s).shape[:-1], 1), ())
    before = _concatenate([one, lax.slice_in_dim(reductions.cumprod(s, axis=-1), 0, -1, axis=nd - 1)], axis=-1)
    rev = _flip(s, axis=-1)
    after = _concatenate([one, lax.slice_in_dim(reductions.cumprod(rev, axis=-1), 0, -1, axis=nd - 1)], axis=-1)
    return _m.multiply(before, _flip(after, axis=-1))


def adjugate(x: Array) -> Array:
    """The adjugate (the transposed cofactor matrix) of square matrices, defined
    for singular ones too: from ``x = U diag(s) Vh``, ``adj(x) = det(U) det(Vh)
    V diag(p) Uᴴ`` with ``p[i]`` the product of the other singular values."""
    u, s, vh = _lf.svd(x)
    dt = dtype_of(x)
    unit = _m.multiply(_det_from_lu(u), _det_from_lu(vh))
    scaled = _col_mul(_lf.adjoint(vh), _exclusive_products(s))
    nd = get_aval(x).ndim
    factor = lax.broadcast_in_dim(convert(unit, dt), tuple(get_aval(x).shape), tuple(range(nd - 2)))
    return _lenient.mul(factor, _mm(scaled, _lf.adjoint(u)))


@custom_jvp
def _det(x: Array) -> Array:
    return _det_from_lu(x)


def _det_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    nd = get_aval(x).ndim
    # d det = trace(adj(x) dx), which stays finite at singular matrices.
    change = lax.reduce_sum(_lenient.mul(adjugate(x), _lf.swap_last(t, get_aval(t))), (nd - 2, nd - 1))
    return _det(x), change


_det.defjvp(_det_jvp)


@staged_when_eager
def det(a: ArrayLike) -> Array:
    """The determinant (from an LU factorisation).  Its derivative is
    ``trace(adj(a) da)``, through the adjugate, so it is finite at singular
    matrices too (as in JAX).  Weak for a weak input, as in JAX."""
    x = _matrices("det", a)
    dt = dtype_of(x)
    if dt.itemsize < 4:  # float16 / bfloat16: LAPACK has no half-precision kernels; factorise in float32
        x = convert(x, np.dtype(np.float32))
    return convert(_det(x), dt, get_aval(as_array(a, "linalg.det")).weak_type)


@custom_jvp
def _solve(a: Array, b: Array) -> Array:
    lu, _, perm = _lf.lu(a)
    return _lf.lu_solve(lu, perm, b)


def _solve_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]) -> tuple[Array, Array]:
    # a x = b  =>  a dx = db - da x: one more solve with the same LU factors.
    (a, b), (da, db) = primals, tangents
    lu, _, perm = _lf.lu(a)
    x = _lf.lu_solve(lu, perm, b)
    return x, _lf.lu_solve(lu, perm, _lenient.sub(db, _mm(da, x)))


_solve.defjvp(_solve_jvp)


@staged_when_eager
def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """The solution ``x`` of ``a x = b`` for square ``a`` (``(..., n, n)``):
    ``b`` is one vector ``(n,)``, or matrices ``(..., n, k)`` whose batch
    dimensions broadcast against ``a``'s (a batched vector needs
    ``b[..., None]``)."""
    x, y = _inexact("solve", a, b)
    xs, ys = tuple(get_aval(x).shape), tuple(get_aval(y).shape)
    if len(xs) < 2 or xs[-1] != xs[-2]:
        raise ValueError(f"linalg.solve: a must have shape (..., n, n), got {shape_str(xs)}")
    n = xs[-1]
    vector = len(ys) == 1
    if vector:
        y = lax.expand_dims(y, (1,))
        ys = (*ys, 1)
    if len(ys) < 2 or ys[-2] != n:
        raise ValueError(
            f"linalg.solve: incompatible shapes a {shape_str(xs)} and b {shape_str(tuple(get_aval(b).shape) if hasattr(b, 'shape') else ys)}: "
            "b must be (n,) or (..., n, k) with n the size of a (a batched vector needs b[..., None])"
        )
    batch = broadcast_shapes("linalg.solve", xs[:-2], ys[:-2])
    x = broadcast_to_shape(x, (*batch, n, n), "linalg.solve")
    y = broadcast_to_shape(y, (*batch, n, ys[-1]), "linalg.solve")
    out = _solve(x, y)
    if vector:
        out = lax.squeeze(out, (get_aval(out).ndim - 1,))
    return out


@staged_when_eager
def inv(a: ArrayLike) -> Array:
    """The inverse of square matrices (``(..., n, n)``)."""
    x = _matrices("inv", a)
    s = tuple(get_aval(x).shape)
    eye = lax.broadcast_in_dim(creation.eye(s[-1], dtype=dtype_of(x)), s, (len(s) - 2, len(s) - 1))
    return solve(x, eye)


@staged_when_eager
def matrix_power(a: ArrayLike, n: int) -> Array:
    """``a`` multiplied by itself ``n`` times (by repeated squaring); ``n = 0``
    is the identity and a negative ``n`` powers the inverse."""
    if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)):
        raise TypeError(f"linalg.matrix_power: exponent must be an integer, got {n!r}")
    arr = creation.asarray(a)
    s = tuple(get_aval(arr).shape)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"linalg.matrix_power: the argument must have shape (..., n, n), got {shape_str(s)}")
    if n == 0:
        return lax.broadcast_in_dim(creation.eye(s[-1], dtype=dtype_of(arr)), s, (len(s) - 2, len(s) - 1))
    if n < 0:
        arr, n = inv(arr), -n
    result: Array | None = None
    square = arr
    while n:
        if n & 1:
            result = square if result is None else _mm(result, square)
        n >>= 1
        if n:
            square = _mm(square, square)
    assert result is not None
    return result


# ---------------------------------------------------------------------------
# Through the SVD


def _default_rtol(shape: Sequence[Any], dtype: Any) -> float:
    return builtins.max(int(shape[-1]), int(shape[-2])) * _eps(dtype)


@staged_when_eager
def pinv(a: ArrayLike, rtol: ArrayLike | None = None, hermitian: builtins.bool = False, *,
         rcond: ArrayLike | None = None) -> Array:  # fmt: skip
    """The Moore-Penrose pseudo-inverse (``(..., n, m)`` for ``(..., m, n)``):
    singular values at most ``rtol`` times the largest are treated as zero
    (``rtol`` defaults to ``max(m, n) * eps``; ``rcond`` is its old name)."""
    x = _matrices("pinv", a, square=False)
    if rcond is not None:
        rtol = rcond
    aval = get_aval(x)
    u, s, vh = svd(x, full_matrices=False, hermitian=hermitian)
    rdt = dtype_of(s)
    tol = _default_rtol(aval.shape, aval.dtype) if rtol is None else rtol
    cutoff = _m.multiply(convert(tol, rdt), reductions.max(s, axis=-1, keepdims=True, initial=0))
    keep = logic.greater(s, cutoff)
    safe = logic.where(keep, s, convert(1, rdt))
    s_inv = logic.where(keep, _m.divide(convert(1, rdt), safe), convert(0, rdt))
    return _mm(_col_mul(_lf.adjoint(vh), s_inv), _lf.adjoint(u))


@staged_when_eager
def matrix_rank(M: ArrayLike, rtol: ArrayLike | None = None, *, hermitian: builtins.bool = False,
                tol: ArrayLike | None = None) -> Array:  # fmt: skip
    """The number of singular values above ``rtol`` times the largest (or above
    the absolute ``tol``); int32.  Arrays of rank below 2 have rank 1 unless all zero."""
    (x,) = _inexact("matrix_rank", M)
    aval = get_aval(x)
    if aval.ndim < 2:
        return convert(reductions.any(_lenient.ne(x, convert(0, aval.dtype))), dtypes.int32)
    s = svd(x, compute_uv=False, hermitian=hermitian)
    rdt = dtype_of(s)
    if tol is not None:
        cutoff = convert(tol, rdt)
    else:
        r = _default_rtol(aval.shape, aval.dtype) if rtol is None else rtol
        cutoff = _m.multiply(convert(r, rdt), reductions.max(s, axis=-1, keepdims=True, initial=0))
    return reductions.sum(convert(logic.greater(s, cutoff), dtypes.int32), axis=-1)


@staged_when_eager
def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None, *,
          numpy_resid: builtins.bool = False) -> tuple[Array, Array, Array, Array]:  # fmt: skip
    """The least-squares solution of ``a x = b`` for a matrix ``a`` (``(m, n)``)
    and ``b`` of shape ``(m,)`` or ``(m, k)``: ``(x, residuals, rank, s)``.
    Singular values at most ``rcond`` times the largest (default
    ``max(m, n) * eps``) count as zero.  ``residuals`` are the squared norms
    of ``b - a x`` per column; with ``numpy_resid`` they are empty, as
    NumPy's, unless ``a`` has full column rank and ``m > n``."""
    x, y = _inexact("lstsq", a, b)
    xs, ys = tuple(get_aval(x).shape), tuple(get_aval(y).shape)
    if len(xs) != 2 or len(ys) not in (1, 2) or ys[0] != xs[0]:
        raise ValueError(
            f"linalg.lstsq: a must be (m, n) and b (m,) or (m, k) with the same m, got {shape_str(xs)} and {shape_str(ys)}"
        )
    vector = len(ys) == 1
    if vector:
        y = lax.expand_dims(y, (1,))
    m, n = int(xs[0]), int(xs[1])
    u, s, vh = svd(x, full_matrices=False)
    rdt = dtype_of(s)
    r = builtins.max(m, n) * _eps(dtype_of(x)) if rcond is None else rcond
    cutoff = _m.multiply(convert(r, rdt), reductions.max(s, initial=0))
    keep = logic.greater(s, cutoff)
    safe = logic.where(keep, s, convert(1, rdt))
    s_inv = logic.where(keep, _m.divide(convert(1, rdt), safe), convert(0, rdt))
    rank = reductions.sum(convert(keep, dtypes.int32))
    sol = _mm(_col_mul(_lf.adjoint(vh), s_inv), _mm(_lf.adjoint(u), y))
    diff = _lenient.sub(y, _mm(x, sol))
    resid = reductions.sum(_m.real(_m.multiply(_m.conjugate(diff), diff)), axis=0)
    if numpy_resid and (m <= n or builtins.int(np.asarray(rank)) < n):
        resid = creation.zeros((0,), rdt)
    if vector:
        sol = lax.squeeze(sol, (1,))
    return sol, resid, rank, s


@staged_when_eager
def cond(x: ArrayLike, p: Any = None) -> Array:
    """The condition number of square (or, for ``p`` None / 2 / -2, any)
    matrices: the ratio of the largest to the smallest singular value, or
    ``norm(x, p) * norm(inv(x), p)`` for the other orders; ``inf`` for a
    singular matrix."""
    arr = _matrices("cond", x, square=p not in (None, 2, -2))
    if p is None or p == 2 or p == -2:
        s = svdvals(arr)
        hi, lo = _last(s, 0), _last(s, -1)
        r = _m.divide(hi, lo) if p != -2 else _m.divide(lo, hi)
    else:
        nd = get_aval(arr).ndim
        axes = (nd - 2, nd - 1)
        r = _m.multiply(norm(arr, p, axis=axes), norm(inv(arr), p, axis=axes))
    # A singular matrix (NaN from the inverse without NaNs in x) is infinitely ill-conditioned.
    nd = get_aval(arr).ndim
    has_nan = reductions.any(_m.isnan(arr), axis=(nd - 2, nd - 1))
    singular = logic.logical_and(_m.isnan(r), logic.logical_not(has_nan))
    return logic.where(singular, convert(np.inf, dtype_of(r)), r)


@staged_when_eager
def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """The inverse of ``a`` seen as a linear map from its last axes to its
    first ``ind`` axes: the result has shape ``a.shape[ind:] + a.shape[:ind]``."""
    if isinstance(ind, builtins.bool) or not isinstance(ind, (builtins.int, np.integer)) or ind <= 0:
        raise ValueError(f"linalg.tensorinv: ind must be a positive integer, got {ind!r}")
    (arr,) = _inexact("tensorinv", a)
    s = tuple(int(d) for d in get_aval(arr).shape)
    out_shape, in_shape = s[:ind], s[ind:]
    rows, cols = _math.prod(out_shape), _math.prod(in_shape)
    if rows != cols:
        raise ValueError(
            f"linalg.tensorinv: the product of the first ind={ind} dimensions ({rows}) must equal that of the "
            f"others ({cols}); got shape {shape_str(s)}"
        )
    return lax.reshape(inv(lax.reshape(arr, (rows, cols))), (*in_shape, *out_shape))


@staged_when_eager
def tensorsolve(a: ArrayLike, b: ArrayLike, axes: tuple[int, ...] | None = None) -> Array:
    """The ``x`` with ``tensordot(a, x, x.ndim) = b``: ``a``'s axes are ``b``'s
    shape then ``x``'s; ``axes`` names axes of ``a`` to move to the end first."""
    arr, rhs = _inexact("tensorsolve", a, b)
    if axes is not None:
        nd = get_aval(arr).ndim
        moved = [ax % nd for ax in axes]
        rest = [i for i in range(nd) if i not in moved]
        arr = lax.transpose(arr, (*rest, *moved))
    s = tuple(int(d) for d in get_aval(arr).shape)
    bs = tuple(int(d) for d in get_aval(rhs).shape)
    nb = len(bs)
    if s[:nb] != bs:
        raise ValueError(f"linalg.tensorsolve: the leading axes of a {shape_str(s)} must be b's shape {shape_str(bs)}")
    x_shape = s[nb:]
    rows, cols = _math.prod(bs), _math.prod(x_shape)
    if rows != cols:
        raise ValueError(
            f"linalg.tensorsolve: a {shape_str(s)} is not square as a map from x {shape_str(x_shape)} to b {shape_str(bs)}"
        )
    sol = solve(lax.reshape(arr, (rows, cols)), lax.reshape(rhs, (rows,)))
    return lax.reshape(sol, x_shape)


@staged_when_eager
def multi_dot(arrays: Sequence[ArrayLike], *, precision: Any = None) -> Array:
    """The product of a chain of matrices; the first may be a vector (a row)
    and the last a vector (a column), as in NumPy."""
    arrs = [creation.asarray(x) for x in arrays]
    nds = [get_aval(x).ndim for x in arrs]
    if len(arrs) < 2 or any(d != 2 for d in nds[1:-1]) or nds[0] not in (1, 2) or nds[-1] not in (1, 2):
        raise ValueError(
            "linalg.multi_dot: needs at least two arrays, all two-dimensional except the first and the last, "
            f"which may be one-dimensional; got shapes {[shape_str(tuple(get_aval(x).shape)) for x in arrs]}"
        )
    out = arrs[0]
    for x in arrs[1:]:
        out = dot(out, x, precision=precision)
    return out


# ---------------------------------------------------------------------------
# Array-API helpers of numpy.linalg


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The sums of the diagonals (``offset`` above the main one) of the matrices in the last two axes."""
    arr = creation.asarray(x)
    nd = get_aval(arr).ndim
    return _trace(arr, offset, nd - 2, nd - 1, dtype)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """The diagonals (``offset`` above the main one) of the matrices in the last two axes."""
    arr = creation.asarray(x)
    nd = get_aval(arr).ndim
    return _diagonal(arr, offset, nd - 2, nd - 1)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes."""
    return _matrix_transpose(x)


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along ``axis``."""
    return _cross(x1, x2, axis=axis)


__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "trace",
]
