"""``plait.dlpack``: arrays from other libraries through the DLPack protocol
(JAX's ``jax.dlpack``).

plait's arrays live on XLA CPU; ``from_dlpack(x)`` reads ``x`` (any object
with ``__dlpack__``, such as a NumPy array or a CPU torch tensor) through
NumPy's DLPack importer and copies it into a plait array.  plait's own arrays
export to other libraries through NumPy (``numpy.asarray(a)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.numpy.misc_extras import from_dlpack

__all__ = ["from_dlpack", "is_supported_dtype"]

_SUPPORTED = frozenset(
    np.dtype(name) for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
) | {np.dtype(dtypes.bfloat16)}


def is_supported_dtype(dtype: Any) -> bool:
    """Whether DLPack exchange carries arrays of ``dtype``: booleans, signed and
    unsigned integers of 8 to 64 bits, float16/bfloat16/float32/float64 and
    complex64/complex128 (not the narrow 8- and 4-bit types)."""
    return np.dtype(dtype) in _SUPPORTED
