"""The meta-package's extras: plait.scipy, plait.nn.initializers,
plait.flatten_util and plait.numpy.ndarray, with jit and grad."""

from __future__ import annotations

import math

import numpy as np

import plait
import plait.numpy as pnp
import plait_core


def test_extras_are_the_core_modules() -> None:
    import plait.flatten_util
    import plait.nn.initializers
    import plait.scipy.special
    import plait.scipy.stats.norm

    assert plait.scipy.special is plait_core.scipy.special
    assert plait.scipy.stats.norm is plait_core.scipy.stats.norm
    assert plait.nn.initializers is plait_core.nn_initializers
    assert plait.flatten_util is plait_core.flatten_util


def test_glorot_normal_under_jit() -> None:
    key = plait.random.PRNGKey(0)
    w = plait.nn.initializers.glorot_normal()(key, (3, 4))
    assert isinstance(w, plait.Array) and w.shape == (3, 4) and w.dtype == np.float32
    jitted = plait.jit(lambda k: plait.nn.initializers.glorot_normal()(k, (3, 4)))(key)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(w), rtol=1e-6)
    big = np.asarray(plait.nn.initializers.he_uniform()(key, (300, 200)))
    np.testing.assert_allclose(big.std(), math.sqrt(2 / 300), rtol=2e-2)


def test_ravel_pytree_with_grad() -> None:
    params = {"w": np.ones((2, 2), np.float32), "b": np.zeros(2, np.float32)}
    flat, unravel = plait.flatten_util.ravel_pytree(params)

    def loss(v: object) -> object:
        p = unravel(v)
        return pnp.sum(p["w"] ** 2) + pnp.sum(p["b"] + 1.0)

    g = plait.jit(plait.grad(loss))(flat)
    # tree_flatten orders dict keys: b (2 entries) then w (4).
    np.testing.assert_allclose(np.asarray(g), [1.0, 1.0, 2.0, 2.0, 2.0, 2.0])


def test_ndarray_isinstance() -> None:
    assert isinstance(pnp.ones(3), pnp.ndarray)
    assert not isinstance(np.ones(3), pnp.ndarray)  # as in JAX: NumPy arrays are not plait arrays
    seen: list[bool] = []

    def f(x: object) -> object:
        seen.append(isinstance(x, pnp.ndarray))
        return x

    plait.jit(f)(1.0)
    plait.grad(f)(1.0)
    plait.vmap(f)(np.ones(2, np.float32))
    assert seen == [True, True, True]


def test_grad_through_special_functions() -> None:
    sp = plait.scipy.special
    x = 0.7
    np.testing.assert_allclose(float(plait.grad(sp.erf)(x)), 2 / math.sqrt(math.pi) * math.exp(-x * x), rtol=1e-6)
    np.testing.assert_allclose(float(plait.grad(sp.erfc)(2.5)), -2 / math.sqrt(math.pi) * math.exp(-6.25),
                               rtol=1e-5)
    np.testing.assert_allclose(float(plait.grad(sp.logit)(0.3)), 1 / (0.3 * 0.7), rtol=1e-6)
    np.testing.assert_allclose(float(plait.grad(sp.gammaln)(3.0)), float(sp.digamma(3.0)), rtol=1e-6)
    # xlogy's derivatives are those of x * log(y), also at x == 0 (JAX's custom rule).
    gx, gy = plait.grad(sp.xlogy, argnums=(0, 1))(0.0, 2.0)
    np.testing.assert_allclose([float(gx), float(gy)], [math.log(2.0), 0.0], rtol=1e-6)
    a = np.array([1.0, 2.0, 3.0], np.float32)
    g = plait.jit(plait.grad(sp.logsumexp))(a)
    np.testing.assert_allclose(np.asarray(g), np.exp(a) / np.exp(a).sum(), rtol=1e-6)
    gn = plait.grad(plait.scipy.stats.norm.logpdf)(1.5, 0.5, 2.0)
    np.testing.assert_allclose(float(gn), -(1.5 - 0.5) / 4.0, rtol=1e-6)
