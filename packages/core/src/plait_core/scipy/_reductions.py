"""Matrix functions by eigendecomposition (``sqrtm``, ``funm``) and the
Hessenberg reduction by Householder reflections, for
:mod:`plait_core.scipy.linalg`.

JAX computes ``sqrtm`` and ``funm`` from a Schur decomposition, which plait
has no primitive for; here they use ``eig`` (``A = V diag(w) V⁻¹``, so
``f(A) = V diag(f(w)) V⁻¹``), which agrees for diagonalisable matrices (the
generic case) and, like JAX's, returns a complex result.  ``hessenberg``
applies LAPACK's reflectors (``gehrd``'s convention) with core's array
operations, so it agrees with SciPy up to rounding and differentiates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.lax import factorizations as _lf
from plait_core.numpy import creation
from plait_core.numpy import decompositions as _dec
from plait_core.numpy._util import Array, ArrayLike, convert, dtype_of, promote_dtypes_inexact, shape_of
from plait_core.numpy.dots import matmul
from plait_core.numpy.logic import where
from plait_core.numpy.math import abs as _abs
from plait_core.numpy.math import conj, multiply, real, sqrt
from plait_core.numpy.reductions import sum as _sum
from plait_core.numpy.shape import expand_dims

__all__ = ["funm", "hessenberg", "sqrtm"]


def _square(name: str, a: ArrayLike) -> Array:
    (x,) = promote_dtypes_inexact(f"scipy.linalg.{name}", a)
    s = shape_of(x)
    if len(s) != 2 or s[0] != s[1]:
        raise ValueError(f"scipy.linalg.{name}: expected a square matrix, got an array of shape {tuple(s)}")
    return x


def _by_eig(x: Array, f: Callable[[Array], Array]) -> Array:
    w, v = _dec.eig(x)
    fv = multiply(v, expand_dims(f(w), 0))
    # f(A) = V diag(f(w)) V⁻¹, i.e. the solution of Vᵀ Yᵀ = (V diag(f(w)))ᵀ.
    return lax.transpose(_dec.solve(lax.transpose(v, (1, 0)), lax.transpose(fv, (1, 0))), (1, 0))


def sqrtm(A: ArrayLike, blocksize: int = 1) -> Array:
    """The principal square root of a square matrix (complex), from its
    eigendecomposition.  ``blocksize`` other than 1 is not supported, as in JAX."""
    if blocksize > 1:
        raise NotImplementedError(
            "scipy.linalg.sqrtm: the blocked algorithm (blocksize > 1) is not implemented, as in JAX"
        )
    x = _square("sqrtm", A)
    return _by_eig(x, sqrt)


def funm(A: ArrayLike, func: Callable[[Array], Array], disp: bool = True) -> Any:
    """``func`` applied to a square matrix through its eigenvalues (``func`` maps
    an array of complex eigenvalues elementwise); ``(f(A), error estimate)``
    without ``disp`` (the estimate is the relative residual of ``A f(A) = f(A) A``)."""
    x = _square("funm", A)
    out = _by_eig(x, func)
    if disp:
        return out
    xc = convert(x, dtype_of(out))
    commutator = matmul(xc, out) - matmul(out, xc)
    err = real(_sum(_abs(commutator))) / real(_sum(_abs(matmul(xc, out))))
    return out, err


def hessenberg(
    a: ArrayLike, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The upper Hessenberg form ``h = qᴴ a q`` of a square matrix (``(h, q)``
    with ``calc_q``), by Householder reflections as LAPACK applies them."""
    h = _square("hessenberg", a)
    n = int(shape_of(h)[0])
    dt = dtype_of(h)
    q = creation.eye(n, dtype=dt)
    is_complex = dtypes.is_complex(dt)
    part = np.dtype(np.float64 if dt in (dtypes.float64, dtypes.complex128) else np.float32)
    for k in range(
        n - 1
    ):  # the last step is the identity for real matrices; it makes a complex subdiagonal real
        col = lax.slice(h, (k + 1, k), (n, k + 1))[:, 0]
        alpha = col[0]
        rest = col[1:]
        xnorm = sqrt(_sum(real(multiply(rest, conj(rest))) if is_complex else multiply(rest, rest)))
        a_re = real(alpha) if is_complex else alpha
        a_abs2 = real(multiply(alpha, conj(alpha))) if is_complex else multiply(alpha, alpha)
        norm = sqrt(a_abs2 + multiply(xnorm, xnorm))
        sign = where(a_re >= 0, np.asarray(1, part), np.asarray(-1, part))
        beta = convert(-sign * norm, part)
        trivial = (xnorm == 0) & ((lax.imag(alpha) == 0) if is_complex else True)
        safe_beta = where(trivial, np.asarray(1, part), beta)
        tau = where(trivial, np.zeros((), dt), convert((safe_beta - alpha) / safe_beta, dt))
        denom = where(trivial, np.ones((), dt), convert(alpha - safe_beta, dt))
        v = lax.concatenate([np.ones((1,), dt), rest / denom], 0)
        v = lax.concatenate([np.zeros((k + 1,), dt), v], 0)
        # H_k = I - tau v vᴴ; a <- H_kᴴ a H_k, q <- q H_k.
        vh = conj(v) if is_complex else v
        tau_h = conj(tau) if is_complex else tau
        h = h - tau_h * multiply(expand_dims(v, 1), expand_dims(matmul(vh, h), 0))
        h = h - tau * multiply(expand_dims(matmul(h, v), 1), expand_dims(vh, 0))
        q = q - tau * multiply(expand_dims(matmul(q, v), 1), expand_dims(vh, 0))
    # The entries below the subdiagonal are zero up to rounding; set them to zero as LAPACK does.
    h = _lf.tril_mask(h, get_aval(h), -1, lower=False)
    return (h, q) if calc_q else h
