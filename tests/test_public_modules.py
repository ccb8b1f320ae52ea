"""The public modules JAX libraries import, each with JAX 0.10.2's meaning:
``plait.typing``, ``core``, ``ops``, ``image``, ``dlpack``, ``profiler``,
``stages``, ``custom_batching``, ``custom_derivatives`` and
``experimental.checkify`` / ``ode`` / ``jet`` / ``shard_map``; and what
``plait.compat`` presents: JAX's version and the table of private paths."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import core, custom_batching, custom_derivatives, dlpack, image, ops, profiler, stages
from plait import typing as ptyping
from plait._jax_private import MODULE_ONLY, PRIVATE, Live, private_modules
from plait.experimental import checkify, jet, layout, ode
from plait.experimental import shard_map as experimental_shard_map

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import record_image_resize  # noqa: E402

JAX_IMAGE = np.load(ROOT / "tests" / "data" / "jax_image_0.10.2.npz")


# --- typing and core ------------------------------------------------------------


def test_typing_arraylike_accepts_arrays_and_scalars_only() -> None:
    for ok in (pnp.ones(2), np.ones(2), np.float32(1), 1, 2.5, True, 1j):
        assert isinstance(ok, ptyping.ArrayLike)
    for bad in ("a", None, [1.0]):
        assert not isinstance(bad, ptyping.ArrayLike)
    seen = []
    plait.jit(lambda x: seen.append(isinstance(x, ptyping.ArrayLike)) or x)(1.0)
    assert seen == [True]


def test_core_names_mean_plaits_objects() -> None:
    assert core.ShapedArray is plait.ShapedArray and core.AbstractValue is core.ShapedArray
    kinds: list[tuple[bool, bool]] = []

    def f(x: Any) -> Any:
        kinds.append((isinstance(x, core.Tracer), isinstance(core.get_aval(x), core.AbstractValue)))
        return x * 2

    plait.jit(f)(1.0)
    plait.grad(f)(1.0)
    f(pnp.ones(()))
    assert kinds == [(True, True), (True, True), (False, True)]
    closed = plait.make_jaxpr(lambda x: pnp.sin(x) + 1)(0.5)
    (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, 0.5)
    assert float(out) == pytest.approx(np.sin(0.5) + 1, rel=1e-6)
    assert core.max_dim(3, 5) == 5 and core.min_dim(3, 5) == 3
    assert core.concrete_or_error(int, 3.0) == 3
    with pytest.raises(plait.ConcretizationTypeError, match="the size"):
        plait.jit(lambda x: core.concrete_or_error(None, x, "the size"))(1.0)
    assert core.valid_jaxtype(1.0) and not core.valid_jaxtype("a") and core.is_constant_shape((2, 3))
    with core.ensure_compile_time_eval():
        assert core.eval_context is core.ensure_compile_time_eval
    assert not any(isinstance(a, core.DropVar) for e in closed.jaxpr.eqns for a in e.outvars)
    with pytest.raises(NotImplementedError, match="plait's jaxprs have no DropVar"):
        core.DropVar()


def test_pytype_aval_mappings_registers_an_array_type() -> None:
    class Wrapped(np.ndarray):
        pass

    value = np.arange(3.0, dtype=np.float32).view(Wrapped)
    with pytest.raises(TypeError):
        pnp.sin(value)
    core.pytype_aval_mappings[Wrapped] = core.pytype_aval_mappings[np.ndarray]
    assert Wrapped in core.pytype_aval_mappings and np.ndarray in core.pytype_aval_mappings
    np.testing.assert_allclose(np.asarray(plait.jit(pnp.sin)(value)), np.sin(np.arange(3.0)), rtol=1e-6)
    assert core.get_aval(value) == plait.ShapedArray((3,), np.float32)


# --- ops --------------------------------------------------------------------------


def _numpy_segments(data: np.ndarray, ids: np.ndarray, n: int, ufunc: Any, init: Any) -> np.ndarray:
    out = np.full((n, *data.shape[1:]), init, data.dtype)
    keep = (ids >= 0) & (ids < n)
    ufunc.at(out, ids[keep], data[keep])
    return out


@pytest.mark.parametrize(("fn", "ufunc", "init"), [
    (ops.segment_sum, np.add, 0.0), (ops.segment_prod, np.multiply, 1.0),
    (ops.segment_max, np.maximum, -np.inf), (ops.segment_min, np.minimum, np.inf),
])
def test_segment_reductions_against_numpy(fn: Any, ufunc: Any, init: Any) -> None:
    rng = np.random.RandomState(0)
    data = rng.randn(20, 3).astype(np.float32)
    ids = rng.randint(-2, 8, size=20).astype(np.int32)  # some negative, some past num_segments=6
    got = np.asarray(fn(data, ids, 6))
    np.testing.assert_allclose(got, _numpy_segments(data, ids, 6, ufunc, init), rtol=1e-6)
    jitted = np.asarray(plait.jit(lambda d, i: fn(d, i, num_segments=6, indices_are_sorted=False))(data, ids))
    np.testing.assert_allclose(jitted, got, rtol=1e-6)


def test_segment_sum_options() -> None:
    data = pnp.arange(6.0)
    ids = pnp.array([0, 0, 1, -1, 5, 2])
    np.testing.assert_array_equal(np.asarray(ops.segment_sum(data, ids, 3, mode="clip")), [4.0, 2.0, 9.0])
    np.testing.assert_array_equal(np.asarray(ops.segment_sum(data, pnp.array([0, 0, 1, 1, 2, 2]))), [1.0, 5.0, 9.0])
    np.testing.assert_array_equal(np.asarray(ops.segment_sum(pnp.ones((3, 2)), pnp.array([0, 1, 1]), 2,
                                                             bucket_size=2)), [[1.0, 1.0], [2.0, 2.0]])
    assert np.asarray(ops.segment_max(pnp.arange(6), ids, 4))[3] == np.iinfo(np.int32).min
    np.testing.assert_array_equal(np.asarray(plait.grad(lambda d: ops.segment_sum(d, ids, 3).sum())(data)),
                                  [1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    with pytest.raises(plait.ConcretizationTypeError, match="segment_sum\\(\\) `num_segments` argument"):
        plait.jit(lambda d, i: ops.segment_sum(d, i))(data, ids)
    with pytest.raises(ValueError, match="segment_sum: unknown mode 'bogus'"):
        ops.segment_sum(data, ids, 3, mode="bogus")
    with pytest.raises(ValueError, match="one id per row of data"):
        ops.segment_sum(data, ids[:3], 3)


# --- image ------------------------------------------------------------------------


def test_image_matches_recorded_jax() -> None:
    jitted = SimpleNamespace(  # one compiled program per case (eagerly, every operation would compile its own)
        resize=plait.jit(image.resize, static_argnums=(1, 2), static_argnames=("antialias",)),
        scale_and_translate=plait.jit(image.scale_and_translate, static_argnums=(1, 2, 5), static_argnames=("antialias",)),
    )
    got = record_image_resize.cases(jitted, pnp)
    assert sorted(got) == sorted(JAX_IMAGE.files)
    for name, want in JAX_IMAGE.items():
        assert got[name].shape == want.shape and got[name].dtype == want.dtype, name
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_linear_upsampling_is_numpy_interpolation() -> None:
    x = record_image_resize.image()
    out = np.asarray(image.resize(x, (9, 11), "bilinear"))
    rows = (np.arange(9) + 0.5) * 5 / 9 - 0.5
    cols = (np.arange(11) + 0.5) * 7 / 11 - 0.5
    by_col = np.stack([np.interp(cols, np.arange(7), r) for r in x])
    want = np.stack([np.interp(rows, np.arange(5), c) for c in by_col.T]).T
    np.testing.assert_allclose(out, want, rtol=1e-5)
    nearest = np.asarray(image.resize(np.arange(4.0), (8,), image.ResizeMethod.NEAREST))
    np.testing.assert_array_equal(nearest, [0, 0, 1, 1, 2, 2, 3, 3])
    with pytest.raises(ValueError, match="Unknown resize method: 'bogus'"):
        image.resize(x, (2, 2), "bogus")
    with pytest.raises(ValueError, match="must have the image's rank 2"):
        image.resize(x, (2,), "linear")


# --- dlpack, profiler, stages, custom_batching, custom_derivatives ------------------


def test_dlpack_profiler_stages() -> None:
    np.testing.assert_array_equal(np.asarray(dlpack.from_dlpack(np.arange(3))), [0, 1, 2])
    assert dlpack.is_supported_dtype("bfloat16") and not dlpack.is_supported_dtype("int4")
    with profiler.TraceAnnotation("step"), profiler.StepTraceAnnotation("train", step_num=1):
        pass
    assert profiler.annotate_function(lambda x: x + 1, name="inc")(1) == 2
    with profiler.trace("/nonexistent-dir-plait"), pytest.raises(RuntimeError, match="Only one profile may be run"):
        profiler.start_trace("/x")
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    assert "no-op" in (profiler.TraceAnnotation.__doc__ or "")
    options = profiler.ProfileOptions()
    assert (options.host_tracer_level, options.python_tracer_level, options.duration_ms) == (2, 1, 0)
    with profiler.trace("/tmp/unused", profiler_options=options):
        pass
    with pytest.raises(TypeError, match="profiler_options must be a ProfileOptions, got dict"):
        profiler.start_trace("/tmp/unused", profiler_options={})
    lowered = plait.jit(lambda x: x * 2).lower(1.0)
    assert isinstance(lowered, stages.Lowered) and isinstance(lowered.compile(), stages.Compiled)
    assert float(lowered.compile()(3.0)) == 6.0


def test_sequential_vmap_maps_one_element_at_a_time() -> None:
    calls = []

    @custom_batching.sequential_vmap
    def f(x: Any, y: Any) -> Any:
        calls.append(pnp.shape(x))
        return pnp.sin(x) * y

    out = plait.vmap(f, in_axes=(0, None))(pnp.arange(3.0), 2.0)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(3.0)) * 2, rtol=1e-6)
    assert all(shape == () for shape in calls)  # the function only ever saw one element
    assert "scan" in str(plait.make_jaxpr(plait.vmap(f))(pnp.ones(3), pnp.ones(3)))


def test_custom_derivatives_helpers() -> None:
    zeros = custom_derivatives.zero_from_primal({"a": pnp.ones(2), "b": 1})
    np.testing.assert_array_equal(zeros["a"], [0.0, 0.0])
    assert zeros["b"].dtype == plait.float0
    sym = custom_derivatives.zero_from_primal(pnp.ones(2), symbolic_zeros=True)
    assert isinstance(sym, custom_derivatives.SymbolicZero) and sym.shape == (2,)
    primal = custom_derivatives.CustomVJPPrimal(3.0, perturbed=True)
    assert custom_derivatives.custom_vjp_primal_tree_values([primal, 4.0]) == [3.0, 4.0]


def test_linear_call_uses_the_given_transpose() -> None:
    def scale(r: Any, x: Any) -> Any:
        return r * x

    def fake_transpose(r: Any, ct: Any) -> Any:  # deliberately not scale's true transpose, to see it used
        return 3 * r * ct

    def g(r: Any, x: Any) -> Any:
        return custom_derivatives.linear_call(scale, fake_transpose, r, x)

    assert float(g(2.0, 5.0)) == 10.0
    assert float(plait.grad(g, 1)(2.0, 5.0)) == 6.0 and float(plait.jit(plait.grad(g, 1))(2.0, 5.0)) == 6.0
    with pytest.raises(TypeError, match="linear_call: the residual arguments cannot be differentiated"):
        plait.grad(g, 0)(2.0, 5.0)
    with pytest.raises(TypeError, match="can't apply forward-mode differentiation"):
        plait.jvp(lambda x: g(2.0, x), (5.0,), (1.0,))


def test_compile_time_eval_stages_traced_operations_and_evaluates_concrete_ones() -> None:
    kinds: list[bool] = []

    @plait.jit
    def f(x: Any) -> Any:
        with plait.ensure_compile_time_eval():
            flag = pnp.where(x > 0, 1.0, 2.0)  # on a traced value: staged into jit, as in JAX
            const = pnp.sin(3.0)  # on concrete values: computed now
            kinds.extend([isinstance(flag, core.Tracer), isinstance(const, core.Tracer)])
        return flag, const

    assert [float(v) for v in f(1.0)] == [1.0, pytest.approx(np.sin(3.0), rel=1e-6)]
    assert float(f(-1.0)[0]) == 2.0 and kinds == [True, False]
    assert [e.primitive.name for e in plait.make_jaxpr(f)(1.0).jaxpr.eqns[0].params["call_jaxpr"].jaxpr.eqns] == [
        "gt", "select_n"]
    leaked: list[Any] = []
    plait.jit(lambda x: leaked.append(x) or x)(1.0)
    with plait.ensure_compile_time_eval(), pytest.raises(plait.errors.TracerLeakError):
        pnp.sin(leaked[0])


def test_named_call_runs_the_function_as_jax_does() -> None:
    seen: list[str] = []

    def apply(x: Any, fn: Any) -> Any:
        seen.append(type(x).__name__)
        return fn(x)

    named = plait.named_call(apply, name="apply_fn")
    np.testing.assert_allclose(np.asarray(named(pnp.ones(2), pnp.sin)), np.sin(np.ones(2)), rtol=1e-6)
    closed = plait.make_jaxpr(lambda x: named(x, pnp.cos))(1.0)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["cos"]  # no call of its own, as JAX's
    assert len(seen) == 2 and named.__name__ == "apply"
    with pytest.raises(TypeError, match="named_call: name must be a str, got int"):
        plait.named_call(apply, name=3)  # type: ignore[arg-type]


# --- checkify ------------------------------------------------------------------------


def _positive_log(x: Any, i: Any) -> Any:
    checkify.check(x > 0, "x must be positive, got {}", x)
    return pnp.log(x) / i


def test_checkify_user_checks() -> None:
    err, out = checkify.checkify(_positive_log)(pnp.float32(1.0), 2)
    assert err.get() is None and float(out) == 0.0
    err, _ = checkify.checkify(_positive_log)(pnp.float32(-1.0), 2)
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"
    assert isinstance(err.get_exception(), checkify.FailedCheckError)
    with pytest.raises(checkify.JaxRuntimeError, match=r"got -1.0 \(`check` failed\)"):
        err.throw()
    err, _ = plait.jit(checkify.checkify(_positive_log))(-2.0, 2)
    assert err.get() == "x must be positive, got -2.0 (`check` failed)"
    err, _ = plait.jit(checkify.checkify(_positive_log))(2.0, 2)
    assert err.get() is None
    err, _ = checkify.checkify(plait.jit(_positive_log))(pnp.float32(-3.0), 2)
    assert err.get() == "x must be positive, got -3.0 (`check` failed)"
    err, _ = plait.vmap(checkify.checkify(_positive_log))(pnp.array([1.0, -1.0, -2.0]), pnp.array([2, 2, 2]))
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"
    assert checkify.init_error.get() is None


def test_nested_checkify_keeps_each_ones_failure() -> None:
    def inner(x: Any) -> Any:
        checkify.check(x < 10, "inner {}", x)
        return x

    def outer(x: Any) -> Any:
        checkify.check(x > 0, "outer {}", x)
        err, y = checkify.checkify(inner)(x * 100)
        return y, err.get()

    err, (_, inner_message) = checkify.checkify(outer)(pnp.float32(-1.0))
    assert (err.get(), inner_message) == ("outer -1.0 (`check` failed)", None)
    err, (_, inner_message) = checkify.checkify(outer)(pnp.float32(1.0))
    assert (err.get(), inner_message) == (None, "inner 100.0 (`check` failed)")


def test_checkify_check_outside_and_refusals() -> None:
    with pytest.raises(checkify.JaxRuntimeError, match=r"^bad 3 \(`check` failed\)$"):
        checkify.check(False, "bad {x}", x=pnp.int32(3))
    with pytest.raises(ValueError, match=r"Cannot abstractly evaluate a checkify\.check which was not functionalized"):
        plait.jit(lambda x: checkify.check(x > 0, "bad"))(1.0)
    err, _ = checkify.checkify(_positive_log)(-1.0, 2)  # Python scalars reach f as Arrays, as in JAX
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"

    def loop(x: Any) -> Any:
        return plait.lax.scan(lambda c, xi: (c + _positive_log(xi, 1), None), 0.0, x)[0]

    err, _ = checkify.checkify(loop)(pnp.array([1.0, -5.0, 2.0]))
    assert err.get() == "x must be positive, got -5.0 (`check` failed)"
    with pytest.raises(NotImplementedError, match=r"not supported: a checkify\.check inside the body of scan"):
        plait.jit(checkify.checkify(loop))(pnp.array([1.0, -5.0, 2.0]))


def test_checkify_automatic_checks() -> None:
    err, _ = checkify.checkify(pnp.sin, errors=checkify.float_checks)(pnp.inf)
    assert err.get() == "nan generated by primitive: sin."
    err, _ = checkify.checkify(pnp.sin, errors=checkify.float_checks)(1.0)
    assert err.get() is None
    err, _ = checkify.checkify(lambda x, y: x // y, errors=checkify.div_checks)(pnp.int32(3), pnp.int32(0))
    assert err.get() == "division by zero"
    err, _ = checkify.checkify(lambda x, i: x[i], errors=checkify.index_checks)(pnp.arange(3), 5)
    assert err.get() == ("out-of-bounds indexing for array of shape (3,): index 5 is out of bounds for axis 0 "
                         "with size 3. ")
    err, _ = checkify.checkify(lambda x: plait.jit(pnp.log)(x), errors=checkify.all_checks)(-1.0)
    assert err.get() == "nan generated by primitive: log."
    err, _ = plait.jit(checkify.checkify(lambda x: pnp.log(x), errors=checkify.nan_checks))(-1.0)
    assert err.get() == "nan generated by primitive: log."
    err, _ = checkify.checkify(pnp.log, errors=checkify.user_checks)(-1.0)
    assert err.get() is None  # nan checks were not asked for
    with pytest.raises(TypeError, match="errors must be a set of checkify error categories"):
        checkify.checkify(pnp.log, errors=frozenset({ValueError}))  # type: ignore[arg-type]


# --- ode, jet, shard_map -------------------------------------------------------------


def test_odeint_against_the_exponential() -> None:
    ts = pnp.linspace(0.0, 2.0, 5)
    ys = ode.odeint(lambda y, t, k: -k * y, 1.0, ts, 0.7)
    np.testing.assert_allclose(np.asarray(ys), np.exp(-0.7 * np.asarray(ts)), rtol=2e-6)
    dk = plait.grad(lambda k: ode.odeint(lambda y, t, k: -k * y, 1.0, ts, k)[-1])(0.7)
    assert float(dk) == pytest.approx(-2 * np.exp(-1.4), rel=1e-5)
    dy0 = plait.grad(lambda y0: ode.odeint(lambda y, t, k: -k * y, y0, ts, 0.7)[-1])(1.0)
    assert float(dy0) == pytest.approx(np.exp(-1.4), rel=1e-5)
    dts = np.asarray(plait.grad(lambda ts: ode.odeint(lambda y, t, k: -k * y, 1.0, ts, 0.7)[-1])(ts))
    np.testing.assert_allclose(dts[[0, -1]], [0.7 * np.exp(-1.4), -0.7 * np.exp(-1.4)], rtol=1e-5)
    np.testing.assert_allclose(dts[1:-1], 0.0, atol=1e-6)


def test_odeint_pytree_state_under_jit_and_vmap() -> None:
    def oscillator(state: dict[str, Any], t: Any, w: Any) -> dict[str, Any]:
        return {"x": state["v"], "v": -(w ** 2) * state["x"]}

    ts = pnp.linspace(0.0, 3.0, 7)
    out = plait.jit(lambda w: ode.odeint(oscillator, {"x": 1.0, "v": 0.0}, ts, w))(1.5)
    np.testing.assert_allclose(np.asarray(out["x"]), np.cos(1.5 * np.asarray(ts)), atol=2e-5)
    np.testing.assert_allclose(np.asarray(out["v"]), -1.5 * np.sin(1.5 * np.asarray(ts)), atol=2e-5)
    finals = plait.vmap(lambda y0: ode.odeint(lambda y, t: -y, y0, pnp.array([0.0, 1.0]))[-1])(pnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(finals), [np.exp(-1.0), 2 * np.exp(-1.0)], rtol=1e-5)
    # a value the vector field closes over is differentiated too
    grad_w = plait.grad(lambda w: ode.odeint(lambda y, t: -w * y, 1.0, pnp.array([0.0, 1.0]))[-1])(0.5)
    assert float(grad_w) == pytest.approx(-np.exp(-0.5), rel=1e-5)
    with pytest.raises(TypeError, match=r"The contents of odeint \*args must be arrays or scalars, but got label\."):
        ode.odeint(lambda y, t, s: y, 1.0, ts, "label")


def test_jet_taylor_coefficients() -> None:
    out, terms = jet.jet(pnp.sin, (1.0,), ((0.5, 0.25, 0.1),))
    x1, x2, x3 = 0.5, 0.25, 0.1
    s, c = np.sin(1.0), np.cos(1.0)
    want = [c * x1, -s * x1 ** 2 + c * x2, -c * x1 ** 3 - 3 * s * x1 * x2 + c * x3]  # Faa di Bruno
    assert float(out) == pytest.approx(s, rel=1e-6)
    np.testing.assert_allclose([float(t) for t in terms], want, rtol=1e-5)
    _, plain = jet.jet(pnp.exp, (0.0,), ((1.0, 0.0, 0.0),), factorial_scaled=False)
    np.testing.assert_allclose([float(t) for t in plain], [1.0, 0.5, 1 / 6], rtol=1e-6)
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet.jet(lambda d: d["a"], ({"a": 1.0},), (({"a": 1.0},),))
    with pytest.raises(ValueError, match="every series must have the same length"):
        jet.jet(lambda x, y: x * y, (1.0, 2.0), ((1.0,), (1.0, 0.0)))
    assert experimental_shard_map.shard_map is plait.shard_map


def test_layouts_are_checked_and_values_pass_through() -> None:
    row_major, col_major = layout.Layout((0, 1)), layout.Layout((1, 0))
    assert col_major == layout.Layout((1, 0)) and col_major.update(major_to_minor=(0, 1)) == row_major
    x = pnp.arange(6.0).reshape(2, 3)
    out = plait.jit(lambda v: layout.with_layout_constraint(v, col_major))(x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="Length of major_to_minor and the rank of the value should match"):
        layout.with_layout_constraint(pnp.ones(3), col_major)
    with pytest.raises(ValueError, match="must be a permutation of the axes"):
        layout.Layout((0, 0))
    assert layout.Format().layout is None and repr(layout.Format(layout.Layout.AUTO).layout) == "AUTO"
    with pytest.raises(TypeError, match="Invalid value received for the layout argument"):
        layout.Format(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Sharding has to be concrete"):
        layout.Format(row_major)
    single = plait.sharding.SingleDeviceSharding(plait.devices()[0])
    assert layout.Format(row_major, single).sharding == single


def test_compilation_cache_set_cache_dir_writes_there(tmp_path: Path) -> None:
    from plait.experimental.compilation_cache import compilation_cache

    before = (plait.config.jax_compilation_cache_dir, plait.config.jax_persistent_cache_min_compile_time_secs)
    try:
        compilation_cache.set_cache_dir(tmp_path / "cache")
        plait.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        assert plait.config.jax_compilation_cache_dir == str(tmp_path / "cache")
        assert float(plait.jit(lambda x: x * 7.0 - 3.0)(2.0)) == 11.0
        assert [p.suffix for p in (tmp_path / "cache").iterdir()] == [".plait-xla"]
        compilation_cache.reset_cache()
        assert plait.config.jax_compilation_cache_dir == str(tmp_path / "cache")
    finally:
        plait.config.update("jax_compilation_cache_dir", before[0])
        plait.config.update("jax_persistent_cache_min_compile_time_secs", before[1])


def test_lax_primitive_objects_are_plaits_primitives() -> None:
    assert plait.lax.stop_gradient_p.name == "stop_gradient" and plait.lax.tanh_p.name == "tanh"
    closed = plait.make_jaxpr(lambda x: plait.lax.stop_gradient(pnp.tanh(x)))(1.0)
    assert [e.primitive for e in closed.jaxpr.eqns] == [plait.lax.tanh_p, plait.lax.stop_gradient_p]
    assert not hasattr(plait.lax, "no_such_primitive_p")
    with pytest.raises(AttributeError, match="plait has no primitive named 'no_such_primitive'"):
        _ = plait.lax.no_such_primitive_p


# --- plait.compat: versions and private paths -----------------------------------------


def _compat(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "plait.compat", str(program)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)


def test_compat_presents_jax_version_and_probes(tmp_path: Path) -> None:
    done = _compat(tmp_path, """
        import jax, jax.sharding, plait
        from jax.version import __version_info__
        print(jax.__version__, jax.__version_info__, plait.__version__ == jax.__version__,
              jax.version.__version__, __version_info__)
        probes = ["AbstractDevice", "get_abstract_mesh", "use_abstract_mesh", "explicit_axes", "no_such_name"]
        print(hasattr(jax.sharding, "AbstractMesh"), [type(hasattr(jax.sharding, n)).__name__ for n in probes])
        print(jax.typing.ArrayLike is plait.typing.ArrayLike, jax.core.Tracer is plait.core.Tracer)
        from jax.ops import segment_sum
        from jax.experimental import checkify
        from jax.experimental.ode import odeint
        print(segment_sum(jax.numpy.ones(3), jax.numpy.array([0, 1, 1]), 2).tolist())
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0.10.2 (0, 10, 2) False 0.10.2 (0, 10, 2)", f"True {['bool'] * 5}", "True True", "[1.0, 2.0]"]


def test_compat_hasattr_is_false_for_a_not_supported_name(tmp_path: Path) -> None:
    done = _compat(tmp_path, """
        import sys, types
        import plait
        fake = types.ModuleType("plait.fake_not_supported")
        def refuse(name):
            if name.startswith("__"):
                raise AttributeError(name)
            raise NotImplementedError(f"plait.fake_not_supported.{name} is not supported: a test")
        fake.__getattr__ = refuse
        sys.modules["plait.fake_not_supported"] = fake
        import jax.fake_not_supported as alias
        print(hasattr(alias, "thing"))
        try:
            alias.thing
        except AttributeError as err:
            print(err)
        import jax.lax
        print(jax.lax.tanh_p is plait.lax.tanh_p)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "False",
        "plait does not have jax.fake_not_supported.thing (JAX's name, looked up in plait.fake_not_supported); "
        "plait.compat never falls back to JAX: plait.fake_not_supported.thing is not supported: a test",
        "True",
    ]


def test_compat_private_table_resolves_every_entry(tmp_path: Path) -> None:
    checks = []
    for path, value in PRIVATE.items():
        if value is MODULE_ONLY:
            checks.append(f"import {path}")
        else:
            module, name = path.rsplit(".", 1)
            checks.append(f"from {module} import {name} as v")
            if not isinstance(value, Live):
                checks.append(f"assert v is _jax_private.PRIVATE[{path!r}], {path!r}")
    source = "import jax\nfrom plait import _jax_private\n" + "\n".join(checks) + "\nprint('resolved', len(_jax_private.PRIVATE))\n"
    source += "print(jax._src.xla_bridge._backends.keys() <= {'cpu'}, jax._src.flatten_util.ravel_pytree([1.0, 2.0])[0].tolist())\n"
    done = _compat(tmp_path, source)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"resolved {len(PRIVATE)}", "True [1.0, 2.0]"]
    assert "jax._src.flatten_util" in private_modules() and "jax._src.state.types" in private_modules()


def test_extended_dtype_base_knows_plaits_key_dtype() -> None:
    assert isinstance(plait.random.key(0).dtype, PRIVATE["jax._src.dtypes.ExtendedDType"])
    assert not isinstance(np.dtype(np.float32), PRIVATE["jax._src.dtypes.ExtendedDType"])
    with pytest.raises(TypeError, match="abstract"):
        PRIVATE["jax._src.dtypes.ExtendedDType"]()


@pytest.mark.parametrize(("source", "error", "says"), [
    ("import jax._src.foo\n", "ModuleNotFoundError",
     "plait does not have jax._src.foo, a private JAX path that plait.compat does not map"),
    ("import jax\njax._src.not_a_name\n", "AttributeError", "plait does not have jax._src.not_a_name"),
    ("from jax._src.flatten_util import nope\n", "ImportError", "plait does not have jax._src.flatten_util.nope"),
    ("import jax.export\n", "ModuleNotFoundError", "plait does not have the module jax.export: not supported"),
    ("import jax\njax.new_ref(1.0)\n", "NotImplementedError",
     "new_ref: not supported: plait has no mutable array references"),
    ("import jax\nfrom jax.experimental import hijax\njax.jit(lambda x: hijax.cur_qdd(x))(1.0)\n",
     "NotImplementedError", "not supported: cur_qdd of a traced value"),
    ("from jax._src.state.types import AbstractRef\nAbstractRef()\n", "NotImplementedError",
     "plait has no mutable array references"),
])
def test_compat_private_paths_fail_clearly(tmp_path: Path, source: str, error: str, says: str) -> None:
    done = _compat(tmp_path, source)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(error) and says in last, done.stderr
