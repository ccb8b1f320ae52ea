"""``jax.scipy.stats.gaussian_kde``: a weighted Gaussian kernel density estimate
whose kernel covariance is the data's (weighted) covariance times ``factor**2``
(Scott's or Silverman's rule, a number, or a function of the estimator)."""

from __future__ import annotations

import math
from typing import Any

from plait_core import numpy as pnp
from plait_core import random
from plait_core.scipy import special
from plait_core.tree_util import register_pytree_node_class

Array = Any


@register_pytree_node_class
class gaussian_kde:  # JAX's (and SciPy's) class name
    """A Gaussian KDE of ``dataset`` (``(d, n)``: ``n`` points in ``d`` dimensions,
    or a 1-D array of points), with optional ``weights`` and ``bw_method``
    (``'scott'`` by default, ``'silverman'``, a scalar factor, or a callable taking
    the estimator).  A pytree: it can be passed through ``jit`` and ``vmap``."""

    def __init__(self, dataset: Array, bw_method: Any = None, weights: Array | None = None) -> None:
        data = pnp.atleast_2d(pnp.asarray(dataset))
        if data.shape[1] < 2:
            raise ValueError("gaussian_kde: the dataset needs more than one point")
        d, n = int(data.shape[0]), int(data.shape[1])
        w = pnp.full((n,), 1.0 / n, data.dtype) if weights is None else pnp.asarray(weights, data.dtype)
        if w.ndim != 1 or w.shape[0] != n:
            raise ValueError(f"gaussian_kde: weights must be 1-D of length {n}, got shape {w.shape}")
        w = w / pnp.sum(w)
        self.dataset, self.weights, self.d, self.n = data, w, d, n
        self.neff = 1 / pnp.sum(w * w)
        factor = self._factor(bw_method)
        mean = pnp.sum(data * w, axis=1, keepdims=True)
        centred = data - mean
        data_cov = (centred * w) @ centred.T / (1 - pnp.sum(w * w))
        self.covariance = data_cov * factor ** 2
        self.inv_cov = pnp.linalg.inv(self.covariance)

    def _factor(self, bw_method: Any) -> Any:
        if bw_method is None or bw_method == "scott":
            return self.neff ** (-1.0 / (self.d + 4))
        if bw_method == "silverman":
            return (self.neff * (self.d + 2) / 4.0) ** (-1.0 / (self.d + 4))
        if callable(bw_method):
            return bw_method(self)
        if isinstance(bw_method, str):
            raise ValueError(f"gaussian_kde: bw_method must be 'scott', 'silverman', a scalar or a callable, "
                             f"got {bw_method!r}")
        return pnp.asarray(bw_method)

    def tree_flatten(self) -> tuple[tuple[Array, ...], tuple[int, int]]:
        """Children: dataset, weights, neff, covariance, inverse covariance."""
        return (self.dataset, self.weights, self.neff, self.covariance, self.inv_cov), (self.d, self.n)

    @classmethod
    def tree_unflatten(cls, aux: tuple[int, int], children: Any) -> gaussian_kde:
        """Rebuild from :meth:`tree_flatten`'s output."""
        obj = object.__new__(cls)
        obj.dataset, obj.weights, obj.neff, obj.covariance, obj.inv_cov = children
        obj.d, obj.n = aux
        return obj

    def _points(self, points: Array) -> Array:
        p = pnp.atleast_2d(pnp.asarray(points, self.dataset.dtype))
        if p.shape[0] != self.d:
            if p.shape == (1, self.d) or (self.d == 1 and p.ndim == 2 and p.shape[1] == 1):
                p = p.T
            else:
                raise ValueError(f"gaussian_kde: points have dimension {p.shape[0]}, the dataset has {self.d}")
        return p

    def _log_kernel_sum(self, points: Array, centres: Array, weights: Array, cov: Array) -> Array:
        inv = pnp.linalg.inv(cov)
        diff = points[:, None, :] - centres[:, :, None]  # (d, n, m)
        maha = pnp.einsum("inm,ij,jnm->nm", diff, inv, diff)
        log_norm = 0.5 * (self.d * math.log(2 * math.pi) + pnp.linalg.slogdet(cov)[1])
        return special.logsumexp(pnp.log(weights)[:, None] - 0.5 * maha, axis=0) - log_norm

    def logpdf(self, x: Array) -> Array:
        """The log density at the points ``x`` (``(d, m)``, or ``m`` values when ``d = 1``)."""
        return self._log_kernel_sum(self._points(x), self.dataset, self.weights, self.covariance)

    def evaluate(self, points: Array) -> Array:
        """The density at ``points``."""
        return pnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate

    def integrate_gaussian(self, mean: Array, cov: Array) -> Array:
        """The integral of the density times the Gaussian ``N(mean, cov)``."""
        m = pnp.reshape(pnp.asarray(mean, self.dataset.dtype), (self.d, 1))
        c = pnp.reshape(pnp.asarray(cov, self.dataset.dtype), (self.d, self.d))
        return pnp.exp(self._log_kernel_sum(m, self.dataset, self.weights, self.covariance + c))[0]

    def integrate_box_1d(self, low: Array, high: Array) -> Array:
        """The probability mass between ``low`` and ``high`` (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError("gaussian_kde.integrate_box_1d: the data must be one-dimensional")
        sd = pnp.sqrt(self.covariance[0, 0])
        x = self.dataset[0]
        return pnp.sum(self.weights * (special.ndtr((high - x) / sd) - special.ndtr((low - x) / sd)))

    def integrate_kde(self, other: gaussian_kde) -> Array:
        """The integral of the product of this density and ``other``'s."""
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: dimensions differ ({self.d} and {other.d})")
        cov = self.covariance + other.covariance
        logs = self._log_kernel_sum(other.dataset, self.dataset, self.weights, cov)
        return pnp.sum(other.weights * pnp.exp(logs))

    def resample(self, key: Array, shape: tuple[int, ...] = ()) -> Array:
        """``shape`` new points (``(d, *shape)``) drawn from the estimate: a data point
        chosen by weight plus kernel noise (the draws JAX makes from the same key)."""
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, pnp.zeros(self.d, self.covariance.dtype), self.covariance,
                                         shape=shape, dtype=self.covariance.dtype)
        return self.dataset[:, ind] + pnp.moveaxis(eps, -1, 0)

    def integrate_box(self, low_bounds: Array, high_bounds: Array, maxpts: Any = None) -> Array:
        """Not supported, as in JAX: only one-dimensional boxes (:meth:`integrate_box_1d`)."""
        raise NotImplementedError("gaussian_kde.integrate_box: only 1D box integrations are supported; "
                                  "use integrate_box_1d")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Not supported, as in JAX: the bandwidth is fixed when the estimator is made."""
        raise NotImplementedError("gaussian_kde.set_bandwidth: dynamically changing the bandwidth method is "
                                  "not supported")


__all__ = ["gaussian_kde"]

