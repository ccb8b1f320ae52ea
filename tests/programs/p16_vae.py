"""A small variational autoencoder: reparameterisation, ELBO, a few SGD steps."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

rng = np.random.default_rng(3)
data = (rng.random((32, 6)) > 0.5).astype(np.float32)


def dense_init(key, m, n):
    return {"w": jax.random.normal(key, (m, n)) * 0.3, "b": jnp.zeros(n)}


keys = jax.random.split(jax.random.PRNGKey(0), 4)
params = {"enc": dense_init(keys[0], 6, 8), "mu": dense_init(keys[1], 8, 2), "logvar": dense_init(keys[2], 8, 2),
          "dec": dense_init(keys[3], 2, 6)}


def dense(p, x):
    return x @ p["w"] + p["b"]


def elbo(params, x, key):
    h = jnp.tanh(dense(params["enc"], x))
    mu, logvar = dense(params["mu"], h), dense(params["logvar"], h)
    eps = jax.random.normal(key, mu.shape)
    z = mu + jnp.exp(0.5 * logvar) * eps
    logits = dense(params["dec"], z)
    log_lik = jnp.sum(x * jax.nn.log_sigmoid(logits) + (1 - x) * jax.nn.log_sigmoid(-logits), axis=1)
    kl = 0.5 * jnp.sum(jnp.exp(logvar) + mu ** 2 - 1 - logvar, axis=1)
    return jnp.mean(log_lik - kl)


@jax.jit
def update(params, key):
    val, g = jax.value_and_grad(elbo)(params, data, key)
    return jax.tree_util.tree_map(lambda p, d: p + 0.05 * d, params, g), val


key = jax.random.PRNGKey(1)
vals = []
for _ in range(60):
    key, sub = jax.random.split(key)
    params, v = update(params, sub)
    vals.append(float(v))
show("elbo_first", vals[0])
show("elbo_last", vals[-1])
show("elbo_improved", np.mean(vals[-10:]) > np.mean(vals[:10]), 1.0)
z_kl = 0.5 * (np.exp(0.0) + 0.0 - 1 - 0.0)
show("kl_of_standard_normal_is_zero", z_kl, 0.0)
