"""The ahead-of-time API: trace, lower (with lowering_platforms), as_text,
compile, calling a Compiled, cost and memory analysis."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import numpy as pnp
from plait_dispatch.aot import Compiled, Lowered, MemoryAnalysis, Traced
from plait_dispatch.array import Array


def _f(x: Any, y: Any, n: int) -> Any:
    return {"out": pnp.sin(x) * y + n, "sum": pnp.sum(x)}


X = np.linspace(0, 1, 6).astype(np.float32).reshape(2, 3)
Y = np.full((2, 3), 2.0, np.float32)


def _want(n: int) -> dict[str, np.ndarray]:
    return {"out": np.sin(X) * Y + n, "sum": np.asarray(X.sum(), np.float32)}


def test_trace() -> None:
    f = pd.jit(_f, static_argnums=2)
    traced = f.trace(X, Y, 3)
    assert isinstance(traced, Traced)
    assert traced.fun_name == "_f"
    assert isinstance(traced.jaxpr, pc.ClosedJaxpr)
    pc.check_jaxpr(traced.jaxpr)
    assert [e.primitive.name for e in traced.jaxpr.eqns][:2] == ["sin", "mul"]
    assert traced.in_avals == (pc.ShapedArray((2, 3), np.float32), pc.ShapedArray((2, 3), np.float32))
    assert traced.out_info == {
        "out": pc.ShapeDtypeStruct((2, 3), np.float32),
        "sum": pc.ShapeDtypeStruct((), np.float32),
    }
    assert traced.args_info == ((pc.ShapeDtypeStruct((2, 3), np.float32),) * 2, {})
    out_main, out_sum = pc.eval_jaxpr(traced.jaxpr.jaxpr, traced.jaxpr.consts, X, Y)
    np.testing.assert_allclose(np.asarray(out_main), _want(3)["out"], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out_sum), _want(3)["sum"], rtol=1e-6)


def test_lower_as_text_and_platforms() -> None:
    f = pd.jit(_f, static_argnums=2)
    lowered = f.trace(X, Y, 3).lower(lowering_platforms=("cpu",))
    assert isinstance(lowered, Lowered)
    text = lowered.as_text()
    assert text.startswith("module @") and "func.func public @main" in text and "stablehlo.sine" in text
    assert "stablehlo.sine" in str(lowered.compiler_ir())  # an MLIR Module, as JAX's
    assert f.lower(X, Y, 3).as_text() == text
    with pytest.raises(ValueError, match=r"lowering_platforms=\('tpu',\): plait lowers for 'cpu' only"):
        f.trace(X, Y, 3).lower(lowering_platforms=("tpu",))
    with pytest.raises(ValueError, match=r"compiler_ir: unknown dialect 'tosa'"):
        lowered.compiler_ir("tosa")


def test_compile_and_call() -> None:
    f = pd.jit(_f, static_argnums=2)
    compiled = f.lower(X, Y, 3).compile()
    assert isinstance(compiled, Compiled)
    out = compiled(X, Y)  # the static argument is not passed again
    assert type(out["out"]) is Array
    np.testing.assert_allclose(np.asarray(out["out"]), _want(3)["out"], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["sum"]), _want(3)["sum"], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(compiled(pd.device_put(X), Y)["out"]), _want(3)["out"], rtol=1e-6)
    assert "HloModule" in compiled.as_text()
    # The jitted function shares the executable.
    before = pd.stats.snapshot()["compiles"]
    np.testing.assert_allclose(np.asarray(f(X, Y, 3)["out"]), _want(3)["out"], rtol=1e-6)
    assert pd.stats.snapshot()["compiles"] == before


def test_compiled_refuses_other_arguments() -> None:
    compiled = pd.jit(_f, static_argnums=2).lower(X, Y, 3).compile()
    with pytest.raises(
        TypeError, match=r"called with arguments of structure .* \(static arguments are not passed"
    ):
        compiled(X, Y, 3)
    with pytest.raises(TypeError, match=r"argument y of type f32\[2,3\] was called with f32\[3\]"):
        compiled(X, Y[0])
    with pytest.raises(TypeError, match=r"argument x of type f32\[2,3\] was called with i32\[2,3\]"):
        compiled(X.astype(np.int32), Y)


def test_cost_and_memory_analysis() -> None:
    n = 1000
    f = pd.jit(lambda a, b: a * b + a)
    a = np.ones(n, np.float32)
    compiled = f.lower(a, a).compile()
    cost = compiled.cost_analysis()
    assert isinstance(cost, dict) and cost["flops"] >= 2 * n
    assert f.lower(a, a).cost_analysis()["flops"] == cost["flops"]
    mem = compiled.memory_analysis()
    assert isinstance(mem, MemoryAnalysis)
    assert mem.argument_size_in_bytes == 2 * 4 * n
    assert mem.output_size_in_bytes == 4 * n
    assert mem.alias_size_in_bytes == 0
    assert mem.temp_size_in_bytes >= 0


def test_donation_through_aot() -> None:
    f = pd.jit(lambda a: a * 2, donate_argnums=0)
    x = pd.device_put(np.arange(4, dtype=np.float32))
    lowered = f.lower(x)
    assert lowered.donate_argnums == (0,) and "tf.aliasing_output" in lowered.as_text()
    compiled = lowered.compile()
    assert compiled.memory_analysis().alias_size_in_bytes == 16
    out = compiled(x)
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) * 2)


def test_eval_shape_with_shape_structs() -> None:
    f = pd.jit(_f, static_argnums=2)
    spec = pc.ShapeDtypeStruct((5, 2), np.float32)
    out = f.eval_shape(spec, spec, 1)
    assert out == {"out": pc.ShapeDtypeStruct((5, 2), np.float32), "sum": pc.ShapeDtypeStruct((), np.float32)}
    lowered = f.trace(spec, spec, 1).lower()
    assert "tensor<5x2xf32>" in lowered.as_text()
    np.testing.assert_allclose(
        np.asarray(lowered.compile()(np.ones((5, 2), np.float32), np.ones((5, 2), np.float32))["sum"]), 10.0
    )
