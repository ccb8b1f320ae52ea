"""Hamiltonian Monte Carlo on a correlated 2-D Gaussian (leapfrog in fori_loop)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax import lax

cov = np.array([[1.0, 0.8], [0.8, 1.0]])
prec = jnp.asarray(np.linalg.inv(cov))


def logp(q):
    return -0.5 * q @ prec @ q


def leapfrog(q, p, eps, n):
    g = jax.grad(logp)

    def body(_, s):
        q, p = s
        p = p + 0.5 * eps * g(q)
        q = q + eps * p
        p = p + 0.5 * eps * g(q)
        return q, p

    return lax.fori_loop(0, n, body, (q, p))


def hmc_step(q, key):
    k1, k2 = jax.random.split(key)
    p0 = jax.random.normal(k1, q.shape)
    q1, p1 = leapfrog(q, p0, 0.2, 10)
    h0 = -logp(q) + 0.5 * p0 @ p0
    h1 = -logp(q1) + 0.5 * p1 @ p1
    accept = jnp.log(jax.random.uniform(k2)) < h0 - h1
    return jnp.where(accept, q1, q), (jnp.where(accept, q1, q), accept)


keys = jax.random.split(jax.random.PRNGKey(0), 1500)
_, (samples, accepted) = jax.jit(lambda q: lax.scan(hmc_step, q, keys))(jnp.zeros(2))
samples = np.asarray(samples)[300:]
show("acceptance_high", np.mean(np.asarray(accepted)) > 0.8, 1.0)
show("sample_mean", samples.mean(0), [0.0, 0.0], atol=0.2)
show("sample_cov", np.cov(samples.T), cov, atol=0.2)
q1, p1 = leapfrog(jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0]), 0.05, 20)
h0 = 0.5 * np.array([1.0, 0.0]) @ np.linalg.inv(cov) @ np.array([1.0, 0.0]) + 0.5
show("energy_conserved", -logp(q1) + 0.5 * p1 @ p1, h0, rtol=1e-3)
