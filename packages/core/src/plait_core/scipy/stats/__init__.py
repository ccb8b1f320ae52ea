"""``plait.scipy.stats``: densities of a few distributions, as in
``jax.scipy.stats`` (each distribution a module of functions of ``x``, ``loc``,
``scale``, ...)."""

from plait_core.scipy.stats import (
    bernoulli,
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
    uniform,
)

__all__ = [
    "bernoulli",
    "beta",
    "cauchy",
    "chi2",
    "expon",
    "gamma",
    "laplace",
    "logistic",
    "norm",
    "poisson",
    "t",
    "uniform",
]
