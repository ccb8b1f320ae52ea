"""JVP rules of the matrix factorisations, and the transpose of
``triangular_solve`` in its right-hand side.

Each tangent is derived from differentiating the defining identity (with
``op(x)`` the operation a primitive applies, ``ᴴ`` the conjugate transpose):

* ``cholesky``, ``a = L Lᴴ``: ``dL = L Φ(L⁻¹ da L⁻ᴴ)``, ``Φ`` keeping the
  strictly lower triangle and half the diagonal.  ``da`` is read as the
  primitive reads ``a``: the Hermitian matrix of its lower triangle.
* ``triangular_solve``, ``op(a) x = b``: ``dx = op(a)⁻¹ (db - op(da) x)``
  (from the right: ``(db - x op(da)) op(a)⁻¹``), ``da`` restricted to the
  triangle that is read.  Linear in ``b``; its transpose solves with
  ``op(a)ᵀ``.
* ``lu``, ``P a = L U``: with ``M = L⁻¹ P da U⁻¹``,
  ``d(L + U) = L tril(M, -1) + triu(M) U`` (``L`` and ``U`` completed to
  square matrices by the identity for non-square ``a``); the integer
  pivots and permutation have ``float0`` tangents.
* ``qr``, ``a = q r`` (``m >= n``, reduced): with ``C = qᴴ da r⁻¹`` and
  ``Ω = tril(C, -1) - tril(C, -1)ᴴ`` (plus ``i·imag(diag C)`` for complex),
  ``dq = q (Ω - C) + da r⁻¹`` and ``dr = (C - Ω) r``.  Other shapes (wide
  ``a``, full ``q`` of a non-square ``a``) are ``NotImplementedError``: ``q``
  is then not determined by ``a`` smoothly, as in JAX.
* ``eigh``, ``a v = v diag(w)``: with ``C = vᴴ da v``, ``dw = re diag(C)``,
  ``dv = v (F ∘ C)`` where ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal
  (infinite for repeated eigenvalues, as in JAX).
* ``svd``, ``a = u diag(s) vh``: ``ds = re diag(uᴴ da v)``; the vectors follow
  the standard formulas of the reduced decomposition, plus the components
  outside the span of ``u`` (tall) or ``v`` (wide).  Full ``u``/``vh`` of a
  non-square ``a`` is ``NotImplementedError`` (not unique), as in JAX.
* ``eig``, ``a vr = vr diag(w)``: ``C = vr⁻¹ da vr``, ``dw = diag(C)``,
  ``dvr = vr (F ∘ C)`` projected to keep each column's norm.  Derivatives of
  left eigenvectors are ``NotImplementedError``, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import declare_nonlinear, def_transpose
from plait_autodiff.tangents import Zero, instantiate
from plait_autodiff.transpose import NonlinearError, is_undefined
from plait_core import dtypes, lax
from plait_core.lax import _lenient
from plait_core.lax import factorizations as la
from plait_core.primitives import factorizations as fz


def _aval(x: Any) -> Any:
    from plait_core.ops import aval

    return aval(x)


def _mm(x: Any, y: Any) -> Any:
    return lax.batch_matmul(x, y)


def _h(x: Any) -> Any:
    return la.adjoint(x)


def _t(x: Any) -> Any:
    return la.swap_last(x, _aval(x))


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(_aval(x).dtype)


def _real(x: Any) -> Any:
    return lax.real(x) if _is_complex(x) else x


def _to(x: Any, dtype: Any) -> Any:
    return x if _aval(x).dtype == dtype else lax.convert_element_type(x, dtype)


def _tril(x: Any, k: int = 0) -> Any:
    return la.tril_mask(x, _aval(x), k)


def _triu(x: Any, k: int = 0) -> Any:
    return la.tril_mask(x, _aval(x), k, lower=False)


def _diag_part(x: Any) -> Any:
    """The diagonals of a stack of square matrices, ``(..., n)``."""
    return lax.reduce_sum(_keep_diagonal(x), (_aval(x).ndim - 1,))


def _keep_diagonal(x: Any) -> Any:
    """``x`` with every entry off the diagonal zero, selected (a product with
    the identity would turn an infinite entry into NaN, in a transpose too)."""
    aval = _aval(x)
    shape = tuple(aval.shape)
    rows = lax.broadcasted_iota(dtypes.int32, shape, aval.ndim - 2)
    cols = lax.broadcasted_iota(dtypes.int32, shape, aval.ndim - 1)
    return lax.select(_lenient.eq(rows, cols), x, lax.full(shape, 0, aval.dtype))


def _eye_like(x: Any) -> Any:
    aval = _aval(x)
    shape = tuple(aval.shape)
    rows = lax.broadcasted_iota(dtypes.int32, shape, aval.ndim - 2)
    cols = lax.broadcasted_iota(dtypes.int32, shape, aval.ndim - 1)
    return lax.convert_element_type(_lenient.eq(rows, cols), aval.dtype)


def _hermitian_of_triangle(x: Any, lower: bool) -> Any:
    """The Hermitian matrix whose lower (or upper) triangle is that of ``x``
    (the diagonal's real part)."""
    tri = _tril(x) if lower else _triu(x)
    strict = _tril(x, -1) if lower else _triu(x, 1)
    full = _lenient.add(tri, _h(strict))
    if _is_complex(x):
        diag = _keep_diagonal(_lenient.sub(full, _to(_real(full), _aval(x).dtype)))
        full = _lenient.sub(full, diag)
    return full


def _scalar(x: Any, value: float) -> Any:
    return np.asarray(value, _aval(x).dtype)


# ---------------------------------------------------------------------------
# cholesky


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    L = fz.cholesky_p.bind(a)
    da = _hermitian_of_triangle(instantiate(da), lower=True)
    right = la.triangular_solve(L, da, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    middle = la.triangular_solve(L, right, left_side=True, lower=True)
    phi = _lenient.sub(_tril(middle), _lenient.mul(_scalar(middle, 0.5), _keep_diagonal(middle)))
    # L Φ is lower triangular; the tril says so to the transpose, which then drops the cotangent of the
    # constant zeros above the diagonal (infinite there, the product would make NaN of every entry)
    return L, _tril(_mm(L, phi))


jvp_rules[fz.cholesky_p] = _cholesky_jvp


# ---------------------------------------------------------------------------
# triangular_solve


def _op(x: Any, transpose_a: bool, conjugate_a: bool) -> Any:
    if conjugate_a and _is_complex(x):
        x = lax.conj(x)
    return _t(x) if transpose_a else x


def _triangular_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    a, b = primals
    da, db = tangents
    x = fz.triangular_solve_p.bind(a, b, **params)
    rhs: Any = None if type(db) is Zero else db
    if type(da) is not Zero:
        lower = params["lower"]
        part = _tril(da, 0 if not params["unit_diagonal"] else -1) if lower else _triu(
            da, 0 if not params["unit_diagonal"] else 1
        )
        opda = _op(part, params["transpose_a"], params["conjugate_a"])
        prod = _mm(opda, x) if params["left_side"] else _mm(x, opda)
        rhs = lax.neg(prod) if rhs is None else _lenient.sub(rhs, prod)
    return x, fz.triangular_solve_p.bind(a, rhs, **params)


jvp_rules[fz.triangular_solve_p] = _triangular_solve_jvp


@def_transpose(fz.triangular_solve_p)
def _triangular_solve_transpose(ct: Any, a: Any, b: Any, **params: Any) -> list[Any]:
    if is_undefined(a):
        raise NonlinearError("cannot transpose triangular_solve with respect to a: it is linear in b only")
    if type(ct) is Zero:
        return [None, ct]
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, fz.triangular_solve_p.bind(a, ct, **flipped)]


# ---------------------------------------------------------------------------
# lu


def _square_completion(x: Any, rows: int, cols: int, size: int) -> Any:
    """``x`` (``rows x cols``) placed in the top-left of a ``size x size`` identity."""
    aval = _aval(x)
    batch = tuple(aval.shape[:-2])
    eye = _eye_like(lax.broadcast_in_dim(np.asarray(0, aval.dtype), (*batch, size, size), ()))
    pad = [(0, 0, 0)] * len(batch) + [(0, size - rows, 0), (0, size - cols, 0)]
    padded = lax.pad(x, np.asarray(0, aval.dtype), pad)
    inside = lax.pad(lax.broadcast_in_dim(np.asarray(1, aval.dtype), (*batch, rows, cols), ()), np.asarray(0, aval.dtype), pad)
    return _lenient.add(padded, _lenient.mul(eye, _lenient.sub(np.asarray(1, aval.dtype), inside)))


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    factors, pivots, perm = fz.lu_p.bind(a)
    aval = _aval(a)
    nb = aval.ndim - 2
    m, n = int(aval.shape[-2]), int(aval.shape[-1])
    k = min(m, n)
    lower = lax.slice_in_dim(_tril(factors, -1), 0, k, axis=nb + 1)
    upper = lax.slice_in_dim(_triu(factors), 0, k, axis=nb)
    completed = _square_completion(lower, m, k, m)
    L = _lenient.add(_tril(completed, -1), _eye_like(completed))
    U = _square_completion(upper, k, n, n)
    x = la.permute_rows(instantiate(da), perm)
    lx = la.triangular_solve(L, x, left_side=True, lower=True, unit_diagonal=True)
    mid = la.triangular_solve(U, lx, left_side=False, lower=False)
    d = _lenient.add(_mm(L, _tril(mid, -1)), _mm(_triu(mid), U))
    return [factors, pivots, perm], [d, Zero.from_primal_value(pivots), Zero.from_primal_value(perm)]


jvp_rules[fz.lu_p] = _lu_jvp


# ---------------------------------------------------------------------------
# qr


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    q, r = fz.qr_p.bind(a, full_matrices=full_matrices)
    m, n = _aval(a).shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(
            f"the derivative of qr is not supported for a {m}x{n} matrix with full_matrices={full_matrices}: "
            "only tall or square matrices with the reduced factorisation (full_matrices=False, or m == n) have "
            "a q that depends smoothly on a"
        )
    da = instantiate(da)
    da_rinv = la.triangular_solve(r, da, left_side=False, lower=False)
    c = _mm(_h(q), da_rinv)
    low = _tril(c, -1)
    omega = _lenient.sub(low, _h(low))
    if _is_complex(c):
        imag_diag = _lenient.sub(c, _to(_real(c), _aval(c).dtype))
        omega = _lenient.add(omega, _lenient.mul(_eye_like(c), imag_diag))
    dq = _lenient.add(_mm(q, _lenient.sub(omega, c)), da_rinv)
    dr = _mm(_lenient.sub(c, omega), r)
    return [q, r], [dq, dr]


jvp_rules[fz.qr_p] = _qr_jvp


# ---------------------------------------------------------------------------
# eigh


def _gap_inverse(w: Any, dtype: Any) -> Any:
    """``F[..., i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it."""
    aval = _aval(w)
    n = aval.shape[-1]
    shape = (*aval.shape, n)
    nb = aval.ndim - 1
    wj = lax.broadcast_in_dim(w, shape, (*range(nb), nb + 1))
    wi = lax.broadcast_in_dim(w, shape, tuple(range(nb + 1)))
    eye = _eye_like(lax.broadcast_in_dim(np.asarray(0, aval.dtype), shape, ()))
    gaps = _lenient.add(_lenient.sub(wj, wi), eye)
    return _to(_lenient.sub(_lenient.div(np.asarray(1, aval.dtype), gaps), eye), dtype)


def _eigh_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool, sort_eigenvalues: bool) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    v, w = fz.eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues)
    da = _hermitian_of_triangle(instantiate(da), lower)
    c = _mm(_h(v), _mm(da, v))
    dw = _real(_diag_part(c))
    dv = _mm(v, _lenient.mul(_gap_inverse(w, _aval(a).dtype), c))
    return [v, w], [dv, dw]


jvp_rules[fz.eigh_p] = _eigh_jvp


# ---------------------------------------------------------------------------
# svd


def _svd_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool, compute_uv: bool) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    aval = _aval(a)
    m, n = int(aval.shape[-2]), int(aval.shape[-1])
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"the derivative of svd with full_matrices=True is not supported for a non-square ({m}x{n}) matrix: "
            "the extra singular vectors are not unique; use full_matrices=False"
        )
    outs = fz.svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
    s, u, vh = outs if compute_uv else fz.svd_p.bind(a, full_matrices=False, compute_uv=True)
    dt = aval.dtype
    da = instantiate(da)
    v = _h(vh)
    ds_mat = _mm(_h(u), _mm(da, v))
    ds = _real(_diag_part(ds_mat))
    if not compute_uv:
        return list(outs), [ds]
    nb = aval.ndim - 2
    k = min(m, n)
    row_shape = (*aval.shape[:-2], k, k)
    s_row = _to(lax.broadcast_in_dim(s, row_shape, (*range(nb), nb + 1)), dt)  # s[j] at [i, j]
    s_col = _to(lax.broadcast_in_dim(s, row_shape, tuple(range(nb + 1))), dt)  # s[i] at [i, j]
    eye = _eye_like(s_row)
    # F[i, j] = 1 / (s[j]² - s[i]²) off the diagonal.
    f = _lenient.sub(_lenient.div(np.asarray(1, dt), _lenient.add(_lenient.mul(_lenient.add(s_row, s_col), _lenient.sub(s_row, s_col)), eye)), eye)
    s_safe = _lenient.add(s, _to(_lenient.eq(s, np.asarray(0, _aval(s).dtype)), _aval(s).dtype))
    s_inv = _to(_lenient.div(np.asarray(1, _aval(s).dtype), s_safe), dt)
    s_inv_diag = _lenient.mul(eye, lax.broadcast_in_dim(s_inv, row_shape, (*range(nb), nb + 1)))
    ss = _lenient.mul(s_row, ds_mat)  # ds_mat[i, j] s[j]
    sd = _lenient.mul(s_col, ds_mat)  # s[i] ds_mat[i, j]
    half = np.asarray(0.5, dt)
    du_inner = _lenient.add(_lenient.mul(f, _lenient.add(ss, _h(ss))), _lenient.mul(_lenient.mul(half, _lenient.sub(ds_mat, _h(ds_mat))), s_inv_diag))
    du = _mm(u, du_inner)
    dv = _mm(v, _lenient.mul(f, _lenient.add(sd, _h(sd))))
    s_inv_row = lax.broadcast_in_dim(s_inv, (*aval.shape[:-2], max(m, n), k), (*range(nb), nb + 1))
    if m > n:
        dav = _mm(da, v)
        du = _lenient.add(du, _lenient.mul(_lenient.sub(dav, _mm(u, _mm(_h(u), dav))), s_inv_row))
    if n > m:
        dahu = _mm(_h(da), u)
        dv = _lenient.add(dv, _lenient.mul(_lenient.sub(dahu, _mm(v, _mm(vh, dahu))), s_inv_row))
    return list(outs), [ds, du, _h(dv)]


jvp_rules[fz.svd_p] = _svd_jvp


# ---------------------------------------------------------------------------
# eig


def _eig_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool
) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    if compute_left_eigenvectors:
        raise NotImplementedError(
            "the derivative of eig's left eigenvectors is not supported (as in JAX); "
            "call eig with compute_left_eigenvectors=False"
        )
    outs = fz.eig_p.bind(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=compute_right_eigenvectors
    )
    w = outs[0]
    vr = outs[1] if compute_right_eigenvectors else fz.eig_p.bind(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=True
    )[1]
    c_dt = _aval(w).dtype
    da = _to(instantiate(da), c_dt)
    factors, _, perm = fz.lu_p.bind(vr)
    c = la.lu_solve(factors, perm, _mm(da, vr))
    dw = _diag_part(c)
    if not compute_right_eigenvectors:
        return list(outs), [dw]
    dv = _mm(vr, _lenient.mul(_gap_inverse(w, c_dt), c))
    # Keep unit norms: remove each column's component along itself (real part).
    along = _real(lax.reduce_sum(_lenient.mul(lax.conj(vr), dv), (_aval(vr).ndim - 2,)))
    nb = _aval(vr).ndim - 2
    dv = _lenient.sub(dv, _lenient.mul(vr, lax.broadcast_in_dim(_to(along, c_dt), tuple(_aval(vr).shape), (*range(nb), nb + 1))))
    return list(outs), [dw, dv]


jvp_rules[fz.eig_p] = _eig_jvp

declare_nonlinear(fz.cholesky_p, fz.lu_p, fz.qr_p, fz.eigh_p, fz.svd_p, fz.eig_p)
