"""The cases of the dtype-promotion table, for JAX and plait alike.

One module, imported by the test (``test_promotion_table.py``, with plait)
and by the recorder (``tools/record_promotion_table.py``, with JAX): it
never imports either.  ``api`` is the top-level module (``jax`` or
``plait``); the two share the names used here (``numpy``, ``nn``,
``eval_shape``, ``ShapeDtypeStruct``, ``config``).

Each case is a name and a function of one or two operands, described by
*kinds*: a dtype name (a strong array of that dtype), ``py_int``,
``py_float``, ``py_complex`` (weakly typed Python scalars) or ``weak_int``,
``weak_float``, ``weak_complex`` (weakly typed arrays, as ``full`` with a
Python scalar makes them).  A case's result is written ``float32`` (strong),
``float32*`` (weak) or ``!TypeError`` (the builtin exception class raised).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
#: The narrow ML number types (ml_dtypes): promotion leaves, checked with a
#: smaller set of operations (every pair with at least one narrow kind).
NARROW_DTYPES = (
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "int1", "int2", "int4", "uint1", "uint2", "uint4",
)  # fmt: skip
NARROW_BINARY = ("add", "multiply", "true_divide", "maximum", "equal", "where")
NARROW_LAX_BINARY = ("add", "eq")
NARROW_UNARY = ("negative", "abs", "sign", "sqrt", "sin", "isnan", "floor", "nn.relu")
NARROW_REDUCTIONS = ("sum", "max", "mean", "argmax")
PY_SCALARS = {"py_int": 2, "py_float": 1.5, "py_complex": 1.5 + 1j}
WEAK_ARRAYS = {"weak_int": 2, "weak_float": 1.5, "weak_complex": 1.5 + 1j}
PAIR_KINDS = DTYPES + tuple(PY_SCALARS)
ARRAY_KINDS = DTYPES + tuple(WEAK_ARRAYS)
ALL_KINDS = ARRAY_KINDS + tuple(PY_SCALARS)

BINARY = (
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power", "maximum",
    "minimum", "arctan2", "bitwise_and", "bitwise_xor", "logical_and", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "where", "hypot", "copysign", "logaddexp", "logaddexp2", "fmax",
    "fmin", "heaviside", "fmod", "nextafter", "float_power", "left_shift", "right_shift", "bitwise_or",
    "logical_or", "logical_xor",
)  # fmt: skip
LAX_BINARY = ("add", "mul", "div", "rem", "max", "pow", "atan2", "eq", "lt", "bitwise_and", "nextafter")
LAX_UNARY = ("neg", "exp", "abs", "sign", "is_finite", "square", "real", "imag", "integer_pow")
LAX_REDUCTIONS = (
    "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "argmax", "cumsum",
    "cummax",
)  # fmt: skip
UNARY = (
    "negative", "positive", "abs", "square", "sqrt", "exp", "sin", "tanh", "log1p", "floor", "ceil",
    "round", "rint", "trunc", "sign", "isfinite", "isnan", "signbit", "real", "imag", "conj",
    "reciprocal", "logical_not", "invert", "exp2", "log", "log2", "log10", "expm1", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "cbrt", "deg2rad", "rad2deg", "sinc",
    "absolute", "isinf", "isposinf", "isneginf", "nan_to_num", "angle", "nn.relu", "nn.softplus",
    "nn.sigmoid", "nn.gelu", "nn.silu", "nn.elu", "nn.leaky_relu", "nn.log_sigmoid", "nn.softmax",
    "nn.log_softmax", "nn.relu6", "nn.hard_tanh", "nn.celu", "nn.selu",
)  # fmt: skip
REDUCTIONS = (
    "sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "argmax", "argmin", "cumsum",
    "cumprod", "count_nonzero", "ptp", "nansum", "nanmax", "nanmin", "nanmean", "nanprod",
    "median", "average",
)  # fmt: skip
UPDATES = ("set", "add", "subtract", "multiply", "divide", "power", "min", "max")
UPDATE_VALUES = ("py_int", "py_float", "float16", "int8")
UPDATE_INDICES = {"0": 0, ":": slice(None)}

Case = tuple[str, Callable[..., Any], tuple[str, ...]]


def _square(api: Any, a: Any) -> Any:
    return api.numpy.broadcast_to(a, (2, 2))


#: NumPy- and lax-level functions of one array (of two elements) that move, pick or combine its entries, whose
#: weak type JAX's implementation decides case by case (its diagonal is strong, its diag of a vector weak, ...).
ARRAY_FUNCTIONS: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "triu": lambda api: lambda a: api.numpy.triu(_square(api, a)),
    "tril": lambda api: lambda a: api.numpy.tril(_square(api, a), -1),
    "diagonal": lambda api: lambda a: api.numpy.diagonal(_square(api, a)),
    "diag_of_matrix": lambda api: lambda a: api.numpy.diag(_square(api, a)),
    "diag_of_vector": lambda api: lambda a: api.numpy.diag(a),
    "diagflat": lambda api: lambda a: api.numpy.diagflat(a),
    "trace": lambda api: lambda a: api.numpy.trace(_square(api, a)),
    "cross": lambda api: lambda a: api.numpy.cross(a, a),
    "piecewise": lambda api: lambda a: api.numpy.piecewise(a, [a == a], [1, 2]),
    "interp": lambda api: lambda a: api.numpy.interp(a, a, a),
    "insert": lambda api: lambda a: api.numpy.insert(a, 1, a[0]),
    "append": lambda api: lambda a: api.numpy.append(a, a),
    "delete": lambda api: lambda a: api.numpy.delete(a, 0),
    "det": lambda api: lambda a: api.numpy.linalg.det(_square(api, a)),
    "norm": lambda api: lambda a: api.numpy.linalg.norm(a),
    "fft": lambda api: lambda a: api.numpy.fft.fft(a),
    "rfft": lambda api: lambda a: api.numpy.fft.rfft(a),
    "roll": lambda api: lambda a: api.numpy.roll(a, 1),
    "flip": lambda api: lambda a: api.numpy.flip(a),
    "rot90": lambda api: lambda a: api.numpy.rot90(_square(api, a)),
    "outer": lambda api: lambda a: api.numpy.outer(a, a),
    "kron": lambda api: lambda a: api.numpy.kron(a, a),
    "convolve": lambda api: lambda a: api.numpy.convolve(a, a),
    "correlate": lambda api: lambda a: api.numpy.correlate(a, a),
    "take": lambda api: lambda a: api.numpy.take(a, api.numpy.asarray([1, 0])),
    "sort": lambda api: lambda a: api.numpy.sort(a),
    "pad": lambda api: lambda a: api.numpy.pad(a, 1),
    "tile": lambda api: lambda a: api.numpy.tile(a, 2),
    "repeat": lambda api: lambda a: api.numpy.repeat(a, 2),
    "concatenate": lambda api: lambda a: api.numpy.concatenate([a, a]),
    "stack": lambda api: lambda a: api.numpy.stack([a, a]),
    "clip": lambda api: lambda a: api.numpy.clip(a, 0, 1),
    "dynamic_slice": lambda api: lambda a: api.lax.dynamic_slice(a, (1,), (1,)),
    "dynamic_update_slice": lambda api: lambda a: api.lax.dynamic_update_slice(a, a[:1], (1,)),
    "unique": lambda api: lambda a: api.numpy.unique(a, size=2),
}


def _binary(api: Any, op: str) -> Callable[[Any, Any], Any]:
    jnp = api.numpy
    if op == "where":
        return lambda a, b: jnp.where(jnp.asarray(np.array([True, False])), a, b)
    return getattr(jnp, op)  # type: ignore[no-any-return]


def _unary(api: Any, op: str) -> Callable[[Any], Any]:
    if op.startswith("nn."):
        return getattr(api.nn, op[3:])  # type: ignore[no-any-return]
    return getattr(api.numpy, op)  # type: ignore[no-any-return]


def _reduction(api: Any, op: str, axis: int | None) -> Callable[[Any], Any]:
    f = getattr(api.numpy, op)
    return lambda a: f(a, axis=axis)


def _lax_unary(api: Any, op: str) -> Callable[[Any], Any]:
    f = getattr(api.lax, op)
    if op == "integer_pow":
        return lambda a: f(a, 3)
    return f  # type: ignore[no-any-return]


def _lax_reduction(api: Any, op: str) -> Callable[[Any], Any]:
    f = getattr(api.lax, op)
    if op == "argmax":
        return lambda a: f(a, 0, api.numpy.int32)
    if op in ("cumsum", "cummax"):
        return lambda a: f(a, 0)
    return lambda a: f(a, (0,))


def _update(method: str, index: Any) -> Callable[[Any, Any], Any]:
    return lambda x, v: getattr(x.at[index], method)(v)


def cases(api: Any) -> Iterator[Case]:
    """Every case: binary functions (``numpy`` and ``lax``) over every pair of
    kinds, unary functions and reductions over every kind (``lax`` reductions
    over array kinds), :data:`ARRAY_FUNCTIONS` and ``.at[]`` updates over array kinds."""
    for op in BINARY:
        f2 = _binary(api, op)
        for a in PAIR_KINDS:
            for b in PAIR_KINDS:
                yield f"{op}({a},{b})", f2, (a, b)
    for op in LAX_BINARY:
        f2 = getattr(api.lax, op)
        for a in PAIR_KINDS:
            for b in PAIR_KINDS:
                yield f"lax.{op}({a},{b})", f2, (a, b)
    for op in LAX_UNARY:
        f1 = _lax_unary(api, op)
        for a in ALL_KINDS:
            yield f"lax.{op}({a})", f1, (a,)
    for op in LAX_REDUCTIONS:
        f1 = _lax_reduction(api, op)
        for a in ARRAY_KINDS:
            yield f"lax.{op}({a})", f1, (a,)
    for op in UNARY:
        f1 = _unary(api, op)
        for a in ALL_KINDS:
            yield f"{op}({a})", f1, (a,)
    for op in REDUCTIONS:
        for a in ALL_KINDS:
            yield f"{op}({a})", _reduction(api, op, None), (a,)
            if a not in PY_SCALARS:
                yield f"{op}({a},axis=0)", _reduction(api, op, 0), (a,)
    for op, make in ARRAY_FUNCTIONS.items():
        f1 = make(api)
        for a in ARRAY_KINDS:
            yield f"{op}({a})", f1, (a,)
    for method in UPDATES:
        for label, index in UPDATE_INDICES.items():
            for x in ARRAY_KINDS:
                for v in UPDATE_VALUES:
                    yield f"at[{label}].{method}({x},{v})", _update(method, index), (x, v)
    yield from narrow_cases(api)


def _promote_types(api: Any) -> Callable[[Any, Any], Any]:
    jnp = api.numpy
    return lambda a, b: jnp.zeros((), jnp.promote_types(a.dtype, b.dtype))


def narrow_cases(api: Any) -> Iterator[Case]:
    """The narrow types' cases: ``promote_types`` and a few binary functions
    over every pair with at least one narrow kind, a few unary functions and
    reductions over each narrow type."""
    pair_kinds = PAIR_KINDS + NARROW_DTYPES
    for a in DTYPES + NARROW_DTYPES:
        for b in DTYPES + NARROW_DTYPES:
            if a in NARROW_DTYPES or b in NARROW_DTYPES:
                yield f"promote_types({a},{b})", _promote_types(api), (a, b)
    for op in NARROW_BINARY:
        f2 = _binary(api, op)
        for a in pair_kinds:
            for b in pair_kinds:
                if a in NARROW_DTYPES or b in NARROW_DTYPES:
                    yield f"{op}({a},{b})", f2, (a, b)
    for op in NARROW_LAX_BINARY:
        f2 = getattr(api.lax, op)
        for a in pair_kinds:
            for b in pair_kinds:
                if a in NARROW_DTYPES or b in NARROW_DTYPES:
                    yield f"lax.{op}({a},{b})", f2, (a, b)
    for op in NARROW_UNARY:
        f1 = _unary(api, op)
        for a in NARROW_DTYPES:
            yield f"{op}({a})", f1, (a,)
    for op in NARROW_REDUCTIONS:
        for a in NARROW_DTYPES:
            yield f"{op}({a})", _reduction(api, op, None), (a,)


def _dtype(api: Any, name: str) -> Any:
    # (the scalar types: NumPy reads "int4" as int32 and "bfloat16" needs ml_dtypes)
    if name == "bfloat16" or name in NARROW_DTYPES:
        return getattr(api.numpy, name)
    return api.numpy.dtype(name)


def concrete(api: Any, kind: str) -> Any:
    """A concrete operand of ``kind``: a Python scalar, or an array of two elements."""
    if kind in PY_SCALARS:
        return PY_SCALARS[kind]
    jnp = api.numpy
    if kind in WEAK_ARRAYS:
        return jnp.full((2,), WEAK_ARRAYS[kind])
    values = np.array([True, False]) if kind == "bool" else np.array([1, 2])
    host = np.dtype(kind) if kind != "bfloat16" and kind not in NARROW_DTYPES else np.float32
    return jnp.asarray(values.astype(host), dtype=_dtype(api, kind))


def abstract(api: Any, kind: str) -> Any:
    """An abstract operand of ``kind`` for ``eval_shape`` (``None`` for Python scalars)."""
    if kind in PY_SCALARS:
        return None
    if kind in WEAK_ARRAYS:
        wide = {"weak_int": "int64", "weak_float": "float64", "weak_complex": "complex128"}[kind]
        narrow = {"weak_int": "int32", "weak_float": "float32", "weak_complex": "complex64"}[kind]
        name = wide if api.config.read("jax_enable_x64") else narrow
        return api.ShapeDtypeStruct((2,), _dtype(api, name), weak_type=True)
    return api.ShapeDtypeStruct((2,), _dtype(api, kind))


def _builtin_error(e: BaseException) -> str:
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return f"!{cls.__name__}"
    return f"!{type(e).__name__}"  # pragma: no cover - every exception derives from a builtin one


def describe(out: Any) -> str:
    """``dtype`` or ``dtype*`` (weakly typed) of a result."""
    return f"{np.dtype(out.dtype).name}{'*' if getattr(out, 'weak_type', False) else ''}"


def run_case(api: Any, f: Callable[..., Any], kinds: tuple[str, ...], staged: bool) -> str:
    """One case's result, staged (``eval_shape``, Python scalars closed over) or eager."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if staged:
                avals = [abstract(api, k) for k in kinds]
                scalars = [PY_SCALARS.get(k) for k in kinds]

                def g(*arrays: Any) -> Any:
                    it = iter(arrays)
                    return f(*[next(it) if a is not None else s for a, s in zip(avals, scalars)])

                out = api.eval_shape(g, *[a for a in avals if a is not None])
            else:
                out = f(*[concrete(api, k) for k in kinds])
        except Exception as e:
            return _builtin_error(e)
    return describe(out)


def op_of(name: str) -> str:
    """The operation of a case (its name up to the operands)."""
    return name.split("(", 1)[0]


def by_op(results: dict[str, str]) -> dict[str, list[str]]:
    """A table as ``{op: [result, ...]}``, results in case order (the recorded form)."""
    grouped: dict[str, list[str]] = {}
    for name, result in results.items():
        grouped.setdefault(op_of(name), []).append(result)
    return grouped


def from_ops(api: Any, grouped: dict[str, list[str]]) -> dict[str, str]:
    """The inverse of :func:`by_op`: case names come from :func:`cases`."""
    names: dict[str, list[str]] = {}
    for name, _, _ in cases(api):
        names.setdefault(op_of(name), []).append(name)
    out: dict[str, str] = {}
    for op, results in grouped.items():
        if len(names.get(op, ())) != len(results):
            raise ValueError(f"the recorded table has {len(results)} results of {op}, the cases "
                             f"{len(names.get(op, ()))}: record it again")
        out.update(zip(names[op], results))
    return out


def set_x64(api: Any, on: bool) -> None:
    """Switch x64 on or off (same call in JAX and plait)."""
    api.config.update("jax_enable_x64", on)


def table(api: Any, x64: bool, staged: bool, select: Callable[[str], bool] = lambda name: True) -> dict[str, str]:
    """The results of every selected case with x64 on or off."""
    set_x64(api, x64)
    try:
        return {name: run_case(api, f, kinds, staged) for name, f, kinds in cases(api) if select(name)}
    finally:
        set_x64(api, False)
