"""Tutorial: custom_vjp (gradient clipping, residuals, nondiff_argnums)."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from _check import show


@jax.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def clip_fwd(lo, hi, x):
    return x, (lo, hi)


def clip_bwd(res, g):
    lo, hi = res
    return None, None, jnp.clip(g, lo, hi)


clip_gradient.defvjp(clip_fwd, clip_bwd)
show("clipped", jax.grad(lambda x: clip_gradient(-0.5, 0.5, 3.0 * x))(1.0), 1.5)
show("vmapped", jax.vmap(jax.grad(lambda x: clip_gradient(-1.0, 1.0, x) ** 2))(jnp.array([0.2, 3.0, -4.0])),
     np.clip(2 * np.array([0.2, 3.0, -4.0]), -1, 1))


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def apply_twice(f, x):
    return f(f(x))


def twice_fwd(f, x):
    return apply_twice(f, x), x


def twice_bwd(f, x, g):
    return (2.0 * g,)


apply_twice.defvjp(twice_fwd, twice_bwd)
show("nondiff", jax.grad(lambda x: apply_twice(jnp.sin, x))(0.4), 2.0)


@jax.custom_vjp
def stable_logsumexp(x):
    m = jnp.max(x)
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


def lse_fwd(x):
    y = stable_logsumexp(x)
    return y, (x, y)


def lse_bwd(res, g):
    x, y = res
    return (g * jnp.exp(x - y),)


stable_logsumexp.defvjp(lse_fwd, lse_bwd)
xs = jnp.array([1000.0, 1001.0, 999.0])
e = np.exp(np.array([0.0, 1.0, -1.0]))
show("lse", stable_logsumexp(xs), 1000 + np.log(e.sum()), rtol=1e-6)
show("lse_grad", jax.jit(jax.grad(stable_logsumexp))(xs), e / e.sum())
