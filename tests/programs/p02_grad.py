"""Tutorial: automatic differentiation (grad, higher order, argnums, has_aux)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

x = 0.7
show("dtanh", jax.grad(jnp.tanh)(x), 1 - np.tanh(x) ** 2)
show("d2tanh", jax.grad(jax.grad(jnp.tanh))(x), -2 * np.tanh(x) * (1 - np.tanh(x) ** 2))
show("d3tanh", jax.grad(jax.grad(jax.grad(jnp.tanh)))(x),
     -2 * (1 - np.tanh(x) ** 2) ** 2 + 4 * np.tanh(x) ** 2 * (1 - np.tanh(x) ** 2), rtol=1e-3)


def loss(w, b, xs, ys):
    pred = xs @ w + b
    return jnp.mean((pred - ys) ** 2)


xs = jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, -1.0]])
ys = jnp.array([1.0, 0.0, 2.0])
w = jnp.array([0.5, -0.25])
b = 0.1
gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, xs, ys)
xn, yn, wn = np.asarray(xs, np.float64), np.asarray(ys, np.float64), np.asarray(w, np.float64)
r = xn @ wn + b - yn
show("grad_w", gw, 2 * xn.T @ r / 3)
show("grad_b", gb, 2 * r.mean())
val, g = jax.value_and_grad(loss)(w, b, xs, ys)
show("value", val, np.mean(r ** 2))


def with_aux(w):
    out = jnp.sum(jnp.sin(w))
    return out, {"cos": jnp.cos(w)}


g, aux = jax.grad(with_aux, has_aux=True)(w)
show("aux_grad", g, np.cos(wn))
show("aux", aux["cos"], np.cos(wn))
