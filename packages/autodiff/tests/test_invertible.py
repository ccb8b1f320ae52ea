"""Invertible reverse mode: gradients equal ordinary reverse mode, the backward
pass rebuilds intermediates (visible in its jaxpr), custom_ivjp rules, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_autodiff.invertible import invertible_fallback
from plait_autodiff.rules.invertible import invertible_lin_p
from plait_core import custom_ivjp, invertible, lax
from plait_core.primitives.calls import bind_closed_call, invertible_call_p

R = np.random.default_rng(3)
WIDTH = 4


def make_params(depth: int) -> list[dict[str, np.ndarray]]:
    return [
        {k: (R.standard_normal((WIDTH, WIDTH)) / 2).astype(np.float32) for k in ("f", "g")} for _ in range(depth)
    ]


def revnet(params: list[dict[str, Any]], x1: Any, x2: Any) -> tuple[Any, Any]:
    """A reversible residual stack: y1 = x1 + F(x2); y2 = x2 + G(y1)."""
    for p in params:
        x1 = x1 + pnp.tanh(x2 @ p["f"])
        x2 = x2 + pnp.sin(x1 @ p["g"]) * 0.5
    return x1, x2


def loss_of(stack: Any) -> Any:
    def loss(params: Any, x1: Any, x2: Any) -> Any:
        y1, y2 = stack(params, x1, x2)
        return (y1 * y2).sum() + (y1**2).sum()

    return loss


def inverted_stack(params: Any, x1: Any, x2: Any) -> Any:
    # The parameters are closed over: constants of the invertible function.
    return invertible(lambda a, b: revnet(params, a, b))(x1, x2)


def assert_tree_close(a: Any, b: Any, rtol: float) -> None:
    la, lb = pc.tree_util.tree_leaves(a), pc.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("depth", [8, 32])
def test_revnet_gradients_equal_ordinary_reverse_mode(depth: int) -> None:
    params = make_params(depth)
    x1, x2 = (R.standard_normal((3, WIDTH)).astype(np.float32) / 2 for _ in range(2))
    plain = ad.grad(loss_of(revnet), argnums=(0, 1, 2))(params, x1, x2)
    inv = ad.grad(loss_of(inverted_stack), argnums=(0, 1, 2))(params, x1, x2)
    assert_tree_close(inv, plain, rtol=2e-3)


def test_partial_differentiation_and_pytree_inputs() -> None:
    params = make_params(3)
    x = {"a": R.standard_normal((2, WIDTH)).astype(np.float32), "b": R.standard_normal((2, WIDTH)).astype(np.float32)}

    def plain(p: Any, x: Any) -> Any:
        y1, y2 = revnet(p, x["a"], x["b"])
        return {"y": (y1, y2)}

    def inv(p: Any, x: Any) -> Any:
        return invertible(lambda t: plain(p, t))(x)

    def loss(f: Any) -> Any:
        return lambda p, x: (f(p, x)["y"][0] * f(p, x)["y"][1]).sum()

    assert_tree_close(ad.grad(loss(inv), argnums=1)(params, x), ad.grad(loss(plain), argnums=1)(params, x), 1e-4)
    assert_tree_close(ad.grad(loss(inv), argnums=0)(params, x), ad.grad(loss(plain), argnums=0)(params, x), 1e-4)

    # Only one argument differentiated: the other is rebuilt from the outputs too.
    f = invertible(lambda a, b: revnet(params, a, b))
    g_plain = ad.grad(lambda b: loss_of(revnet)(params, x["a"], b))(x["b"])
    g_inv = ad.grad(lambda b: (lambda y: (y[0] * y[1]).sum() + (y[0] ** 2).sum())(f(x["a"], b)))(x["b"])
    np.testing.assert_allclose(g_inv, g_plain, rtol=1e-4, atol=1e-6)


def test_backward_jaxpr_rebuilds_instead_of_saving() -> None:
    scale = np.float32(1.7)

    def body(x: Any) -> Any:
        return pnp.exp(pnp.exp(x) * scale) + 1.0

    f = invertible(body)
    x = np.array([0.1, -0.4], np.float32)
    closed = pc.make_jaxpr(ad.grad(lambda v: f(v).sum()))(x)
    calls = [e for e in closed.eqns if e.primitive is invertible_call_p]
    assert len(calls) == 1 and len(calls[0].outvars) == 1  # no intermediate leaves the forward call
    names = [e.primitive.name for e in closed.eqns]
    assert "log" in names and "div" in names  # exp and mul inverted
    assert "sub" in names  # the + 1.0 inverted
    expected = np.exp(np.exp(x) * scale) * scale * np.exp(x)
    np.testing.assert_allclose(ad.grad(lambda v: f(v).sum())(x), expected, rtol=1e-5)


@pytest.mark.parametrize("depth", [2, 6])
def test_undifferentiated_inputs_are_rebuilt_not_kept(depth: int) -> None:
    # The training case: gradients with respect to the closed-over parameters
    # only.  The stack's inputs must not become residuals (the backward pass
    # would recompute the whole stack forwards from them, every intermediate
    # live at once): the pullback keeps the weights and the outputs only.
    params = make_params(depth)
    x1, x2 = (R.standard_normal((3, WIDTH)).astype(np.float32) for _ in range(2))
    y1, y2 = revnet(params, x1, x2)
    out, pullback = ad.vjp(lambda p: loss_of(inverted_stack)(p, x1, x2), params)
    linear = pullback.linear
    (lin_eqn,) = [e for e in linear.eqns if e.primitive is invertible_lin_p]
    assert lin_eqn.params["known"] == (True,) * (2 * depth) + (False, False)
    activations = [np.asarray(c) for c in linear.consts if np.shape(c) == x1.shape]
    weights = [c for c in linear.consts if np.shape(c) == (WIDTH, WIDTH)]
    assert len(weights) == 2 * depth and len(linear.consts) == 2 * depth + 3
    # y1 and y2 (the stack's outputs) and 2 * y1 (from the loss's y1 ** 2): no
    # input and no intermediate of the stack, whatever the depth.
    for c, expected in zip(activations, (y1, y2, 2 * y1)):
        np.testing.assert_allclose(c, expected, rtol=1e-6)
    # The backward program rebuilds every block input by a subtraction (but
    # the first x1, which no cotangent needs) and recomputes nothing forwards.
    backward = pc.make_jaxpr(pullback)(np.float32(1.0))
    names = [e.primitive.name for e in backward.eqns]
    # Its only additions are tanh's derivative factors 1 + y (a literal 1), not a block's x1 + f(x2).
    def literal_in(e: Any) -> bool:
        return any(type(v).__name__ == "Literal" for v in e.invars)

    adds = [e for e in backward.eqns if e.primitive.name == "add"]
    rebuilds = [e for e in backward.eqns if e.primitive.name == "sub" and not literal_in(e)]
    assert all(map(literal_in, adds)) and len(adds) <= 2 * depth and len(rebuilds) >= 2 * depth - 1
    # One product per block half to invert, two to transpose (but x2's first, not differentiated).
    assert names.count("dot_general") == 2 * depth + 4 * depth - 1
    plain = ad.vjp(lambda p: loss_of(revnet)(p, x1, x2), params)
    np.testing.assert_allclose(out, plain[0], rtol=1e-5)
    assert_tree_close(pullback(np.float32(1.0)), plain[1](np.float32(1.0)), rtol=2e-3)


def test_only_arguments_the_inversion_needs_are_kept() -> None:
    # s multiplies (it cannot be rebuilt) and z is shifted (it can): with x
    # differentiated, the backward pass keeps s but rebuilds z.
    def body(x: Any, s: Any, z: Any) -> Any:
        return x * s, z + 1.0

    f = invertible(body)
    x, s, z = (R.uniform(0.5, 1.5, 3).astype(np.float32) for _ in range(3))
    _, pullback = ad.vjp(lambda v: (lambda y: (y[0] * y[1]).sum())(f(v, s, z)), x)
    (lin_eqn,) = [e for e in pullback.linear.eqns if e.primitive is invertible_lin_p]
    assert lin_eqn.params["known"] == (False, True, False)
    np.testing.assert_allclose(pullback(np.float32(1.0))[0], s * (z + 1.0), rtol=1e-6)


INVERTIBLE_BODIES = [
    ("exp_log", lambda x: pnp.log(pnp.exp(x) * 2.0 + 1.0)),
    ("tanh_atanh", lambda x: pnp.arctanh(pnp.tanh(x) * 0.5)),
    ("expm1_log1p", lambda x: pnp.log1p(pnp.expm1(x * 0.3))),
    ("odd_powers", lambda x: lax.integer_pow(lax.integer_pow(x * 0.5 + 2.0, -1), 3) * 2.0),
    ("power_five", lambda x: lax.integer_pow(x - 0.5, 5)),
    ("shapes", lambda x: pnp.transpose(pnp.reshape(x, (2, 3)))[::-1] * 3.0),
    ("div_neg", lambda x: -(2.0 / (x + 3.0))),
    ("float_convert", lambda x: (x.astype(np.float32) * 2.0).astype(np.float64)),
]


@pytest.mark.parametrize("name,body", INVERTIBLE_BODIES, ids=[b[0] for b in INVERTIBLE_BODIES])
def test_inverse_rules(name: str, body: Any) -> None:
    with pc.enable_x64():
        x = R.uniform(0.2, 0.9, 6)
        ct = R.standard_normal(np.shape(body(x)))
        plain = ad.vjp(body, x)[1](ct)[0]
        inv = ad.vjp(invertible(body), x)[1](ct)[0]
        np.testing.assert_allclose(inv, plain, rtol=1e-5 if name == "float_convert" else 1e-10)


def test_calls_inside_are_inverted() -> None:
    inner = pc.make_jaxpr(lambda v: [pnp.exp(v) * 3.0])(np.float32(1.0))
    f = invertible(lambda v: bind_closed_call(inner, v + 1.0, name="inner")[0])
    x = np.float32(0.3)
    np.testing.assert_allclose(ad.grad(f)(x), 3 * np.exp(1.3), rtol=1e-6)
    names = [e.primitive.name for e in pc.make_jaxpr(ad.grad(f))(x).eqns]
    assert "log" in names


def test_linearize_of_an_invertible_function() -> None:
    f = invertible(lambda v: pnp.exp(v) * 2.0)
    out, f_jvp = ad.linearize(f, np.float32(0.5))
    np.testing.assert_allclose(out, 2 * np.exp(0.5), rtol=1e-6)
    np.testing.assert_allclose(f_jvp(np.float32(2.0)), 4 * np.exp(0.5), rtol=1e-6)
    np.testing.assert_allclose(ad.jvp(f, (np.float32(0.5),), (np.float32(1.0),))[1], 2 * np.exp(0.5), rtol=1e-6)
    _, lin = ad.api.linearize_flat(lambda v: [f(v)], [np.float32(0.5)])
    assert [e.primitive for e in lin.eqns] == [invertible_lin_p]


def test_custom_ivjp() -> None:
    calls: list[str] = []

    @custom_ivjp
    def double(x: Any) -> Any:
        return x * 2.0

    @double.defivjp
    def _double_ivjp(xs: Any, ys: Any, dys: Any) -> Any:
        calls.append("ivjp")
        return (ys / 2.0,), (dys * 2.0,)

    x = np.float32(1.5)
    # Outside invertible: an ordinary function.
    assert ad.grad(double)(x) == 2.0 and calls == []
    f = invertible(lambda v: pnp.exp(double(v)))
    np.testing.assert_allclose(ad.grad(f)(x), 2 * np.exp(3.0), rtol=1e-6)
    assert calls


KEPT_BODIES = [
    ("reduce_sum", lambda v: (v * v).sum(), lambda v: 2 * v),
    ("square", lambda v: v * v, lambda v: 2 * v),
    ("two_paths", lambda v: pnp.exp(v) - pnp.sin(v), lambda v: np.exp(v) - np.cos(v)),
    ("even_power", lambda v: lax.integer_pow(v, 2), lambda v: 2 * v),
    ("exp_times_x", lambda v: pnp.exp(v) * 4.0 * v, lambda v: 4 * np.exp(v) * (1 + v)),
]


@pytest.mark.parametrize("name,body,grad", KEPT_BODIES, ids=[b[0] for b in KEPT_BODIES])
def test_arguments_the_outputs_do_not_determine_are_kept(name: str, body: Any, grad: Any) -> None:
    # Once an error, now the argument is a residual: the gradient is exact.
    f = invertible(body)
    x = np.array([0.3, -0.7, 1.1], np.float32)
    _, pullback = ad.vjp(lambda v: f(v).sum(), x)
    (lin_eqn,) = [e for e in pullback.linear.eqns if e.primitive is invertible_lin_p]
    assert lin_eqn.params["known"] == (True,)
    np.testing.assert_allclose(pullback(np.float32(1.0))[0], grad(x), rtol=1e-5)


def test_custom_ivjp_without_a_rule_is_an_error() -> None:
    @custom_ivjp
    def no_rule(x: Any) -> Any:
        return x + 1.0

    k = invertible(lambda v: no_rule(v))
    with pytest.raises(AttributeError, match="No inverse-VJP rule is defined for the custom_ivjp function no_rule"):
        ad.grad(lambda v: k(v).sum())(np.ones(2, np.float32))


def test_fallback_to_ordinary_reverse_mode() -> None:
    f = invertible(lambda v: (v * v).sum())
    x = np.array([1.0, 2.0], np.float32)
    with invertible_fallback():
        np.testing.assert_allclose(ad.grad(f)(x), 2 * x)
