"""ADVI: a mean-field Gaussian fitted to a conjugate normal model's posterior."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax.scipy.stats import norm

data = np.array([1.2, 0.8, 1.9, 1.4, 0.6, 1.1, 1.7, 1.3])
prior_mu, prior_sd, lik_sd = 0.0, 2.0, 0.5
post_var = 1 / (1 / prior_sd ** 2 + len(data) / lik_sd ** 2)
post_mean = post_var * (prior_mu / prior_sd ** 2 + data.sum() / lik_sd ** 2)


def log_joint(theta):
    return norm.logpdf(theta, prior_mu, prior_sd) + jnp.sum(norm.logpdf(data, theta, lik_sd))


def neg_elbo(params, key, n=64):
    mu, log_sd = params
    eps = jax.random.normal(key, (n,))
    theta = mu + jnp.exp(log_sd) * eps
    return -(jnp.mean(jax.vmap(log_joint)(theta)) + log_sd)


step = jax.jit(lambda p, k: jax.tree_util.tree_map(lambda a, g: a - 0.02 * g, p, jax.grad(neg_elbo)(p, k)))
params = (jnp.array(0.0), jnp.array(0.0))
key = jax.random.PRNGKey(0)
for _ in range(400):
    key, sub = jax.random.split(key)
    params = step(params, sub)
show("advi_mean", params[0], post_mean, atol=0.03)
show("advi_sd", jnp.exp(params[1]), np.sqrt(post_var), atol=0.03)
show("log_joint_at_mean", log_joint(post_mean),
     -0.5 * ((post_mean - prior_mu) / prior_sd) ** 2 - np.log(prior_sd * np.sqrt(2 * np.pi))
     + np.sum(-0.5 * ((data - post_mean) / lik_sd) ** 2 - np.log(lik_sd * np.sqrt(2 * np.pi))), rtol=1e-5)
