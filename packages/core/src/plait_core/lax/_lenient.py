"""lax's multi-operand elementwise functions with plait's internal, lenient
rule on dtypes: a weakly typed operand (a Python scalar, or a value computed
from Python scalars only) is converted to the dtype of the others when it
promotes to it, so ``_lenient.mul(x_f16, 0.5)`` is ``float16`` and, with x64
on, ``_lenient.mul(x_f32, 0.5)`` is ``float32``.

Only for plait's own code (NumPy-style functions, samplers, rules), which
writes constants as Python scalars.  The public ``lax`` functions follow JAX:
operands of different dtypes are a ``TypeError`` whatever their weak types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait_core.lax import elementwise as _ew
from plait_core.primitive import Primitive
from plait_core.primitives import complex_numbers as _cx
from plait_core.primitives import elementwise as _p

__all__ = [
    "add", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "clamp", "complex", "div", "eq", "ge", "gt",
    "le", "lt", "max", "min", "mul", "ne", "nextafter", "pow", "rem", "select", "select_n", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sub",
]


def _lenient(prim: Primitive, name: str) -> Callable[[Any, Any], Any]:
    public = getattr(_ew, name)
    return _ew._binary_function(prim, name, f"As ``lax.{name}``, converting weakly typed operands.\n\n"
                                + (public.__doc__ or ""), lenient=True)


add = _lenient(_p.add_p, "add")
sub = _lenient(_p.sub_p, "sub")
mul = _lenient(_p.mul_p, "mul")
div = _lenient(_p.div_p, "div")
rem = _lenient(_p.rem_p, "rem")
max = _lenient(_p.max_p, "max")
min = _lenient(_p.min_p, "min")
atan2 = _lenient(_p.atan2_p, "atan2")
bitwise_and = _lenient(_p.and_p, "bitwise_and")
bitwise_or = _lenient(_p.or_p, "bitwise_or")
bitwise_xor = _lenient(_p.xor_p, "bitwise_xor")
eq = _lenient(_p.eq_p, "eq")
ne = _lenient(_p.ne_p, "ne")
lt = _lenient(_p.lt_p, "lt")
le = _lenient(_p.le_p, "le")
gt = _lenient(_p.gt_p, "gt")
ge = _lenient(_p.ge_p, "ge")
shift_left = _lenient(_p.shift_left_p, "shift_left")
shift_right_arithmetic = _lenient(_p.shift_right_arithmetic_p, "shift_right_arithmetic")
shift_right_logical = _lenient(_p.shift_right_logical_p, "shift_right_logical")


def pow(x: Any, y: Any) -> Any:
    """As ``lax.pow`` (an integer ``y`` is taken), converting weakly typed operands."""
    return _ew._pow(x, y, True)


def nextafter(x1: Any, x2: Any) -> Any:
    """As ``lax.nextafter``, converting weakly typed operands."""
    return _ew._binary(_p.nextafter_p, x1, x2, lenient=True)


def complex(x: Any, y: Any) -> Any:
    """As ``lax.complex``, converting weakly typed operands."""
    return _ew._binary(_cx.complex_p, x, y, lenient=True)


def select_n(which: Any, *cases: Any) -> Any:
    """As ``lax.select_n``, converting weakly typed cases."""
    return _ew._select_n(which, cases, True)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """As ``lax.select``, converting a weakly typed case."""
    return _ew._select(pred, on_true, on_false, True)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """As ``lax.clamp``, converting weakly typed operands."""
    return _ew._clamp(min, x, max, True)
