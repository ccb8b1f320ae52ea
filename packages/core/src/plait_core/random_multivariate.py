"""``random.multivariate_normal``: samples ``mean + factor @ z`` with ``z``
standard normal (the same draws as JAX's for the same key) and ``factor``
the Cholesky factor of ``cov`` (``method='eigh'``: ``v sqrt(w)``,
``method='svd'``: ``u sqrt(s)``).  Kept in its own module, imported by
:mod:`plait_core.random`, because it needs the linear-algebra functions."""

from __future__ import annotations

from typing import Any

from plait_core import numpy as pnp
from plait_core.lax import factorizations as _lf
from plait_core.numpy._util import broadcast_shapes, convert, shape_of

Array = Any

_METHODS = ("cholesky", "eigh", "svd")


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Array:  # fmt: skip
    """Samples of the multivariate normal with ``mean`` ``(..., n)`` and
    covariance ``cov`` ``(..., n, n)``, of shape ``shape + (n,)`` (``shape``
    defaults to the broadcast of the batch shapes of ``mean`` and ``cov``)."""
    # Lazy on purpose: plait_core.random is the namespace that re-exports this
    # function (it imports this module at its end); normal and _float_dtype live there.
    from plait_core import random

    if method not in _METHODS:
        raise ValueError(f"random.multivariate_normal: method must be one of {_METHODS}, got {method!r}")
    dt = random._float_dtype(dtype, "multivariate_normal")
    mean, cov = convert(pnp.asarray(mean), dt), convert(pnp.asarray(cov), dt)
    ms, cs = tuple(shape_of(mean)), tuple(shape_of(cov))
    if len(ms) < 1 or len(cs) < 2 or cs[-1] != cs[-2] or cs[-1] != ms[-1]:
        raise ValueError(
            "random.multivariate_normal: mean must be (..., n) and cov (..., n, n) with the same n, got shapes "
            f"{ms} and {cs}"
        )
    batch = broadcast_shapes("random.multivariate_normal", ms[:-1], cs[:-2])
    if shape is None:
        shape = batch
    else:
        shape = tuple(int(d) for d in shape)
        if broadcast_shapes("random.multivariate_normal", shape, batch) != shape:
            raise ValueError(
                f"random.multivariate_normal: shape {shape} must be a broadcast of the batch shapes of mean {ms} "
                f"and cov {cs}"
            )
    if method == "cholesky":
        factor = _lf.cholesky(cov)
    elif method == "eigh":
        v, w = _lf.eigh(cov)
        factor = v * pnp.sqrt(w[..., None, :])
    else:
        u, s, _ = _lf.svd(cov)
        factor = u * pnp.sqrt(s[..., None, :])
    z = random.normal(key, (*shape, int(ms[-1])), dt)
    return mean + pnp.einsum("...ij,...j->...i", factor, z)
