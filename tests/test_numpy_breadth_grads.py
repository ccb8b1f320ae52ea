"""Gradients of the breadth helpers of ``plait.numpy`` (differences,
convolutions, quantiles, covariances, interpolation, weighted counts, ...).

They are built from primitives, so ``grad`` needs no rules of its own; the
oracle is central differences in float64 of each program's NumPy twin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_autodiff import grad

RNG = np.random.default_rng(11)


class Case(NamedTuple):
    name: str
    f: Callable[[Any], Any]  # plait, of one array, to a scalar
    ref: Callable[[np.ndarray], float]  # its NumPy twin
    x: np.ndarray


K = RNG.normal(size=3)
XP = np.array([-1.0, -0.2, 0.5, 1.3, 2.0])
P = RNG.normal(size=4)
W = RNG.normal(size=6)
B = RNG.normal(size=(5, 3))
IDX = np.array([0, 2, 2, 1, 4, 0])


def _vec(n: int, seed: int) -> np.ndarray:
    # Well separated values: quantiles and sorts have no ties to straddle.
    return np.random.default_rng(seed).permutation(np.linspace(-1.5, 1.5, n)) + 0.01 * seed


CASES = [
    Case("diff", lambda x: pnp.sum(pnp.diff(x, 2) ** 2), lambda x: float(np.sum(np.diff(x, 2) ** 2)), _vec(6, 1)),
    Case("convolve", lambda x: pnp.sum(pnp.convolve(x, K, "same") ** 2),
         lambda x: float(np.sum(np.convolve(x, K, "same") ** 2)), _vec(6, 2)),
    Case("correlate", lambda x: pnp.sum(pnp.sin(pnp.correlate(x, K, "full"))),
         lambda x: float(np.sum(np.sin(np.correlate(x, K, "full")))), _vec(5, 3)),
    Case("gradient", lambda x: pnp.sum(pnp.gradient(x * x, 0.5) * x),
         lambda x: float(np.sum(np.gradient(x * x, 0.5) * x)), _vec(6, 4)),
    Case("trapezoid", lambda x: pnp.trapezoid(pnp.exp(x), XP), lambda x: float(np.trapezoid(np.exp(x), XP)),
         _vec(5, 5)),
    Case("interp", lambda x: pnp.sum(pnp.interp(x, XP, pnp.sin(XP)) ** 2),
         lambda x: float(np.sum(np.interp(x, XP, np.sin(XP)) ** 2)), _vec(4, 6) * 0.9),
    Case("interp_fp", lambda x: pnp.sum(pnp.interp(np.array([-0.5, 0.7, 1.9]), XP, x) ** 2),
         lambda x: float(np.sum(np.interp([-0.5, 0.7, 1.9], XP, x) ** 2)), _vec(5, 7)),
    Case("quantile", lambda x: pnp.sum(pnp.quantile(x, np.array([0.3, 0.5, 0.8]))),
         lambda x: float(np.sum(np.quantile(x, [0.3, 0.5, 0.8]))), _vec(7, 8)),
    Case("nanpercentile", lambda x: pnp.nanpercentile(pnp.where(x > 1.2, np.nan, x), 40.0),
         lambda x: float(np.nanpercentile(np.where(x > 1.2, np.nan, x), 40.0)), _vec(8, 9)),
    Case("cov", lambda x: pnp.sum(pnp.cov(pnp.reshape(x, (2, 4))) ** 2),
         lambda x: float(np.sum(np.cov(x.reshape(2, 4)) ** 2)), _vec(8, 10)),
    Case("corrcoef", lambda x: pnp.corrcoef(pnp.reshape(x, (2, 4)))[0, 1],
         lambda x: float(np.corrcoef(x.reshape(2, 4))[0, 1]), _vec(8, 11)),
    Case("polyval", lambda x: pnp.sum(pnp.polyval(x, np.array([0.5, -1.2]))),
         lambda x: float(np.sum(np.polyval(x, [0.5, -1.2]))), P),
    Case("vander", lambda x: pnp.sum(pnp.vander(x, 4) * 0.3), lambda x: float(np.sum(np.vander(x, 4) * 0.3)),
         _vec(3, 12)),
    Case("cross", lambda x: pnp.sum(pnp.cross(pnp.reshape(x, (2, 3)), B[:2]) ** 2),
         lambda x: float(np.sum(np.cross(x.reshape(2, 3), B[:2]) ** 2)), _vec(6, 13)),
    Case("kron", lambda x: pnp.sum(pnp.sin(pnp.kron(x, B))), lambda x: float(np.sum(np.sin(np.kron(x, B)))),
         _vec(2, 14)),
    Case("bincount_weights", lambda x: pnp.sum(pnp.bincount(IDX, x, length=5) ** 2),
         lambda x: float(np.sum(np.bincount(IDX, x, minlength=5) ** 2)), W),
    Case("histogram_weights", lambda x: pnp.sum(pnp.histogram(np.linspace(0, 1, 6), 3, weights=x)[0] ** 2),
         lambda x: float(np.sum(np.histogram(np.linspace(0, 1, 6), 3, weights=x)[0] ** 2)), W),
    Case("partition", lambda x: pnp.partition(x, 2)[2] * 3.0, lambda x: float(np.partition(x, 2)[2] * 3.0),
         _vec(5, 15)),
    Case("piecewise", lambda x: pnp.sum(pnp.piecewise(x, [x < 0], [lambda v: v * v, lambda v: pnp.sin(v)])),
         lambda x: float(np.sum(np.piecewise(x, [x < 0], [lambda v: v * v, np.sin]))), _vec(6, 16)),
    Case("apply_along_axis", lambda x: pnp.sum(pnp.apply_along_axis(lambda r: pnp.max(r) * r[0], 1,
                                                                    pnp.reshape(x, (2, 3)))),
         lambda x: float(np.sum(np.apply_along_axis(lambda r: np.max(r) * r[0], 1, x.reshape(2, 3)))), _vec(6, 17)),
]


def _numerical_grad(ref: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        out.flat[i] = (ref(x + step) - ref(x - step)) / (2 * eps)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_grad_matches_finite_differences(case: Case) -> None:
    x = np.asarray(case.x, np.float64)
    want = _numerical_grad(case.ref, x)
    got = np.asarray(grad(case.f)(x.astype(np.float32)))
    assert got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
