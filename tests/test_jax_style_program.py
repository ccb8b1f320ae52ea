"""A program written for JAX runs after swapping its imports for plait's.

The body below is ordinary JAX-style code (``jax.random`` keys, ``jax.nn``,
``jax.lax.scan``, ``jax.tree.map``, ``jax.value_and_grad``, ``jax.jit``,
``jax.vmap``); only the import lines name plait."""

from __future__ import annotations

import numpy as np

import plait as jax
import plait.numpy as jnp
from plait import lax


def init(key, sizes):  # type: ignore[no-untyped-def]
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        {"w": jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), "b": jnp.zeros(n)}
        for k, m, n in zip(keys, sizes[:-1], sizes[1:])
    ]


def forward(params, x):  # type: ignore[no-untyped-def]
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):  # type: ignore[no-untyped-def]
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 3), axis=-1))


@jax.jit
def train_step(params, x, y):  # type: ignore[no-untyped-def]
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.5 * g, params, grads), loss


def running_mean(xs):  # type: ignore[no-untyped-def]
    def step(carry, x):  # type: ignore[no-untyped-def]
        total, n = carry
        return (total + x, n + 1), (total + x) / (n + 1)

    return lax.scan(step, (0.0, 0.0), xs)[1]


def test_training_script_runs_and_learns() -> None:
    key = jax.random.PRNGKey(0)
    kx, kp = jax.random.split(key)
    x = jax.random.normal(kx, (256, 2))
    y = (x[:, 0] > 0).astype(jnp.int32) + (x[:, 1] > 0).astype(jnp.int32)
    params = init(kp, [2, 32, 3])
    losses = []
    for _ in range(150):
        params, loss = train_step(params, x, y)
        losses.append(float(loss))
    accuracy = float(jnp.mean(jnp.argmax(forward(params, x), axis=-1) == y))
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy > 0.9
    per_example = jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, x[:4, None], y[:4, None])
    assert per_example[0]["w"].shape == (4, 2, 32)
    np.testing.assert_allclose(
        np.asarray(running_mean(jnp.arange(1.0, 5.0))), [1.0, 1.5, 2.0, 2.5], rtol=1e-6
    )
