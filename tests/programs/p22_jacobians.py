"""Jacobians and Hessians: jacfwd, jacrev, hessian, jvp, vjp, linearize."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show


def f(x):
    return jnp.array([x[0] * x[1], jnp.sin(x[0]) + x[2] ** 2, jnp.exp(x[1] - x[2])])


x = jnp.array([0.5, -1.0, 2.0])
a, b, c = 0.5, -1.0, 2.0
J = np.array([[b, a, 0.0], [np.cos(a), 0.0, 2 * c], [0.0, np.exp(b - c), -np.exp(b - c)]])
show("jacfwd", jax.jacfwd(f)(x), J)
show("jacrev", jax.jacrev(f)(x), J)
v = jnp.array([1.0, 2.0, 3.0])
show("jvp", jax.jvp(f, (x,), (v,))[1], J @ np.array([1.0, 2.0, 3.0]))
_, vjp_fn = jax.vjp(f, x)
show("vjp", vjp_fn(v)[0], J.T @ np.array([1.0, 2.0, 3.0]))
_, lin = jax.linearize(f, x)
show("linearize", lin(v), J @ np.array([1.0, 2.0, 3.0]))


def g(x):
    return jnp.sum(x ** 3) + x[0] * x[1] * x[2]


H = np.diag(6 * np.array([a, b, c])) + np.array([[0, c, b], [c, 0, a], [b, a, 0]])
show("hessian", jax.hessian(g)(x), H)
show("jacfwd_of_jacrev", jax.jacfwd(jax.jacrev(g))(x), H)
show("batched_jacobian", jax.vmap(jax.jacrev(lambda t: jnp.sin(t) * t))(jnp.array([0.1, 0.2])),
     np.cos([0.1, 0.2]) * [0.1, 0.2] + np.sin([0.1, 0.2]))
