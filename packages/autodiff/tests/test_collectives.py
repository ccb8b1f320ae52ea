"""Rules of the named-axis collectives.

Collectives only have a meaning under a transformation that maps an axis
(batching, another package), so these tests stage the derivatives with
``make_jaxpr(..., axis_env=...)`` and run the staged program with a small
lock-step evaluator: one environment per position of the axis, collectives
combining the positions.  Derivatives are checked against central
differences of the same evaluator, and reverse mode against forward mode by
the dot-product test (summed over the positions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_core import lax
from plait_core.primitives import collectives as co

AXIS, SIZE = "i", 3


def run_spmd(closed: pc.ClosedJaxpr, lanes: list[list[Any]]) -> list[list[Any]]:
    """Evaluate a flat jaxpr at every position of the axis at once."""
    jaxpr = closed.jaxpr
    envs: list[dict[Any, Any]] = []
    for args in lanes:
        env = dict(zip(jaxpr.constvars, closed.consts))
        env.update(zip(jaxpr.invars, args))
        envs.append(env)

    def read(env: dict[Any, Any], a: Any) -> Any:
        return a.val if isinstance(a, pc.Literal) else env[a]

    for eqn in jaxpr.eqns:
        ins = [[read(env, a) for a in eqn.invars] for env in envs]
        p, params = eqn.primitive, eqn.params
        if p in (co.psum_p, co.pmean_p, co.pmax_p, co.pmin_p):
            values = np.stack([np.asarray(i[0]) for i in ins])
            combine = {co.psum_p: np.sum, co.pmean_p: np.mean, co.pmax_p: np.max, co.pmin_p: np.min}[p]
            outs = [combine(values, axis=0).astype(eqn.outvars[0].aval.dtype)] * len(envs)
        elif p is co.all_gather_p:
            values = [np.asarray(i[0]) for i in ins]
            gathered = np.concatenate(values, params["axis"]) if params["tiled"] else np.stack(values, params["axis"])
            outs = [gathered] * len(envs)
        elif p is co.axis_index_p:
            outs = [np.int32(k) for k in range(len(envs))]
        else:
            outs = [p.impl(*[np.asarray(x) for x in i], **params) for i in ins]
        for env, out in zip(envs, outs):
            if p.multiple_results:
                env.update(zip(eqn.outvars, out))
            else:
                env[eqn.outvars[0]] = out
    return [[read(env, a) for a in jaxpr.outvars] for env in envs]


def staged(fun: Callable[..., Any], *example: Any) -> pc.ClosedJaxpr:
    return pc.make_jaxpr(fun, axis_env=[(AXIS, SIZE)])(*example)


def check(closed: pc.ClosedJaxpr) -> None:
    with pc.extend_axis_env([(AXIS, SIZE)]):
        pc.check_jaxpr(closed)


def spmd_function(f: Callable[[Any], Any], x: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    closed = staged(lambda v: [f(v)], x[0])
    return lambda xs: np.stack([np.asarray(o[0]) for o in run_spmd(closed, [[v] for v in xs])])


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("psum", lambda v: pnp.sin(lax.psum(v * v, AXIS))),
    ("pmean", lambda v: lax.pmean(pnp.exp(v), AXIS) * v),
    ("pmax", lambda v: lax.pmax(v, AXIS) * v),
    ("pmin", lambda v: lax.pmin(pnp.sin(v), AXIS) + v),
    ("all_gather", lambda v: (lax.all_gather(v, AXIS) * pnp.arange(3.0)[:, None]).sum(0) * v),
    ("all_gather_tiled", lambda v: lax.all_gather(v * v, AXIS, tiled=True)[1:4] * 2.0),
    ("axis_index", lambda v: v * lax.axis_index(AXIS).astype(np.float64)),
]


@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_collective_derivatives(name: str, f: Callable[[Any], Any]) -> None:
    with pc.enable_x64():
        rng = np.random.default_rng(7)
        xs = rng.standard_normal((SIZE, 3))
        ts = rng.standard_normal((SIZE, 3))
        g = spmd_function(f, xs)
        jvp_closed = staged(lambda x, t: ad.jvp(f, (x,), (t,)), xs[0], ts[0])
        check(jvp_closed)
        results = run_spmd(jvp_closed, [[x, t] for x, t in zip(xs, ts)])
        outs = np.stack([np.asarray(r[0]) for r in results])
        t_outs = np.stack([np.asarray(r[1]) for r in results])
        np.testing.assert_allclose(outs, g(xs), rtol=1e-12)
        eps = 1e-6
        numeric = (g(xs + eps * ts) - g(xs - eps * ts)) / (2 * eps)
        np.testing.assert_allclose(t_outs, numeric, rtol=1e-5, atol=1e-7)

        cts = rng.standard_normal(outs.shape)
        vjp_closed = staged(lambda x, c: ad.vjp(f, x)[1](c)[0], xs[0], cts[0])
        check(vjp_closed)
        x_cts = np.stack([np.asarray(r[0]) for r in run_spmd(vjp_closed, [[x, c] for x, c in zip(xs, cts)])])
        np.testing.assert_allclose(np.sum(x_cts * ts), np.sum(cts * t_outs), rtol=1e-10)


def test_psum_transpose_is_psum() -> None:
    closed = staged(lambda x: ad.grad(lambda v: lax.psum(v, AXIS).sum())(x), np.ones(2, np.float32))
    assert "psum" in [e.primitive.name for e in closed.eqns]
