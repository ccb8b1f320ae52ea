"""Dtype names and promotion helpers of ``plait.numpy``.

The scalar types (``float32``, ``int8``, ``bfloat16``, ...) behave like NumPy's:
they are accepted wherever a dtype is (``zeros(3, float32)``, ``np.dtype(float32)``),
compare equal to the matching ``numpy.dtype``, and calling one converts a value:
``float32(x)`` is ``asarray(x, dtype=float32)`` and works on traced values too.

Promotion follows plait's lattice (:mod:`plait_core.dtypes`): Python scalars are
weakly typed, ``int8`` with ``uint8`` gives ``int16``, ``bfloat16`` with
``float16`` gives ``float32``, and with ``x64`` off 64-bit types are narrowed.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes as _core_dtypes
from plait_core.numpy.creation import asarray

DType = np.dtype[Any]


class _ScalarMeta(type):
    """Metaclass of the scalar types: a class that stands for one dtype."""

    dtype: DType

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other: object) -> bool:
        if isinstance(other, _ScalarMeta):
            return cls.dtype == other.dtype
        try:
            return bool(cls.dtype == np.dtype(other))  # type: ignore[call-overload]
        except TypeError:
            return False

    def __ne__(cls, other: object) -> bool:
        return not _ScalarMeta.__eq__(cls, other)  # (``cls.__eq__`` would be the class's own, object's)

    def __hash__(cls) -> int:
        # NumPy's scalar type's hash, as JAX's: with ``==`` above, ``numpy.int32 in
        # {plait.numpy.int32}`` and dict lookups across the two hold.
        return hash(cls.dtype.type)

    def __repr__(cls) -> str:
        return f"plait.numpy.{cls.__name__}"

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, cls.dtype.type)


def _scalar_type(name: str, dtype: DType) -> Any:
    return _ScalarMeta(name, (), {"dtype": dtype, "__doc__": f"The {dtype.name} scalar type; "
                                  f"``{name}(x)`` converts ``x`` to a {dtype.name} array."})


bool_ = _scalar_type("bool_", _core_dtypes.bool_)
int8 = _scalar_type("int8", _core_dtypes.int8)
int16 = _scalar_type("int16", _core_dtypes.int16)
int32 = _scalar_type("int32", _core_dtypes.int32)
int64 = _scalar_type("int64", _core_dtypes.int64)
uint8 = _scalar_type("uint8", _core_dtypes.uint8)
uint16 = _scalar_type("uint16", _core_dtypes.uint16)
uint32 = _scalar_type("uint32", _core_dtypes.uint32)
uint64 = _scalar_type("uint64", _core_dtypes.uint64)
bfloat16 = _scalar_type("bfloat16", _core_dtypes.bfloat16)
float16 = _scalar_type("float16", _core_dtypes.float16)
float32 = _scalar_type("float32", _core_dtypes.float32)
float64 = _scalar_type("float64", _core_dtypes.float64)
complex64 = _scalar_type("complex64", _core_dtypes.complex64)
complex128 = _scalar_type("complex128", _core_dtypes.complex128)

# The narrow ML number types (ml_dtypes' extension types; see plait_core.dtypes).
float4_e2m1fn = _scalar_type("float4_e2m1fn", _core_dtypes.float4_e2m1fn)
float6_e2m3fn = _scalar_type("float6_e2m3fn", _core_dtypes.float6_e2m3fn)
float6_e3m2fn = _scalar_type("float6_e3m2fn", _core_dtypes.float6_e3m2fn)
float8_e3m4 = _scalar_type("float8_e3m4", _core_dtypes.float8_e3m4)
float8_e4m3 = _scalar_type("float8_e4m3", _core_dtypes.float8_e4m3)
float8_e4m3b11fnuz = _scalar_type("float8_e4m3b11fnuz", _core_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = _scalar_type("float8_e4m3fn", _core_dtypes.float8_e4m3fn)
float8_e4m3fnuz = _scalar_type("float8_e4m3fnuz", _core_dtypes.float8_e4m3fnuz)
float8_e5m2 = _scalar_type("float8_e5m2", _core_dtypes.float8_e5m2)
float8_e5m2fnuz = _scalar_type("float8_e5m2fnuz", _core_dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _scalar_type("float8_e8m0fnu", _core_dtypes.float8_e8m0fnu)
int1 = _scalar_type("int1", _core_dtypes.int1)
int2 = _scalar_type("int2", _core_dtypes.int2)
int4 = _scalar_type("int4", _core_dtypes.int4)
uint1 = _scalar_type("uint1", _core_dtypes.uint1)
uint2 = _scalar_type("uint2", _core_dtypes.uint2)
uint4 = _scalar_type("uint4", _core_dtypes.uint4)

# NumPy's aliases for the default widths (canonicalised when used: with x64 off
# ``float_`` computes in float32, as in JAX).
float_ = float64
int_ = int64
uint = uint64
complex_ = complex128
double = float64
single = float32
half = float16

# Abstract scalar categories, for ``issubdtype``.
generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating



def finfo(dtype: Any) -> Any:
    """Machine limits of a floating dtype (``bfloat16`` included)."""
    return _core_dtypes.finfo(np.dtype(dtype))


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer dtype."""
    return _core_dtypes.iinfo(np.dtype(dtype))


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """``numpy.issubdtype`` that also knows ``bfloat16`` is a floating type."""
    return _core_dtypes.issubdtype(arg1, arg2)


dtype = np.dtype
"""``plait.numpy.dtype`` is ``numpy.dtype`` itself, as ``jax.numpy.dtype`` is (so
``isinstance(x, plait.numpy.dtype)`` holds for NumPy dtypes); it does not
canonicalise: ``dtype("float64")`` is float64 also with x64 off.  The scalar
types (``dtype(plait.numpy.float32)``) are accepted through their ``dtype``."""


def promote_types(a: Any, b: Any) -> DType:
    """The dtype two dtypes promote to under plait's lattice (strong types; not
    canonicalised, as ``numpy.promote_types``): ``promote_types(int8, uint8)`` is ``int16``."""
    return _core_dtypes.promote_types(np.dtype(a), np.dtype(b))


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The canonical dtype an operation on ``args`` (arrays, scalars, dtypes) computes
    in.  Python scalars are weak: ``result_type(int8_array, 1)`` is ``int8``.
    With ``return_weak_type_flag=True`` returns ``(dtype, weak_type)``."""
    normalized = [np.dtype(a) if isinstance(a, (_ScalarMeta, str)) else a for a in args]
    try:
        dt, weak = _core_dtypes.result_type_and_weakness(*normalized)
    except TypeError as e:
        raise TypeError(f"result_type: {e}") from None
    return (dt, weak) if return_weak_type_flag else dt


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether a value of dtype ``from_`` can be cast to ``to`` under ``casting``
    (NumPy's rules; ``bfloat16`` included)."""
    src, dst = np.dtype(getattr(from_, "dtype", from_)), np.dtype(to)
    if casting == "safe" and (src == _core_dtypes.bfloat16 or dst == _core_dtypes.bfloat16):
        return bool(_core_dtypes.promote_types(src, dst) == dst)
    return bool(np.can_cast(src, dst, casting=casting))  # type: ignore[arg-type]


NARROW_NAMES: tuple[str, ...] = (
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "int1",
    "int2",
    "int4",
    "uint1",
    "uint2",
    "uint4",
)

__all__ = [
    *NARROW_NAMES,
    "bfloat16", "bool_", "can_cast", "complex128", "complex64", "complex_",
    "complexfloating", "double", "dtype", "finfo", "float16", "float32", "float64",
    "float_", "floating", "generic", "half", "iinfo", "inexact", "int16", "int32",
    "int64", "int8", "int_", "integer", "issubdtype", "number", "promote_types",
    "result_type", "signedinteger", "single", "uint", "uint16", "uint32", "uint64",
    "uint8", "unsignedinteger",
]
