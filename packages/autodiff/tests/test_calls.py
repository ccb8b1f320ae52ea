"""Differentiation of calls: closed_call stays a call, checkpoint recomputes,
custom_jvp and custom_vjp rules are used (with their errors)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from autodiff_checks import check_all

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_autodiff.rules.calls import custom_lin_p
from plait_core import checkpoint, checkpoint_policies, custom_jvp, custom_vjp
from plait_core.primitives.calls import bind_closed_call, checkpoint_p, closed_call_p
from plait_core.primitives.linalg import dot_general_p

R = np.random.default_rng(2)


def prims(closed: pc.ClosedJaxpr) -> list[str]:
    return [e.primitive.name for e in closed.eqns]


def all_prims(closed: pc.ClosedJaxpr | pc.Jaxpr) -> list[str]:
    """Primitive names of a jaxpr and every jaxpr nested in its params."""
    jaxpr = closed.jaxpr if isinstance(closed, pc.ClosedJaxpr) else closed
    out = []
    for e in jaxpr.eqns:
        out.append(e.primitive.name)
        for p in e.params.values():
            for sub in p if isinstance(p, tuple) else (p,):
                if isinstance(sub, (pc.ClosedJaxpr, pc.Jaxpr)):
                    out.extend(all_prims(sub))
    return out


# ---------------------------------------------------------------------------
# closed_call


def _called(f: Any, *example: Any) -> Any:
    inner = pc.make_jaxpr(lambda *xs: [f(*xs)])(*example)
    return lambda *xs: bind_closed_call(inner, *xs, name=getattr(f, "__name__", "f"))[0]


def body(x: Any, y: Any) -> Any:
    return pnp.sin(x) * y + x * x


def test_closed_call_numerics() -> None:
    x, y = R.standard_normal(3), R.standard_normal(3)
    with pc.enable_x64():
        check_all(_called(body, x, y), (x, y), seed="closed_call")


def test_closed_call_stays_a_call_under_jvp_linearize_and_transpose() -> None:
    x = np.array([0.5, 1.0], np.float32)
    f = _called(body, x, x)
    jvp_j = pc.make_jaxpr(lambda a, t: ad.jvp(f, (a, a), (t, t)))(x, x)
    assert prims(jvp_j) == ["closed_call"]
    vjp_j = pc.make_jaxpr(lambda a: ad.grad(lambda v: f(v, v).sum())(a))(x)
    calls = [e for e in vjp_j.eqns if e.primitive is closed_call_p]
    assert len(calls) == 2  # the known half, then the transposed linear half
    assert calls[1].params["name"].startswith("transpose(")
    np.testing.assert_allclose(
        pc.eval_jaxpr(vjp_j.jaxpr, vjp_j.consts, x)[0], np.cos(x) * x + np.sin(x) + 2 * x, rtol=1e-6
    )


def test_nested_calls_and_second_derivative() -> None:
    x = np.float32(0.7)
    inner = _called(lambda v: pnp.sin(v) * v, x)
    outer = _called(lambda v: inner(v) * 2.0, x)
    expected = 2 * (2 * np.cos(0.7) - 0.7 * np.sin(0.7))
    np.testing.assert_allclose(ad.grad(ad.grad(outer))(x), expected, rtol=1e-5)


# ---------------------------------------------------------------------------
# checkpoint


def block(x: Any, w: Any) -> Any:
    return pnp.sin(pnp.tanh(x @ w) @ w)


def test_checkpoint_equals_plain_gradients() -> None:
    x, w = R.standard_normal((2, 3)), R.standard_normal((3, 3))
    plain = ad.grad(lambda x, w: block(x, w).sum(), argnums=(0, 1))(x, w)
    for policy in (None, checkpoint_policies.dots_saveable):
        remat = checkpoint(block, policy=policy)
        got = ad.grad(lambda x, w, remat=remat: remat(x, w).sum(), argnums=(0, 1))(x, w)
        for a, b in zip(got, plain):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    with pc.enable_x64():
        check_all(checkpoint(block), (x, w), seed="checkpoint")


def test_checkpoint_recomputation_is_visible() -> None:
    x, w = np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)
    loss = lambda f: lambda x, w: f(x, w).sum()  # noqa: E731
    saved_nothing = pc.make_jaxpr(ad.grad(loss(checkpoint(block))))(x, w)
    backward = [e for e in saved_nothing.eqns if e.primitive is checkpoint_p]
    assert len(backward) == 1 and backward[0].params["differentiated"] is True
    inside = all_prims(backward[0].params["jaxpr"])
    assert inside.count("tanh") == 1 and inside.count("dot_general") >= 3  # recomputed forward dots, then transposes
    saved_dots = pc.make_jaxpr(ad.grad(loss(checkpoint(block, policy=checkpoint_policies.dots_saveable))))(x, w)
    backward = [e for e in saved_dots.eqns if e.primitive is checkpoint_p]
    inside = all_prims(backward[0].params["jaxpr"])
    assert "tanh" in inside  # recomputed from the saved dot
    assert inside.count("dot_general") == sum(1 for e in backward[0].params["jaxpr"].eqns if e.primitive is dot_general_p)
    assert inside.count("dot_general") < all_prims(pc.make_jaxpr(ad.grad(loss(checkpoint(block))))(x, w)).count("dot_general")


# ---------------------------------------------------------------------------
# custom_jvp


@custom_jvp
def clipped_sin(x: Any) -> Any:
    return pnp.sin(x)


@clipped_sin.defjvp
def _clipped_sin_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return pnp.sin(x), pnp.clip(pnp.cos(x), -0.5, 0.5) * t


def test_custom_jvp_rule_is_used_in_both_modes() -> None:
    x = np.array([0.1, 1.2, 3.0], np.float32)
    expected = np.clip(np.cos(x), -0.5, 0.5)
    np.testing.assert_allclose(ad.jvp(clipped_sin, (x,), (np.ones(3, np.float32),))[1], expected, rtol=1e-6)
    np.testing.assert_allclose(ad.grad(lambda v: clipped_sin(v).sum())(x), expected, rtol=1e-6)
    np.testing.assert_allclose(clipped_sin(x), np.sin(x), rtol=1e-6)


def test_custom_jvp_defjvps_nondiff_and_kwargs() -> None:
    @custom_jvp
    def scaled(x: Any, y: Any) -> Any:
        return x * y

    scaled.defjvps(lambda g, ans, x, y: g * 10.0, lambda g, ans, x, y: g * 100.0)
    gx, gy = ad.grad(scaled, argnums=(0, 1))(np.float32(2.0), np.float32(3.0))
    assert (gx, gy) == (10.0, 100.0)
    assert ad.grad(lambda y: scaled(np.float32(1.0), y=y))(np.float32(2.0)) == 100.0

    def fn(n: int, x: Any) -> Any:
        return x**n

    power = custom_jvp(fn, nondiff_argnums=(0,))
    power.defjvp(lambda n, p, t: (p[0] ** n, n * p[0] ** (n - 1) * t[0] * 2.0))
    assert ad.grad(power, argnums=1)(3, np.float32(2.0)) == 24.0


def test_custom_jvp_symbolic_zeros() -> None:
    seen: list[Any] = []

    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return x * y

    def rule(primals: Any, tangents: Any) -> Any:
        seen.append(tangents)
        x, y = primals
        tx, ty = tangents
        out = x * y
        terms = [t for t in (None if type(tx).__name__ == "SymbolicZero" else tx * y,
                             None if type(ty).__name__ == "SymbolicZero" else x * ty) if t is not None]
        return out, terms[0] if len(terms) == 1 else terms[0] + terms[1]

    f.defjvp(rule, symbolic_zeros=True)
    assert ad.grad(f)(np.float32(2.0), np.float32(5.0)) == 5.0
    assert type(seen[-1][1]).__name__ == "SymbolicZero"


def test_custom_jvp_errors() -> None:
    @custom_jvp
    def no_rule(x: Any) -> Any:
        return x * 2

    with pytest.raises(AttributeError, match="No JVP rule is defined for the custom_jvp function no_rule"):
        ad.grad(no_rule)(np.float32(1.0))

    @custom_jvp
    def bad(x: Any) -> Any:
        return x * 2

    bad.defjvp(lambda p, t: (p[0] * 2, (t[0], t[0])))
    with pytest.raises(TypeError, match="custom_jvp rule <lambda> of bad: the tangent output has the structure"):
        ad.jvp(bad, (np.float32(1.0),), (np.float32(1.0),))

    bad.defjvp(lambda p, t: (p[0] * 2, pnp.zeros(3)))
    with pytest.raises(TypeError, match="tangent output leaf 0 has type f32\\[3\\], expected the shape of f32\\[\\]"):
        ad.jvp(bad, (np.float32(1.0),), (np.float32(1.0),))

    def kwonly(x: Any, *, scale: Any) -> Any:
        return x * scale

    f = custom_jvp(kwonly)
    f.defjvp(lambda p, t: (p[0], t[0]))
    with pytest.raises(TypeError, match="keyword-only argument"):
        ad.grad(lambda x: f(x, scale=2.0))(np.float32(1.0))

    y = np.float32(3.0)

    def closes(x: Any) -> Any:
        @custom_jvp
        def g(v: Any) -> Any:
            return v * x

        g.defjvp(lambda p, t: (p[0] * x, t[0] * x))
        return g(y)

    with pytest.raises(TypeError, match="differentiated with respect to a value it closes over"):
        ad.grad(closes)(np.float32(2.0))


# ---------------------------------------------------------------------------
# custom_vjp


@custom_vjp
def safe_log(x: Any) -> Any:
    return pnp.log(x)


def _safe_log_fwd(x: Any) -> Any:
    return pnp.log(x), x


def _safe_log_bwd(x: Any, g: Any) -> Any:
    return (g / pnp.maximum(x, 1.0),)


safe_log.defvjp(_safe_log_fwd, _safe_log_bwd)


def test_custom_vjp_rule_is_used() -> None:
    x = np.array([0.5, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(ad.grad(lambda v: safe_log(v).sum())(x), 1 / np.maximum(x, 1.0), rtol=1e-6)
    np.testing.assert_allclose(ad.grad(lambda v: (safe_log(v) * v).sum())(x), x / np.maximum(x, 1) + np.log(x), rtol=1e-6)
    jaxpr = pc.make_jaxpr(lambda v: ad.vjp(safe_log, v)[1](v))(x)
    pc.check_jaxpr(jaxpr)


def test_custom_vjp_linearized_program_holds_custom_lin() -> None:
    from plait_autodiff.api import linearize_flat

    _, linear = linearize_flat(lambda v: [safe_log(v)], [np.float32(2.0)])
    assert prims(linear) == ["custom_lin"]
    assert linear.eqns[0].primitive is custom_lin_p


def test_custom_vjp_nondiff_and_pytrees() -> None:
    def fn(scale: float, p: dict[str, Any]) -> Any:
        return p["a"] * p["b"] * scale

    f = custom_vjp(fn, nondiff_argnums=(0,))
    f.defvjp(lambda s, p: (fn(s, p), (p["a"], p["b"])), lambda s, res, g: ({"a": g * res[1] * s, "b": None},))
    g = ad.grad(lambda p: f(2.0, p))({"a": np.float32(3.0), "b": np.float32(5.0)})
    assert g["a"] == 10.0 and g["b"] == 0.0


def test_custom_vjp_second_order_through_bwd() -> None:
    @custom_vjp
    def cube(x: Any) -> Any:
        return x**3

    cube.defvjp(lambda x: (x**3, x), lambda x, g: (3 * x * x * g,))
    assert ad.grad(ad.grad(cube))(np.float32(2.0)) == 12.0


def test_custom_vjp_errors() -> None:
    with pytest.raises(TypeError, match="can't apply forward-mode differentiation \\(jvp\\) to a custom_vjp function"):
        ad.jvp(safe_log, (np.float32(1.0),), (np.float32(1.0),))

    @custom_vjp
    def f(x: Any) -> Any:
        return x * 2

    with pytest.raises(AttributeError, match="No VJP rules are defined for the custom_vjp function f"):
        ad.grad(f)(np.float32(1.0))
    f.defvjp(lambda x: (x * 2, None), lambda r, g: (g, g))
    with pytest.raises(TypeError, match="custom_vjp bwd rule <lambda> of f must return a tuple with one cotangent per differentiable argument"):
        ad.grad(f)(np.float32(1.0))
    f.defvjp(lambda x: ((x, x), None), lambda r, g: (g,))
    # Staged (under jit), the forward rule's output is checked against the function's;
    # outside jit the rule runs alone, as in JAX, and grad sees its pair.
    with pytest.raises(TypeError, match="custom_vjp fwd rule <lambda> of f returned an output with the structure"):
        pc.make_jaxpr(ad.grad(f))(np.float32(1.0))
    with pytest.raises(TypeError, match="grad: the function must return a scalar array, got a tuple of length 2"):
        ad.grad(f)(np.float32(1.0))
    f.defvjp(lambda x: (x * 2, None), lambda r, g: (pnp.ones(3),))
    with pytest.raises(ValueError, match="cotangent leaf 0 of argument 0 has type f32\\[3\\], expected the shape of f32\\[\\]"):
        ad.grad(f)(np.float32(1.0))


def test_custom_vjp_symbolic_zeros_and_kwargs() -> None:
    seen: dict[str, Any] = {}

    def fn(x: Any, y: Any, scale: float = 1.0) -> Any:
        return x * y * scale, x

    f = custom_vjp(fn)

    def fwd(x: Any, y: Any, scale: Any) -> Any:
        seen["perturbed"] = (x.perturbed, y.perturbed, scale.perturbed)
        return fn(x.value, y.value, scale.value), (x.value, y.value, scale.value)

    def bwd(res: Any, g: Any) -> Any:
        seen["g"] = g
        _x, y, scale = res
        return g[0] * y * scale, None, None

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    gx = ad.grad(lambda x: f(x, np.float32(3.0), scale=2.0)[0])(np.float32(2.0))
    assert gx == 6.0
    assert seen["perturbed"] == (True, False, False)
    assert type(seen["g"][1]).__name__ == "SymbolicZero"


def test_custom_vjp_optimize_remat_evaluates_fwd_once() -> None:
    def make(optimize: bool) -> Any:
        @custom_vjp
        def f(x: Any) -> Any:
            return pnp.sin(x)

        f.defvjp(lambda x: (pnp.sin(x), pnp.cosh(x)), lambda r, g: (g * r,), optimize_remat=optimize)
        return f

    for optimize in (False, True):
        f = make(optimize)
        g = checkpoint(lambda x, f=f: f(x) * 2.0)
        closed = pc.make_jaxpr(ad.grad(g))(np.float32(0.3))
        assert all_prims(closed).count("cosh") == 1  # only where the backward pass needs the residual
        assert "cosh" not in prims(closed)  # not in the forward pass
        np.testing.assert_allclose(ad.grad(g)(np.float32(0.3)), 2 * np.cosh(0.3), rtol=1e-6)


def test_custom_vjp_bwd_dtype_error() -> None:
    @custom_vjp
    def f(x: Any) -> Any:
        return x * 2

    f.defvjp(lambda x: (x * 2, None), lambda r, g: (np.int32(1),))
    with pytest.raises(TypeError, match=r"custom_vjp bwd rule <lambda> of f: cotangent leaf 0 of argument 0 has dtype int32 \(i32\[\]\), expected f32\[\]"):
        ad.grad(f)(np.float32(1.0))


def test_custom_vmap_call_differentiates_its_function() -> None:
    from plait_core import custom_vmap

    @custom_vmap
    def f(x: Any) -> Any:
        return pnp.sin(x) * x

    f.def_vmap(lambda axis_size, in_batched, x: (pnp.sin(x) * x, in_batched[0]))
    x = np.float32(0.7)
    np.testing.assert_allclose(ad.grad(f)(x), np.cos(0.7) * 0.7 + np.sin(0.7), rtol=1e-6)


def test_custom_rules_run_python_on_concrete_values_outside_jit() -> None:
    """As JAX: differentiated outside jit, a custom_jvp rule and a custom_vjp
    forward rule see concrete primal values, so Python branches on them work;
    staged (make_jaxpr, jit) they are traced and such a branch is an error."""

    @custom_jvp
    def f(x: Any) -> Any:
        return pnp.sin(x) if x > 0 else x

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return (f(x), pnp.cos(x) * t) if x > 0 else (f(x), 3.0 * t)

    np.testing.assert_allclose(ad.grad(f)(np.float32(1.0)), np.cos(1.0), rtol=1e-6)
    assert ad.grad(f)(np.float32(-1.0)) == 3.0
    assert ad.jvp(f, (np.float32(-2.0),), (np.float32(2.0),)) == (-2.0, 6.0)
    np.testing.assert_allclose(ad.grad(ad.grad(f))(np.float32(0.5)), -np.sin(0.5), rtol=1e-6)
    with pytest.raises(pc.ConcretizationTypeError, match=r"bool\(\) needs a concrete value"):
        pc.make_jaxpr(ad.grad(f))(np.float32(1.0))

    @custom_vjp
    def g(x: Any, scale: float) -> Any:
        return x * scale if x > 0 else x

    def g_fwd(x: Any, scale: float) -> Any:
        return g(x, scale), (x, scale)

    def g_bwd(res: Any, ct: Any) -> Any:
        x, scale = res
        return (ct * (scale if x > 0 else 1.0), None)

    g.defvjp(g_fwd, g_bwd)
    assert ad.grad(g)(np.float32(1.0), np.float32(3.0)) == 3.0
    assert ad.grad(g)(np.float32(-1.0), np.float32(3.0)) == 1.0
    assert ad.grad(lambda x: g(x, np.float32(5.0)) * x)(np.float32(2.0)) == 20.0
