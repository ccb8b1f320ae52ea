"""``plait.typing``: the type annotations JAX users import from ``jax.typing``.

``ArrayLike`` is what plait's array functions accept as an array: a
:class:`plait.Array`, a tracer (a value seen by a transformation), a NumPy
array or scalar, or a Python ``bool``/``int``/``float``/``complex``.
``DTypeLike`` is what they accept as a dtype: a NumPy dtype, a scalar type
(``numpy.float32``, ``plait.numpy.float32``, ``float``), a dtype name
(``"float32"``), or any object with a ``dtype`` attribute.  Both are meant for
annotations; ``isinstance`` against a union works as Python's unions do.
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from plait_core.trace import Tracer
from plait_dispatch import Array


class SupportsDType(Protocol):
    """An object that names a dtype through its ``dtype`` attribute."""

    @property
    def dtype(self) -> np.dtype[Any]: ...


ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007
"""A value plait's array functions accept as an array."""

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]  # noqa: UP007
"""A value plait's array functions accept as a dtype."""

__all__ = ["ArrayLike", "DTypeLike"]
