"""plait.random distributions under jit, vmap over keys, and grad (the implicit gradient of gamma in its shape)."""

from __future__ import annotations

import numpy as np

from plait_autodiff import grad
from plait_batching import vmap
from plait_core import random
from plait_dispatch import jit


def _close(got: object, want: object) -> None:
    """Integers exactly; floats to a few ulps (XLA may fuse exp/log differently per program)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    if np.issubdtype(w.dtype, np.integer):
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-30)


def test_gamma_and_poisson_under_jit_match_eager() -> None:
    key = random.PRNGKey(3)
    a = np.array([0.4, 2.0, 30.0], np.float32)
    lam = np.array([3.0, 25.0], np.float32)
    f = jit(lambda k, a, lam: (random.gamma(k, a, (5, 3)), random.poisson(k, lam, (4, 2)), random.t(k, a)))
    got = f(key, a, lam)
    want = (random.gamma(key, a, (5, 3)), random.poisson(key, lam, (4, 2)), random.t(key, a))
    for g, w in zip(got, want):
        _close(g, w)


def test_vmap_over_keys_matches_a_python_loop() -> None:
    keys = random.split(random.PRNGKey(4), 3)

    def f(k: object) -> object:
        return random.gamma(k, np.float32(0.8), (6,)), random.poisson(k, np.float32(15.0), (6,)), random.laplace(k, (6,))

    got = vmap(f)(keys)
    for i in range(3):
        want = f(np.asarray(keys)[i])
        for g, w in zip(got, want):
            _close(np.asarray(g)[i], w)


def test_gamma_gradient_with_respect_to_shape_is_the_implicit_one() -> None:
    # For a = 1 the sample is exponential: x = -log(1 - u), and the implicit gradient
    # -(dP/da) / (dP/dx) at a = 1 is (integral_0^x log(t) e^-t dt - (1 - e^-x) digamma(1)) / e^-x.
    key = random.PRNGKey(5)
    x = float(np.asarray(random.gamma(key, np.float32(1.0))))
    g = float(np.asarray(grad(lambda a: random.gamma(key, a))(np.float32(1.0))))
    t = np.linspace(0.0, x, 200001)[1:]
    integral = np.trapezoid(np.log(t) * np.exp(-t), t) + (t[0] * np.log(t[0]) - t[0])  # the first slice exactly
    euler = 0.5772156649015329
    want = -(integral + (1 - np.exp(-x)) * euler) / np.exp(-x)
    np.testing.assert_allclose(g, want, rtol=2e-3)
