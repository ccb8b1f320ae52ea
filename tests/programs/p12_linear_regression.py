"""Linear regression: closed form, gradient descent under jit, and jnp.linalg.lstsq."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

rng = np.random.default_rng(0)
X = rng.normal(size=(64, 3))
w_true = np.array([1.5, -2.0, 0.5])
y = X @ w_true + 0.3 + 0.01 * rng.normal(size=64)
Xb = np.concatenate([X, np.ones((64, 1))], 1)
w_ref = np.linalg.solve(Xb.T @ Xb, Xb.T @ y)


def loss(w, X, y):
    return jnp.mean((X @ w - y) ** 2)


grad = jax.jit(jax.grad(loss))
w = jnp.zeros(4)
for _ in range(300):
    w = w - 0.1 * grad(w, Xb, y)
show("gd_weights", w, w_ref, rtol=1e-3, atol=1e-3)
show("normal_equations", jnp.linalg.solve(Xb.T @ Xb, Xb.T @ y), w_ref, rtol=1e-3, atol=1e-4)
show("lstsq", jnp.linalg.lstsq(jnp.asarray(Xb), jnp.asarray(y))[0], w_ref, rtol=1e-3, atol=1e-4)
show("final_loss", loss(w, Xb, y), np.mean((Xb @ w_ref - y) ** 2), rtol=1e-2, atol=1e-5)
