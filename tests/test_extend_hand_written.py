"""A hand-written MLIR lowering whose one operation is ``mlir.emit_python_callback``
(equinox's ``noinline``) runs in plait: under ``jit`` the results are the host
callback's; a token or a sharding is refused as "not supported"."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as jnp
from plait.extend.core import Effect, Primitive
from plait.interpreters import ad, batching, mlir
from plait_core import ShapedArray

X = np.array([0.5, -1.0, 2.0], np.float32)
CALLS: list[tuple[float, ...]] = []


def _host_square_plus(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    CALLS.append(tuple(float(v) for v in x))
    return (x * x + y).astype(np.float32), (x - y).astype(np.float32)


def _callback_rule(ctx: Any, x: Any, y: Any, *, has_side_effect: bool) -> Any:
    assert [a.shape for a in ctx.avals_in] == [(3,), (3,)]
    results, token, keepalive = mlir.emit_python_callback(
        ctx, _host_square_plus, None, [x, y], ctx.avals_in, ctx.avals_out,
        has_side_effect=has_side_effect, sharding=None,
    )  # fmt: skip
    ctx.module_context.add_keepalive(keepalive)
    assert token is None
    return results


def _make(name: str) -> Primitive:
    p = Primitive(name)
    p.multiple_results = True
    p.def_impl(lambda x, y, **_: list(_host_square_plus(np.asarray(x), np.asarray(y))))
    p.def_abstract_eval(lambda x, y, **_: [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape, x.dtype)])
    mlir.register_lowering(p, _callback_rule)
    return p


callback_p = _make("host_square_plus")


@pytest.mark.parametrize("side_effect", [False, True])
def test_a_callback_only_rule_runs_under_jit(side_effect: bool) -> None:
    CALLS.clear()
    y = np.float32(3.0) * np.ones(3, np.float32)
    f = plait.jit(lambda x, y: callback_p.bind(x, y, has_side_effect=side_effect))
    a, b = f(X, y)
    np.testing.assert_allclose(np.asarray(a), X * X + 3.0)
    np.testing.assert_allclose(np.asarray(b), X - 3.0)
    assert [tuple(float(v) for v in X)] == CALLS


def test_the_callback_result_flows_into_the_rest_of_the_program() -> None:
    y = np.ones(3, np.float32)
    out = plait.jit(lambda x: jnp.sum(callback_p.bind(2.0 * x, y, has_side_effect=False)[0]))(X)
    np.testing.assert_allclose(float(out), float(np.sum((2 * X) ** 2 + 1.0)), rtol=1e-6)


class _HostEffect(Effect):
    pass


def test_an_effectful_primitives_side_effecting_callback_runs_even_when_unused() -> None:
    p = Primitive("host_square_plus_effect")
    p.multiple_results = True
    p.def_effectful_abstract_eval(
        lambda x, y, **_: ([ShapedArray(x.shape, x.dtype), ShapedArray(x.shape, x.dtype)], {_HostEffect()})
    )
    mlir.register_lowering(p, _callback_rule)
    CALLS.clear()
    y = np.zeros(3, np.float32)
    out = plait.jit(lambda x: (p.bind(x, y, has_side_effect=True), x + 1)[1])(X)
    np.testing.assert_allclose(np.asarray(out), X + 1)
    assert [tuple(float(v) for v in X)] == CALLS


def test_a_token_or_a_sharding_is_refused() -> None:
    for name, kwargs in [("tokened", {"token": object()}), ("sharded", {"sharding": object()})]:
        p = Primitive(name)
        p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))

        def rule(ctx: Any, x: Any, kwargs: dict[str, Any] = kwargs) -> Any:
            token = kwargs.get("token")
            return mlir.emit_python_callback(
                ctx, lambda v: (v,), token, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False,
                sharding=kwargs.get("sharding"),
            )[0]  # fmt: skip

        mlir.register_lowering(p, rule)
        what = "passes a token" if name == "tokened" else "passes a sharding"
        with pytest.raises(NotImplementedError, match=f"not supported: the hand-written MLIR lowering of the primitive {name} {what}"):
            plait.jit(lambda x, p=p: p.bind(x))(X)


def test_a_callback_returning_the_wrong_number_of_results_is_an_error() -> None:
    p = Primitive("one_of_two")
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, lambda ctx, x: mlir.emit_python_callback(
        ctx, lambda v: (v, v), None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False)[0])
    with pytest.raises(Exception, match=r"must return a sequence of 1 arrays, got tuple of length 2"):
        plait.block_until_ready(plait.jit(lambda x: p.bind(x))(X))


def test_jvp_and_batching_rules_of_the_primitive_still_apply() -> None:
    p = Primitive("host_double")
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, lambda ctx, x: mlir.emit_python_callback(
        ctx, lambda v: (2 * v,), None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False)[0])
    ad.defjvp(p, lambda g, x: 2 * g)
    batching.defvectorized(p)
    grads = plait.jit(plait.vmap(plait.grad(lambda x: p.bind(x) * x)))(X)
    np.testing.assert_allclose(np.asarray(grads), 4 * X, rtol=1e-6)
