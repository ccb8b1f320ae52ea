"""Building StableHLO MLIR text: types, constants, SSA values, blocks, regions
and functions.

Every operation is written in MLIR's *generic* form
(``%3 = "stablehlo.add"(%1, %2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>``):
one syntax for every dialect (``stablehlo``, ``chlo``, ``func``), so the
emitter needs no per-operation printing rules and whatever jaxlib's parser
accepts for one operation it accepts for all.

SSA names are numbered per function (``%0``, ``%1``, ...), across the nested
regions of its operations too, so a region may use any value defined above it
(``stablehlo.case`` and ``stablehlo.while`` regions capture values that way;
reductions, sorts and scatters use only their block arguments).

Types: ``bool`` is ``i1``, unsigned integers are ``ui8``..``ui64``,
``bfloat16`` is ``bf16``, complex types are ``complex<f32>``/``complex<f64>``.
Weak types do not exist in HLO.  ``float0`` (the tangent type of integers)
has no HLO type; inside a module a ``float0`` value is an all-false ``i1``
tensor of its shape, and :func:`plait_dispatch.lowering.lower_jaxpr` keeps
such values out of the entry function's parameters and results.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NoReturn

import ml_dtypes
import numpy as np

from plait_core import ShapedArray, dtypes

DType = np.dtype[Any]

_ELEMENT_TYPES: Final[dict[DType, str]] = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
    np.dtype(ml_dtypes.float8_e4m3fn): "f8E4M3FN",
    np.dtype(ml_dtypes.float8_e5m2): "f8E5M2",
    np.dtype(ml_dtypes.float8_e3m4): "f8E3M4",
    np.dtype(ml_dtypes.float8_e4m3): "f8E4M3",
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): "f8E4M3B11FNUZ",
    np.dtype(ml_dtypes.float8_e4m3fnuz): "f8E4M3FNUZ",
    np.dtype(ml_dtypes.float8_e5m2fnuz): "f8E5M2FNUZ",
    np.dtype(ml_dtypes.float8_e8m0fnu): "f8E8M0FNU",
    np.dtype(ml_dtypes.float4_e2m1fn): "f4E2M1FN",
    np.dtype(ml_dtypes.int2): "i2",
    np.dtype(ml_dtypes.int4): "i4",
    np.dtype(ml_dtypes.uint2): "ui2",
    np.dtype(ml_dtypes.uint4): "ui4",
}

#: Narrow ML number types plait carries (promotion, tracing, NumPy evaluation)
#: but XLA cannot, with why.  Found by trying them on jaxlib 0.10.2's CPU client.
NO_XLA_TYPE: Final[dict[DType, str]] = {
    **dict.fromkeys(
        (np.dtype(ml_dtypes.float6_e2m3fn), np.dtype(ml_dtypes.float6_e3m2fn)),
        "jaxlib 0.10.2's XLA has no primitive type for the 6-bit floats (JAX 0.10.2 fails on them too: "
        "'Invalid XLA PrimitiveType')",
    ),
    **dict.fromkeys(
        (np.dtype(ml_dtypes.int1), np.dtype(ml_dtypes.uint1)),
        "StableHLO has no 1-bit integer type apart from the boolean i1 (JAX 0.10.2 computes int1 as "
        "booleans and cannot lower uint1 at all)",
    ),
}

#: Sub-byte types XLA holds but cannot hand to the host through DLPack: read
#: back through an exact conversion on the device to this wider type.
HOST_CONTAINER: Final[dict[DType, DType]] = {
    np.dtype(ml_dtypes.int2): np.dtype(np.int8),
    np.dtype(ml_dtypes.int4): np.dtype(np.int8),
    np.dtype(ml_dtypes.uint2): np.dtype(np.uint8),
    np.dtype(ml_dtypes.uint4): np.dtype(np.uint8),
    np.dtype(ml_dtypes.float4_e2m1fn): np.dtype(np.float32),
}

BOOL: Final[DType] = np.dtype(np.bool_)
FLOAT0: Final[DType] = dtypes.float0


class LoweringError(ValueError):
    """A program cannot be written as StableHLO (a symbolic shape, an unknown dtype)."""


def element_type(dtype: DType) -> str:
    """The MLIR element type of a dtype (``float0`` is carried as ``i1``)."""
    if dtype == FLOAT0:
        return "i1"
    t = _ELEMENT_TYPES.get(dtype)
    if t is None:
        refuse_dtype(dtype)
    return t


def no_xla_message(dtype: DType, doing: str = "compute with") -> str:
    """Why XLA cannot hold values of ``dtype`` (for errors naming it)."""
    why = NO_XLA_TYPE.get(dtype, "it has no StableHLO element type")
    return (f"the XLA backend cannot {doing} {dtype.name} values: {why}; without plait_dispatch, "
            "plait_core evaluates them with NumPy")


def refuse_dtype(dtype: DType, doing: str = "compute with") -> NoReturn:
    """Raise the error for a dtype XLA cannot hold, with JAX's class:
    ``JaxRuntimeError`` for the 6-bit floats (XLA has no such primitive type),
    :class:`LoweringError` (a ``ValueError``) otherwise (StableHLO cannot
    express the type)."""
    message = no_xla_message(dtype, doing)
    if dtype.name.startswith("float6"):
        from plait_dispatch import _jaxlib

        raise _jaxlib.XlaRuntimeError(message)
    raise LoweringError(message)


def concrete_shape(aval: ShapedArray) -> tuple[int, ...]:
    """The shape of ``aval`` as ints; :class:`LoweringError` for a symbolic one."""
    shape = []
    for d in aval.shape:
        if type(d) is int:
            shape.append(d)
            continue
        constant = getattr(d, "is_constant", False)
        if not constant:
            raise LoweringError(
                f"cannot lower a value of type {aval.str_short()}: StableHLO needs concrete shapes, "
                f"and the dimension {d} is symbolic (evaluate it first, e.g. under mask with a logical_env)"
            )
        shape.append(int(d))
    return tuple(shape)


@functools.lru_cache(maxsize=4096)
def tensor_type(aval: ShapedArray) -> str:
    """``tensor<2x3xf32>``; a scalar is ``tensor<f32>``."""
    dims = "".join(f"{d}x" for d in concrete_shape(aval))
    return f"tensor<{dims}{element_type(aval.dtype)}>"


def i64_array(values: Iterable[int]) -> str:
    """A dense ``i64`` array attribute: ``array<i64: 1, 2>`` (``array<i64>`` when empty)."""
    vals = [int(v) for v in values]
    return f"array<i64: {', '.join(map(str, vals))}>" if vals else "array<i64>"


def int_list(values: Iterable[int]) -> str:
    """``[1, 2]``: a list inside a structured attribute (gather, scatter, dot, conv)."""
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


# ---------------------------------------------------------------------------
# Constants


def _float_text(value: Any, dtype: DType) -> str:
    """A float element: decimal when finite (the shortest text that names the
    value exactly), the bit pattern in hex for infinities and NaN."""
    f = float(value)
    if math.isfinite(f):
        s = repr(f)
        if "." not in s:  # MLIR's float literal needs a point: 1e-05 -> 1.0e-05
            mant, _, exp = s.partition("e")
            s = f"{mant}.0e{exp}" if exp else f"{mant}.0"
        return s
    bits = np.asarray(value, dtype).reshape(1).view(f"u{dtype.itemsize}")[0]
    return f"0x{int(bits):0{2 * dtype.itemsize}X}"


def _element_text(value: Any, dtype: DType) -> str:
    if dtype in (BOOL, FLOAT0):
        return "true" if bool(value) else "false"
    if dtype.kind in "iu" or dtypes.is_int(dtype):
        return str(int(value))
    if dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        c = complex(value)
        return f"({_float_text(c.real, part)}, {_float_text(c.imag, part)})"
    return _float_text(value, dtype)


def dense_attr(value: Any, aval: ShapedArray) -> str:
    """``dense<...> : tensor<...>`` holding ``value`` (a scalar or an array of
    ``aval``'s shape): a splat when every element is equal, else the raw bytes
    in hex (little-endian, row-major, one byte per boolean).

    XLA on the CPU may flush a constant of several elements that are all one
    subnormal ``bfloat16`` to zero when it folds it, however the constant is
    written; values computed at run time keep their subnormals."""
    ty = tensor_type(aval)
    if aval.dtype == FLOAT0:
        return f"dense<false> : {ty}"
    arr = np.asarray(value, dtype=aval.dtype)
    if arr.size == 0:
        return f"dense<{_element_text(0, aval.dtype)}> : {ty}"
    first = arr.reshape(-1)[0]
    if arr.ndim == 0 or _all_equal(arr):
        return f"dense<{_element_text(first, aval.dtype)}> : {ty}"
    if aval.dtype in HOST_CONTAINER:  # sub-byte elements: no byte-per-element hex form, write them out
        return f"dense<{_nested_text(arr, aval.dtype)}> : {ty}"
    raw = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"), copy=False)).tobytes()
    return f'dense<"0x{raw.hex().upper()}"> : {ty}'


def _nested_text(arr: np.ndarray, dtype: DType) -> str:
    if arr.ndim == 0:
        return _element_text(arr[()], dtype)
    return "[" + ", ".join(_nested_text(a, dtype) for a in arr) + "]"


def _all_equal(arr: np.ndarray) -> bool:
    """Whether every element has the same bit pattern (NaN equals itself, -0.0 differs from 0.0)."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    return bool(np.all(raw == raw[0]))


# ---------------------------------------------------------------------------
# SSA values, blocks and regions


class Value:
    """An SSA value of the text being built: its name (``%3``, ``%arg0``,
    ``%5#1``) and its abstract value (whose shape must be concrete)."""

    __slots__ = ("aval", "name")

    def __init__(self, name: str, aval: ShapedArray) -> None:
        self.name = name
        self.aval = aval

    @property
    def type(self) -> str:
        """The MLIR type, e.g. ``tensor<3xf32>``."""
        return tensor_type(self.aval)

    @property
    def shape(self) -> tuple[int, ...]:
        """The concrete shape."""
        return concrete_shape(self.aval)

    @property
    def dtype(self) -> DType:
        """The element dtype."""
        return self.aval.dtype

    def __repr__(self) -> str:
        return f"Value({self.name}: {self.aval.str_short()})"


class Namer:
    """Hands out the SSA names of one function: ``%0``, ``%1``, ...; and
    remembers which of them are scalar constants (and their values)."""

    __slots__ = ("count", "scalars", "used")

    def __init__(self) -> None:
        self.count = 0
        self.scalars: dict[str, np.ndarray] = {}
        self.used: set[str] = set()

    def fresh(self) -> str:
        """A name not used before in this function."""
        n = self.count
        self.count += 1
        return f"%{n}"


def _types(values: Sequence[Value]) -> str:
    return ", ".join(v.type for v in values)


def result_types(avals: Sequence[ShapedArray]) -> str:
    """The result-type part of a signature: ``tensor<f32>``, ``(t1, t2)`` or ``()``."""
    if len(avals) == 1:
        return tensor_type(avals[0])
    return "(" + ", ".join(tensor_type(a) for a in avals) + ")"


def _attr_text(attrs: Mapping[str, str] | None) -> str:
    if not attrs:
        return ""
    return " {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}"


class Block:
    """The operations of one block: the body of a function or one region of
    an operation.  Blocks of one function share a :class:`Namer`."""

    __slots__ = ("_constants", "args", "lines", "namer")

    def __init__(self, namer: Namer, args: Sequence[Value]) -> None:
        self.namer = namer
        self.args = list(args)
        self.lines: list[str] = []
        self._constants: dict[tuple[str, bytes], Value] = {}

    def op(
        self,
        name: str,
        operands: Sequence[Value],
        results: Sequence[ShapedArray],
        attrs: Mapping[str, str] | None = None,
        regions: Sequence[Block] = (),
    ) -> list[Value]:
        """Append the operation ``name`` and return its result values."""
        if not results:
            lhs, outs = "", []
        elif len(results) == 1:
            base = self.namer.fresh()
            lhs, outs = f"{base} = ", [Value(base, results[0])]
        else:
            base = self.namer.fresh()
            lhs = f"{base}:{len(results)} = "
            outs = [Value(f"{base}#{k}", a) for k, a in enumerate(results)]
        names = [v.name for v in operands]
        self.namer.used.update(names)
        head = f'{lhs}"{name}"({", ".join(names)})'
        tail = f"{_attr_text(attrs)} : ({_types(operands)}) -> {result_types(results)}"
        if not regions:
            self.lines.append(head + tail)
            return outs
        self.lines.append(head + " ({")
        for k, region in enumerate(regions):
            if k:
                self.lines.append("}, {")
            self.lines.extend(region.render())
        self.lines.append("})" + tail)
        return outs

    def op1(
        self,
        name: str,
        operands: Sequence[Value],
        result: ShapedArray,
        attrs: Mapping[str, str] | None = None,
        regions: Sequence[Block] = (),
    ) -> Value:
        """:meth:`op` for an operation with one result."""
        return self.op(name, operands, [result], attrs, regions)[0]

    def constant(self, value: Any, aval: ShapedArray) -> Value:
        """A ``stablehlo.constant`` of ``aval`` holding ``value`` (a scalar
        broadcast to the shape, or an array of that shape).  Equal constants of
        one block are emitted once."""
        if aval.dtype == FLOAT0:
            arr = np.zeros(concrete_shape(aval), BOOL)
        else:
            arr = np.asarray(value, dtype=aval.dtype)
        key = (f"{tensor_type(aval)}|{aval.dtype}|{arr.shape}", np.ascontiguousarray(arr).tobytes())
        hit = self._constants.get(key)
        if hit is not None:
            return hit
        out = self.op1("stablehlo.constant", [], aval, {"value": dense_attr(arr, aval)})
        self._constants[key] = out
        if arr.ndim == 0:
            self.namer.scalars[out.name] = arr
        return out

    def scalar_constant(self, x: Value) -> np.ndarray | None:
        """The value of ``x`` if it is a scalar constant of this function, else ``None``."""
        return self.namer.scalars.get(x.name)

    def region(self, arg_avals: Sequence[ShapedArray]) -> Block:
        """A new, empty region (of an operation to be appended to this block)
        whose block arguments have ``arg_avals``."""
        return Block(self.namer, [Value(self.namer.fresh(), a) for a in arg_avals])

    def ret(self, values: Sequence[Value], op: str = "stablehlo.return") -> None:
        """Append the terminator returning ``values``."""
        self.namer.used.update(v.name for v in values)
        self.lines.append(f'"{op}"({", ".join(v.name for v in values)}) : ({_types(values)}) -> ()')

    def render(self) -> list[str]:
        """The block's lines, indented, with a ``^bb0(...)`` header when it has arguments."""
        out = []
        if self.args:
            out.append("^bb0(" + ", ".join(f"{a.name}: {a.type}" for a in self.args) + "):")
        out.extend("  " + line for line in self.lines)
        return out


# ---------------------------------------------------------------------------
# Functions and modules


def symbol_name(name: str) -> str:
    """``name`` made a valid MLIR symbol (letters, digits, ``_``, ``.``, ``$``)."""
    clean = "".join(ch if ch.isalnum() or ch in "_.$" else "_" for ch in name) or "fn"
    return clean if not clean[0].isdigit() else "_" + clean


class Function:
    """A ``func.func`` being built: its arguments are ``%arg0``, ``%arg1``, ...
    and its body is a :class:`Block`."""

    __slots__ = ("arg_attrs", "body", "name", "public", "result_attrs")

    def __init__(
        self,
        name: str,
        arg_avals: Sequence[ShapedArray],
        *,
        public: bool,
        arg_attrs: Sequence[str | None] = (),
        result_attrs: Sequence[str | None] = (),
    ) -> None:
        self.name = name
        self.public = public
        self.arg_attrs = list(arg_attrs) or [None] * len(arg_avals)
        self.result_attrs = list(result_attrs)
        self.body = Block(Namer(), [Value(f"%arg{k}", a) for k, a in enumerate(arg_avals)])

    @property
    def args(self) -> list[Value]:
        """The function's arguments."""
        return self.body.args

    def finish(self, results: Sequence[Value]) -> str:
        """The function's text, returning ``results``."""
        self.body.ret(results, "func.return")
        params = ", ".join(
            f"{a.name}: {a.type}" + (f" {{{attr}}}" if attr else "") for a, attr in zip(self.args, self.arg_attrs)
        )
        rattrs = self.result_attrs or [None] * len(results)
        outs = ", ".join(v.type + (f" {{{attr}}}" if attr else "") for v, attr in zip(results, rattrs))
        visibility = "public" if self.public else "private"
        lines = [f"func.func {visibility} @{self.name}({params}) -> ({outs}) {{"]
        lines.extend("  " + line for line in _drop_dead_constants(self.body.lines, self.body.namer.used))
        lines.append("}")
        return "\n".join(lines)


def _drop_dead_constants(lines: list[str], used: set[str]) -> list[str]:
    """``lines`` without the constants nothing uses (a scalar literal is made
    before a rule decides to use it at full shape instead)."""
    out = []
    for line in lines:
        head = line.lstrip()
        if head.startswith("%") and '= "stablehlo.constant"' in head and head.split(" ", 1)[0] not in used:
            continue
        out.append(line)
    return out


class ModuleBuilder:
    """A module being built: its functions, and the private functions already
    made for called jaxprs (one per jaxpr object, so a jaxpr called twice is
    lowered once)."""

    __slots__ = ("_symbols", "attrs", "calls", "effect_tokens", "functions", "host_callbacks", "name", "platform", "spmd")

    def __init__(self, name: str, platform: str) -> None:
        self.name = symbol_name(name)
        self.platform = platform
        self.attrs: dict[str, str] = {}
        self.spmd: Any = None  # the device list of an SPMD module (for collectives)
        self.functions: list[str] = []
        self.calls: dict[Any, str] = {}
        self._symbols: set[str] = {"main"}
        #: Python functions the module's host-callback custom calls name by index.
        self.host_callbacks: list[Any] = []
        #: Per block (by id), the token the block's last ordered effect returned.
        self.effect_tokens: dict[int, Any] = {}

    def fresh_symbol(self, base: str) -> str:
        """A function name not used yet in this module, derived from ``base``."""
        stem = symbol_name(base)
        name, k = stem, 0
        while name in self._symbols:
            k += 1
            name = f"{stem}_{k}"
        self._symbols.add(name)
        return name

    def text(self) -> str:
        """The whole module."""
        body = "\n".join("  " + line for f in self.functions for line in f.splitlines())
        attrs = f" attributes {{{', '.join(f'{k} = {v}' for k, v in self.attrs.items())}}}" if self.attrs else ""
        return f"module @{self.name}{attrs} {{\n{body}\n}}\n"
