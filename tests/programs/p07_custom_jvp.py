"""Tutorial: custom derivative rules with custom_jvp (numerical stability, defjvps)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show


@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


show("stable_grad", jax.grad(log1pexp)(100.0), 1.0)
xs = jnp.array([-3.0, 0.0, 2.0])
show("vmap_grad", jax.vmap(jax.grad(log1pexp))(xs), 1 / (1 + np.exp(-np.array([-3.0, 0.0, 2.0]))))
show("jit_grad", jax.jit(jax.grad(log1pexp))(1.5), 1 / (1 + np.exp(-1.5)))


@jax.custom_jvp
def f(x, y):
    return jnp.sin(x) * y


f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y, lambda t, ans, x, y: jnp.sin(x) * t)
show("defjvps", jax.grad(f, argnums=(0, 1))(0.3, 2.0), [np.cos(0.3) * 2.0, np.sin(0.3)])
show("second_order", jax.grad(jax.grad(log1pexp))(0.0), 0.25)


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x ** 2))


@safe_norm.defjvp
def safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    return n, jnp.where(n == 0, 0.0, jnp.dot(x, t) / jnp.where(n == 0, 1.0, n))


show("safe_norm_grad_at_zero", jax.grad(safe_norm)(jnp.zeros(3)), np.zeros(3))
