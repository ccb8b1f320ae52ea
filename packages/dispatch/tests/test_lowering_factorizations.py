"""The factorisations lowered to jaxlib's LAPACK kernels, against core's
NumPy implementation of the same jaxpr, for every dtype; eager against
``jit``; failures (not positive definite, singular) as NaN or inf like JAX;
zero-sized matrices; and the custom calls in the module text.

Factors defined only up to a sign or phase (eigen- and singular vectors) are
compared through quantities that do not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_lowering_harness import RTOL, check, stage, xla_lower

import plait_core as pc
from plait_core import lax
from plait_core.primitives import complex_numbers as cx
from plait_core.primitives import elementwise as ew
from plait_core.primitives import factorizations as fz
from plait_dispatch import jit

DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128)]


def sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hpd(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    a = sample(shape, dtype, 1)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def modulus(x: Any) -> Any:
    """|x|² elementwise (real), blind to signs and phases."""
    if np.dtype(pc.get_aval(x).dtype).kind != "c":
        return ew.mul_p.bind(x, x)
    re, im = cx.real_p.bind(x), cx.imag_p.bind(x)
    return ew.add_p.bind(ew.mul_p.bind(re, re), ew.mul_p.bind(im, im))


def tol(dtype: Any, factor: float = 100) -> float:
    return RTOL[np.dtype(dtype)] * factor


CASES: list[Any] = []
for _dt in DTYPES:
    _id = _dt.name
    CASES += [
        pytest.param(lambda a: fz.cholesky_p.bind(a), (hpd((2, 4, 4), _dt),), id=f"cholesky-{_id}"),
        pytest.param(lambda a, b: [fz.triangular_solve_p.bind(a, b, left_side=ls, lower=lo, transpose_a=tr,
                                                               conjugate_a=cj, unit_diagonal=ud)
                                   for ls in (True, False) for lo in (True, False) for tr in (True, False)
                                   for cj in (True, False) for ud in (True, False)],
                     (sample((2, 3, 3), _dt, 2) + 3 * np.eye(3, dtype=_dt), sample((2, 3, 3), _dt, 3)),
                     id=f"triangular_solve-{_id}"),
        pytest.param(lambda a: fz.lu_p.bind(a), (sample((2, 5, 3), _dt, 4),), id=f"lu-tall-{_id}"),
        pytest.param(lambda a: fz.lu_p.bind(a), (sample((3, 5), _dt, 5),), id=f"lu-wide-{_id}"),
        pytest.param(lambda a: fz.qr_p.bind(a, full_matrices=True), (sample((2, 5, 3), _dt, 6),), id=f"qr-full-{_id}"),
        pytest.param(lambda a: fz.qr_p.bind(a, full_matrices=False), (sample((3, 5), _dt, 7),), id=f"qr-wide-{_id}"),
        pytest.param(lambda a: fz.qr_p.bind(a, full_matrices=False), (sample((5, 3), _dt, 8),), id=f"qr-reduced-{_id}"),
        pytest.param(lambda a: [fz.eigh_p.bind(a, lower=True, sort_eigenvalues=True)[1],
                                modulus(fz.eigh_p.bind(a, lower=False, sort_eigenvalues=True)[0])],
                     (hpd((2, 4, 4), _dt),), id=f"eigh-{_id}"),
        pytest.param(lambda a: [fz.svd_p.bind(a, full_matrices=False, compute_uv=False)[0],
                                *map(modulus, fz.svd_p.bind(a, full_matrices=False, compute_uv=True)[1:])],
                     (sample((2, 5, 3), _dt, 9),), id=f"svd-{_id}"),
        pytest.param(lambda a: [modulus(x) for x in fz.svd_p.bind(a, full_matrices=True, compute_uv=True)],
                     (sample((3, 4), _dt, 10),), id=f"svd-full-{_id}"),
        pytest.param(lambda a: [modulus(x) for x in fz.eig_p.bind(
            a, compute_left_eigenvectors=True, compute_right_eigenvectors=True)],
                     (sample((2, 4, 4), _dt, 11),), id=f"eig-{_id}"),
    ]  # fmt: skip


@pytest.mark.parametrize("fn,args", CASES)
def test_lapack_lowering_matches_numpy(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    with pc.enable_x64():
        check(fn, *args, rtol=tol(args[0].dtype))


def test_cholesky_of_an_indefinite_matrix_is_nan_as_in_jax() -> None:
    a = np.stack([np.eye(3, dtype=np.float32), -np.eye(3, dtype=np.float32)])
    out = np.asarray(jit(fz.cholesky_p.bind)(a))
    np.testing.assert_array_equal(out[0], np.eye(3))
    assert np.isnan(out[1][np.tril_indices(3)]).all() and (out[1][np.triu_indices(3, 1)] == 0).all()


def test_singular_triangular_solve_gives_infinities() -> None:
    a = np.diag(np.array([1.0, 0.0], np.float32))
    x = np.asarray(jit(lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True))(a, np.ones((2, 1), np.float32)))
    assert x[0, 0] == 1 and not np.isfinite(x[1, 0])


def test_eager_equals_jit() -> None:
    a = hpd((3, 5, 5), np.float32)

    def f(x: Any) -> Any:
        _, w = lax.linalg.eigh(x)
        _, s, _ = lax.linalg.svd(x, full_matrices=False)
        lu, piv, perm = lax.linalg.lu(x)
        _, r = lax.linalg.qr(x)
        return [w, s, lu, piv, perm, r, lax.linalg.cholesky(x)]

    for e, j in zip(f(a), jit(f)(a)):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-5, atol=1e-5)


def test_zero_sized_matrices_are_constants() -> None:
    q, r = jit(lambda a: fz.qr_p.bind(a, full_matrices=True))(np.zeros((2, 0), np.float32))
    np.testing.assert_array_equal(np.asarray(q), np.eye(2))
    assert np.asarray(r).shape == (2, 0)
    _, piv, perm = jit(fz.lu_p.bind)(np.zeros((3, 0), np.float32))
    np.testing.assert_array_equal(np.asarray(perm), [0, 1, 2])
    assert np.asarray(piv).shape == (0,)


@pytest.mark.parametrize("fn,target", [
    (lambda a: fz.cholesky_p.bind(a), "lapack_spotrf_ffi"),
    (lambda a: fz.lu_p.bind(a), "lapack_sgetrf_ffi"),
    (lambda a: fz.qr_p.bind(a, full_matrices=True), "lapack_sorgqr_ffi"),
    (lambda a: fz.eigh_p.bind(a, lower=True, sort_eigenvalues=True), "lapack_ssyevd_ffi"),
    (lambda a: fz.svd_p.bind(a, full_matrices=False, compute_uv=True), "lapack_sgesdd_ffi"),
    (lambda a: fz.eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True), "lapack_sgeev_ffi"),
    (lambda a: fz.triangular_solve_p.bind(a, a, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                                          unit_diagonal=False), "lapack_strsm_ffi"),
])  # fmt: skip
def test_module_calls_the_lapack_kernel(fn: Callable[..., Any], target: str) -> None:
    text = xla_lower(stage(fn, np.eye(3, dtype=np.float32))).text
    assert f'call_target_name = "{target}"' in text and "api_version = 4 : i32" in text
