"""vmap of the calls family: calls stay calls (``closed_call``, ``checkpoint``,
the invertible call) and compute what a loop computes; the custom-rule calls
keep their rules, batched: evaluating the batched JVP / forward / backward /
inverse rules a transformation would call equals applying the user's rules
element by element; ``custom_vmap`` calls the user's batching rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from batching_checks import arr, check_against_loop

import plait_core as pc
from plait_batching import vmap
from plait_core import lax
from plait_core.primitives.calls import bind_closed_call

f32 = np.float32
rng = np.random.default_rng(0)


def randn(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(f32)


def the_eqn(closed: pc.ClosedJaxpr, name: str) -> pc.JaxprEqn:
    (eqn,) = [e for e in closed.eqns if e.primitive.name == name]
    return eqn


def body(x: Any, y: Any) -> Any:
    return lax.sin(lax.mul(x, y)), lax.reduce_sum(y, (0,))


# ---------------------------------------------------------------------------
# Calls stay calls


def called(x: Any, y: Any) -> Any:
    closed = pc.make_jaxpr(body)(pc.ShapeDtypeStruct((3,), f32), pc.ShapeDtypeStruct((3,), f32))
    return bind_closed_call(closed, x, y, name="body")


LEVELS = [[[0, 0]], [[None, 0]], [[0, None]], [[1, 1]], [[0, 0], [0, None]]]


@pytest.mark.parametrize("levels", LEVELS)
@pytest.mark.parametrize("wrap", ["closed_call", "checkpoint", "invertible"])
def test_calls_match_loop(wrap: str, levels: list[list[int | None]]) -> None:
    fun = {"closed_call": called, "checkpoint": pc.checkpoint(body), "invertible": pc.invertible(body)}[wrap]
    check_against_loop(fun, [arr((3,)), arr((3,))], levels)


@pytest.mark.parametrize(("wrap", "prim"), [("closed_call", "closed_call"), ("checkpoint", "checkpoint"),
                                            ("invertible", "invertible_call")])  # fmt: skip
def test_calls_stay_calls_with_batched_bodies(wrap: str, prim: str) -> None:
    fun = {"closed_call": called, "checkpoint": pc.checkpoint(body), "invertible": pc.invertible(body)}[wrap]
    closed = pc.make_jaxpr(vmap(fun, in_axes=(0, None)))(randn(4, 3), randn(3))
    eqn = the_eqn(closed, prim)
    inner = eqn.params["call_jaxpr" if prim == "closed_call" else "jaxpr"]
    assert [a.str_short() for a in inner.in_avals][-2:] == ["f32[4,3]", "f32[3]"]
    assert [a.str_short() for a in inner.out_avals] == ["f32[4,3]", "f32[]"]  # the second output stays unbatched


def test_a_call_closing_over_a_batched_value() -> None:
    def f(x: Any, y: Any) -> Any:
        return pc.checkpoint(lambda v: lax.mul(v, y))(x)

    check_against_loop(f, [arr((3,)), arr((3,))], [[0, 0]])
    check_against_loop(f, [arr((3,)), arr((3,))], [[None, 0]])


# ---------------------------------------------------------------------------
# custom_jvp


@pc.custom_jvp
def softplus(x: Any) -> Any:
    return lax.log1p(lax.exp(x))


@softplus.defjvp
def _softplus_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return softplus(x), lax.mul(lax.mul(t, lax.logistic(x)), 3.0)  # a deliberately non-standard tangent


def scaled_softplus(x: Any, w: Any) -> Any:
    return lax.mul(softplus(x), w)


def test_custom_jvp_values_and_the_call_stays() -> None:
    check_against_loop(scaled_softplus, [arr((3,)), arr(())], [[0, 0]])
    check_against_loop(scaled_softplus, [arr((3,)), arr(())], [[0, None], [None, 0]])
    closed = pc.make_jaxpr(vmap(softplus))(randn(4, 3))
    assert the_eqn(closed, "custom_jvp_call").params["call_jaxpr"].in_avals[0].shape == (4, 3)


@pytest.mark.parametrize("in_axes", [0, 1])
def test_batched_jvp_rule_equals_the_rule_per_element(in_axes: int) -> None:
    x, t = randn(4, 3), randn(4, 3)
    closed = pc.make_jaxpr(vmap(softplus, in_axes=in_axes))(x if in_axes == 0 else x.T)
    eqn = the_eqn(closed, "custom_jvp_call")
    jj = eqn.params["jvp_jaxpr_fun"]([True] * len(eqn.invars))
    primal, tangent = pc.eval_jaxpr(jj.jaxpr.jaxpr, jj.jaxpr.consts, x, t)
    np.testing.assert_allclose(primal, np.log1p(np.exp(x)), rtol=1e-5)
    np.testing.assert_allclose(tangent, 3 * t / (1 + np.exp(-x)), rtol=1e-5)
    assert jj.out_nonzeros == (True,)


# ---------------------------------------------------------------------------
# custom_vjp


@pc.custom_vjp
def clip_gradient(x: Any, w: Any) -> Any:
    return lax.mul(x, w)


def _clip_fwd(x: Any, w: Any) -> Any:
    return lax.mul(x, w), (x, w)


def _clip_bwd(res: Any, g: Any) -> Any:
    x, w = res
    return lax.clamp(np.float32(-1), lax.mul(g, w), np.float32(1)), lax.mul(g, x)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_values() -> None:
    for levels in ([[0, 0]], [[0, None]], [[None, 0]], [[0, 0], [0, 0]]):
        check_against_loop(clip_gradient, [arr((3,)), arr((3,))], levels)


def test_batched_fwd_and_bwd_equal_the_rules_per_element() -> None:
    x, w, g = randn(5, 3), randn(3), randn(5, 3)
    closed = pc.make_jaxpr(vmap(clip_gradient, in_axes=(0, None)))(x, w)
    eqn = the_eqn(closed, "custom_vjp_call")
    fj = eqn.params["fwd_jaxpr_thunk"]()
    outs = pc.eval_jaxpr(fj.jaxpr.jaxpr, fj.jaxpr.consts, x, w)
    out, res = outs[0], outs[1:]
    np.testing.assert_allclose(out, x * w, rtol=1e-6)
    assert fj.num_res == len(res)
    dx, dw = eqn.params["bwd"](*res, g)
    np.testing.assert_allclose(dx, np.clip(g * w, -1, 1), rtol=1e-6)
    # w was not batched: its cotangent is the sum of the per-element cotangents.
    np.testing.assert_allclose(dw, (g * x).sum(0), rtol=1e-5)


def test_bwd_with_a_zero_output_cotangent() -> None:
    x, w = randn(2, 3), randn(2, 3)
    closed = pc.make_jaxpr(vmap(clip_gradient))(x, w)
    eqn = the_eqn(closed, "custom_vjp_call")
    fj = eqn.params["fwd_jaxpr_thunk"]()
    res = pc.eval_jaxpr(fj.jaxpr.jaxpr, fj.jaxpr.consts, x, w)[1:]
    dx, dw = eqn.params["bwd"](*res, None)
    np.testing.assert_array_equal(dx, np.zeros((2, 3), f32))
    np.testing.assert_array_equal(dw, np.zeros((2, 3), f32))


# ---------------------------------------------------------------------------
# custom_vmap


@pc.custom_vmap
def row_norm(x: Any) -> Any:
    return lax.sqrt(lax.reduce_sum(lax.mul(x, x), (0,)))


calls: list[tuple[Any, Any]] = []


@row_norm.def_vmap
def _row_norm_rule(axis_size: Any, in_batched: Any, x: Any) -> Any:
    calls.append((axis_size, in_batched))
    (b,) = in_batched
    if not b:
        return row_norm(x), False
    return lax.add(lax.sqrt(lax.reduce_sum(lax.mul(x, x), (1,))), 100.0), True  # marked: the rule ran


def test_custom_vmap_calls_the_rule() -> None:
    calls.clear()
    x = randn(4, 3)
    out = vmap(row_norm)(x)
    np.testing.assert_allclose(out, np.linalg.norm(x, axis=1) + 100, rtol=1e-5)
    assert calls == [(4, [True])]


def test_custom_vmap_outside_vmap_computes_the_function() -> None:
    x = randn(3)
    np.testing.assert_allclose(row_norm(x), np.linalg.norm(x), rtol=1e-6)


def test_custom_vmap_with_unbatched_argument_and_nested_vmap() -> None:
    x = randn(3)
    out = vmap(lambda y: lax.add(row_norm(x), y))(randn(2))
    assert out.shape == (2,)
    np.testing.assert_allclose(out - np.asarray(out)[0], np.asarray(out) - np.asarray(out)[0])
    xs = randn(2, 5, 3)
    out = vmap(vmap(row_norm))(xs)
    np.testing.assert_allclose(out, np.linalg.norm(xs, axis=2) + 100, rtol=1e-5)


def test_custom_vmap_under_staging() -> None:
    x = randn(4, 3)
    closed = pc.make_jaxpr(vmap(row_norm))(x)
    pc.check_jaxpr(closed)
    assert "custom_vmap_call" not in [e.primitive.name for e in closed.eqns]
    np.testing.assert_allclose(pc.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], np.linalg.norm(x, axis=1) + 100,
                               rtol=1e-5)  # fmt: skip


def test_custom_vmap_without_a_rule_is_an_error() -> None:
    no_rule = pc.custom_vmap(lambda x: lax.neg(x))
    with pytest.raises(AttributeError, match=r"No batching rule is defined for the custom_vmap function"):
        vmap(no_rule)(randn(3))


def test_custom_vmap_rule_returning_the_wrong_structure() -> None:
    bad = pc.custom_vmap(lambda x: lax.neg(x))
    bad.def_vmap(lambda n, b, x: ((x, x), True))
    with pytest.raises(TypeError, match=r"returned outputs with the structure"):
        vmap(bad)(randn(3))


# ---------------------------------------------------------------------------
# custom_ivjp


@pc.custom_ivjp
def affine(x: Any, w: Any) -> Any:
    return lax.add(lax.mul(x, 2.0), w)


@affine.defivjp
def _affine_ivjp(xs: Any, ys: Any, dys: Any) -> Any:
    _, w = xs
    x = lax.div(lax.sub(ys, w), 2.0)
    return (x, w), (lax.mul(dys, 2.0), dys)


def test_custom_ivjp_values_and_batched_ivjp() -> None:
    check_against_loop(affine, [arr((3,)), arr((3,))], [[0, None]])
    x, w, dy = randn(4, 3), randn(3), randn(4, 3)
    closed = pc.make_jaxpr(vmap(affine, in_axes=(0, None)))(x, w)
    eqn = the_eqn(closed, "custom_ivjp_call")
    y = x * 2 + w
    (rx, rw), (dx, dw) = eqn.params["ivjp"]([None, w], [y], [dy])
    np.testing.assert_allclose(rx, x, rtol=1e-5)
    np.testing.assert_allclose(rw, w)
    np.testing.assert_allclose(dx, 2 * dy, rtol=1e-6)
    np.testing.assert_allclose(dw, dy.sum(0), rtol=1e-5)
