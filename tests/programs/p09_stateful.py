"""Tutorial: stateful computations (explicit state threaded through pure functions)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from _check import show


class Counter:
    def count(self, n):
        return n + 1, n + 1

    def reset(self):
        return 0


counter = Counter()
state = counter.reset()
for _ in range(3):
    value, state = jax.jit(counter.count)(state)
show("counter", value, 3)


class Params(NamedTuple):
    weight: jnp.ndarray
    bias: jnp.ndarray


def loss(params, x, y):
    pred = params.weight * x + params.bias
    return jnp.mean((pred - y) ** 2)


@jax.jit
def update(params, x, y, lr=0.1):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


xs = np.linspace(-1, 1, 50)
ys = 3.0 * xs - 1.0 + 0.1 * np.sin(7 * xs)
params = Params(jnp.array(0.0), jnp.array(0.0))
for _ in range(200):
    params = update(params, xs, ys)
A = np.stack([xs, np.ones_like(xs)], 1)
w_ls, b_ls = np.linalg.lstsq(A, ys, rcond=None)[0]
show("fitted", [params.weight, params.bias], [w_ls, b_ls], rtol=1e-3, atol=1e-3)


def step(rng_state, _):
    key, sub = jax.random.split(rng_state)
    return key, jax.random.uniform(sub)


_, draws = jax.lax.scan(step, jax.random.PRNGKey(3), None, length=5)
show("rng_state_draws", draws)
show("draws_in_unit", jnp.all((draws >= 0) & (draws < 1)), 1.0)
