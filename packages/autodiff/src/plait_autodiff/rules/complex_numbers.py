"""JVP and transpose rules of the complex-number primitives.

``real``, ``imag``, ``conj`` and ``complex`` are linear over the reals, so
their JVPs apply them to the tangents.  Their transposes follow JAX's
convention for complex cotangents: a cotangent ``c`` pairs with a value
``y`` as ``Re(sum(c * y))`` (no conjugation), which gives

* ``real``: ``complex(c, 0)``;  ``imag``: ``complex(0, -c)``;
* ``conj``: ``conj(c)``;  ``complex(x, y)``: ``(real(c), -imag(c))``.

With that convention ``grad`` of a real-valued function of complex inputs is
the conjugate of ``df/dRe + i df/dIm``, as JAX's is.
"""

from __future__ import annotations

from typing import Any

from plait_autodiff.rules.common import deflinear
from plait_autodiff.transpose import is_undefined
from plait_core import ops
from plait_core.primitives import complex_numbers as cx


def _zero_part(ct: Any) -> Any:
    return ops.const(ct, 0)


deflinear(cx.real_p, lambda ct, z: [cx.complex_p.bind(ct, _zero_part(ct))])
deflinear(cx.imag_p, lambda ct, z: [cx.complex_p.bind(_zero_part(ct), ops.neg(ct))])
deflinear(cx.conj_p, lambda ct, z: [cx.conj_p.bind(ct)])


def _complex_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    cx_ = ops.sum_to_shape(cx.real_p.bind(ct), x.aval) if is_undefined(x) else None
    cy = ops.sum_to_shape(ops.neg(cx.imag_p.bind(ct)), y.aval) if is_undefined(y) else None
    return [cx_, cy]


deflinear(cx.complex_p, _complex_transpose)
