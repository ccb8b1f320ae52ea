"""The module ``lower_jaxpr`` builds: its text (golden), the entry function's
signature, donation (aliasing attributes), constants (embedded or passed),
float0 values, private functions for calls, x64 types, and errors."""

from __future__ import annotations

import re
import textwrap
from typing import Any

import numpy as np
import pytest
from test_lowering_harness import F32, I32, bind, check, numpy_backend, numpy_run, sample, stage, xla_execute

import plait_core as pc
from plait_core import ClosedJaxpr, ShapedArray, dtypes, lax
from plait_core.dims import symbolic_dims
from plait_dispatch import _jaxlib, placement
from plait_dispatch.lowering import MAX_EMBEDDED_CONST_BYTES, LoweringError, lower_jaxpr

GOLDEN = textwrap.dedent("""\
    module @jit_f {
      func.func public @main(%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3xf32>) -> (tensor<3xf32>) {
        %0 = "stablehlo.sine"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
        %2 = "stablehlo.constant"() {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
        %3 = "stablehlo.multiply"(%0, %2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
        %4 = "stablehlo.add"(%3, %arg1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
        "func.return"(%4) : (tensor<3xf32>) -> ()
      }
    }
    """)


def _f(x: Any, y: Any) -> Any:
    return lax.add(lax.mul(lax.sin(x), 2.0), y)


def test_golden_text() -> None:
    x = np.ones(3, np.float32)
    low = lower_jaxpr(stage(_f, x, x), name="jit_f", donated_invars=(True, False))
    assert low.text == GOLDEN
    assert str(low) == GOLDEN
    assert low.name == "jit_f"
    assert low.in_avals == (ShapedArray((3,), F32),) * 2 and low.out_avals == (ShapedArray((3,), F32),)
    assert low.donated_invars == (True, False) and low.aliased_outputs == (0, None)
    assert (low.const_args, low.num_const_args, low.float0_inputs, low.float0_outputs) == ((), 0, (), ())
    assert low.platform == "cpu"


def test_module_names_are_symbols() -> None:
    x = np.ones(3, np.float32)
    low = lower_jaxpr(stage(_f, x, x), name="jit(<lambda>) 2")
    assert low.text.startswith("module @jit__lambda___2 {")
    assert "func.func public @main(" in low.text


# ---------------------------------------------------------------------------
# Donation


def _run_donating(low: Any, *args: np.ndarray) -> tuple[list[np.ndarray], list[bool]]:
    dev = _jaxlib.default_device()
    exe = _jaxlib.compile_stablehlo(low.text, dev)
    bufs = [_jaxlib.device_put(a, ShapedArray(a.shape, a.dtype), dev, False) for a in args]
    outs = _jaxlib.execute(exe, bufs, [_jaxlib.result_handler(a, dev) for a in low.result_avals])
    return [_jaxlib.to_numpy(o, a.dtype) for o, a in zip(outs, low.result_avals)], [_jaxlib.is_deleted(b) for b in bufs]


def test_donated_inputs_alias_the_first_free_output_of_their_type() -> None:
    x, y, n = sample(F32, (3,)), sample(F32, (3,), seed=1), np.arange(4, dtype=I32)
    closed = stage(lambda a, b, k: (lax.reduce_sum(a, (0,)), lax.mul(a, b), lax.add(k, 1), lax.sub(a, b)), x, y, n)
    low = lower_jaxpr(closed, donated_invars=(True, True, False))
    assert low.aliased_outputs == (1, 3, None)
    assert "%arg0: tensor<3xf32> {tf.aliasing_output = 1 : i32}" in low.text
    assert "%arg1: tensor<3xf32> {tf.aliasing_output = 3 : i32}" in low.text
    assert "%arg2: tensor<4xi32>)" in low.text
    got, deleted = _run_donating(low, x, y, n)
    assert deleted == [True, True, False]
    for g, w in zip(got, numpy_run(closed, x, y, n)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_donation_without_a_matching_output_is_reported() -> None:
    x = sample(F32, (3,))
    closed = stage(lambda a, b: (lax.reduce_sum(a, (0,)), lax.add(b, b)), x, x)
    low = lower_jaxpr(closed, donated_invars=(True, True))
    assert low.aliased_outputs == (1, None)  # first come, first served; b finds no free output
    assert "%arg0: tensor<3xf32> {tf.aliasing_output = 1 : i32}, %arg1: tensor<3xf32>)" in low.text
    got, deleted = _run_donating(low, x, x)
    assert deleted[0]
    np.testing.assert_allclose(got[1], x + x, rtol=1e-6)
    assert lower_jaxpr(closed).aliased_outputs == (None, None)


def test_donation_counts_results_without_float0_outputs() -> None:
    x, t = sample(F32, (3,)), np.zeros(3, dtypes.float0)
    closed = stage(lambda a, z: (bind("add_any")(z, z), lax.neg(a)), x, t)
    low = lower_jaxpr(closed, donated_invars=(True, False))
    assert low.aliased_outputs == (1, None)
    assert "{tf.aliasing_output = 0 : i32}" in low.text  # the first result of @main


# ---------------------------------------------------------------------------
# float0


def test_float0_inputs_are_not_passed_and_outputs_not_returned() -> None:
    x, t = sample(F32, (2, 3)), np.zeros((2, 3), dtypes.float0)
    closed = stage(lambda a, z: (lax.mul(a, a), bind("add_any")(z, z), bind("zeros_like")(z)), x, t)
    low = lower_jaxpr(closed)
    assert (low.float0_inputs, low.float0_outputs) == ((1,), (1, 2))
    assert low.arg_avals == (ShapedArray((2, 3), F32),) and low.result_avals == (ShapedArray((2, 3), F32),)
    assert "func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>)" in low.text
    got = xla_execute(low, x, t)
    want = numpy_run(closed, x, t)
    assert [g.dtype for g in got] == [F32, dtypes.float0, dtypes.float0]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[1].shape == got[2].shape == (2, 3)


def test_float0_values_inside_control_flow() -> None:
    x, t = sample(F32, (3,)), np.zeros(3, dtypes.float0)
    closed = stage(lambda a, z: lax.scan(lambda c, _: ((lax.add(c[0], 1.0), c[1]), c[1]), (a, z), None, length=3), x, t)
    got = xla_execute(lower_jaxpr(closed), x, t)
    assert [g.dtype for g in got] == [F32, dtypes.float0, dtypes.float0] and got[2].shape == (3, 3)
    np.testing.assert_allclose(got[0], x + 3, rtol=1e-6)


# ---------------------------------------------------------------------------
# Constants


def test_small_host_constants_are_embedded() -> None:
    w = sample(F32, (2, 3), seed=4)
    closed = stage(lambda a: lax.mul(a, w), sample(F32, (2, 3)))
    assert len(closed.consts) == 1
    low = lower_jaxpr(closed)
    assert low.num_const_args == 0 and low.const_args == ()
    assert re.search(r'dense<"0x[0-9A-F]{48}"> : tensor<2x3xf32>', low.text)
    check(lambda a: lax.mul(a, w), sample(F32, (2, 3)))


def test_large_and_device_constants_are_leading_arguments() -> None:
    n = MAX_EMBEDDED_CONST_BYTES // 4 + 1
    big, small = sample(F32, (n,), seed=2), sample(F32, (n,), seed=3)[:4].copy()
    with numpy_backend():
        dev_const = placement.device_put(small)
    x = sample(F32, (n,))
    closed = stage(lambda a: (lax.mul(a, big), lax.add(lax.slice(a, (0,), (4,), None), dev_const)), x)
    assert len(closed.consts) == 2
    low = lower_jaxpr(closed, donated_invars=(True,))
    assert low.num_const_args == 2 and low.const_avals == (ShapedArray((n,), F32), ShapedArray((4,), F32))
    assert low.const_args[0] is big or low.const_args[1] is big
    assert any(c is dev_const for c in low.const_args)
    assert f"@main(%arg0: tensor<{n}xf32>, %arg1: tensor<4xf32>, %arg2: tensor<{n}xf32> {{tf.aliasing_output = 0 : i32}})" in low.text
    assert low.arg_avals == low.const_avals + (ShapedArray((n,), F32),)
    got = xla_execute(low, x)
    np.testing.assert_allclose(got[0], x * big, rtol=1e-6)
    np.testing.assert_allclose(got[1], x[:4] + small, rtol=1e-6)


def test_equal_literals_are_one_constant() -> None:
    closed = stage(lambda a: lax.add(lax.mul(a, 2.0), 2.0), np.float32(1))
    low = lower_jaxpr(closed)
    assert low.text.count('"stablehlo.constant"') == 1


# ---------------------------------------------------------------------------
# Calls become private functions, once per jaxpr


def test_a_call_made_twice_is_one_private_function() -> None:
    x = sample(F32, (3,))
    inner = lax.named_call(lambda a: lax.sin(a), name="inner fn")
    other = lax.named_call(lambda a: lax.cos(a), name="inner fn")
    closed = check(lambda a: other(inner(inner(a))), x)
    text = lower_jaxpr(closed).text
    assert text.count("func.func private @inner_fn(%arg0: tensor<3xf32>) -> (tensor<3xf32>)") == 1
    assert text.count("func.func private @inner_fn_1(") == 1
    assert text.count('"func.call"(') == 3 and text.count("{callee = @inner_fn}") == 2


def test_nested_calls_and_calls_without_outputs() -> None:
    x = sample(F32, (3,))
    inner = lax.named_call(lambda a: lax.exp(a), name="inner")
    outer = lax.named_call(lambda a: lax.add(inner(a), inner(lax.neg(a))), name="outer")
    closed = check(lambda a: outer(a), x)
    text = lower_jaxpr(closed).text
    assert text.count("func.func private @inner(") == 1 and text.count("func.func private @outer(") == 1
    empty = stage(lambda a: (lax.named_call(lambda b: (), name="nothing")(a), a)[1], x)
    check(lambda a: (lax.named_call(lambda b: (), name="nothing")(a), a)[1], x)
    assert "-> ()" in lower_jaxpr(empty).text


def test_calls_inside_control_flow_regions() -> None:
    step = lax.named_call(lambda c, x: lax.add(lax.mul(c, 0.5), x), name="step")

    def f(xs: Any, i: Any) -> Any:
        carry, ys = lax.scan(lambda c, x: (step(c, x), step(x, c)), np.float32(0), xs)
        return lax.switch(i, [lambda v: step(v, v), lambda v: lax.neg(v)], carry), ys

    for i in (0, 1):
        closed = check(f, sample(F32, (6,)), np.int32(i))
    assert lower_jaxpr(closed).text.count("func.func private @step(") == 1


# ---------------------------------------------------------------------------
# Control-flow structure


@pytest.mark.parametrize("unroll,loops", [(1, 1), (2, 1), (5, 0), (9, 0)])
def test_scan_unrolling(unroll: int, loops: int) -> None:
    xs = sample(F32, (5,))
    closed = check(lambda v: lax.scan(lambda c, x: (lax.add(c, x), lax.mul(c, x)), 0.0, v, unroll=unroll), xs)
    assert lower_jaxpr(closed).text.count('"stablehlo.while"') == loops


def test_cond_clamps_its_index_before_case() -> None:
    closed = check(lambda i, a: lax.switch(i, [lax.neg, lax.exp], a), np.int32(-7), sample(F32, (3,)))
    text = lower_jaxpr(closed).text
    assert text.index('"stablehlo.clamp"') < text.index('"stablehlo.case"')


# ---------------------------------------------------------------------------
# 64-bit types


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64, np.complex128])
def test_x64_types(dtype: Any) -> None:
    with pc.enable_x64():
        x = sample(np.dtype(dtype), (2, 3), 1, 50)
        check(lambda a: lax.mul(lax.add(a, a), a), x)
        check(lambda a: lax.reduce_sum(a, (1,)), x)
        check(lambda a: lax.convert_element_type(a, np.float32), x)


def test_x64_special_functions() -> None:
    with pc.enable_x64():
        x = np.linspace(0.1, 5, 17)
        for fn in (lax.lgamma, lax.digamma, lax.erf, lax.exp, lax.log1p):
            check(fn, x, rtol=1e-10)
        check(lax.erf_inv, np.linspace(-0.99, 0.99, 17), rtol=1e-10)


# ---------------------------------------------------------------------------
# Signature options and errors


def test_arg_avals_may_differ_in_weak_type_only() -> None:
    x = np.ones(3, np.float32)
    closed = stage(_f, x, x)
    weak = ShapedArray((3,), F32, True)
    low = lower_jaxpr(closed, arg_avals=[weak, ShapedArray((3,), F32)])
    assert low.in_avals[0] is weak
    with pytest.raises(ValueError, match=r"lower_jaxpr: arg_avals\[1\] is f32\[4\] but the jaxpr's input 1 is f32\[3\]"):
        lower_jaxpr(closed, arg_avals=[weak, ShapedArray((4,), F32)])
    with pytest.raises(ValueError, match="lower_jaxpr: arg_avals has 1 entries but the jaxpr takes 2 inputs"):
        lower_jaxpr(closed, arg_avals=[weak])


def test_bad_donation_and_platform() -> None:
    x = np.ones(3, np.float32)
    closed = stage(_f, x, x)
    with pytest.raises(ValueError, match="lower_jaxpr: donated_invars has 3 entries but the jaxpr takes 2 inputs"):
        lower_jaxpr(closed, donated_invars=(True, False, False))
    with pytest.raises(ValueError, match="lower_jaxpr: unknown platform 'gpu'"):
        lower_jaxpr(closed, platform="gpu")
    assert lower_jaxpr(closed, platform="cuda").platform == "cuda"


def test_symbolic_shapes_cannot_be_lowered() -> None:
    (n,) = symbolic_dims("n")
    v = pc.Var(ShapedArray((n, 3), F32))
    closed = ClosedJaxpr(pc.Jaxpr([], [v], [v], []), [])
    with pytest.raises(LoweringError, match=r"cannot lower a value of type f32\[n,3\]: StableHLO needs concrete shapes"):
        lower_jaxpr(closed)
    assert issubclass(LoweringError, ValueError)


def test_dim_as_value_of_a_symbolic_size_is_an_error() -> None:
    (n,) = symbolic_dims("n")
    prim = pc.primitive_by_name("dim_as_value")
    out = pc.Var(ShapedArray((), I32))
    eqn = pc.JaxprEqn(prim, [], [out], {"dim": n})
    closed = ClosedJaxpr(pc.Jaxpr([], [], [out], [eqn]), [])
    with pytest.raises(LoweringError, match="cannot lower dim_as_value of the symbolic size n"):
        lower_jaxpr(closed)


@pytest.mark.parametrize("name", ["psum", "pmax", "pmin", "pmean", "all_gather", "axis_index"])
def test_collectives_outside_a_mesh_are_not_supported(name: str) -> None:
    x = np.ones(3, np.float32)
    fns = {
        "psum": lambda a: lax.psum(a, "i"), "pmax": lambda a: lax.pmax(a, "i"), "pmin": lambda a: lax.pmin(a, "i"),
        "pmean": lambda a: lax.pmean(a, "i"), "all_gather": lambda a: lax.all_gather(a, "i"),
        "axis_index": lambda a: lax.axis_index("i"),
    }
    closed = pc.make_jaxpr(fns[name], axis_env=[("i", 4)])(x)
    with pytest.raises(NotImplementedError, match=f"{name}: named-axis collectives need a mapped axis"):
        lower_jaxpr(closed)


def test_rule_results_are_checked() -> None:
    from plait_dispatch.lowering import lowering_rules
    from plait_dispatch.lowering.context import RuleContext
    from plait_dispatch.lowering.module import Value

    prim = pc.primitive_by_name("neg")
    good = lowering_rules[prim]

    def wrong(ctx: RuleContext, x: Value) -> list[Value]:
        return [ctx.constant(0, np.int32, x.shape)]

    lowering_rules[prim] = wrong
    try:
        with pytest.raises(LoweringError, match=r"the lowering rule of neg returned i32\[3\] for output 0, which has type f32\[3\]"):
            lower_jaxpr(stage(lax.neg, np.ones(3, np.float32)))
    finally:
        lowering_rules[prim] = good
