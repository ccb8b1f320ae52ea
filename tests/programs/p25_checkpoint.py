"""Rematerialisation: jax.checkpoint gives the same gradients, with and without policies."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show


def block(x, w):
    return jnp.tanh(x @ w)


def net(ws, x):
    for w in ws:
        x = block(x, w)
    return jnp.sum(x ** 2)


def net_remat(ws, x):
    f = jax.checkpoint(block)
    for w in ws:
        x = f(x, w)
    return jnp.sum(x ** 2)


keys = jax.random.split(jax.random.PRNGKey(0), 4)
ws = [jax.random.normal(k, (5, 5)) * 0.5 for k in keys]
x = jnp.linspace(-1.0, 1.0, 5)
g_plain = jax.grad(net)(ws, x)
g_remat = jax.grad(net_remat)(ws, x)
for i in range(4):
    show(f"same_grad_{i}", g_remat[i], np.asarray(g_plain[i]), rtol=1e-5, atol=1e-6)
policy = jax.checkpoint(block, policy=jax.checkpoint_policies.nothing_saveable)
show("policy_grad", jax.grad(lambda w: jnp.sum(policy(x, w)))(ws[0]),
     np.asarray(jax.grad(lambda w: jnp.sum(block(x, w)))(ws[0])), rtol=1e-5, atol=1e-6)
show("remat_alias", jax.grad(lambda v: jnp.sum(jax.remat(jnp.sin)(v)))(x), np.cos(np.linspace(-1.0, 1.0, 5)), rtol=1e-5)
