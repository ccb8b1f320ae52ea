"""Tutorial: just-in-time compilation (jit, static arguments, retracing)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


x = jnp.arange(-3.0, 3.0, 0.5)
xn = np.arange(-3.0, 3.0, 0.5)
ref = 1.05 * np.where(xn > 0, xn, 1.67 * np.exp(xn) - 1.67)
show("selu", selu(x), ref)
show("selu_jit", jax.jit(selu)(x), ref)


def power(x, n):
    return x ** n


p = jax.jit(power, static_argnums=1)
show("power3", p(jnp.arange(4.0), 3), np.arange(4.0) ** 3)
traces = []


@jax.jit
def f(x):
    traces.append(1)
    return x * 2 + 1


f(jnp.ones(3))
f(jnp.zeros(3))
f(jnp.ones(4))
show("traces", len(traces), 2)
show("f", f(jnp.arange(3.0)), [1.0, 3.0, 5.0])
