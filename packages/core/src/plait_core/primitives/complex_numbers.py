"""The complex-number primitives: ``real``, ``imag``, ``conj`` and ``complex``.

They belong to the elementwise family (rank-0 operands of ``complex``
broadcast as every elementwise primitive's do).  ``real``, ``imag`` and
``conj`` take a complex operand only (``real``/``imag`` give the matching
real dtype, ``conj`` keeps it); ``lax.conj`` converts a real operand first,
as JAX's does.  ``complex(x, y)`` makes ``x + i y`` from two operands of one
real floating dtype: float32 gives complex64, float64 complex128.  All four
are linear, which is what their autodiff rules rely on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.primitive import Primitive
from plait_core.primitives import _elementwise_helpers as h
from plait_core.primitives._elementwise_helpers import DType, DTypeClass, unary_primitive

__all__ = ["COMPLEX", "complex_of", "complex_p", "conj_p", "imag_p", "real_dtype", "real_p"]

#: The dtypes ``real``, ``imag`` and ``conj`` accept.
COMPLEX = DTypeClass("a complex", (dtypes.complex64, dtypes.complex128))
_REAL_FLOATS = DTypeClass("a float32 or float64", (dtypes.float32, dtypes.float64))


def real_dtype(dt: DType) -> DType:
    """The real dtype with the width of the complex ``dt``'s parts."""
    return dtypes.float64 if dt == dtypes.complex128 else dtypes.float32


def complex_of(dt: DType) -> DType:
    """The complex dtype whose parts have the real dtype ``dt``."""
    return dtypes.complex128 if dt == dtypes.float64 else dtypes.complex64


real_p = unary_primitive("real", COMPLEX, np.real, result_dtype=real_dtype, widen=False)
imag_p = unary_primitive("imag", COMPLEX, np.imag, result_dtype=real_dtype, widen=False)
conj_p = unary_primitive("conj", COMPLEX, np.conj, widen=False)

complex_p = Primitive("complex", family="elementwise")


def _check_complex(x: h.Typed, y: h.Typed) -> DType:
    dt = h.check_same_dtypes("complex", (x, y))
    h.check_dtype("complex", dt, _REAL_FLOATS)
    return complex_of(dt)


@complex_p.def_abstract_eval
def _complex_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    dt = _check_complex(x, y)
    shape = h.binary_shape("complex", x.shape, y.shape)
    return ShapedArray(shape, dt, x.weak_type and y.weak_type)


@complex_p.def_impl
def _complex_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dt = _check_complex(x, y)
    shape: Any = h.binary_shape("complex", x.shape, y.shape)
    out = np.empty(shape, dt)
    # Assigning the parts (not x + 1j * y) keeps infinities out of 0 * inf.
    out.real = x
    out.imag = y
    return out
