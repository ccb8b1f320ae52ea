"""Dtypes, canonicalisation and the type-promotion lattice.

Promotion follows the lattice JAX users know: Python scalars are *weakly
typed* (they take the dtype of whatever strong operand they meet), booleans
promote to integers, integers to floats, and mixing signed with unsigned
integers climbs to the next signed width.  The result of promoting two dtypes
is their least upper bound in the lattice below; it is computed once per pair
and cached.

With ``x64`` off (the default) 64-bit dtypes are canonicalised to 32 bits.

The narrow ML number types (``float8_*``, ``float6_*``, ``float4_e2m1fn``,
``int1``/``int2``/``int4`` and their unsigned kin) are ml_dtypes' NumPy
extension types.  As in JAX they are leaves of the lattice: booleans, Python
scalars and (for the floats) every integer dtype promote *to* them, but no two
of them promote to each other or to a wider float or integer, so mixing one
with another dtype is a :class:`TypePromotionError` (convert explicitly).
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

# The narrow ML number types (ml_dtypes' NumPy extension types).
float4_e2m1fn: DType = np.dtype(ml_dtypes.float4_e2m1fn)
float6_e2m3fn: DType = np.dtype(ml_dtypes.float6_e2m3fn)
float6_e3m2fn: DType = np.dtype(ml_dtypes.float6_e3m2fn)
float8_e3m4: DType = np.dtype(ml_dtypes.float8_e3m4)
float8_e4m3: DType = np.dtype(ml_dtypes.float8_e4m3)
float8_e4m3b11fnuz: DType = np.dtype(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn: DType = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz: DType = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2: DType = np.dtype(ml_dtypes.float8_e5m2)
float8_e5m2fnuz: DType = np.dtype(ml_dtypes.float8_e5m2fnuz)
float8_e8m0fnu: DType = np.dtype(ml_dtypes.float8_e8m0fnu)
int1: DType = np.dtype(ml_dtypes.int1)
int2: DType = np.dtype(ml_dtypes.int2)
int4: DType = np.dtype(ml_dtypes.int4)
uint1: DType = np.dtype(ml_dtypes.uint1)
uint2: DType = np.dtype(ml_dtypes.uint2)
uint4: DType = np.dtype(ml_dtypes.uint4)

NARROW_FLOATS: tuple[DType, ...] = (
    float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
    float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,
)  # fmt: skip
NARROW_SIGNED: tuple[DType, ...] = (int1, int2, int4)
NARROW_UNSIGNED: tuple[DType, ...] = (uint1, uint2, uint4)
NARROW: tuple[DType, ...] = (*NARROW_FLOATS, *NARROW_SIGNED, *NARROW_UNSIGNED)
NARROW_SET: frozenset[DType] = frozenset(NARROW)

_SIGNED: tuple[DType, ...] = (int8, int16, int32, int64, *NARROW_SIGNED)
_UNSIGNED: tuple[DType, ...] = (uint8, uint16, uint32, uint64, *NARROW_UNSIGNED)
_FLOATS: tuple[DType, ...] = (bfloat16, float16, float32, float64, *NARROW_FLOATS)
_COMPLEX: tuple[DType, ...] = (complex64, complex128)
_ALL: tuple[DType, ...] = (bool_, *_SIGNED, *_UNSIGNED, *_FLOATS, *_COMPLEX)


class TypePromotionError(ValueError):
    """Two dtypes have no implicit promotion path (a narrow ML number type met
    another dtype); convert one explicitly.  JAX's ``jax.dtypes.TypePromotionError``."""

_SIGNED_SET = frozenset(_SIGNED)
_UNSIGNED_SET = frozenset(_UNSIGNED)
_INT_SET = _SIGNED_SET | _UNSIGNED_SET
_FLOAT_SET = frozenset(_FLOATS)
_COMPLEX_SET = frozenset(_COMPLEX)
_INEXACT_SET = _FLOAT_SET | _COMPLEX_SET


def is_bool(dtype: DType) -> bool:
    """True for ``bool``."""
    return dtype == bool_


def is_narrow(dtype: DType) -> bool:
    """True for the narrow ML number types (``float8_e4m3fn``, ``int4``, ...)."""
    return dtype in NARROW_SET


def is_signed_int(dtype: DType) -> bool:
    """True for ``int8`` ... ``int64`` and the narrow ``int1``/``int2``/``int4``."""
    return dtype in _SIGNED_SET


def is_unsigned_int(dtype: DType) -> bool:
    """True for ``uint8`` ... ``uint64`` and the narrow ``uint1``/``uint2``/``uint4``."""
    return dtype in _UNSIGNED_SET


def is_int(dtype: DType) -> bool:
    """True for signed and unsigned integer dtypes (not ``bool``)."""
    return dtype in _INT_SET


def is_float(dtype: DType) -> bool:
    """True for real floating dtypes, ``bfloat16`` and the narrow floats included."""
    return dtype in _FLOAT_SET


def is_complex(dtype: DType) -> bool:
    """True for complex dtypes."""
    return dtype in _COMPLEX_SET


def is_inexact(dtype: DType) -> bool:
    """True for floating and complex dtypes."""
    return dtype in _INEXACT_SET


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating dtype (``bfloat16`` and the narrow floats included)."""
    return ml_dtypes.finfo(np.dtype(dtype))  # type: ignore[no-untyped-call]


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer dtype (the narrow ``int4`` etc. included)."""
    return ml_dtypes.iinfo(np.dtype(dtype))  # type: ignore[no-untyped-call]


_HAS_INF: dict[DType, bool] = {}


def has_inf(dtype: DType) -> bool:
    """Whether a floating dtype has infinities (``float8_e4m3fn``, the ``fnuz``
    types, ``float4``/``float6`` and ``float8_e8m0fnu`` do not)."""
    hit = _HAS_INF.get(dtype)
    if hit is None:
        with np.errstate(all="ignore"):
            hit = _HAS_INF[dtype] = bool(np.isinf(np.array(np.inf, np.float32).astype(dtype).astype(np.float32)))
    return hit


def lowest(dtype: DType) -> Any:
    """The identity of ``max`` over ``dtype``: ``False``, the integer minimum,
    ``-inf``, or the most negative finite value of a float without infinities
    (as JAX's reductions take it)."""
    if dtype == bool_:
        return False
    if is_int(dtype):
        return iinfo(dtype).min
    return -np.inf if not is_float(dtype) or has_inf(dtype) else finfo(dtype).min


def highest(dtype: DType) -> Any:
    """The identity of ``min`` over ``dtype`` (the mirror of :func:`lowest`)."""
    if dtype == bool_:
        return True
    if is_int(dtype):
        return iinfo(dtype).max
    return np.inf if not is_float(dtype) or has_inf(dtype) else finfo(dtype).max


# ---------------------------------------------------------------------------
# Canonicalisation (x64)

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
_canonical_cache: dict[Any, DType] = {}


def _on_x64_change() -> None:
    _canonical_cache.clear()
    _promote_cache.clear()


config.x64_listeners.append(_on_x64_change)


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
    int4: float32, uint4: float32,
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
    _WEAK_INT: (uint8, int8, *NARROW_SIGNED, *NARROW_UNSIGNED),
    uint8: (int16, uint16),
    uint16: (int32, uint32),
    uint32: (int64, uint64),
    uint64: (_WEAK_FLOAT,),
    int8: (int16,),
    int16: (int32,),
    int32: (int64,),
    int64: (_WEAK_FLOAT,),
    _WEAK_FLOAT: (bfloat16, float16, _WEAK_COMPLEX, *NARROW_FLOATS),
    bfloat16: (float32,),
    float16: (float32,),
    float32: (float64, complex64),
    float64: (complex128,),
    _WEAK_COMPLEX: (complex64,),
    complex64: (complex128,),
    complex128: (),
    # The narrow types are leaves: nothing is above them but themselves.
    **{t: () for t in NARROW},
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


_WEAK_NAMES = {
    _WEAK_INT: "a weakly typed int", _WEAK_FLOAT: "a weakly typed float", _WEAK_COMPLEX: "a weakly typed complex",
}


def _node_name(node: Any) -> str:
    return _WEAK_NAMES.get(node) or str(np.dtype(node).name)


def _lattice_join(a: Any, b: Any) -> Any:
    common = _UPPER[a] & _UPPER[b]
    # The least upper bound is the common bound below all the others.
    for candidate in common:
        if all(other in _UPPER[candidate] for other in common):
            return candidate
    # Only the narrow types are leaves without a common bound with others.
    narrow = ", ".join(_node_name(n) for n in (a, b) if n in NARROW_SET)
    raise TypePromotionError(
        f"no implicit promotion between {_node_name(a)} and {_node_name(b)}: as in JAX, the narrow ML number "
        f"types ({narrow}) promote only with booleans and weakly typed scalars of their kind (the floats also "
        "with integers); convert explicitly, e.g. x.astype(jnp.float32)"
    )


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


_WEAK_RANK = {_WEAK_INT: 0, _WEAK_FLOAT: 1, _WEAK_COMPLEX: 2}


def _kind_rank(dtype: DType) -> int:
    """Integers 0, floats 1, complex 2 (the weak kinds they take in); bool -1."""
    if is_int(dtype):
        return 0
    if is_float(dtype):
        return 1
    if is_complex(dtype):
        return 2
    return -1


def _check_strict(a: Any, b: Any) -> None:
    """Under ``numpy_dtype_promotion="strict"`` (JAX's option), only weak types
    promote implicitly: two weak kinds join; a weak kind joins a strong dtype
    of its kind or a higher one (a Python int joins ``float16``, a Python
    float does not join ``int32``); two different strong dtypes do not."""
    wa, wb = a in _WEAK_RANK, b in _WEAK_RANK
    if (wa and wb) or (not wa and not wb and a == b):
        return
    if wa != wb:
        weak, strong = (a, b) if wa else (b, a)
        if _kind_rank(strong) >= _WEAK_RANK[weak]:
            return
    raise TypePromotionError(
        f"no implicit promotion between {_node_name(a)} and {_node_name(b)} under "
        "numpy_dtype_promotion='strict'; convert one explicitly, or set the option to 'standard'"
    )


def _join_typed(a: DType, a_weak: bool, b: DType, b_weak: bool) -> tuple[DType, bool]:
    key = (_node(a, a_weak), _node(b, b_weak))
    if config.numpy_dtype_promotion == "strict":
        _check_strict(*key)
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
    da: DType = np.dtype(a)
    db: DType = np.dtype(b)
    for d in (da, db):
        if d not in _ALL:
            raise TypeError(f"promote_types: plait does not support the dtype {d}")
    if da == db:
        return da
    if config.numpy_dtype_promotion == "strict":
        _check_strict(da, db)
    return _lattice_join(da, db)  # type: ignore[no-any-return]


def dtype_and_weakness(x: Any) -> tuple[DType, bool]:
    """The (canonical dtype, weak_type) of a value, a dtype or an abstract value."""
    t = type(x)
    if t in _PY_SCALAR_TYPES:
        return python_scalar_dtype(x), t is not builtins.bool
    if isinstance(x, type) and issubclass(x, np.generic):  # numpy.float16: its ``dtype`` is a descriptor
        return canonicalize_dtype(x), False
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
    the result is weakly typed (only when every input was, and never a
    boolean: as in JAX, weak booleans, which comparisons of weak values make,
    promote to a strong ``bool``)."""
    if not args:
        raise ValueError("result_type needs at least one argument")
    dtype, weak = dtype_and_weakness(args[0])
    for arg in args[1:]:
        d, w = dtype_and_weakness(arg)
        if d == dtype and w == weak:
            continue
        dtype, weak = _join_typed(dtype, weak, d, w)
    return dtype, weak and dtype != bool_


def result_type(*args: Any) -> DType:
    """The dtype an operation on ``args`` computes in (``numpy.result_type``'s role)."""
    return result_type_and_weakness(*args)[0]


def is_weakly_typed(x: Any) -> bool:
    """True for Python scalars and values whose abstract value is weakly typed."""
    return dtype_and_weakness(x)[1]


_EXTENSION_CATEGORIES: dict[DType, frozenset[Any]] = {
    **{t: frozenset((np.floating, np.inexact, np.number, np.generic)) for t in (bfloat16, *NARROW_FLOATS)},
    **{t: frozenset((np.signedinteger, np.integer, np.number, np.generic)) for t in NARROW_SIGNED},
    **{t: frozenset((np.unsignedinteger, np.integer, np.number, np.generic)) for t in NARROW_UNSIGNED},
}
_CATEGORY_NAMES = {c.__name__: c for c in (np.floating, np.inexact, np.number, np.generic, np.signedinteger,
                                            np.unsignedinteger, np.integer)}


class extended(np.generic):
    """The abstract scalar type of plait's extended dtypes, those NumPy does not
    know (the dtype of typed PRNG keys): ``issubdtype(random.key(0).dtype,
    extended)`` holds, as with ``jax.dtypes.extended``.  An extended dtype is
    an object whose ``type`` attribute is a subclass of this class."""


class prng_key(extended):
    """The scalar type of typed PRNG key dtypes (``jax.dtypes.prng_key``)."""


def extended_scalar_type(x: Any) -> type | None:
    """The scalar type of an extended dtype (``None`` for anything else)."""
    if isinstance(x, (np.dtype, type, str)):
        return None
    t = getattr(x, "type", None)
    return t if isinstance(t, type) and issubclass(t, extended) else None


def issubdtype(a: Any, b: Any) -> bool:
    """``numpy.issubdtype`` that also knows ``bfloat16`` and the narrow floats
    are floating types and ``int4`` etc. integer types (NumPy sees ml_dtypes'
    types as bare ``numpy.generic``), and extended dtypes (typed keys): a key
    dtype is a sub-dtype of :class:`prng_key`, :class:`extended`,
    ``numpy.generic`` and itself only."""
    ta = extended_scalar_type(a)
    if ta is not None:
        if extended_scalar_type(b) is not None:
            return bool(a == b)
        return isinstance(b, type) and issubclass(ta, b)
    if extended_scalar_type(b) is not None:
        return False
    if isinstance(a, type) and issubclass(a, extended):  # the abstract classes themselves
        return isinstance(b, type) and issubclass(a, b)
    da = np.dtype(a)
    categories = _EXTENSION_CATEGORIES.get(da)
    if categories is not None:
        category = _CATEGORY_NAMES.get(b, b) if isinstance(b, str) else b
        if isinstance(category, type) and issubclass(category, np.generic) and not isinstance(category, np.dtype):
            if category in categories:
                return True
            if category in _CATEGORY_NAMES.values() or category is np.complexfloating or category is np.bool_:
                return False
    return bool(np.issubdtype(da, b))


def dtype_short_name(dtype: DType) -> str:
    """The short name used in pretty-printed types: ``f32``, ``i8``, ``bf16``, ``bool``,
    ``f8_e4m3fn``, ``i4``."""
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
    **{t: str(t.name).replace("uint", "u").replace("int", "i").replace("float", "f") for t in NARROW},
}

ALL_DTYPES: tuple[DType, ...] = _ALL
