"""Derivatives of the functions that subtract a maximum for stability
(``logaddexp``, ``logaddexp2``, ``cumlogsumexp``, ``logsumexp``, softmax and
log-softmax) are those of the smooth function, also where inputs tie: the
tie-breaking of ``max``/``abs`` inside the stable formula must not leak into
any derivative (issue 24: the second derivative of ``cumlogsumexp`` did).

The oracles are closed forms in float64: the gradient of ``out_i =
logsumexp(x[:i+1])`` is the prefix softmax ``p_i``, and the derivative of
``p_i . w`` along ``x_k`` is ``p_ik (w_k - p_i . w)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core.numpy as pnp
from plait_core import lax, nn

TIES = [
    [1.9375, 1.9375, -1.0625],  # the case found by the fuzzer (issue 24)
    [2.0, 2.0, 2.0],
    [5.0, 1.0, 5.0],
    [0.0, -0.0, 3.0],
    [-1e30, 0.5, 0.5],
]
W0 = np.array([0.3, -0.7, 0.5])
W1 = np.array([0.9, 0.2, -0.4])


def _softmax(v: np.ndarray) -> np.ndarray:
    e = np.exp(v - v.max())
    return e / e.sum()


def _cumlogsumexp_second(x: np.ndarray, reverse: bool) -> np.ndarray:
    """d/dx of sum_i w0_i (grad out_i . w1), in float64."""
    n = len(x)
    out = np.zeros(n)
    for i in range(n):
        idx = np.arange(i, n) if reverse else np.arange(i + 1)
        p = _softmax(x[idx])
        mean = p @ W1[idx]
        out[idx] += W0[i] * p * (W1[idx] - mean)
    return out


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("x", TIES)
def test_cumlogsumexp_second_derivative_is_smooth_at_ties(x: list[float], reverse: bool) -> None:
    def loss(v: Any) -> Any:
        return pnp.sum(lax.cumlogsumexp(v, axis=0, reverse=reverse) * W0.astype(np.float32))

    def loss2(v: Any) -> Any:
        return pnp.sum(ad.grad(loss)(v) * W1.astype(np.float32))

    got = np.asarray(ad.grad(loss2)(np.asarray(x, np.float32)))
    want = _cumlogsumexp_second(np.asarray(x, np.float64), reverse)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_cumlogsumexp_first_derivative_at_minus_infinity() -> None:
    # -inf contributes nothing and is the running value itself at the start.
    x = np.array([-np.inf, 1.0, -1e30], np.float32)
    got = ad.grad(lambda v: pnp.sum(lax.cumlogsumexp(v)))(x)
    np.testing.assert_array_equal(np.asarray(got), [1.0, 2.0, 0.0])


@pytest.mark.parametrize("base2", [False, True])
def test_logaddexp_second_derivative_at_a_tie(base2: bool) -> None:
    # f(a, b) = log(e^a + e^b): d2f/da2 = p (1 - p) with p = e^a / (e^a + e^b); base 2
    # scales by ln 2: f = log2(2^a + 2^b), d2f/da2 = ln2 p (1 - p).
    f = pnp.logaddexp2 if base2 else pnp.logaddexp
    scale = np.log(2.0) if base2 else 1.0
    for a, b in [(1.5, 1.5), (0.0, -0.0), (3.0, 1.0)]:
        second = ad.grad(ad.grad(lambda u, b=b: f(u, np.float32(b))))(np.float32(a))
        base = 2.0 if base2 else np.e
        p = base**a / (base**a + base**b)
        np.testing.assert_allclose(float(second), scale * p * (1 - p), rtol=1e-5)


@pytest.mark.parametrize("name", ["logsumexp", "log_softmax", "softmax"])
def test_reductions_subtracting_the_max_are_smooth_at_ties(name: str) -> None:
    x = np.array([0.75, 0.75, -2.0], np.float32)
    fn = {
        "logsumexp": lambda v: nn.logsumexp(v) * pnp.ones(3, np.float32),
        "log_softmax": lambda v: nn.log_softmax(v),
        "softmax": lambda v: nn.softmax(v),
    }[name]

    def loss2(v: Any) -> Any:
        return pnp.sum(ad.grad(lambda u: pnp.sum(fn(u) * W0.astype(np.float32)))(v) * W1.astype(np.float32))

    got = np.asarray(ad.grad(loss2)(x))
    # float64 central differences of the float64 closed form of loss2.
    def loss2_64(v: np.ndarray) -> float:
        p = _softmax(v)
        jac = {
            "logsumexp": np.outer(np.ones(3), p),
            "log_softmax": np.eye(3) - np.outer(np.ones(3), p),
            "softmax": np.diag(p) - np.outer(p, p),
        }[name]
        return float((W0 @ jac) @ W1)

    h = 1e-6
    x64 = x.astype(np.float64)
    want = np.array([(loss2_64(x64 + h * e) - loss2_64(x64 - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
