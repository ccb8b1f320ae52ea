"""The harness the lowering tests share (imported by the other
``test_lowering_*`` modules), and tests of the harness's own pieces: dense
constants of every dtype survive the trip through MLIR text and XLA bit for
bit.

``xla_run(closed, *args)`` lowers a closed jaxpr, compiles it with the jaxlib
adapter, runs it and returns NumPy arrays (float0 outputs are made on the
host, as the module says); ``check(fn, *args)`` stages ``fn``, type-checks
the jaxpr, and compares XLA's results with core's NumPy evaluation of the
same jaxpr.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import hypothesis.extra.numpy as hnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait_core as pc
from plait_core import ClosedJaxpr, ShapedArray, dtypes
from plait_core.tree_util import tree_leaves
from plait_dispatch import _jaxlib
from plait_dispatch.lowering import LoweredModule, lower_jaxpr

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
F64, C64 = np.dtype(np.float64), np.dtype(np.complex64)
I8, I32, U8, U32 = np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.uint32)
BOOL = np.dtype(np.bool_)

#: Relative (and absolute) tolerance of XLA against NumPy per dtype: a few
#: units in the last place, since XLA's and NumPy's libm differ.
RTOL = {F32: 1e-5, F16: 4e-3, BF16: 3.2e-2, F64: 1e-12, C64: 1e-5, np.dtype(np.complex128): 1e-12}


def xla_lower(closed: ClosedJaxpr, **kw: Any) -> LoweredModule:
    """Lower ``closed`` (keyword arguments go to ``lower_jaxpr``)."""
    return lower_jaxpr(closed, **kw)


def xla_execute(low: LoweredModule, *args: Any) -> list[np.ndarray]:
    """Compile ``low`` and run it on ``args`` (pytrees whose leaves are the jaxpr's inputs)."""
    args = tuple(tree_leaves(args))
    dev = _jaxlib.default_device()
    exe = _jaxlib.compile_stablehlo(low.text, dev, low.host_callbacks)
    values = [np.asarray(c) for c in low.const_args]
    values += [np.asarray(a, dtype=av.dtype) for i, (a, av) in enumerate(zip(args, low.in_avals))
               if i not in low.float0_inputs]
    bufs = [_jaxlib.device_put(v, ShapedArray(v.shape, v.dtype), dev, False) for v in values]
    handlers = [_jaxlib.result_handler(a, dev) for a in low.result_avals]
    outs = iter(_jaxlib.execute(exe, bufs, handlers))
    results = []
    for j, aval in enumerate(low.out_avals):
        if j in low.float0_outputs:
            results.append(np.zeros(aval.shape, dtypes.float0))
        else:
            results.append(_jaxlib.to_numpy(next(outs), aval.dtype))
    return results


def xla_run(closed: ClosedJaxpr, *args: Any, **kw: Any) -> list[np.ndarray]:
    """Lower, compile and run ``closed`` on ``args``."""
    return xla_execute(xla_lower(closed, **kw), *args)


@contextlib.contextmanager
def numpy_backend() -> Iterator[None]:
    """Evaluate eagerly with core's NumPy implementations (importing
    plait_dispatch makes XLA the eager backend)."""
    prev = pc.set_eager_backend(None)
    try:
        yield
    finally:
        pc.set_eager_backend(prev)


def numpy_run(closed: ClosedJaxpr, *args: Any) -> list[np.ndarray]:
    """Core's NumPy evaluation of ``closed``."""
    with numpy_backend():
        return [np.asarray(r) for r in pc.eval_jaxpr(closed.jaxpr, closed.consts, *tree_leaves(args))]


def stage(fn: Callable[..., Any], *args: Any) -> ClosedJaxpr:
    """``make_jaxpr(fn)(*args)`` (constants computed by NumPy), type-checked."""
    with numpy_backend():
        closed = pc.make_jaxpr(fn)(*args)
    pc.check_jaxpr(closed)
    return closed


def assert_same(got: np.ndarray, want: np.ndarray, rtol: float | None = None) -> None:
    """Same dtype and shape; integers and booleans exactly, inexact values to
    the dtype's tolerance (NaN where NaN, infinities where infinities)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == dtypes.float0:
        return
    if want.dtype.kind in "fc" or want.dtype in (BF16, F16):
        tol = RTOL.get(want.dtype, 1e-5) if rtol is None else rtol
        kind = np.complex128 if want.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(got.astype(kind), want.astype(kind), rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def check(fn: Callable[..., Any], *args: Any, rtol: float | None = None, **kw: Any) -> ClosedJaxpr:
    """XLA's results of ``fn`` equal core's NumPy results; returns the jaxpr."""
    closed = stage(fn, *args)
    got = xla_run(closed, *args, **kw)
    want = numpy_run(closed, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w, rtol)
    return closed


def check_closed(closed: ClosedJaxpr, *args: Any, rtol: float | None = None) -> None:
    """:func:`check` for an already staged jaxpr."""
    got = xla_run(closed, *args)
    for g, w in zip(got, numpy_run(closed, *args)):
        assert_same(g, w, rtol)


def bind(name: str, **params: Any) -> Callable[..., Any]:
    """A function binding the primitive ``name`` with ``params``."""
    prim = pc.primitive_by_name(name)
    return lambda *args: prim.bind(*args, **params)


def sample(dtype: Any, shape: Sequence[int], lo: float = -3.0, hi: float = 3.0, seed: int = 0) -> np.ndarray:
    """Random values of ``dtype`` in ``[lo, hi)`` (integers: ``[lo, hi]``)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dt == BOOL:
        return rng.integers(0, 2, tuple(shape)).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(int(lo), int(info.min)), min(int(hi), int(info.max)) + 1, tuple(shape)).astype(dt)
    vals = rng.uniform(lo, hi, tuple(shape))
    if dt.kind == "c":
        vals = vals + 1j * rng.uniform(lo, hi, tuple(shape))
    return np.asarray(vals).astype(dt)


# ---------------------------------------------------------------------------
# Constants survive MLIR text and XLA bit for bit

CONST_DTYPES = [BOOL, I8, I32, U8, U32, np.dtype(np.int16), np.dtype(np.uint16), F16, BF16, F32, C64]


def _bits(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(x).tobytes()


@pytest.mark.parametrize("dtype", CONST_DTYPES, ids=lambda d: d.name)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_constants_round_trip_bit_for_bit(dtype: np.dtype[Any], data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    if dtype == BF16:
        bits = data.draw(hnp.arrays(np.uint16, shape))
        value = bits.view(BF16)
    elif dtype.kind in "fc":
        value = data.draw(hnp.arrays(dtype, shape, elements=hnp.from_dtype(dtype, allow_nan=True)))
    else:
        value = data.draw(hnp.arrays(dtype, shape))
    closed = ClosedJaxpr(pc.Jaxpr([v := pc.Var(ShapedArray(shape, dtype))], [], [v], []), [value])
    (got,) = xla_run(closed)
    if dtype == BF16 and value.size and np.all(value == value.reshape(-1)[0]):
        # XLA:CPU may flush a constant whose elements are all one subnormal bfloat16
        # to zero when it folds it (a documented difference; see module.py): the
        # result is then either the exact bits or all zeros, nothing else.
        f = abs(float(value.reshape(-1)[0]))
        if 0.0 < f < float(ml_dtypes.finfo(BF16).tiny):
            assert _bits(got) == _bits(value) or not np.any(got.astype(np.float32))
            return
    if dtype.kind in "fc" or dtype == BF16:
        # NaN payloads may be canonicalised; everything else is exact
        nan = np.isnan(value.astype(np.complex128 if dtype.kind == "c" else np.float64))
        assert np.array_equal(np.isnan(got.astype(np.complex128 if dtype.kind == "c" else np.float64)), nan)
        assert _bits(np.where(nan, 0, got).astype(dtype)) == _bits(np.where(nan, 0, value).astype(dtype))
    else:
        assert _bits(got) == _bits(value)


@pytest.mark.parametrize("value", [0.1, -0.0, 1e-5, 3e38, np.inf, -np.inf, np.nan, 1.0, 65504.0, 5e-324])
@pytest.mark.parametrize("dtype", [F16, BF16, F32, F64], ids=lambda d: d.name)
def test_float_literals_are_exact(value: float, dtype: np.dtype[Any]) -> None:
    with pc.enable_x64(), np.errstate(all="ignore"):
        x = np.asarray(value).astype(dtype)
        closed = stage(lambda p, a: pc.lax.select_n(p, a, x), np.bool_(True), np.ones((), dtype))
        (got,) = xla_run(closed, np.bool_(True), np.ones((), dtype))
    assert got.dtype == dtype
    if np.isnan(x):
        assert np.isnan(got)
    else:
        assert _bits(got) == _bits(x)


@pytest.mark.parametrize("dtype", [F32, F64], ids=lambda d: d.name)
def test_xla_cpu_flushes_subnormal_results_to_zero(dtype: np.dtype[Any]) -> None:
    # A documented difference: XLA's CPU code flushes subnormal results of
    # arithmetic to zero, NumPy keeps them.
    with pc.enable_x64():
        tiny = np.full(3, np.finfo(dtype).smallest_subnormal, dtype)
        closed = stage(lambda a: pc.lax.add(a, a), tiny)
        (got,) = xla_run(closed, tiny)
        (want,) = numpy_run(closed, tiny)
    assert (want > 0).all()
    np.testing.assert_array_equal(got, np.zeros(3, dtype))


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_order_signed_zeros(name: str) -> None:
    # A documented difference: XLA orders -0.0 below +0.0 in max/min, NumPy
    # returns the second operand when the operands compare equal.
    a, b = np.array([0.0, -0.0], F32), np.array([-0.0, 0.0], F32)
    closed = stage(bind(name), a, b)
    (got,) = xla_run(closed, a, b)
    (want,) = numpy_run(closed, a, b)
    np.testing.assert_array_equal(np.signbit(want), [True, False])
    np.testing.assert_array_equal(np.signbit(got), [name == "min"] * 2)

