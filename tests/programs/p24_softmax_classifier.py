"""Softmax regression with jax.nn (one_hot, log_softmax, logsumexp) trained under jit."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax.scipy.special import logsumexp

rng = np.random.default_rng(5)
centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
labels = np.repeat(np.arange(3), 30)
X = (centers[labels] + 0.5 * rng.normal(size=(90, 2))).astype(np.float32)
Y = jax.nn.one_hot(labels, 3)
show("one_hot", Y[jnp.array([0, 30, 60])], np.eye(3))


def loss(params, X, Y):
    logits = X @ params["W"] + params["b"]
    return -jnp.mean(jnp.sum(Y * jax.nn.log_softmax(logits), axis=1))


params = {"W": jnp.zeros((2, 3)), "b": jnp.zeros(3)}
show("initial_loss", loss(params, X, Y), np.log(3.0), rtol=1e-6)
update = jax.jit(lambda p: jax.tree.map(lambda a, g: a - 0.5 * g, p, jax.grad(loss)(p, X, Y)))
for _ in range(100):
    params = update(params)
logits = X @ params["W"] + params["b"]
show("accuracy_high", jnp.mean(jnp.argmax(logits, 1) == labels) > 0.95, 1.0)
ln = np.asarray(logits, np.float64)
show("logsumexp", logsumexp(logits, axis=1), np.log(np.exp(ln).sum(1)), rtol=1e-5)
show("softmax_rows_sum_to_one", jnp.sum(jax.nn.softmax(logits), axis=1), np.ones(90), rtol=1e-5)
show("final_loss", loss(params, X, Y))
