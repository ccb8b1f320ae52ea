"""Abstract values: what a transformation knows about an array without its data.

``ShapedArray(shape, dtype, weak_type)`` is the one abstract value of plait.
A dimension is an ``int`` or a :class:`~plait_core.dims.SymbolicDim`.
Values are mapped to abstract values by :func:`get_aval`, which knows NumPy
arrays and scalars, Python scalars, tracers, and array types registered with
:func:`register_array_type` (the device ``Array`` of plait-dispatch).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.config import config
from plait_core.dims import Dim, InconclusiveDimensionOperation, Shape, SymbolicDim, canonicalize_shape
from plait_core.sharding import NamedSharding, PartitionSpec, get_abstract_mesh

DType = np.dtype[Any]


_NO_AXES: frozenset[Any] = frozenset()
_KEEP: Any = object()


class ShapedArray:
    """The abstract value of an array: its shape, dtype and whether it is weakly typed.

    Inside a ``shard_map`` body (with ``check_vma``), ``vma`` is the set of mesh
    axes the value varies over (its *varying manual axes*; empty: the same on
    every device of those axes).  It is part of the type JAX users see
    (``typeof(x).vma``), but not of equality or hashing: programs are compared
    by shape and dtype, and the axes matter only to ``shard_map``'s checks and to
    transposition (see :mod:`plait_core.vma`).

    Under a mesh with ``Explicit`` axes, ``sharding`` is the value's layout as
    part of its type (JAX's explicit sharding, :mod:`plait_core.explicit_sharding`):
    a :class:`~plait_core.sharding.NamedSharding` of an abstract mesh, kept
    only when it splits some dimension (``None`` otherwise, which reads as
    replicated over the context mesh).  Unlike ``vma`` it takes part in
    equality and hashing, as types that differ in layout are different types."""

    __slots__ = ("_hash", "_sharding", "dtype", "shape", "vma", "weak_type")

    shape: Shape
    dtype: DType
    weak_type: bool
    vma: frozenset[Any]
    _sharding: NamedSharding | None

    def __init__(
        self,
        shape: Sequence[Dim],
        dtype: Any,
        weak_type: bool = False,
        vma: frozenset[Any] = _NO_AXES,
        sharding: NamedSharding | None = None,
    ) -> None:
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = weak_type
        self.vma = vma
        self._sharding = sharding
        self._hash = -1

    @property
    def sharding(self) -> NamedSharding:
        """The value's layout as part of its type: the explicit sharding it
        carries, else replicated (``P(None, ...)``) over the context's abstract mesh."""
        s = self._sharding
        if s is not None:
            return s
        return NamedSharding(get_abstract_mesh(), PartitionSpec(*(None,) * len(self.shape)))

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> Dim:
        """Number of elements (a polynomial when the shape is symbolic)."""
        n: Dim = 1
        for d in self.shape:
            n = n * d
        return n

    def update(
        self,
        shape: Sequence[Dim] | None = None,
        dtype: Any = None,
        weak_type: bool | None = None,
        vma: frozenset[Any] | None = None,
        sharding: Any = _KEEP,
    ) -> ShapedArray:
        """A copy with some fields replaced (``sharding=None`` drops an explicit
        sharding; so does a new shape of another rank, which the old one cannot describe)."""
        if sharding is _KEEP and shape is not None and self._sharding is not None and len(shape) != len(self.shape):
            sharding = None
        return ShapedArray(
            self.shape if shape is None else tuple(shape),
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            self.vma if vma is None else vma,
            self._sharding if sharding is _KEEP else sharding,
        )

    def to_tangent_aval(self) -> ShapedArray:
        """JAX's ``ShapedArray.to_tangent_aval``: the aval of this value's tangents as a
        custom rule sees them: the same for floating and complex dtypes, ``float0`` of
        the same shape for integers, booleans and keys; the weak type, the varying
        axes and the sharding are kept (unlike :func:`to_tangent_type`, which plait's
        own autodiff uses and which is strongly typed)."""
        dtype = self.dtype if dtypes.is_inexact(self.dtype) else dtypes.float0
        return ShapedArray(self.shape, dtype, self.weak_type, self.vma, self._sharding)

    def strip_weak_type(self) -> ShapedArray:
        """The same abstract value, strongly typed."""
        return ShapedArray(self.shape, self.dtype, False, self.vma, self._sharding) if self.weak_type else self

    def str_short(self) -> str:
        """Compact type, e.g. ``f32[3,4]`` (``f32[3]{V:x}`` when it varies over mesh axis ``x``,
        ``f32[8@x,4]`` when its type splits dimension 0 over explicit mesh axis ``x``)."""
        s = self._sharding
        if s is None:
            dims = ",".join(str(d) for d in self.shape)
        else:
            dims = ",".join(_dim_str(d, s.spec.axis_names_of(k)) for k, d in enumerate(self.shape))
        varying = "{V:" + ",".join(sorted(str(a) for a in self.vma)) + "}" if self.vma else ""
        return f"{dtypes.dtype_short_name(self.dtype)}[{dims}]{varying}"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    __str__ = str_short

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is ShapedArray
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
            and _same_shape(self.shape, other.shape)
            and (self._sharding is other._sharding or self._sharding == other._sharding)
        )

    def __hash__(self) -> int:
        h = self._hash
        if h == -1:
            s = self._sharding
            h = hash((self.shape, self.dtype, self.weak_type) if s is None else (self.shape, self.dtype, self.weak_type, s))
            self._hash = h
        return h

    def same_type(self, other: ShapedArray) -> bool:
        """Equal shape and dtype, ignoring weak types."""
        return self.dtype == other.dtype and _same_shape(self.shape, other.shape)


def _dim_str(size: Dim, names: tuple[Any, ...]) -> str:
    if not names:
        return str(size)
    return f"{size}@{names[0]}" if len(names) == 1 else f"{size}@({','.join(str(n) for n in names)})"


def _same_shape(a: Shape, b: Shape) -> bool:
    """Structural equality of shapes (symbolic dims compare as polynomials; an
    undecidable comparison means "not the same")."""
    try:
        return a == b
    except InconclusiveDimensionOperation:
        return False


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (input or output of ``eval_shape``)."""

    __slots__ = ("dtype", "shape", "sharding", "weak_type")

    def __init__(
        self, shape: Sequence[Dim], dtype: Any, *, weak_type: bool = False, sharding: Any = None
    ) -> None:
        self.shape: Shape = canonicalize_shape(shape, "ShapeDtypeStruct")
        self.dtype: DType = np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> Dim:
        """Number of elements."""
        return ShapedArray(self.shape, self.dtype).size

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ShapeDtypeStruct)
            and _same_shape(self.shape, other.shape)
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


# ---------------------------------------------------------------------------
# Values core knows.


class ArrayTypeHandler:
    """How core sees an array type registered by an interpreter."""

    __slots__ = ("aval", "to_numpy")

    def __init__(self, aval: Callable[[Any], ShapedArray], to_numpy: Callable[[Any], np.ndarray]) -> None:
        self.aval = aval
        self.to_numpy = to_numpy


_array_types: dict[type, ArrayTypeHandler] = {}


def register_array_type(
    cls: type, aval: Callable[[Any], ShapedArray], to_numpy: Callable[[Any], np.ndarray]
) -> None:
    """Teach core a concrete array type: how to get its abstract value and its data."""
    _array_types[cls] = ArrayTypeHandler(aval, to_numpy)


def registered_array_types() -> tuple[type, ...]:
    """The array types registered with :func:`register_array_type`."""
    return tuple(_array_types)


def _numpy_aval(x: Any) -> ShapedArray:
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)


_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _python_scalar_aval(x: Any) -> ShapedArray:
    t = type(x)
    if t is builtins.int:
        if not config.x64_enabled and not (_INT32_MIN <= x <= _INT32_MAX):
            raise OverflowError(
                f"Python int {x} is too large for int32 (the default integer type while "
                "x64 is off); enable x64 or pass an explicitly typed array"
            )
        return ShapedArray((), dtypes.default_int_dtype(), True)
    return ShapedArray((), dtypes.python_scalar_dtype(x), t is not builtins.bool)


_AVAL_OF: dict[type, Callable[[Any], ShapedArray]] = {
    np.ndarray: _numpy_aval,
    builtins.bool: _python_scalar_aval,
    builtins.int: _python_scalar_aval,
    builtins.float: _python_scalar_aval,
    builtins.complex: _python_scalar_aval,
}


def is_known_value(x: Any) -> bool:
    """True for values core can compute with: arrays, scalars, tracers."""
    t = type(x)
    return t in _AVAL_OF or t in _array_types or isinstance(x, np.generic) or hasattr(x, "aval")


def get_aval(x: Any, where: str | None = None) -> ShapedArray:
    """The abstract value of a concrete value or tracer.

    Raises ``TypeError`` naming ``where`` (for example ``"argument 1 of add"``)
    for values core does not know (strings, lists, arbitrary objects).
    """
    t = type(x)
    fn = _AVAL_OF.get(t)
    if fn is not None:
        return fn(x)
    handler = _array_types.get(t)
    if handler is not None:
        return handler.aval(x)
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if isinstance(x, np.generic):
        return ShapedArray((), dtypes.canonicalize_dtype(x.dtype), False)
    for cls, handler in _array_types.items():
        if isinstance(x, cls):
            return handler.aval(x)
    place = f" {where}" if where else ""
    raise TypeError(
        f"{place.strip() or 'value'}: expected an array, a scalar or a traced value, "
        f"got a value of type {t.__module__}.{t.__qualname__}: {_short_repr(x)}"
    )


def _short_repr(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def to_numpy(x: Any, dtype: Any = None) -> np.ndarray:
    """Concrete data of a value core knows, as a NumPy array of its canonical dtype."""
    t = type(x)
    handler = _array_types.get(t)
    if handler is not None:
        arr = handler.to_numpy(x)
    elif t in (builtins.bool, builtins.int, builtins.float, builtins.complex):
        aval = _python_scalar_aval(x)
        return np.asarray(x, dtype=aval.dtype if dtype is None else dtype)
    else:
        arr = np.asarray(x)
    target = dtypes.canonicalize_dtype(arr.dtype) if dtype is None else np.dtype(dtype)
    if arr.dtype != target:
        arr = arr.astype(target)
    return arr


def raise_to_shaped(x: Any) -> ShapedArray:
    """Alias of :func:`get_aval` kept for readers coming from JAX."""
    return get_aval(x)


def zeros_like_aval(aval: ShapedArray) -> np.ndarray:
    """A NumPy zero array of this abstract value (the shape must be concrete)."""
    shape = tuple(int(d) for d in aval.shape)
    return np.zeros(shape, aval.dtype)


def is_symbolic_shape(shape: Shape) -> bool:
    """True if any dimension is symbolic."""
    return any(type(d) is SymbolicDim for d in shape)


def to_tangent_type(aval: ShapedArray) -> ShapedArray:
    """The type of the tangents (and cotangents) of a value of type ``aval``:
    its shape and dtype for floating and complex dtypes, ``float0`` of the same
    shape for integers and booleans.  Tangent types are strongly typed, so a
    loop carrying a tangent keeps its type whatever it is multiplied by.  This
    is the one definition every package uses."""
    if dtypes.is_inexact(aval.dtype):
        return aval.strip_weak_type()
    return ShapedArray(aval.shape, dtypes.float0, False, aval.vma)
