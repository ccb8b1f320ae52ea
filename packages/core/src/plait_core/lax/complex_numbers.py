"""``lax`` functions for complex numbers: ``real``, ``imag``, ``conj``, ``complex``.

``real``/``imag``/``conj`` take complex operands (``conj`` of a real operand
first converts it to the matching complex dtype, as JAX's does);
``complex(x, y)`` makes ``x + i y`` from two operands of one floating dtype
(weakly typed Python scalars take the other operand's dtype).
"""

from __future__ import annotations

from typing import Any

from plait_core import dtypes
from plait_core.lax.elementwise import _binary, _convert_element_type, _dtype_and_weakness
from plait_core.primitives import complex_numbers as cx

__all__ = ["complex", "conj", "imag", "real"]


def real(x: Any) -> Any:
    """The real part of a complex ``x`` (float32 for complex64, float64 for complex128)."""
    return cx.real_p.bind(x)


def imag(x: Any) -> Any:
    """The imaginary part of a complex ``x`` (float32 for complex64, float64 for complex128)."""
    return cx.imag_p.bind(x)


def conj(x: Any) -> Any:
    """The complex conjugate of ``x``; a real ``x`` is converted to complex first."""
    dt, weak = _dtype_and_weakness(x, "conj")
    if dtypes.is_float(dt):
        x = _convert_element_type(x, cx.complex_of(dt), weak)
    return cx.conj_p.bind(x)


def complex(x: Any, y: Any) -> Any:
    """``x + i y`` from two float32 (complex64 result) or float64 (complex128) operands."""
    return _binary(cx.complex_p, x, y)
