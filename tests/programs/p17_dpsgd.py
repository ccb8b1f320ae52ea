"""Differentially private SGD: per-example gradients, clipping, Gaussian noise."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

rng = np.random.default_rng(4)
X = rng.normal(size=(32, 3)).astype(np.float32)
y = (X @ np.array([1.0, -1.0, 2.0]) > 0).astype(np.float32)


def loss(w, x, t):
    z = jnp.dot(x, w)
    return jnp.logaddexp(0.0, z) - t * z


def clipped_grads(w, X, y, clip):
    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, X, y)
    norms = jnp.linalg.norm(grads, axis=1, keepdims=True)
    return grads / jnp.maximum(1.0, norms / clip)


w = jnp.array([0.5, 0.5, 0.5])
cg = clipped_grads(w, X, y, 0.5)
p = 1 / (1 + np.exp(-(X.astype(np.float64) @ np.asarray(w, np.float64))))
ref = (p - y)[:, None] * X
ref = ref / np.maximum(1.0, np.linalg.norm(ref, axis=1, keepdims=True) / 0.5)
show("clipped_per_example", cg, ref, rtol=1e-4, atol=1e-5)
show("norms_bounded", jnp.max(jnp.linalg.norm(cg, axis=1)) <= 0.5 + 1e-6, 1.0)


@jax.jit
def private_step(w, key):
    g = clipped_grads(w, X, y, 1.0)
    noise = jax.random.normal(key, w.shape) * 0.1
    return w - 0.5 * (jnp.mean(g, axis=0) + noise / X.shape[0])


key = jax.random.PRNGKey(0)
for _ in range(50):
    key, sub = jax.random.split(key)
    w = private_step(w, sub)
acc = jnp.mean(((X @ w) > 0) == (y > 0.5))
show("dp_weights", w)
show("dp_accuracy_high", acc > 0.8, 1.0)
