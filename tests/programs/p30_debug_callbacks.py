"""jax.debug.print inside jit/vmap/grad, and pure_callback to host NumPy."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show


@jax.jit
def f(x):
    jax.debug.print("x = {}", x)
    y = jnp.sin(x)
    jax.debug.print("sin x = {y:.3f}", y=y)
    return y * 2


show("jit_with_print", f(0.5), 2 * np.sin(0.5))
jax.vmap(lambda v: jax.debug.print("v={}", v))(jnp.arange(3))
show("grad_with_print", jax.grad(lambda v: (jax.debug.print("primal {}", v), v ** 2)[1])(3.0), 6.0)


def host_sort(x):
    return np.sort(np.asarray(x))


@jax.jit
def uses_callback(x):
    return jax.pure_callback(host_sort, jax.ShapeDtypeStruct(x.shape, x.dtype), x) * 10


show("pure_callback", uses_callback(jnp.array([3.0, 1.0, 2.0])), [10.0, 20.0, 30.0])
