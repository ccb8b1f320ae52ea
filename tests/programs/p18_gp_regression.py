"""Gaussian-process regression: Cholesky solves, marginal likelihood and its gradient."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax.scipy.linalg import cho_solve, cholesky

x = np.linspace(0, 5, 20)
y = np.sin(x) + 0.1 * np.cos(3 * x)
xs = np.linspace(0, 5, 7)


def kernel(a, b, ls):
    return jnp.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ls ** 2)


def neg_mll(log_ls):
    ls = jnp.exp(log_ls)
    K = kernel(x, x, ls) + 0.01 * jnp.eye(20)
    L = cholesky(K, lower=True)
    alpha = cho_solve((L, True), y)
    return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(L))) + 10 * jnp.log(2 * jnp.pi)


def np_neg_mll(log_ls):
    ls = np.exp(log_ls)
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ls ** 2) + 0.01 * np.eye(20)
    return 0.5 * y @ np.linalg.solve(K, y) + 0.5 * np.linalg.slogdet(K)[1] + 10 * np.log(2 * np.pi)


show("neg_mll", neg_mll(0.0), np_neg_mll(0.0), rtol=1e-4)
eps = 1e-5
show("neg_mll_grad", jax.grad(neg_mll)(0.0), (np_neg_mll(eps) - np_neg_mll(-eps)) / (2 * eps), rtol=2e-3, atol=2e-3)
K = kernel(x, x, 1.0) + 0.01 * jnp.eye(20)
mean = kernel(xs, x, 1.0) @ jnp.linalg.solve(K, y)
Kn = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 0.01 * np.eye(20)
show("posterior_mean", mean, np.exp(-0.5 * (xs[:, None] - x[None, :]) ** 2) @ np.linalg.solve(Kn, y), rtol=1e-3, atol=1e-3)
grad_fn = jax.jit(jax.grad(neg_mll))
log_ls = 0.0
for _ in range(30):
    log_ls = log_ls - 0.05 * grad_fn(log_ls)
show("mll_decreased", neg_mll(log_ls) < neg_mll(0.0), 1.0)
