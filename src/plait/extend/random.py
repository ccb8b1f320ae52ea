"""``jax.extend.random``: the threefry block cipher under plait's keys.

:func:`threefry_2x32` is the cipher plait's random keys use (the same
numbers as JAX's for the same key and counts).  Custom PRNG implementations
(``define_prng_impl``, ``seed_with_impl``, the ``rbg`` implementations) are
not supported: plait's keys are threefry keys only.
"""

from __future__ import annotations

from typing import Any

import plait_core.numpy as pnp
from plait_core import dtypes
from plait_core.prng import threefry_2x32 as _threefry_2x32

__all__ = ["threefry_2x32"]


def threefry_2x32(keypair: Any, count: Any) -> Any:
    """Encrypt the ``uint32`` words of ``count`` under ``keypair`` (a pair of
    ``uint32`` scalars, or a ``uint32[2]`` array): the flattened words, padded
    with a zero to even length, are split in halves that form the cipher's
    pairs, as in JAX; the result has ``count``'s shape."""
    if isinstance(keypair, (tuple, list)):
        if len(keypair) != 2:
            raise TypeError(f"threefry_2x32: the keypair must have two words, got {len(keypair)}")
        key = pnp.stack([pnp.asarray(k, dtypes.uint32) for k in keypair])
    else:
        key = pnp.asarray(keypair)
        if tuple(key.shape) != (2,):
            raise TypeError(
                f"threefry_2x32: the key must be a pair or have shape (2,), got shape {key.shape}"
            )
    count = pnp.asarray(count)
    if key.dtype != dtypes.uint32 or count.dtype != dtypes.uint32:
        raise TypeError(f"threefry_2x32: key and count must be uint32, got {key.dtype} and {count.dtype}")
    return _threefry_2x32(key, count)
