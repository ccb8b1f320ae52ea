"""``plait.scipy.stats``: densities of a few distributions, as in
``jax.scipy.stats`` (each distribution a module of functions of ``x``, ``loc``,
``scale``, ...).  ``multivariate_normal`` is not provided: it needs a Cholesky
factorization, which plait-core has no primitive for."""

from plait_core.scipy.stats import bernoulli, norm, uniform

__all__ = ["bernoulli", "norm", "uniform"]
