"""Dtypes, canonicalisation and the type-promotion lattice.

Promotion follows the lattice JAX users know: Python scalars are *weakly
typed* (they take the dtype of whatever strong operand they meet), booleans
promote to integers, integers to floats, and mixing signed with unsigned
integers climbs to the next signed width.  The result of promoting two dtypes
is their least upper bound in the lattice below; it is computed once per pair
and cached.

With ``x64`` off (the default) 64-bit dtypes are canonicalised to 32 bits.
"""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

from plait_core.config import config

DType = np.dtype[Any]

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
bfloat16: DType = np.dtype(ml_dtypes.bfloat16)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

#: The dtype of tangents of integer and boolean values: it has no values.
float0: DType = np.dtype([("float0", np.void, 0)])

_SIGNED = (int8, int16, int32, int64)
_UNSIGNED = (uint8, uint16, uint32, uint64)
_FLOATS = (bfloat16, float16, float32, float64)
_COMPLEX = (complex64, complex128)
_ALL = (bool_, *_SIGNED, *_UNSIGNED, *_FLOATS, *_COMPLEX)

_SIGNED_SET = frozenset(_SIGNED)
_UNSIGNED_SET = frozenset(_UNSIGNED)
_INT_SET = _SIGNED_SET | _UNSIGNED_SET
_FLOAT_SET = frozenset(_FLOATS)
_COMPLEX_SET = frozenset(_COMPLEX)
_INEXACT_SET = _FLOAT_SET | _COMPLEX_SET


def is_bool(dtype: DType) -> bool:
    """True for ``bool``."""
    return dtype == bool_


def is_signed_int(dtype: DType) -> bool:
    """True for ``int8`` ... ``int64``."""
    return dtype in _SIGNED_SET


def is_unsigned_int(dtype: DType) -> bool:
    """True for ``uint8`` ... ``uint64``."""
    return dtype in _UNSIGNED_SET


def is_int(dtype: DType) -> bool:
    """True for signed and unsigned integer dtypes (not ``bool``)."""
    return dtype in _INT_SET


def is_float(dtype: DType) -> bool:
    """True for real floating dtypes, ``bfloat16`` included."""
    return dtype in _FLOAT_SET


def is_complex(dtype: DType) -> bool:
    """True for complex dtypes."""
    return dtype in _COMPLEX_SET


def is_inexact(dtype: DType) -> bool:
    """True for floating and complex dtypes."""
    return dtype in _INEXACT_SET


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating dtype (``bfloat16`` included)."""
    return ml_dtypes.finfo(np.dtype(dtype))  # type: ignore[no-untyped-call]


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer dtype."""
    return np.iinfo(np.dtype(dtype))


# ---------------------------------------------------------------------------
# Canonicalisation (x64)

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
_canonical_cache: dict[Any, DType] = {}


def _on_x64_change() -> None:
    _canonical_cache.clear()
    _promote_cache.clear()


def canonicalize_dtype(dtype: Any) -> DType:
    """The dtype plait computes with for ``dtype`` (64-bit types narrowed unless x64)."""
    try:
        return _canonical_cache[dtype]
    except (KeyError, TypeError):
        pass
    dt = np.dtype(dtype)
    if dt not in _ALL and dt != float0:
        raise TypeError(f"plait does not support the dtype {dt}")
    result = dt if config.x64_enabled else _TO_32.get(dt, dt)
    try:  # noqa: SIM105 - on the hot path; cheaper than contextlib.suppress
        _canonical_cache[dtype] = result
    except TypeError:
        pass
    return result  # type: ignore[no-any-return]


def default_int_dtype() -> DType:
    """``int64`` with x64 on, else ``int32``."""
    return int64 if config.x64_enabled else int32


def default_float_dtype() -> DType:
    """``float64`` with x64 on, else ``float32``."""
    return float64 if config.x64_enabled else float32


def default_complex_dtype() -> DType:
    """``complex128`` with x64 on, else ``complex64``."""
    return complex128 if config.x64_enabled else complex64


_TO_INEXACT = {
    bool_: float32, int8: float32, int16: float32, int32: float32,
    uint8: float32, uint16: float32, uint32: float32, int64: float64, uint64: float64,
}  # fmt: skip


def to_inexact_dtype(dtype: DType) -> DType:
    """The dtype a function computing in floating point (``sin``, ``true_divide``,
    ``mean``) gives an operand of ``dtype``, as JAX: inexact dtypes are kept,
    booleans and integers of up to 32 bits become ``float32`` and 64-bit
    integers ``float64`` (``float32`` with x64 off) -- not the default float."""
    return canonicalize_dtype(_TO_INEXACT.get(dtype, dtype))


def to_numeric_dtype(dtype: DType) -> DType:
    """The dtype an arithmetic function (``square``, ``power``) computes ``dtype``
    in: ``bool`` becomes ``int32``, every other dtype is kept."""
    return int32 if dtype == bool_ else dtype


_PY_SCALAR_TYPES = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def python_scalar_dtype(x: Any) -> DType:
    """The dtype a Python scalar takes (weakly typed unless it is a ``bool``)."""
    t = type(x)
    if t is builtins.bool:
        return bool_
    if t is builtins.int:
        return default_int_dtype()
    if t is builtins.float:
        return default_float_dtype()
    if t is builtins.complex:
        return default_complex_dtype()
    raise TypeError(f"{x!r} is not a Python scalar")


# ---------------------------------------------------------------------------
# The promotion lattice.  Nodes are dtypes plus three weak categories.

_WEAK_INT = "int*"
_WEAK_FLOAT = "float*"
_WEAK_COMPLEX = "complex*"

_EDGES: dict[Any, tuple[Any, ...]] = {
    bool_: (_WEAK_INT,),
    _WEAK_INT: (uint8, int8),
    uint8: (int16, uint16),
    uint16: (int32, uint32),
    uint32: (int64, uint64),
    uint64: (_WEAK_FLOAT,),
    int8: (int16,),
    int16: (int32,),
    int32: (int64,),
    int64: (_WEAK_FLOAT,),
    _WEAK_FLOAT: (bfloat16, float16, _WEAK_COMPLEX),
    bfloat16: (float32,),
    float16: (float32,),
    float32: (float64, complex64),
    float64: (complex128,),
    _WEAK_COMPLEX: (complex64,),
    complex64: (complex128,),
    complex128: (),
}


def _upper_bounds() -> dict[Any, frozenset[Any]]:
    result: dict[Any, frozenset[Any]] = {}

    def visit(node: Any) -> frozenset[Any]:
        if node not in result:
            ups = {node}
            for child in _EDGES[node]:
                ups |= visit(child)
            result[node] = frozenset(ups)
        return result[node]

    for node in _EDGES:
        visit(node)
    return result


_UPPER = _upper_bounds()


def _lattice_join(a: Any, b: Any) -> Any:
    common = _UPPER[a] & _UPPER[b]
    # The least upper bound is the common bound below all the others.
    for candidate in common:
        if all(other in _UPPER[candidate] for other in common):
            return candidate
    raise TypeError(f"no common type for {a} and {b}")  # pragma: no cover - lattice is complete


def _node(dtype: DType, weak: bool) -> Any:
    if weak:
        if is_int(dtype):
            return _WEAK_INT
        if is_float(dtype):
            return _WEAK_FLOAT
        if is_complex(dtype):
            return _WEAK_COMPLEX
    return dtype


_promote_cache: dict[tuple[Any, Any], tuple[DType, bool]] = {}


def _join_typed(a: DType, a_weak: bool, b: DType, b_weak: bool) -> tuple[DType, bool]:
    key = (_node(a, a_weak), _node(b, b_weak))
    hit = _promote_cache.get(key)
    if hit is not None:
        return hit
    joined = _lattice_join(*key)
    if joined == _WEAK_INT:
        out = (default_int_dtype(), True)
    elif joined == _WEAK_FLOAT:
        out = (default_float_dtype(), True)
    elif joined == _WEAK_COMPLEX:
        out = (default_complex_dtype(), True)
    else:
        out = (canonicalize_dtype(joined), False)
    # A weak operand keeps the width of its strong partner: weak float + f16 -> f16.
    _promote_cache[key] = out
    return out


def promote_types(a: Any, b: Any) -> DType:
    """The dtype two (strongly typed) dtypes promote to, as ``numpy.promote_types``
    but following plait's lattice (e.g. ``int8`` with ``uint8`` gives ``int16``,
    ``bfloat16`` with ``float16`` gives ``float32``)."""
    da, db = np.dtype(a), np.dtype(b)
    for d in (da, db):
        if d not in _ALL:
            raise TypeError(f"promote_types: plait does not support the dtype {d}")
    return _lattice_join(da, db)  # type: ignore[no-any-return]


def dtype_and_weakness(x: Any) -> tuple[DType, bool]:
    """The (canonical dtype, weak_type) of a value, a dtype or an abstract value."""
    t = type(x)
    if t in _PY_SCALAR_TYPES:
        return python_scalar_dtype(x), t is not builtins.bool
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if hasattr(x, "weak_type") and hasattr(x, "dtype"):
        return canonicalize_dtype(x.dtype), bool(x.weak_type)
    if hasattr(x, "dtype"):
        return canonicalize_dtype(x.dtype), False
    if x is builtins.int or x is builtins.float or x is builtins.complex:
        return python_scalar_dtype(x(0)), True
    if x is builtins.bool:
        return bool_, False
    return canonicalize_dtype(x), False


def result_type_and_weakness(*args: Any) -> tuple[DType, bool]:
    """Promote any mix of values, dtypes and abstract values; also say whether
    the result is weakly typed (only when every input was)."""
    if not args:
        raise ValueError("result_type needs at least one argument")
    dtype, weak = dtype_and_weakness(args[0])
    for arg in args[1:]:
        d, w = dtype_and_weakness(arg)
        if d == dtype and w == weak:
            continue
        dtype, weak = _join_typed(dtype, weak, d, w)
    return dtype, weak


def result_type(*args: Any) -> DType:
    """The dtype an operation on ``args`` computes in (``numpy.result_type``'s role)."""
    return result_type_and_weakness(*args)[0]


def is_weakly_typed(x: Any) -> bool:
    """True for Python scalars and values whose abstract value is weakly typed."""
    return dtype_and_weakness(x)[1]


def issubdtype(a: Any, b: Any) -> bool:
    """``numpy.issubdtype`` that also knows ``bfloat16`` is a floating type."""
    da = np.dtype(a)
    if b in (np.floating, "floating") and da == bfloat16:
        return True
    if b in (np.inexact, "inexact") and da == bfloat16:
        return True
    if b in (np.number, "number") and da == bfloat16:
        return True
    return bool(np.issubdtype(da, b))


def dtype_short_name(dtype: DType) -> str:
    """The short name used in pretty-printed types: ``f32``, ``i8``, ``bf16``, ``bool``."""
    return _SHORT.get(dtype, str(dtype))


_SHORT: dict[DType, str] = {
    bool_: "bool",
    int8: "i8",
    int16: "i16",
    int32: "i32",
    int64: "i64",
    uint8: "u8",
    uint16: "u16",
    uint32: "u32",
    uint64: "u64",
    bfloat16: "bf16",
    float16: "f16",
    float32: "f32",
    float64: "f64",
    complex64: "c64",
    complex128: "c128",
    float0: "float0",
}

ALL_DTYPES: tuple[DType, ...] = _ALL
