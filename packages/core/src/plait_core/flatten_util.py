"""``plait.flatten_util``: flattening a pytree of arrays into one vector
(``jax.flatten_util``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core import numpy as pnp
from plait_core.tree_util import tree_flatten, tree_unflatten

Array = Any


def ravel_pytree(pytree: Any) -> tuple[Array, Callable[[Array], Any]]:
    """Flatten ``pytree``'s leaves into one 1-D array, and return it with the
    inverse ``unravel(flat) -> pytree``.

    The leaves are raveled in ``tree_flatten`` order and concatenated in their
    promoted common dtype (JAX's lattice; an empty tree gives a ``float32`` array
    of length 0).  ``unravel`` splits a vector of that length back into leaves of
    the original shapes and casts each back to its original dtype; it raises
    ``ValueError`` for a vector of another shape and ``TypeError`` for another dtype."""
    leaves, treedef = tree_flatten(pytree)
    arrays = [pnp.asarray(leaf) for leaf in leaves]
    shapes = [tuple(a.shape) for a in arrays]
    leaf_dtypes = [a.dtype for a in arrays]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    total = sum(sizes)
    common = pnp.result_type(*arrays) if arrays else dtypes.canonicalize_dtype(np.float32)
    if arrays:
        flat = pnp.concatenate([pnp.ravel(a).astype(common) for a in arrays])
    else:
        flat = pnp.zeros((0,), common)

    def unravel(vector: Array) -> Any:
        vector = pnp.asarray(vector)
        if tuple(vector.shape) != (total,):
            raise ValueError(f"ravel_pytree's unravel: expected a vector of shape ({total},), "
                             f"got shape {tuple(vector.shape)}")
        if vector.dtype != common:
            raise TypeError(f"ravel_pytree's unravel: expected a vector of dtype {common}, "
                            f"got {vector.dtype}")
        pieces = []
        start = 0
        for shape, size, dt in zip(shapes, sizes, leaf_dtypes, strict=True):
            piece = pnp.reshape(vector[start:start + size], shape)
            pieces.append(piece.astype(dt))
            start += size
        return tree_unflatten(treedef, pieces)

    return flat, unravel


__all__ = ["ravel_pytree"]
