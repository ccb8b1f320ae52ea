"""The kernel: staging to jaxprs, evaluation, type checking, errors of tracing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import lax
from plait_core.abstract import ShapedArray

f32 = np.float32


def test_golden_pretty_print_of_a_small_program() -> None:
    def f(x: Any, y: Any) -> Any:
        return lax.mul(lax.add(x, 1.0), lax.sin(y))

    text = str(pc.make_jaxpr(f)(np.zeros(3, f32), np.zeros(3, f32)))
    assert text == (
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = add a 1.0\n"
        "    d:f32[3] = sin b\n"
        "    e:f32[3] = mul c d\n"
        "  in (e,) }"
    )


def test_golden_pretty_print_with_constants_and_params() -> None:
    table = np.arange(6, dtype=f32).reshape(2, 3)

    def f(x: Any) -> Any:
        return lax.reduce_sum(lax.add(x, table), axes=(0,))

    text = str(pc.make_jaxpr(f)(np.zeros((2, 3), f32)))
    assert text == (
        "{ lambda a:f32[2,3]; b:f32[2,3]. let\n"
        "    c:f32[2,3] = add b a\n"
        "    d:f32[3] = reduce_sum[axes=(0,)] c\n"
        "  in (d,) }"
    )


def test_closed_over_array_becomes_a_constant() -> None:
    w = np.arange(3, dtype=f32)
    closed = pc.make_jaxpr(lambda x: lax.mul(x, w))(np.ones(3, f32))
    assert len(closed.consts) == 1 and closed.consts[0] is w
    assert closed.jaxpr.constvars[0].aval == ShapedArray((3,), f32)


def test_round_trip_equals_eager_on_pytrees() -> None:
    def f(params: dict[str, Any], x: Any) -> tuple[Any, Any]:
        h = lax.add(lax.mul(x, params["w"]), params["b"])
        return lax.tanh(h), lax.exp(params["b"])

    params = {"w": np.full(4, 0.5, f32), "b": np.linspace(-1, 1, 4).astype(f32)}
    x = np.linspace(0, 1, 4).astype(f32)
    closed = pc.make_jaxpr(f)(params, x)
    pc.check_jaxpr(closed)
    flat = [params["b"], params["w"], x]  # dict leaves in sorted key order
    out = pc.eval_jaxpr(closed.jaxpr, closed.consts, *flat)
    expected = (np.tanh(x * params["w"] + params["b"]), np.exp(params["b"]))
    np.testing.assert_allclose(out[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(out[1], expected[1], rtol=1e-6)
    eager = f(params, x)
    np.testing.assert_allclose(eager[0], expected[0], rtol=1e-6)


def test_return_shape_and_static_argnums() -> None:
    def f(x: Any, n: int) -> Any:
        for _ in range(n):
            x = lax.add(x, 1.0)
        return {"y": x}

    closed, shape = pc.make_jaxpr(f, static_argnums=1, return_shape=True)(np.zeros(2, f32), 3)
    assert len(closed.eqns) == 3
    assert shape == {"y": pc.ShapeDtypeStruct((2,), f32)}


def test_static_argnums_out_of_range() -> None:
    with pytest.raises(ValueError, match="static_argnums 4 is out of range for a call with 1 positional"):
        pc.make_jaxpr(lambda x: x, static_argnums=4)(1.0)


def test_eval_shape_keeps_weak_types() -> None:
    out = pc.eval_shape(lambda x, s: (lax.add(x, x), lax.mul(s, 2.0)), pc.ShapeDtypeStruct((5, 2), f32), 1.0)
    assert out[0] == pc.ShapeDtypeStruct((5, 2), f32)
    assert out[1].weak_type and out[1].shape == () and out[1].dtype == f32


def test_bind_rejects_non_array_arguments() -> None:
    with pytest.raises(TypeError, match=r"an argument of add: expected an array.*got a value of type builtins\.str"):
        pc.make_jaxpr(lambda x: lax.add(x, "one"))(np.ones(2, f32))  # type: ignore[arg-type]


def test_output_leaf_that_is_not_an_array() -> None:
    with pytest.raises(TypeError, match=r"make_jaxpr: output leaf 1 .* has type str"):
        pc.make_jaxpr(lambda x: (x, "label"))(np.ones(2, f32))


def test_python_if_on_a_traced_value_points_to_cond() -> None:
    def f(x: Any) -> Any:
        if lax.gt(x, 0.0):
            return x
        return lax.neg(x)

    with pytest.raises(pc.ConcretizationTypeError, match=r"bool\(\) needs a concrete value.*plait\.lax\.cond"):
        pc.make_jaxpr(f)(f32(1.0))


def test_int_of_a_traced_value() -> None:
    with pytest.raises(pc.ConcretizationTypeError, match=r"int\(\) needs a concrete value, but got a traced value i32\[\]"):
        pc.make_jaxpr(lambda i: int(i))(np.int32(3))


def test_leaked_tracer_is_reported() -> None:
    store: list[Any] = []

    def f(x: Any) -> Any:
        store.append(x)
        return x

    pc.make_jaxpr(f)(np.ones(2, f32))
    with pytest.raises(pc.TracerLeakError, match=r"traced value f32\[2\] created by staging to a jaxpr was used \(as an argument of add\) after that transformation ended"):
        lax.add(store[0], 1.0)
    with pytest.raises(pc.TracerLeakError, match="after that transformation ended"):
        pc.make_jaxpr(lambda y: lax.add(y, store[0]))(np.ones(2, f32))


def test_nested_staging_closes_over_outer_tracers() -> None:
    inner_jaxprs: list[pc.ClosedJaxpr] = []

    def outer(x: Any) -> Any:
        inner = pc.make_jaxpr(lambda y: lax.mul(y, x))(np.ones(2, f32))
        inner_jaxprs.append(inner)
        return pc.eval_jaxpr(inner.jaxpr, inner.consts, x)[0]

    closed = pc.make_jaxpr(outer)(np.full(2, 3.0, f32))
    inner = inner_jaxprs[0]
    assert len(inner.consts) == 1 and isinstance(inner.consts[0], pc.Tracer)
    out = pc.eval_jaxpr(closed.jaxpr, closed.consts, np.full(2, 3.0, f32))[0]
    np.testing.assert_allclose(out, [9.0, 9.0])


def test_check_jaxpr_catches_a_wrong_outvar_type() -> None:
    closed = pc.make_jaxpr(lambda x: lax.sin(x))(np.ones(3, f32))
    closed.jaxpr.eqns[0].outvars[0].aval = ShapedArray((4,), f32)
    with pytest.raises(pc.JaxprTypeError, match=r"equation 0: .* outvar b has type f32\[4\] but sin produces f32\[3\]"):
        pc.check_jaxpr(closed)


def test_check_jaxpr_catches_an_undefined_variable() -> None:
    closed = pc.make_jaxpr(lambda x: lax.sin(lax.cos(x)))(np.ones(3, f32))
    eqns = closed.jaxpr.eqns
    eqns[0], eqns[1] = eqns[1], eqns[0]
    with pytest.raises(pc.JaxprTypeError, match="variable b is used before it is defined"):
        pc.check_jaxpr(closed)


def test_dce_drops_unused_equations_and_reports_inputs() -> None:
    def f(x: Any, y: Any) -> tuple[Any, Any]:
        return lax.sin(x), lax.exp(lax.cos(y))

    closed = pc.make_jaxpr(f)(np.ones(2, f32), np.ones(2, f32))
    jaxpr, used = pc.dce_jaxpr(closed.jaxpr, [True, False])
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin"]
    assert used == [True, False]
    pruned, _ = pc.dce_jaxpr(closed.jaxpr, [False, True], prune_inputs=True)
    assert [e.primitive.name for e in pruned.eqns] == ["cos", "exp"]
    assert len(pruned.invars) == 1


def test_partial_eval_runs_known_python_control_flow() -> None:
    def f(k: Any, u: Any) -> list[Any]:
        scale = lax.mul(k, 2.0)
        if lax.reduce_max(scale, (0,)) > 1.0:  # concrete: k is known
            return [lax.mul(u, scale), lax.exp(k)]
        return [u, k]

    k = np.full(3, 1.5, f32)
    pvals = [pc.PartialVal.known(k), pc.PartialVal.unknown(ShapedArray((3,), f32))]
    closed, out_pvals = pc.trace_to_jaxpr_partial(f, pvals)
    assert [pv.is_known for pv in out_pvals] == [False, True]
    np.testing.assert_allclose(out_pvals[1].value, np.exp(1.5), rtol=1e-6)
    assert [e.primitive.name for e in closed.eqns] == ["mul"]
    np.testing.assert_allclose(closed.consts[0], [3.0, 3.0, 3.0])  # the residual
    u = np.arange(3, dtype=f32)
    np.testing.assert_allclose(pc.eval_jaxpr(closed.jaxpr, closed.consts, u)[0], u * 3.0)


def test_partial_eval_jaxpr_recombines_to_the_original() -> None:
    def f(a: Any, b: Any) -> tuple[Any, Any]:
        c = lax.sin(a)
        return lax.mul(c, b), lax.cos(a)

    closed = pc.make_jaxpr(f)(np.ones(3, f32), np.ones(3, f32))
    known, unknown, out_unknowns, nres = pc.partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [True, False] and nres == 1
    a, b = np.linspace(0, 1, 3).astype(f32), np.linspace(1, 2, 3).astype(f32)
    k_out = pc.eval_jaxpr(known.jaxpr, known.consts, a)
    u_out = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, *k_out[1:], b)
    np.testing.assert_allclose(u_out[0], np.sin(a) * b, rtol=1e-6)
    np.testing.assert_allclose(k_out[0], np.cos(a), rtol=1e-6)
    assert [e.primitive.name for e in unknown.eqns] == ["mul"]


def test_x64_switch_changes_canonical_dtypes() -> None:
    x = np.ones(2, np.float64)
    assert pc.make_jaxpr(lambda v: lax.add(v, 1.0))(x).in_avals[0].dtype == f32
    with pc.enable_x64():
        closed = pc.make_jaxpr(lambda v: lax.add(v, 1.0))(x)
        assert closed.in_avals[0].dtype == np.float64
        assert pc.get_aval(1.0) == ShapedArray((), np.float64, True)
    assert pc.get_aval(1.0) == ShapedArray((), f32, True)


def test_python_int_out_of_int32_range() -> None:
    with pytest.raises(OverflowError, match="Python int 4294967296 is too large for int32"):
        pc.get_aval(2**32)


def test_catalog_contains_design_primitives() -> None:
    names = {p.name for p in pc.all_primitives()}
    required = set(
        ["neg", "sign", "floor", "ceil", "round", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "integer_pow", "erf", "erf_inv", "lgamma", "digamma", "not", "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "shift_left", "shift_right_arithmetic", "shift_right_logical", "select_n", "clamp", "convert_element_type", "bitcast_convert_type", "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "rev", "pad", "concatenate", "slice", "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "scatter_add", "iota", "copy", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "sort", "dot_general", "conv_general_dilated", "cond", "while", "scan", "closed_call", "custom_jvp_call", "custom_vjp_call", "checkpoint", "invertible_call", "custom_vmap_call", "psum", "pmax", "pmin", "pmean", "all_gather", "axis_index", "stop_gradient", "add_any", "zeros_like"]
    )
    assert required - names == set()


def test_rule_registry_reports_missing_and_unsupported() -> None:
    reg: pc.RuleRegistry[Any] = pc.RuleRegistry("demo interpreter")
    add, sin = pc.primitive_by_name("add"), pc.primitive_by_name("sin")
    reg[add] = lambda *a: a
    reg.not_supported(sin, "sines are out of scope")
    missing = {p.name for p in reg.missing()}
    assert "add" not in missing and "sin" not in missing and "cos" in missing
    with pytest.raises(NotImplementedError, match="demo interpreter does not support sin: sines are out of scope"):
        reg[sin]
    with pytest.raises(NotImplementedError, match="demo interpreter has no rule for the primitive cos"):
        reg[pc.primitive_by_name("cos")]


def test_config_update_accepts_jax_names() -> None:
    assert pc.config.read("jax_enable_x64") is False
    with pytest.raises(AttributeError, match="unknown configuration option 'jax_frobnicate'"):
        pc.config.update("jax_frobnicate", True)


def test_chain_of_1000_equations_stages_every_equation() -> None:
    def chain(x: Any) -> Any:
        for _ in range(1000):
            x = lax.add(x, 1.0)
        return x

    closed = pc.make_jaxpr(chain)(np.zeros(3, f32))
    assert len(closed.eqns) == 1000
    np.testing.assert_allclose(pc.eval_jaxpr(closed.jaxpr, closed.consts, np.zeros(3, f32))[0], 1000.0)


def test_dimension_as_value_stages_and_needs_a_binding() -> None:
    n = pc.SymbolicDim.var("n")
    closed = pc.make_jaxpr(lambda x: lax.dimension_as_value(x.shape[0]))(pc.ShapeDtypeStruct((n, 3), f32))
    assert str(closed) == "{ lambda ; a:f32[n,3]. let\n    b:i32[] = dim_as_value[dim=n] \n  in (b,) }".replace(" \n", "\n")
    assert lax.dimension_as_value(3) == 3
    with pytest.raises(ValueError, match=r"the symbolic size n has no value here: its names \(n\) take values only inside mask"):
        pc.eval_jaxpr(closed.jaxpr, closed.consts, np.zeros((2, 3), f32))


def test_restaging_keeps_weak_literals_weak() -> None:
    bf16 = pc.dtypes.bfloat16
    closed = pc.make_jaxpr(lambda: lax._convert_element_type(1.0, bf16, True))()
    assert closed.out_avals[0] == ShapedArray((), bf16, True)
    again = pc.make_jaxpr(lambda: pc.eval_jaxpr(closed.jaxpr, closed.consts))()
    assert again.out_avals[0] == ShapedArray((), bf16, True)


def test_to_tangent_type() -> None:
    assert pc.to_tangent_type(ShapedArray((2,), f32, True)) == ShapedArray((2,), f32, False)
    assert pc.to_tangent_type(ShapedArray((2,), np.int32)) == ShapedArray((2,), pc.dtypes.float0)


def test_symbolic_sizes_act_as_values() -> None:
    import plait_core.numpy as pnp

    n = pc.SymbolicDim.var("n")
    spec = pc.ShapeDtypeStruct((n, 3), f32)
    closed = pc.make_jaxpr(lambda x: x / x.shape[0])(spec)
    assert [e.primitive.name for e in closed.eqns] == ["dim_as_value", "convert_element_type", "div"]
    last = pc.make_jaxpr(lambda x: x[x.shape[0] - 1])(spec)
    assert last.out_avals[0].shape == (3,)
    assert "dim_as_value" in [e.primitive.name for e in last.eqns]
    tail = pc.make_jaxpr(lambda x: lax.dynamic_index_in_dim(x, -1, 0, keepdims=False))(spec)
    assert tail.out_avals[0].shape == (3,)
    assert pc.make_jaxpr(lambda x: pnp.asarray(x.shape[0]) * 2)(spec).out_avals[0].weak_type


def test_asarray_of_a_numpy_constant_indexes_with_a_traced_index() -> None:
    import plait_core.numpy as pnp

    table = np.arange(5.0, dtype=f32)
    closed = pc.make_jaxpr(lambda i: pnp.asarray(table)[i])(np.int32(2))
    for i in (0, 3, -1):
        out = pc.eval_jaxpr(closed.jaxpr, closed.consts, np.int32(i))[0]
        assert float(out) == table[i]
