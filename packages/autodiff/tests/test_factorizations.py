"""Derivatives of the matrix factorisations, checked numerically in float64:
JVPs against central differences, VJPs against JVPs (the dot-product test),
``linearize`` and staged evaluation (see :func:`autodiff_checks.check_all`).

Outputs that are determined only up to a sign or phase (eigen- and singular
vectors) are checked through functions that do not depend on it: their
squared magnitudes, or products that reconstruct the matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from autodiff_checks import check_all

import plait_autodiff as ad
from plait_core import enable_x64, lax
from plait_core.primitives import complex_numbers as cx
from plait_core.primitives import elementwise as ew
from plait_core.primitives import factorizations as fz

R = np.random.default_rng(7)


def normal(*shape: int) -> np.ndarray:
    return R.standard_normal(shape)


def spd(*shape: int) -> np.ndarray:
    a = normal(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def lower_triangular(*shape: int) -> np.ndarray:
    return np.tril(normal(*shape)) + 3 * np.eye(shape[-1])


def square(x: Any) -> Any:
    return ew.mul_p.bind(x, x)


def modulus2(z: Any) -> Any:
    return ew.add_p.bind(square(cx.real_p.bind(z)), square(cx.imag_p.bind(z)))


def eig_value_parts(a: Any) -> list[Any]:
    (w,) = fz.eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return [cx.real_p.bind(w), cx.imag_p.bind(w)]


CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("cholesky", fz.cholesky_p.bind, (spd(2, 3, 3),)),
    ("cholesky-symmetrized", lambda a: lax.linalg.cholesky(a), (spd(4, 4),)),
    ("lu-square", lambda a: fz.lu_p.bind(a)[0], (normal(2, 4, 4),)),
    ("lu-tall", lambda a: fz.lu_p.bind(a)[0], (normal(5, 3),)),
    ("lu-wide", lambda a: fz.lu_p.bind(a)[0], (normal(3, 5),)),
    ("qr-square-full", lambda a: fz.qr_p.bind(a, full_matrices=True), (normal(2, 3, 3),)),
    ("qr-tall-reduced", lambda a: fz.qr_p.bind(a, full_matrices=False), (normal(5, 3),)),
    ("eigh-values", lambda a: fz.eigh_p.bind(a, lower=True, sort_eigenvalues=True)[1], (spd(2, 4, 4),)),
    ("eigh-vectors-squared", lambda a: square(fz.eigh_p.bind(a, lower=False, sort_eigenvalues=True)[0]), (spd(3, 3),)),
    ("eigh-symmetrized", lambda a: lax.linalg.eigh(a)[1], (normal(4, 4),)),
    ("svd-values-only", lambda a: fz.svd_p.bind(a, full_matrices=False, compute_uv=False)[0], (normal(2, 4, 3),)),
]
for _shape in [(4, 4), (5, 3), (3, 5)]:
    _label = "x".join(map(str, _shape))
    CASES += [
        (f"svd-{_label}-values", lambda a: fz.svd_p.bind(a, full_matrices=False, compute_uv=True)[0], (normal(*_shape),)),
        (f"svd-{_label}-u-squared", lambda a: square(fz.svd_p.bind(a, full_matrices=False, compute_uv=True)[1]),
         (normal(*_shape),)),
        (f"svd-{_label}-vh-squared", lambda a: square(fz.svd_p.bind(a, full_matrices=False, compute_uv=True)[2]),
         (normal(*_shape),)),
    ]  # fmt: skip
CASES += [
    ("eig-values", lambda a: eig_value_parts(a), (normal(2, 4, 4),)),
    ("eig-vectors-modulus", lambda a: modulus2(fz.eig_p.bind(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)[1]), (normal(3, 3),)),
]  # fmt: skip
for _left in (True, False):
    for _lower in (True, False):
        for _trans in (False, True):
            for _unit in (False, True):
                _params = dict(left_side=_left, lower=_lower, transpose_a=_trans, conjugate_a=False, unit_diagonal=_unit)
                _a = lower_triangular(2, 3, 3) if _lower else np.swapaxes(lower_triangular(2, 3, 3), -1, -2)
                _b = normal(2, 3, 2) if _left else normal(2, 2, 3)
                _label = "-".join(k for k, v in _params.items() if v) or "plain"
                CASES.append((f"triangular_solve-{_label}", lambda a, b, p=_params: fz.triangular_solve_p.bind(a, b, **p),
                              (_a, _b)))  # fmt: skip


@pytest.mark.parametrize("label,f,args", CASES, ids=[c[0] for c in CASES])
def test_rule(label: str, f: Callable[..., Any], args: tuple[Any, ...]) -> None:
    check_all(f, args, seed=label, rtol=1e-5, atol=1e-6)


def test_triangular_solve_is_linear_in_b() -> None:
    a = lower_triangular(3, 3)
    params = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False, unit_diagonal=False)
    with enable_x64():
        t = ad.linear_transpose(lambda b: fz.triangular_solve_p.bind(a, b, **params), np.zeros((3, 2)))
        ct = normal(3, 2)
        (got,) = t(ct)
    np.testing.assert_allclose(got, np.linalg.solve(a.T, ct), rtol=1e-12)


def test_unsupported_derivatives_say_why() -> None:
    with enable_x64():
        with pytest.raises(NotImplementedError, match=r"derivative of qr is not supported for a 3x5 matrix"):
            ad.jvp(lambda a: fz.qr_p.bind(a, full_matrices=False)[1], (normal(3, 5),), (normal(3, 5),))
        with pytest.raises(NotImplementedError, match=r"svd with full_matrices=True is not supported for a non-square"):
            ad.jvp(lambda a: fz.svd_p.bind(a, full_matrices=True, compute_uv=True)[1], (normal(4, 3),), (normal(4, 3),))
        with pytest.raises(NotImplementedError, match=r"eig's left eigenvectors is not supported"):
            ad.jvp(lambda a: fz.eig_p.bind(a, compute_left_eigenvectors=True, compute_right_eigenvectors=False)[1],
                   (normal(3, 3),), (normal(3, 3),))  # fmt: skip


def test_grad_of_log_det_through_cholesky() -> None:
    a = spd(4, 4)

    def logdet(x: Any) -> Any:
        L = fz.cholesky_p.bind(x)
        d = lax.reduce_sum(lax.mul(L, np.eye(4)), (1,))
        return lax.mul(np.float64(2), lax.reduce_sum(lax.log(d), (0,)))

    with enable_x64():
        g = ad.grad(logdet)(a)
    # The primitive reads the lower triangle: the gradient of log det(A) = A⁻¹
    # folds the upper triangle's share onto the lower one.
    inv = np.linalg.inv(a)
    want = np.tril(2 * inv) - np.diag(np.diag(inv))
    np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
