"""``Primitive.get_bind_params`` as JAX 0.10.2's: an interpreter that walks a jaxpr
and binds each equation again with ``p.bind(*ins, **p.get_bind_params(eqn.params))``
(equinox's ``finalise_eval_jaxpr``) computes what the jaxpr computes, calls, control
flow and custom derivatives included."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core as pc
import plait_core.numpy as pnp
from plait_core import lax
from plait_core.checkpoint import checkpoint
from plait_core.jaxpr import Jaxpr, Literal
from plait_core.lax import named_call
from plait_core.primitives import elementwise


@pc.custom_jvp
def _double(x: Any) -> Any:
    return 2 * x


_double.defjvp(lambda p, t: (_double(p[0]), 2 * t[0]))


@pc.custom_vjp
def _triple(x: Any) -> Any:
    return 3 * x


_triple.defvjp(lambda x: (_triple(x), None), lambda _, g: (3 * g,))


def _program(x: Any) -> Any:
    y = named_call(pnp.sin, name="inner")(x)
    y = checkpoint(pnp.cos)(y)
    y = lax.cond(pnp.sum(x) > 0, pnp.exp, pnp.tanh, y)
    y = lax.fori_loop(0, 3, lambda i, c: c * 1.5, y)
    return _triple(_double(y))


def _rebind(jaxpr: Jaxpr, consts: list[Any], *args: Any) -> list[Any]:
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        params = eqn.primitive.get_bind_params(eqn.params)
        assert type(params) is dict and params == dict(eqn.params) and params is not eqn.params
        out = eqn.primitive.bind(*map(read, eqn.invars), **params)
        for v, o in zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]):
            env[v] = o
    return [read(v) for v in jaxpr.outvars]


def test_rebinding_every_equation_computes_the_program() -> None:
    x = np.array([0.25, -0.5, 1.0], np.float32)
    closed = pc.make_jaxpr(_program)(x)
    names = {e.primitive.name for e in closed.jaxpr.eqns}
    assert {"closed_call", "checkpoint", "cond", "custom_jvp_call", "custom_vjp_call"} <= names, names
    (out,) = _rebind(closed.jaxpr, list(closed.consts), x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(_program(x)), rtol=1e-6)
    expected = 6 * 1.5**3 * np.exp(np.cos(np.sin(x.astype(np.float64))))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)


def test_get_bind_params_copies() -> None:
    params = {"a": 1}
    got = elementwise.sin_p.get_bind_params(params)
    assert got == {"a": 1} and got is not params
