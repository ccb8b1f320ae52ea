"""Logistic regression fitted by Newton's method with jax.hessian."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

rng = np.random.default_rng(1)
X = np.concatenate([rng.normal(size=(80, 2)), np.ones((80, 1))], 1)
labels = (X @ np.array([1.0, -1.0, 0.2]) + 0.5 * rng.normal(size=80) > 0).astype(np.float64)


def nll(w):
    z = X @ w
    return jnp.sum(jnp.logaddexp(0.0, z) - labels * z) + 0.05 * jnp.sum(w ** 2)


@jax.jit
def newton_step(w):
    g = jax.grad(nll)(w)
    h = jax.hessian(nll)(w)
    return w - jnp.linalg.solve(h, g)


w = jnp.zeros(3)
for _ in range(8):
    w = newton_step(w)


def np_newton():
    wn = np.zeros(3)
    for _ in range(30):
        p = 1 / (1 + np.exp(-X @ wn))
        g = X.T @ (p - labels) + 0.1 * wn
        h = X.T @ (X * (p * (1 - p))[:, None]) + 0.1 * np.eye(3)
        wn = wn - np.linalg.solve(h, g)
    return wn


show("newton_weights", w, np_newton(), rtol=1e-3, atol=1e-4)
show("gradient_at_optimum", jax.grad(nll)(w), np.zeros(3), atol=1e-3)
