"""The cases of the narrow-dtype test, for JAX and plait alike.

One module, imported by ``tests/test_narrow_dtypes.py`` (with plait) and by
``tools/record_narrow_dtypes.py`` (with JAX): it never imports either.  ``api``
is the top-level module (``jax`` or ``plait``).  Every case computes on values
of one narrow ML number type (``float8_e4m3fn``, ``int4``, ...), eagerly and
under ``jit``, and its result is written as a string: ``dtype:hex`` of the
result's bytes as NumPy holds them (one byte per element, also for the
sub-byte types), the printed text for ``str``/``repr`` cases, or
``!ExceptionClass`` (the builtin class of what was raised).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np

FLOATS = (
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
)  # fmt: skip
INTS = ("int1", "int2", "int4", "uint1", "uint2", "uint4")
NARROW = FLOATS + INTS
#: JAX 0.10.2 aborts the whole process (an XLA check failure) compiling some
#: programs on these under ``jit``: their jit cases are left out.
ABORTS_JAX_UNDER_JIT = ("float6_e2m3fn", "float6_e3m2fn")
#: The operations also run under ``jit`` (plait's eager operations are XLA
#: programs too; these check that a program of several agrees).
JIT_OPS = frozenset({"sin", "sum", "max", "argmax", "to_f32", "mul_py_float", "where", "add", "multiply", "less",
                     "dot", "cumsum", "sort", "mean"})
#: Eager cases JAX 0.10.2 aborts the process on (an XLA check failure): left out.
ABORTS_JAX = frozenset({"concat(int2)", "concat(uint2)"})

#: float32 values every conversion case rounds: exact ones, halfway points,
#: subnormals, overflow, signed zero, infinities and NaN.
EDGE_FLOATS = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.3, 1.3, 1.0625, 1.1875, 2.5, 3.5, -2.75, 5.0, 6.5, 7.0, 17.0, 240.0, 250.0,
     448.0, 464.0, 500.0, 57344.0, 61440.0, 1e6, 1e-3, 2.0**-7, 2.0**-9, 2.0**-10, 2.0**-17, 1e-30, 3e38,
     np.inf, -np.inf, np.nan],
    dtype=np.float32,
)
EDGE_INTS = np.array([0, 1, -1, 2, -2, 3, 5, 7, 8, -8, -9, 15, 16, 17, 100, -100, 255], dtype=np.int32)
#: float32 values for arithmetic: every float type holds them (maybe rounded).
SMALL = np.array([0.5, 1.0, 1.5, 2.0, 3.0, -0.75, 4.0, 0.25], dtype=np.float32)
SMALL2 = np.array([1.0, 0.5, 3.0, -2.0, 1.5, 0.75, -1.0, 2.0], dtype=np.float32)
SMALL_INTS = np.array([0, 1, -1, 2, 3, -2, 1, 0], dtype=np.int32)
SMALL_INTS2 = np.array([1, 1, 2, -1, 3, 1, -2, 2], dtype=np.int32)


def encode(out: Any) -> str:
    """``dtype:hex`` of a result's bytes (as NumPy holds them)."""
    arr = np.asarray(out)
    dt = arr.dtype
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8) if dt.itemsize else np.zeros(0, np.uint8)
    return f"{dt.name}:{raw.tobytes().hex()}"


def _unary(api: Any) -> dict[str, Callable[[Any], Any]]:
    jnp = api.numpy
    return {
        "neg": jnp.negative, "abs": jnp.abs, "sign": jnp.sign, "square": jnp.square, "sqrt": jnp.sqrt,
        "exp": jnp.exp, "log": jnp.log, "sin": jnp.sin, "tanh": jnp.tanh, "floor": jnp.floor, "round": jnp.round,
        "isnan": jnp.isnan, "sum": jnp.sum, "max": jnp.max, "min": jnp.min, "prod": jnp.prod, "mean": jnp.mean,
        "cumsum": jnp.cumsum, "argmax": jnp.argmax, "sort": jnp.sort, "reciprocal": jnp.reciprocal,
        "relu": api.nn.relu, "to_f32": lambda x: x.astype(jnp.float32), "to_i32": lambda x: x.astype(jnp.int32),
        "to_bool": lambda x: x.astype(jnp.bool_), "to_bf16": lambda x: x.astype(jnp.bfloat16),
        "to_f16": lambda x: x.astype(jnp.float16), "add_py_int": lambda x: x + 1, "mul_py_float": lambda x: x * 1.5,
        "add_true": lambda x: x + True, "reshape_T": lambda x: x.reshape(2, 4).T, "concat": lambda x: jnp.concatenate([x, x]),
        "index": lambda x: x[1:5], "at_set": lambda x: x.at[2].set(1), "where": lambda x: jnp.where(x > 0, x, x * 2),
        "invert": jnp.invert, "shift": lambda x: x << 1, "to_int8": lambda x: x.astype(jnp.int8),
    }  # fmt: skip


def _binary(api: Any) -> dict[str, Callable[[Any, Any], Any]]:
    jnp = api.numpy
    return {
        "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply, "divide": jnp.divide,
        "maximum": jnp.maximum, "minimum": jnp.minimum, "less": jnp.less, "equal": jnp.equal, "power": jnp.power,
        "dot": jnp.dot, "floor_divide": jnp.floor_divide, "remainder": jnp.remainder, "bitwise_and": jnp.bitwise_and,
    }  # fmt: skip


def _narrow(api: Any, name: str) -> Any:
    return getattr(api.numpy, name)


Case = tuple[str, Callable[[], Any]]


def cases(api: Any) -> Iterator[Case]:
    """Every case, as a name and a thunk computing it (eagerly, or under ``jit``:
    the name says which)."""
    jnp = api.numpy
    jit = api.jit
    for name in NARROW:
        t = _narrow(api, name)
        is_float = name in FLOATS
        edge = EDGE_FLOATS if is_float else EDGE_INTS
        a_np = (SMALL if is_float else SMALL_INTS)
        b_np = (SMALL2 if is_float else SMALL_INTS2)

        def conv(edge: np.ndarray = edge, t: Any = t) -> Any:
            return jnp.asarray(edge).astype(t)

        yield f"astype({name})", conv
        if name not in ABORTS_JAX_UNDER_JIT:
            yield f"jit.astype({name})", lambda edge=edge, t=t: jit(lambda v: v.astype(t))(jnp.asarray(edge))
        if is_float:
            yield f"astype_from_int({name})", lambda t=t: jnp.asarray(EDGE_INTS).astype(t)
        yield f"astype_from_f16({name})", lambda edge=edge, t=t: jnp.asarray(edge.astype(np.float16)).astype(t)
        yield f"array({name})", lambda t=t, a_np=a_np: jnp.array(a_np.tolist(), dtype=t)
        yield f"zeros({name})", lambda t=t: jnp.zeros(3, t)
        yield f"ones({name})", lambda t=t: jnp.ones((2,), dtype=t)
        yield f"full({name})", lambda t=t: jnp.full((2,), 3, t)
        yield f"arange({name})", lambda t=t: jnp.arange(4, dtype=t)
        yield f"scalar_type({name})", lambda t=t: t(1)
        yield f"str({name})", lambda t=t, a_np=a_np: str(jnp.asarray(a_np).astype(t))
        host = np.dtype(getattr(ml_dtypes, name))
        yield f"device_put({name})", lambda host=host, a_np=a_np: api.device_put(a_np.astype(host))
        if name.startswith("float8"):
            yield f"bitcast({name})", lambda t=t: api.lax.bitcast_convert_type(jnp.arange(256, dtype=jnp.uint8), t)
            yield f"all_bits_to_f32({name})", lambda t=t: api.lax.bitcast_convert_type(
                jnp.arange(256, dtype=jnp.uint8), t).astype(jnp.float32)
        for op, f1 in _unary(api).items():
            def g1(f1: Any = f1, t: Any = t, a_np: np.ndarray = a_np) -> Any:
                return f1(jnp.asarray(a_np).astype(t))

            def j1(f1: Any = f1, t: Any = t, a_np: np.ndarray = a_np) -> Any:
                return jit(lambda v: f1(v.astype(t)))(jnp.asarray(a_np))

            yield f"{op}({name})", g1
            if name not in ABORTS_JAX_UNDER_JIT and op in JIT_OPS:
                yield f"jit.{op}({name})", j1
        for op, f2 in _binary(api).items():
            def g2(f2: Any = f2, t: Any = t, a_np: np.ndarray = a_np, b_np: np.ndarray = b_np) -> Any:
                return f2(jnp.asarray(a_np).astype(t), jnp.asarray(b_np).astype(t))

            def j2(f2: Any = f2, t: Any = t, a_np: np.ndarray = a_np, b_np: np.ndarray = b_np) -> Any:
                return jit(lambda u, v: f2(u.astype(t), v.astype(t)))(jnp.asarray(a_np), jnp.asarray(b_np))

            yield f"{op}({name})", g2
            if name not in ABORTS_JAX_UNDER_JIT and op in JIT_OPS:
                yield f"jit.{op}({name})", j2
        if is_float:
            def grad(t: Any = t) -> Any:
                return api.grad(lambda v: (v.astype(t).astype(jnp.float32) * 3.0).sum())(jnp.asarray(SMALL))

            yield f"grad_through_cast({name})", grad
            yield f"finfo({name})", lambda t=t: str(jnp.finfo(t))
        else:
            yield f"iinfo({name})", lambda t=t: str(jnp.iinfo(t))


def _builtin_error(e: BaseException) -> str:
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return f"!{cls.__name__}"
    return f"!{type(e).__name__}"  # pragma: no cover


def run(f: Callable[[], Any]) -> str:
    """One case's result."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = f()
            if out is None:
                return "None"
            if isinstance(out, str):
                return out
            return encode(out)
        except Exception as e:
            return _builtin_error(e)


def table(api: Any) -> dict[str, str]:
    """Every case's result (x64 off)."""
    return {name: run(f) for name, f in cases(api) if name not in ABORTS_JAX}
