"""jit: values (jit vs eager XLA vs NumPy), tracing and compilation counts,
weak types, static arguments, pytrees, nesting, inline / keep_unused, the
cache-miss explainer and argument errors."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import pathlib
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import lax
from plait_core import numpy as pnp
from plait_core import random as prandom
from plait_dispatch.array import Array
from plait_dispatch.cache import JitInfo
from plait_dispatch.jit import jit

_CORE_TESTS = pathlib.Path(__file__).resolve().parents[2] / "core" / "tests"
sys.path.insert(0, str(_CORE_TESTS))
import test_elementwise as core_ew  # noqa: E402  (core's case tables, reused)

F32, I32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)
BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)


@contextlib.contextmanager
def numpy_backend() -> Iterator[None]:
    """Evaluate eagerly with core's NumPy reference implementations (the oracle)."""
    prev = pc.set_eager_backend(None)
    try:
        yield
    finally:
        pc.set_eager_backend(prev)


def numpy_reference(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn`` evaluated by core's NumPy backend on NumPy inputs."""
    with numpy_backend():
        host = pc.tree_util.tree_map(lambda a: np.asarray(a) if isinstance(a, Array) else a, args)
        return fn(*host)


def assert_tree_close(got: Any, want: Any, rtol: float = 2e-6) -> None:
    g_leaves, g_tree = pc.tree_util.tree_flatten(got)
    w_leaves, w_tree = pc.tree_util.tree_flatten(want)
    assert g_tree == w_tree, (g_tree, w_tree)
    for g, w in zip(g_leaves, w_leaves):
        g_np, w_np = np.asarray(g), np.asarray(w)
        assert g_np.dtype == w_np.dtype and g_np.shape == w_np.shape, (
            g_np.dtype,
            g_np.shape,
            w_np.dtype,
            w_np.shape,
        )
        if g_np.dtype.kind in "fcV" or g_np.dtype in (BF16,):
            np.testing.assert_allclose(core_ew.f64(g_np), core_ew.f64(w_np), rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(g_np, w_np)


def device(x: np.ndarray) -> Array:
    out = pd.device_put(x)
    assert isinstance(out, Array)
    return out


# ---------------------------------------------------------------------------
# Values: every elementwise case of core's tables, jit vs eager vs NumPy.


def _elementwise_cases() -> list[Any]:
    cases = []
    for name, fn, ref, domain, dts in core_ew.UNARY:
        for dt in dts:
            cases.append(pytest.param(fn, ref, (domain,), dt, id=f"{name}-{dt.name}"))
    for name, fn, ref, doms, dts in core_ew.BINARY:
        for dt in dts:
            cases.append(pytest.param(fn, ref, doms, dt, id=f"{name}-{dt.name}"))
    return cases


@pytest.mark.parametrize("fn,ref,domains,dtype", _elementwise_cases())
def test_elementwise_jit_eager_numpy(fn: Any, ref: Any, domains: tuple[str, ...], dtype: Any) -> None:
    args = [core_ew.sample(dtype, (2, 3), d, seed=k) for k, d in enumerate(domains)]
    exact = dtype.kind in "iub"
    want = np.asarray(ref(*args) if exact else ref(*[core_ew.f64(a) for a in args]))
    want_dtype = BOOL if want.dtype == BOOL else dtype  # comparisons give bool
    want = core_ew.as_dtype(want, want_dtype)
    got_jit = jit(fn)(*args)
    got_eager = fn(*[device(a) for a in args])
    for got in (got_jit, got_eager):
        assert type(got) is Array
        core_ew.assert_matches(got, want, np.dtype(want_dtype))


# Programs over the other families, against core's NumPy backend (and NumPy).


def _cumsum_scan(xs: Any) -> Any:
    return lax.scan(lambda c, x: (c + x, c * 2.0), pnp.zeros((), xs.dtype), xs)


def _mlp(params: Any, x: Any) -> Any:
    (w1, b1), (w2, b2) = params
    h = pnp.tanh(x @ w1 + b1)
    return pnp.sum((h @ w2 + b2) ** 2)


_RNG = np.random.default_rng(0)
_X23 = _RNG.standard_normal((2, 3)).astype(np.float32)
_X34 = _RNG.standard_normal((3, 4)).astype(np.float32)
_V5 = _RNG.standard_normal(5).astype(np.float32)
_I6 = np.array([3, -1, 4, 1, -5, 9], np.int32)
_PARAMS = [
    (_RNG.standard_normal((3, 4)).astype(np.float32), np.zeros(4, np.float32)),
    (_RNG.standard_normal((4, 2)).astype(np.float32), np.ones(2, np.float32)),
]

PROGRAMS: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("broadcast_arith", lambda x, y: x[:, :, None] * 2.0 + y[None], (_X23, _X34)),
    ("reshape_transpose", lambda x: pnp.transpose(pnp.reshape(x, (3, 2))) - x, (_X23,)),
    ("concat_slice_pad", lambda x: pnp.pad(pnp.concatenate([x, x[:, ::-1]], axis=1)[:, 1:5], 1), (_X23,)),
    ("reductions", lambda x: (pnp.sum(x, axis=0), pnp.max(x), pnp.argmax(x, axis=1), pnp.mean(x)), (_X23,)),
    ("cumulative_sort", lambda v: (pnp.cumsum(v), pnp.sort(v), pnp.cumprod(v)), (_V5,)),
    ("int_ops", lambda i: (i // 2, i % 3, pnp.abs(i), i << 1, pnp.where(i > 0, i, -i)), (_I6,)),
    ("bool_ops", lambda i: (i > 0) & ~(i == 4) | (i < -3), (_I6,)),
    (
        "matmul_einsum",
        lambda a, b: (a @ b, pnp.einsum("ij,jk->ik", a, b), pnp.dot(a[0], b[:, 1])),
        (_X23, _X34),
    ),
    ("gather", lambda v, i: (v[pnp.abs(i) % 5], pnp.take(v, i % 5)), (_V5, _I6)),
    ("dynamic_slice", lambda v, i: lax.dynamic_slice(v, (i[0],), (2,)), (_V5, _I6)),
    ("cond", lambda p, x: lax.cond(p[0] > 0, lambda v: v * 2.0, lambda v: v - 1.0, x), (_I6, _X23)),
    ("switch", lambda p, x: lax.switch(p[1] % 3, [pnp.sin, pnp.cos, pnp.exp], x), (_I6, _X23)),
    ("fori_loop", lambda x: lax.fori_loop(0, 5, lambda i, v: v * 0.5 + i, x), (_X23,)),
    (
        "while_loop",
        lambda v: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 3, c[1] * 1.5), (0, v)),
        (_V5,),
    ),
    ("scan", _cumsum_scan, (_V5,)),
    ("named_call", lambda x: lax.named_call(lambda a: pnp.sin(a) + a, name="inner")(x) * 3.0, (_X23,)),
    ("pytree_mlp", _mlp, (_PARAMS, _X23)),
    (
        "dict_out",
        lambda d: {"s": d["a"] + d["b"], "nested": (d["a"] * 2.0, None)},
        ({"a": _V5, "b": _V5[::-1].copy()},),
    ),
    ("scalar_out", lambda x: pnp.float32(1.5), (_X23,)),
    ("bf16_f16", lambda x: (x.astype(BF16) * 3, x.astype(F16) + 1), (_X23,)),
    ("random", lambda k: prandom.normal(prandom.fold_in(prandom.PRNGKey(0), k[0]), (3,)), (_I6,)),
]


@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_programs_jit_eager_numpy(name: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    want = numpy_reference(fn, *args)
    got_jit = jit(fn)(*args)
    on_device = pc.tree_util.tree_map(lambda a: device(a) if isinstance(a, np.ndarray) else a, args)
    got_eager = fn(*on_device)
    got_jit_device = jit(fn)(*on_device)
    for got in (got_jit, got_eager, got_jit_device):
        for leaf in pc.tree_util.tree_leaves(got):
            assert type(leaf) is Array, (name, type(leaf))
        assert_tree_close(got, want, rtol=2e-5 if name != "bf16_f16" else 1.6e-2)


def test_numpy_oracle_for_a_program() -> None:
    # The NumPy backend is an oracle only if it agrees with NumPy itself.
    x, y = _X23, _X34
    want = x[:, :, None] * 2.0 + y[None]
    assert_tree_close(jit(PROGRAMS[0][1])(x, y), want.astype(np.float32))


def test_result_types_keep_weak_type() -> None:
    f = jit(lambda a, b: a * b)
    out = f(2.0, 3.0)
    assert type(out) is Array and out.weak_type and out.dtype == F32 and float(out) == 6.0
    strong = f(np.float32(2.0), 3.0)
    assert not strong.weak_type and float(strong) == 6.0
    ints = f(2, 3)
    assert ints.dtype == I32 and ints.weak_type and int(ints) == 6


def test_python_scalar_and_numpy_inputs() -> None:
    f = jit(lambda a, b: a + b)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, 1.0)), x + 1)
    np.testing.assert_array_equal(np.asarray(f(device(x), x)), 2 * x)


def test_x64_changes_signature() -> None:
    calls = []

    @jit
    def f(x: Any) -> Any:
        calls.append(1)
        return x + pnp.arange(3)

    x = np.arange(3, dtype=np.int32)
    dx = device(x)
    assert f(dx).dtype == I32
    with pc.enable_x64():
        out = f(dx)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(np.asarray(out), 2 * x)
    assert f(dx).dtype == I32
    assert len(calls) == 2


# ---------------------------------------------------------------------------
# Tracing and compilation counts.


def counting(fn: Callable[..., Any]) -> tuple[Any, list[int]]:
    traces: list[int] = []

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        traces.append(1)
        return fn(*args, **kwargs)

    return wrapped, traces


def test_traces_once_per_signature_and_compiles_once() -> None:
    fn, traces = counting(lambda x, y: pnp.sin(x) * y)
    f = jit(fn)
    x, y = device(np.ones((2, 3), np.float32)), device(np.full((2, 3), 2.0, np.float32))
    before = pd.stats.snapshot()
    for _ in range(5):
        np.testing.assert_allclose(np.asarray(f(x, y)), np.sin(1.0) * 2.0, rtol=1e-6)
    after = pd.stats.snapshot()
    assert len(traces) == 1
    assert after["traces"] - before["traces"] == 1
    assert after["compiles"] - before["compiles"] == 1
    assert f._cache_size() == 1
    # A new shape, a new dtype: one trace and one compilation each.
    f(device(np.ones(4, np.float32)), 1.0)
    f(device(np.ones(4, np.int32)), 1)
    assert len(traces) == 3 and f._cache_size() == 3
    assert pd.stats.snapshot()["compiles"] - after["compiles"] == 2
    # Seen signatures are hits.
    hits = pd.stats.snapshot()["trace_hits"]
    f(np.ones(4, np.float32), 1.0)
    assert len(traces) == 3 and pd.stats.snapshot()["trace_hits"] == hits + 1


def test_weak_typed_scalars_do_not_retrace() -> None:
    fn, traces = counting(lambda x, s: x * s)
    f = jit(fn)
    x = device(np.arange(3, dtype=np.float32))
    for s in (1.0, 2.5, -3.0, 1e9):
        np.testing.assert_allclose(np.asarray(f(x, s)), np.arange(3) * np.float32(s), rtol=1e-6)
    assert len(traces) == 1
    f(x, 2)  # a Python int is weak int32: a new signature
    assert len(traces) == 2
    f(x, np.float32(2.0))  # a strongly typed scalar: another one
    assert len(traces) == 3
    f(x, 7)
    assert len(traces) == 3


def test_weak_array_result_fed_back_does_not_retrace() -> None:
    fn, traces = counting(lambda a: a * 2.0)
    f = jit(fn)
    out = f(1.0)  # weak f32[]
    for _ in range(3):
        out = f(out)
    assert float(out) == 16.0 and out.weak_type and len(traces) == 1


def test_eager_op_compiles_once_per_signature() -> None:
    x = device(np.arange(6, dtype=np.float32).reshape(2, 3))
    lax.cosh(x)
    before = pd.stats.snapshot()["compiles"]
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(lax.cosh(x)), np.cosh(np.asarray(x)), rtol=1e-6)
    assert pd.stats.snapshot()["compiles"] == before
    lax.cosh(device(np.ones(7, np.float32)))
    assert pd.stats.snapshot()["compiles"] == before + 1


def test_pytree_structure_change_retraces() -> None:
    fn, traces = counting(lambda t: t[0] + t[1])
    f = jit(fn)
    a = np.ones(2, np.float32)
    f((a, a))
    f([a, a])
    f((a, a))
    assert len(traces) == 2


def test_clear_cache_retraces() -> None:
    fn, traces = counting(lambda x: x + 1)
    f = jit(fn)
    x = device(np.ones(2, np.float32))
    f(x)
    f.clear_cache()
    assert f._cache_size() == 0
    f(x)
    assert len(traces) == 2


# ---------------------------------------------------------------------------
# Static arguments.


def test_static_argnums_and_inferred_argnames() -> None:
    def power(x: Any, n: int) -> Any:
        out = x
        for _ in range(n - 1):
            out = out * x
        return out

    fn, traces = counting(power)
    f = jit(fn, static_argnums=1)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, 3)), x**3)
    np.testing.assert_array_equal(np.asarray(f(x, 3)), x**3)
    assert len(traces) == 1
    np.testing.assert_array_equal(np.asarray(f(x, 2)), x**2)
    assert len(traces) == 2
    # Passed by keyword, the same parameter is static too (names inferred).
    np.testing.assert_array_equal(np.asarray(f(x, n=2)), x**2)


def test_static_argnames_and_decorator_form() -> None:
    @jit(static_argnames="mode")
    def f(x: Any, mode: str = "double") -> Any:
        return x * 2 if mode == "double" else x + 100

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)), 2 * x)
    np.testing.assert_array_equal(np.asarray(f(x, mode="shift")), x + 100)
    np.testing.assert_array_equal(np.asarray(f(x, "shift")), x + 100)


def test_unhashable_static_argument_is_a_value_error_naming_it() -> None:
    f = jit(lambda x, sizes: x, static_argnums=1)
    with pytest.raises(ValueError, match=r"static argument 'sizes' has the unhashable type list"):
        f(np.ones(2), [1, 2])
    g = jit(lambda x, *, opts: x, static_argnames="opts")
    with pytest.raises(ValueError, match=r"static argument opts has the unhashable type dict"):
        g(np.ones(2), opts={"a": 1})


def test_static_values_of_different_types_trace_separately() -> None:
    fn, traces = counting(lambda x, n: x * n)
    f = jit(fn, static_argnums=1)
    x = np.ones(2, np.float32)
    assert f(x, 2).dtype == F32 and f(x, 2.0).dtype == F32
    assert len(traces) == 2


def test_bad_jit_arguments() -> None:
    with pytest.raises(TypeError, match=r"jit: expected a function, got int"):
        jit(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"static_argnums contains 2, but the function takes 2 positional"):
        jit(lambda x, y: x, static_argnums=2)
    with pytest.raises(ValueError, match=r"static_argnames contains 'z', which is not a parameter"):
        jit(lambda x, y: x, static_argnames="z")
    with pytest.raises(ValueError, match=r"both static and donated"):
        jit(lambda x, y: x, static_argnums=1, donate_argnums=1)
    with pytest.raises(ValueError, match=r"unknown backend 'gpu'"):
        jit(lambda x: x, backend="gpu")
    with pytest.raises(TypeError, match=r"device must be a device"):
        jit(lambda x: x, device="cpu:0")
    with pytest.raises(TypeError, match=r"static_argnums must be ints"):
        jit(lambda x: x, static_argnums=("x",))  # type: ignore[arg-type]


def test_non_array_argument_names_the_argument() -> None:
    f = jit(lambda x, opts: x)
    with pytest.raises(TypeError, match=r"argument opts\['mode'\] has type str .*mark the argument static"):
        f(np.ones(2), {"mode": "fast"})


def test_leaked_tracer_passed_to_a_jitted_function() -> None:
    f = jit(lambda a, b: (a + b, a))
    x = device(np.ones(3, np.float32))
    f(x, x)  # the signature has a fast handler now
    leaked: list[Any] = []
    pc.make_jaxpr(lambda t: leaked.append(t) or t)(np.ones(3, np.float32))
    with pytest.raises(pc.TracerLeakError, match=r"used after that transformation ended"):
        f(leaked[0], x)


def test_output_that_is_not_an_array_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"jit\(<lambda>\): output leaf 0 .* has type str"):
        jit(lambda x: "text")(np.ones(2))


# ---------------------------------------------------------------------------
# The call primitive, nesting, inline, keep_unused.


def test_jitted_call_is_one_closed_call_with_jit_info() -> None:
    f = jit(lambda x, y: x * y + 1.0, donate_argnums=0)
    closed = pc.make_jaxpr(lambda a, b: f(a, b) * 2.0)(np.ones(3, np.float32), np.ones(3, np.float32))
    pc.check_jaxpr(closed)
    calls = [e for e in closed.eqns if e.primitive.name == "closed_call"]
    assert len(calls) == 1
    info = calls[0].params["jit_info"]
    assert isinstance(info, JitInfo) and info.donated == (True, False) and info.names == ("x", "y")
    assert calls[0].params["name"] == "<lambda>"
    x = np.arange(3, dtype=np.float32)
    (out,) = pc.eval_jaxpr(closed.jaxpr, closed.consts, x, x)
    np.testing.assert_allclose(np.asarray(out), (x * x + 1) * 2)


def test_inline_stages_the_equations_directly() -> None:
    f = jit(lambda x: pnp.sin(x) + 1.0, inline=True)
    closed = pc.make_jaxpr(lambda a: f(a) * 2.0)(np.ones(3, np.float32))
    assert [e.primitive.name for e in closed.eqns] == ["sin", "add", "mul"]
    np.testing.assert_allclose(np.asarray(f(np.zeros(3, np.float32))), np.ones(3))


def test_nested_jit_reuses_the_tracing_cache() -> None:
    inner_fn, inner_traces = counting(lambda x: pnp.exp(x) * 2.0)
    inner = jit(inner_fn)
    outer1 = jit(lambda x: inner(x) + 1.0)
    outer2 = jit(lambda x: inner(x) - 1.0)
    x = np.linspace(0, 1, 4).astype(np.float32)
    np.testing.assert_allclose(np.asarray(outer1(x)), np.exp(x) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(outer2(x)), np.exp(x) * 2 - 1, rtol=1e-6)
    pc.make_jaxpr(lambda a: inner(a))(x)
    np.testing.assert_allclose(np.asarray(inner(x)), np.exp(x) * 2, rtol=1e-6)
    assert len(inner_traces) == 1


def test_closure_over_outer_tracer_is_not_cached() -> None:
    fn, traces = counting(lambda x: x)

    def outer(a: Any) -> Any:
        g = jit(lambda x: fn(x) * a)  # closes over a tracer of make_jaxpr
        return g(a) + g(a)

    closed = pc.make_jaxpr(outer)(np.float32(3.0))
    pc.check_jaxpr(closed)
    (out,) = pc.eval_jaxpr(closed.jaxpr, closed.consts, np.float32(3.0))
    assert float(out) == 18.0
    assert len(traces) == 2  # traced per call: its constant is a tracer


def test_captured_constants_are_operands() -> None:
    table = np.arange(5, dtype=np.float32) * 10
    on_device = device(table)
    f = jit(lambda i: pnp.take(table, i) + on_device[i])
    out = f(np.int32(3))
    assert float(out) == 60.0
    assert float(f(np.int32(1))) == 20.0


def test_keep_unused() -> None:
    x, y = np.ones(3, np.float32), np.ones(4, np.float32)
    pruned = jit(lambda a, b: a * 2).lower(x, y).as_text()
    kept = jit(lambda a, b: a * 2, keep_unused=True).lower(x, y).as_text()
    assert "tensor<4xf32>" not in pruned.split("->")[0]
    assert "tensor<4xf32>" in kept.split("->")[0]
    np.testing.assert_array_equal(np.asarray(jit(lambda a, b: a * 2)(x, y)), 2 * x)
    np.testing.assert_array_equal(np.asarray(jit(lambda a, b: a * 2, keep_unused=True)(x, y)), 2 * x)


def test_jit_info_remap_drops_and_renumbers_donations() -> None:
    info = JitInfo(None, (True, False, True), False, ("a", "b", "c"))
    new = info.remap_operands((None, 2, 0))
    assert new.donated == (False, True, True) and new.names == (None, "c", "a")
    assert new == JitInfo(None, (False, True, True), False, (None, "c", "a"))
    assert hash(new) == hash(JitInfo(None, (False, True, True), False, (None, "c", "a")))
    # DCE of a jitted call drops the pruned operand's donation.
    f = jit(lambda a, b, c: (a + c, b * 2.0), donate_argnums=(0, 1))
    closed = pc.make_jaxpr(lambda a, b, c: f(a, b, c)[0])(*[np.ones(2, np.float32)] * 3)
    dced, _ = pc.dce_closed_jaxpr(closed)
    (call,) = [e for e in dced.eqns if e.primitive.name == "closed_call"]
    assert call.params["jit_info"].donated == (True, False) and call.params["jit_info"].names == ("a", "c")


def test_methods_bind_self() -> None:
    class Scale:
        def __init__(self, k: float) -> None:
            self.k = k

        @functools.partial(jit, static_argnums=0)
        def apply(self, x: Any) -> Any:
            return x * self.k

    np.testing.assert_array_equal(np.asarray(Scale(2.0).apply(np.ones(2, np.float32))), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(Scale(3.0).apply(np.ones(2, np.float32))), [3.0, 3.0])


def test_scatter_jit_eager_numpy() -> None:
    v, i = _V5, np.abs(_I6) % 5
    want = v.copy()
    np.add.at(want, i, 1.0)
    f = lambda a, j: a.at[j].add(1.0)  # noqa: E731
    assert_tree_close(jit(f)(v, i), want)
    assert_tree_close(f(device(v), device(i)), want)


def test_eval_shape_does_not_compile() -> None:
    f = jit(lambda x, s: {"a": x * s, "b": pnp.sum(x).astype(np.int32)})
    before = pd.stats.snapshot()["compiles"]
    shapes = f.eval_shape(np.ones((2, 3), np.float32), 1.0)
    assert pd.stats.snapshot()["compiles"] == before
    assert shapes["a"] == pc.ShapeDtypeStruct((2, 3), np.float32)
    assert shapes["b"] == pc.ShapeDtypeStruct((), np.int32)
    weak = f.eval_shape(pc.ShapeDtypeStruct((), np.float32, weak_type=True), 1.0)
    assert weak["a"].weak_type is True


# ---------------------------------------------------------------------------
# Explaining cache misses.


@contextlib.contextmanager
def explaining() -> Iterator[None]:
    prev = pc.config.explain_cache_misses
    pc.config.update("explain_cache_misses", True)
    try:
        yield
    finally:
        pc.config.update("explain_cache_misses", prev)


def _miss_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]


def test_cache_miss_explanations(caplog: pytest.LogCaptureFixture) -> None:
    def scaled(x: Any, scale: Any, *, mode: str = "a") -> Any:
        return x * scale

    f = jit(scaled, static_argnames="mode")
    x3, x4 = np.ones(3, np.float32), np.ones(4, np.float32)
    with explaining(), caplog.at_level(logging.WARNING, logger="plait_dispatch.cache"):
        f(x3, 1.0)
        f(x3, 2.0)  # hit: nothing logged
        f(x4, 1.0)
        f(x4.astype(np.int32), 1.0)
        f(x4.astype(np.int32), np.float32(1.0))
        f(x4.astype(np.int32), np.float32(1.0), mode="b")
    lines = _miss_lines(caplog)
    assert len(lines) == 5
    site = f"{__file__}:"
    assert all(site in line and "jit(scaled)" in line for line in lines)
    assert "first call" in lines[0]
    assert "x: shape changed from (3,) to (4,)" in lines[1]
    assert "x: dtype changed from float32 to int32" in lines[2]
    assert "scale: weak type changed (f32[] is now strongly typed)" in lines[3]
    assert "static argument mode is new (value 'b')" in lines[4]


def test_cache_misses_are_quiet_by_default(caplog: pytest.LogCaptureFixture) -> None:
    f = jit(lambda x: x)
    with caplog.at_level(logging.WARNING, logger="plait_dispatch.cache"):
        f(np.ones(2))
        f(np.ones(3))
    assert _miss_lines(caplog) == []


def test_cache_miss_explanation_from_the_environment() -> None:
    code = textwrap.dedent(
        """
        import numpy as np
        import plait_dispatch as pd

        @pd.jit
        def f(x, n):
            return x * n

        f(np.ones(2, np.float32), 1.0)
        f(np.ones(2, np.float32), 1)
        """
    )
    env = dict(os.environ, PLAIT_EXPLAIN_CACHE_MISSES="1")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "jit(f)" in res.stderr and "n: dtype changed from float32 to int32" in res.stderr


def test_disable_jit_runs_the_python_body_op_by_op() -> None:
    seen: list[Any] = []

    @functools.partial(pd.jit, donate_argnums=0)
    def f(x: Any) -> Any:
        seen.append(type(x))  # a concrete Array under disable_jit, a tracer when traced
        return pnp.sin(x) * 2.0

    x = pd.device_put(np.arange(3, dtype=np.float32))
    with pc.disable_jit():
        assert pc.config.read("jax_disable_jit") is True
        a = f(x)
        b = f(x)
    assert seen == [Array, Array]  # each call ran the body on the values
    assert not x.is_deleted()  # donation is ignored when nothing is compiled
    np.testing.assert_allclose(np.asarray(a), np.sin(np.arange(3, dtype=np.float32)) * 2.0, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert pc.config.read("disable_jit") is False
    assert f._cache_size() == 0
    c = f(x)  # compiled again outside the block
    assert f._cache_size() == 1 and seen[-1] is not Array
    np.testing.assert_allclose(np.asarray(c), np.asarray(a), rtol=1e-6)


def test_shardings_that_are_all_none_leave_layouts_alone() -> None:
    # flax.nnx.jit passes in_shardings=None and out_shardings=(None, ()): nothing is
    # requested, so the call runs as a jit without shardings (it failed choosing
    # devices for an SPMD call with no sharding to take them from).
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = jit(lambda a: (a * 2.0, ()), in_shardings=None, out_shardings=(None, ()))
    out, empty = f(x)
    np.testing.assert_array_equal(np.asarray(out), x * 2.0)
    assert empty == ()
    assert out.sharding == jit(lambda a: a * 2.0)(x).sharding
