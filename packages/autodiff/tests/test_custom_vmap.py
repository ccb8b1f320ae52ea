"""Derivatives of ``custom_vmap`` functions keep the batching rule.

The JVP of a ``custom_vmap_call`` is a ``custom_vmap_call`` whose rule is the
JVP of the user's rule; ``linearize`` splits it into the original call and a
tangent call; the transpose is a call whose rule is the VJP of the rule.
These tests call those rules the way ``vmap`` does (through the staged
equation's ``rule`` param) and compare with NumPy applied to the *rule*,
which is deliberately not the batched function (``2 sin`` for ``sin``), so
a bypassed rule shows.  Without ``vmap`` the derivatives are the function's.
The end-to-end test with ``vmap`` is in the root ``tests/test_cross_package_rules.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from autodiff_checks import check_all

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_autodiff.rules.custom_vmap import JvpOfRule, VjpOfRule
from plait_core import custom_vmap

SHAPES = [(3,), (2, 3)]
DTYPES = [np.float32, np.float16]
B = 4
rng = np.random.default_rng(11)


def _data(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return rng.uniform(-1.5, 1.5, shape).astype(dtype)


def _tol(dtype: Any) -> dict[str, Any]:
    return {"rtol": 2e-2, "atol": 2e-2} if np.dtype(dtype) == np.float16 else {"rtol": 1e-5, "atol": 1e-6}


def make_f(calls: list[int] | None = None) -> custom_vmap[Any]:
    """``sin``, whose batching rule computes ``2 sin`` (so a used rule shows)."""
    f = custom_vmap(lambda x: pnp.sin(x))

    def rule(axis_size: int, in_batched: list[bool], x: Any) -> Any:
        if calls is not None:
            calls.append(axis_size)
        return pnp.sin(x) * 2.0, in_batched[0]

    f.def_vmap(rule)
    return f


def vmap_eqns(closed: pc.ClosedJaxpr) -> list[pc.JaxprEqn]:
    return [e for e in closed.eqns if e.primitive.name == "custom_vmap_call"]


def _b(x: np.ndarray, batched: bool) -> np.ndarray:
    return x if batched else np.broadcast_to(x, (B, *x.shape))


# ---------------------------------------------------------------------------
# JVP


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("pb", "tb"), [(True, True), (False, True), (True, False)])
def test_jvp_rule_is_the_jvp_of_the_users_rule(shape: tuple[int, ...], dtype: Any, pb: bool, tb: bool) -> None:
    f = make_f()
    closed = pc.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(_data(shape, dtype), _data(shape, dtype))
    pc.check_jaxpr(closed)
    (eqn,) = vmap_eqns(closed)
    rule = eqn.params["rule"]
    assert isinstance(rule, JvpOfRule) and eqn.params["num_consts"] == len(eqn.invars) - 2
    x = _data((B, *shape) if pb else shape, dtype)
    t = _data((B, *shape) if tb else shape, dtype)
    hoisted = [np.zeros(v.aval.shape, v.aval.dtype) for v in eqn.invars[: eqn.params["num_consts"]]]
    outs, out_batched = rule(B, [False] * len(hoisted) + [pb, tb], *hoisted, x, t)
    assert out_batched == [True, True]
    x64, t64 = _b(x, pb).astype(np.float64), _b(t, tb).astype(np.float64)
    np.testing.assert_allclose(outs[0], 2 * np.sin(x64), **_tol(dtype))
    np.testing.assert_allclose(outs[1], 2 * np.cos(x64) * t64, **_tol(dtype))


@pytest.mark.parametrize("shape", SHAPES)
def test_without_vmap_the_derivatives_are_the_functions(shape: tuple[int, ...]) -> None:
    f = make_f()
    x = _data(shape, np.float64)
    check_all(f, (x,), seed="custom_vmap")
    np.testing.assert_allclose(ad.grad(lambda v: pnp.sum(f(v)))(x.astype(np.float32)), np.cos(x), rtol=1e-5)


def test_jvp_call_stays_a_call_under_staging() -> None:
    f = make_f()
    x, t = _data((3,), np.float32), _data((3,), np.float32)
    closed = pc.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(x, t)
    primal, tangent = pc.eval_jaxpr(closed.jaxpr, closed.consts, x, t)
    np.testing.assert_allclose(primal, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(tangent, np.cos(x) * t, rtol=1e-6)
    assert repr(vmap_eqns(closed)[0].params["rule"]) == "jvp_of(vmap_rule(rule))"


# ---------------------------------------------------------------------------
# linearize and transposition


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("pb", "cb"), [(True, True), (False, True), (True, False)])
def test_transpose_rule_is_the_vjp_of_the_users_rule(shape: tuple[int, ...], dtype: Any, pb: bool, cb: bool) -> None:
    f = make_f()
    closed = pc.make_jaxpr(ad.grad(lambda v: pnp.sum(f(v))))(_data(shape, dtype))
    pc.check_jaxpr(closed)
    primal_call, transposed = vmap_eqns(closed)
    assert repr(primal_call.params["rule"]) == "vmap_rule(rule)"  # the original call, for the primal
    rule = transposed.params["rule"]
    assert isinstance(rule, VjpOfRule) and repr(rule) == "vjp_of(tangent_of(vmap_rule(rule)))"
    x = _data((B, *shape) if pb else shape, dtype)
    ct = _data((B, *shape) if cb else shape, dtype)
    nh = transposed.params["num_consts"]
    hoisted = [np.zeros(v.aval.shape, v.aval.dtype) for v in transposed.invars[:nh]]
    outs, out_batched = rule(B, [False] * nh + [pb, cb], *hoisted, x, ct)
    assert out_batched == [True]  # every element has its own cotangent
    x64, c64 = _b(x, pb).astype(np.float64), _b(ct, cb).astype(np.float64)
    np.testing.assert_allclose(outs[0], 2 * np.cos(x64) * c64, **_tol(dtype))


def test_linearize_stages_a_tangent_call_with_the_tangent_rule() -> None:
    f = make_f()
    x, t = _data((3,), np.float32), _data((3,), np.float32)
    out, f_jvp = ad.linearize(f, x)
    np.testing.assert_allclose(out, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(f_jvp(t), np.cos(x) * t, rtol=1e-6)
    closed = pc.make_jaxpr(f_jvp)(t)
    (eqn,) = vmap_eqns(closed)
    rule = eqn.params["rule"]
    assert repr(rule) == "tangent_of(vmap_rule(rule))"
    nh = eqn.params["num_consts"]
    xb, tb = _data((B, 3), np.float32), _data((B, 3), np.float32)
    hoisted = [np.zeros(v.aval.shape, v.aval.dtype) for v in eqn.invars[:nh]]
    outs, out_batched = rule(B, [False] * nh + [True, True], *hoisted, xb, tb)
    assert out_batched == [True]
    np.testing.assert_allclose(outs[0], 2 * np.cos(xb) * tb, rtol=1e-5)


def test_an_integer_argument_has_no_tangent() -> None:
    f = custom_vmap(lambda x, k: pnp.sin(x) * k)
    f.def_vmap(lambda axis_size, in_batched, x, k: (pnp.sin(x) * k * 2.0, True))
    x = _data((3,), np.float32)
    g = ad.grad(lambda v: pnp.sum(f(v, np.int32(3))))(x)
    np.testing.assert_allclose(g, 3 * np.cos(x), rtol=1e-5)


# ---------------------------------------------------------------------------
# Errors


def test_differentiating_a_closed_over_value_is_an_error() -> None:
    x = _data((3,), np.float32)

    def loss(w: Any) -> Any:
        g = custom_vmap(lambda v: pnp.sin(v) * w)
        g.def_vmap(lambda axis_size, in_batched, v: (pnp.sin(v) * w, True))
        return pnp.sum(g(x))

    with pytest.raises(TypeError, match=r"The custom_vmap function <lambda> was differentiated with respect to a value it closes over"):
        ad.grad(loss)(np.float32(2.0))


def test_transposing_with_respect_to_a_closed_over_value_is_an_error() -> None:
    x = _data((3,), np.float32)

    def linear(w: Any) -> Any:
        g = custom_vmap(lambda v: v * w)
        g.def_vmap(lambda axis_size, in_batched, v: (v * w, True))
        return g(x)

    with pytest.raises(ad.NonlinearError, match=r"cannot transpose the custom_vmap function <lambda> with respect to a value it closes over"):
        ad.linear_transpose(linear, np.ones(3, np.float32))(x)


def test_a_rule_given_the_wrong_number_of_operands() -> None:
    f = make_f()
    closed = pc.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(_data((3,), np.float32), _data((3,), np.float32))
    rule = vmap_eqns(closed)[0].params["rule"]
    with pytest.raises(ValueError, match=r"jvp_of\(vmap_rule\(rule\)\): expected 2 operands and as many flags, got 1 operands"):
        rule(B, [True], np.ones((B, 3), np.float32))

