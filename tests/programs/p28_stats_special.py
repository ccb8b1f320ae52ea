"""jax.scipy.stats and jax.scipy.special against closed forms."""
import math

import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax.scipy import special, stats

x = np.array([-1.5, 0.0, 0.3, 2.0])
show("norm_logpdf", stats.norm.logpdf(x, 0.5, 2.0), -0.5 * ((x - 0.5) / 2) ** 2 - np.log(2 * np.sqrt(2 * np.pi)), rtol=1e-5)
show("norm_cdf", stats.norm.cdf(x), [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x], rtol=1e-5)
show("expon_logpdf", stats.expon.logpdf(np.array([0.5, 2.0])), [-0.5, -2.0])
show("poisson_logpmf", stats.poisson.logpmf(np.array([0, 3]), 2.0), [-2.0, 3 * np.log(2) - 2 - np.log(6)], rtol=1e-5)
show("gamma_logpdf", stats.gamma.logpdf(2.0, 3.0), np.log(2.0 ** 2 * np.exp(-2.0) / 2.0), rtol=1e-5)
show("beta_logpdf", stats.beta.logpdf(0.3, 2.0, 3.0), np.log(12 * 0.3 * 0.7 ** 2), rtol=1e-5)
show("gammaln", special.gammaln(np.array([0.5, 5.0])), [np.log(np.sqrt(np.pi)), np.log(24.0)], rtol=1e-5)
show("digamma", special.digamma(1.0), -0.5772156649, rtol=1e-5)
show("xlogy", special.xlogy(np.array([0.0, 2.0]), np.array([0.0, 3.0])), [0.0, 2 * np.log(3.0)], rtol=1e-6)
show("erf_erfc", [special.erf(0.5), special.erfc(2.0)], [math.erf(0.5), math.erfc(2.0)], rtol=1e-5)
show("logit_expit", special.logit(special.expit(0.3)), 0.3, rtol=1e-5)
show("grad_norm_logcdf", jax.grad(stats.norm.logcdf)(0.0), 2 / np.sqrt(2 * np.pi), rtol=1e-5)
show("multivariate_normal", stats.multivariate_normal.logpdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2)), -np.log(2 * np.pi), rtol=1e-5)
