"""``plait.scipy``: the parts of SciPy's API that ``jax.scipy`` offers, built
from ``plait.numpy`` and ``plait.lax`` (no new primitives), so every
transformation applies to them.  ``special`` holds special functions, ``stats``
the densities of a few distributions, ``signal`` convolutions and correlations,
``linalg`` SciPy's dense linear algebra."""

from plait_core.scipy import linalg, signal, special, stats

__all__ = ["linalg", "signal", "special", "stats"]
