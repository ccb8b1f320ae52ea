"""``plait.custom_batching``: functions with their own ``vmap`` rule (JAX's
``jax.custom_batching``).

``custom_vmap(fun)`` with ``.def_vmap(rule)``: ``vmap`` calls
``rule(axis_size, in_batched, *args) -> (out, out_batched)`` instead of
batching ``fun``'s body.  ``sequential_vmap(fun)`` is ``fun`` whose ``vmap``
runs it once per element of the batch, in sequence (``lax.map``), instead
of batching its operations: for a function that cannot be batched, or whose
batched form would take too much memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from plait_core import lax
from plait_core import numpy as pnp
from plait_core.custom_batching import custom_vmap
from plait_core.tree_util import tree_map

__all__ = ["custom_vmap", "sequential_vmap"]


def sequential_vmap(fun: Callable[..., Any]) -> custom_vmap[Any]:
    """``fun``, whose ``vmap`` applies it to one element of the batch at a
    time (a ``lax.map`` over the batch) rather than batching its operations.
    Unbatched arguments are passed whole to every application; every output
    is batched."""
    wrapped: custom_vmap[Any] = custom_vmap(fun)

    @wrapped.def_vmap
    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, bool]:
        def one(i: Any) -> Any:
            picked = [
                tree_map(lambda batched, a: a[i] if batched else a, b, arg)
                for b, arg in zip(in_batched, args)
            ]
            return fun(*picked)

        return lax.map(one, pnp.arange(axis_size)), True

    functools.update_wrapper(wrapped, fun)
    return wrapped
