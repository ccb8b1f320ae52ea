"""``set_cache_dir`` / ``reset_cache``: the persistent compilation cache as
JAX's ``jax.experimental.compilation_cache.compilation_cache`` sets it up.

The cache itself is plait-dispatch's (``plait_dispatch.persistent_cache``),
configured by ``plait.config``'s ``jax_compilation_cache_dir``; these two
functions are JAX's older spelling of that option.
"""

from __future__ import annotations

import os

from plait_core import config

__all__ = ["reset_cache", "set_cache_dir"]


def set_cache_dir(path: str | os.PathLike[str]) -> None:
    """Keep compiled programs in the directory ``path`` from now on (the same as
    ``plait.config.update("jax_compilation_cache_dir", path)``), so that a later
    process running the same program loads them instead of compiling."""
    config.update("jax_compilation_cache_dir", os.fspath(path))


def reset_cache() -> None:
    """Return the cache to its state before first use.  plait keeps no cache
    object between compilations (each one reads ``jax_compilation_cache_dir``
    and the thresholds from the configuration when it runs), so there is no
    state to drop: this does nothing, and the directory stays as configured."""
