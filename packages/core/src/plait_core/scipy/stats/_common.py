"""What the distributions of :mod:`plait_core.scipy.stats` share: their
arguments promoted together, and the standardised variable ``(x - loc) / scale``."""

from __future__ import annotations

from typing import Any

from plait_core.numpy._util import promote_args_inexact

Array = Any


def standardised(name: str, x: Array, *params: Array) -> list[Array]:
    """``[z, *shape_params, scale]`` with ``z = (x - loc) / scale``; the last two of
    ``params`` are ``loc`` and ``scale``, every argument promoted to one inexact dtype."""
    args = promote_args_inexact(name, x, *params)
    x, loc, scale = args[0], args[-2], args[-1]
    return [(x - loc) / scale, *args[1:-2], scale]
