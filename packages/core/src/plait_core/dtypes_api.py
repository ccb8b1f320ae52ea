"""The names of ``jax.dtypes``, with JAX's signatures, over plait's dtype kernel
(:mod:`plait_core.dtypes`); ``plait.dtypes`` re-exports them.

``canonicalize_dtype`` and ``result_type`` take JAX's keyword arguments
(``allow_extended_dtype``, ``return_weak_type_flag``); ``scalar_type_of``
and ``itemsize_bits`` answer for the dtypes plait computes with.  The
extended dtypes (typed PRNG keys) are sub-dtypes of ``extended`` and
``prng_key``.
"""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

from plait_core import dtypes as _d
from plait_core.dtypes import (
    TypePromotionError,
    extended,
    extended_scalar_type,
    finfo,
    float0,
    iinfo,
    issubdtype,
    prng_key,
)

bfloat16: type = _d.bfloat16.type
"""The bfloat16 scalar type (``ml_dtypes.bfloat16``), as ``jax.dtypes.bfloat16``."""


def canonicalize_dtype(dtype: Any, allow_extended_dtype: builtins.bool = False) -> Any:
    """The dtype plait computes ``dtype`` in: with x64 off, 64-bit types become
    their 32-bit counterparts; Python types give plait's defaults.  An
    extended dtype (a key dtype) is returned as it is when
    ``allow_extended_dtype``, and is a ``ValueError`` otherwise."""
    if extended_scalar_type(dtype) is not None:
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"canonicalize_dtype: {dtype} is an extended dtype; pass allow_extended_dtype=True")
    if dtype is builtins.int or dtype is builtins.float or dtype is builtins.complex or dtype is builtins.bool:
        return _d.dtype_and_weakness(dtype)[0]
    return _d.canonicalize_dtype(dtype)


def result_type(*args: Any, return_weak_type_flag: builtins.bool = False) -> Any:
    """The dtype an operation on ``args`` (values, dtypes, scalar types) computes
    in, by plait's promotion lattice (JAX's); with ``return_weak_type_flag``,
    the pair ``(dtype, weak_type)``."""
    if not args:
        raise ValueError("result_type: at least one array or dtype is required")
    for a in args:
        if extended_scalar_type(getattr(a, "dtype", a)) is not None:
            raise TypeError(f"result_type: cannot promote the extended dtype {getattr(a, 'dtype', a)}")
    dtype, weak = _d.result_type_and_weakness(*args)
    return (dtype, weak) if return_weak_type_flag else dtype


_SCALAR_KINDS: dict[str, type] = {"b": builtins.bool, "i": builtins.int, "u": builtins.int,
                                  "f": builtins.float, "c": builtins.complex}


def scalar_type_of(x: Any) -> type:
    """The Python scalar type of a value's dtype: ``bool``, ``int``, ``float`` or
    ``complex`` (``bfloat16`` and the narrow floats count as ``float``)."""
    dt = getattr(x, "dtype", None)
    if extended_scalar_type(dt) is not None:
        raise TypeError(f"scalar_type_of: {dt} (an extended dtype) has no Python scalar type")
    dtype = _d.dtype_and_weakness(x)[0]
    if _d.is_float(dtype):
        return builtins.float
    if _d.is_int(dtype):
        return builtins.int
    kind = _SCALAR_KINDS.get(dtype.kind)
    if kind is None:
        raise TypeError(f"scalar_type_of: {dtype} is not a numeric dtype plait computes with")
    return kind


def itemsize_bits(dtype: Any) -> int:
    """The width of one element of ``dtype`` in bits (4 for ``int4`` and
    ``float4_e2m1fn``, whose elements NumPy stores in a byte each)."""
    if extended_scalar_type(dtype) is not None:
        raise ValueError(f"itemsize_bits: unexpected input: the extended dtype {dtype}")
    dt = np.dtype(dtype)
    if dt == float0:
        raise ValueError(f"itemsize_bits: unexpected input: dtype={dt} (float0 holds no data)")
    if _d.is_narrow(dt):
        info = ml_dtypes.finfo(dt) if _d.is_float(dt) else ml_dtypes.iinfo(dt)  # type: ignore[no-untyped-call]
        return int(info.bits)
    return 8 * int(dt.itemsize)


__all__ = [
    "TypePromotionError",
    "bfloat16",
    "canonicalize_dtype",
    "extended",
    "finfo",
    "float0",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "result_type",
    "scalar_type_of",
]
