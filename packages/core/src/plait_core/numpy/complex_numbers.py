"""Complex-number functions of ``plait.numpy``: ``angle``, ``iscomplex``,
``isreal``, ``iscomplexobj``, ``isrealobj`` and ``sort_complex``.

(``real``, ``imag``, ``conj`` and ``conjugate`` live with the other
elementwise functions in :mod:`plait_core.numpy.math`.)
"""

from __future__ import annotations

import builtins
import math
from typing import Any

from plait_core import dtypes
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    convert,
    dtype_of,
    full_like_value,
    result_dtype,
    to_inexact,
)
from plait_core.numpy.math import imag, real
from plait_core.numpy.sorting import sort

__all__ = ["angle", "iscomplex", "iscomplexobj", "isreal", "isrealobj", "sort_complex"]


def angle(z: ArrayLike, deg: builtins.bool = False) -> Array:
    """The argument of ``z``, ``atan2(imag(z), real(z))``, in ``[-pi, pi]``
    (in degrees with ``deg=True``).  Real inputs give 0 or ``pi``; integers
    and booleans are computed in the default float dtype."""
    z = as_array(z, "angle")
    dt = dtype_of(z)
    if not dtypes.is_inexact(dt):
        z = convert(z, to_inexact(dt))
    re, im = real(z), imag(z)
    out = _lenient.atan2(im, re)
    return _lenient.mul(out, 180 / math.pi) if deg else out


def iscomplex(x: ArrayLike) -> Array:
    """Elementwise: True where ``x`` has a nonzero imaginary part (all False for real dtypes)."""
    x = as_array(x, "iscomplex")
    if dtypes.is_complex(dtype_of(x)):
        return _lenient.ne(imag(x), 0.0)
    return full_like_value(x, False, dtypes.bool_)


def isreal(x: ArrayLike) -> Array:
    """Elementwise: True where ``x``'s imaginary part is zero (all True for real dtypes)."""
    x = as_array(x, "isreal")
    if dtypes.is_complex(dtype_of(x)):
        return _lenient.eq(imag(x), 0.0)
    return full_like_value(x, True, dtypes.bool_)


def iscomplexobj(x: Any) -> builtins.bool:
    """Whether ``x`` has a complex dtype (a Python bool; ``None`` is not complex)."""
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = result_dtype("iscomplexobj", x)[0]
    return dtypes.is_complex(dt)


def isrealobj(x: Any) -> builtins.bool:
    """Whether ``x`` does not have a complex dtype (a Python bool)."""
    return not iscomplexobj(x)


def sort_complex(a: ArrayLike) -> Array:
    """``a`` sorted along its first axis by real part, then imaginary part, as a
    complex array (as JAX's; NumPy sorts the last axis, the same for 1-D input)."""
    x = sort(as_array(a, "sort_complex"), axis=0)
    dt = dtype_of(x)
    if dtypes.is_complex(dt):
        return x
    target = dtypes.complex128 if dt == dtypes.float64 else dtypes.default_complex_dtype()
    return convert(x, target)
