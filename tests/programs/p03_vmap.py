"""Tutorial: automatic vectorisation (vmap, in_axes, out_axes, per-example gradients)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

mat = jnp.arange(12.0).reshape(3, 4) / 10
batch = jnp.arange(20.0).reshape(5, 4) / 7
show("batched_matvec", jax.vmap(lambda v: mat @ v)(batch), np.asarray(batch) @ np.asarray(mat).T)
show("in_axes", jax.vmap(lambda m, v: m @ v, in_axes=(None, 0))(mat, batch), np.asarray(batch) @ np.asarray(mat).T)
show("out_axes", jax.vmap(lambda v: v * 2, out_axes=1)(batch), 2 * np.asarray(batch).T)
show("nested", jax.vmap(jax.vmap(lambda a, b: a * b))(batch, batch), np.asarray(batch) ** 2)


def loss(w, x, y):
    return (jnp.dot(w, x) - y) ** 2


w = jnp.array([0.1, -0.2, 0.3, 0.05])
ys = jnp.arange(5.0)
per_ex = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, batch, ys)
bn = np.asarray(batch, np.float64)
show("per_example_grads", per_ex, 2 * (bn @ np.asarray(w) - np.arange(5.0))[:, None] * bn)
show("dict_in", jax.vmap(lambda d: d["a"] + d["b"])({"a": jnp.ones(3), "b": jnp.arange(3.0)}), [1.0, 2.0, 3.0])
