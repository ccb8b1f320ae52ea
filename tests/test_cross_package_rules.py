"""Custom rules survive a transformation from another package applied outside.

Each package tests its own rules by calling them the way the other packages
would (through the staged equation's params); these end-to-end tests apply
the other package's transformation for real, so they live here, where every
package is installed:

* ``vmap`` outside derivatives of a ``custom_vmap`` function uses its rule;
* ``grad`` outside ``vmap`` over piles uses the mapped custom rules;
* ``grad``/``jvp`` and ``vmap`` outside ``mask`` use the masked rules;
* a linearized ``invertible`` program lowers to XLA (``invertible_lin``).

The custom rules are deliberately not the true derivatives (or batching) of
their functions, so a bypassed rule shows.  NumPy is the oracle.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_batching as batching
import plait_core as pc
import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis
from plait_core import ClosedJaxpr, ShapedArray, custom_vmap, lax
from plait_core.primitives.ad_helpers import invertible_lin_p
from plait_core.tree_util import tree_leaves
from plait_dispatch import _jaxlib
from plait_dispatch.lowering import lower_jaxpr
from plait_masking import mask

P = pile_axis
f32 = np.float32
B = 4
SHAPES = [(3,), (2, 3)]


def _data(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape).astype(f32)


# ---------------------------------------------------------------------------
# Functions with custom rules that are not the true ones


def sin_vmap_rule_twice(calls: list[int] | None = None) -> Any:
    """``sin``, whose batching rule computes ``2 sin`` (so a used rule shows)."""
    f = custom_vmap(lambda x: pnp.sin(x))

    def rule(axis_size: int, in_batched: list[bool], x: Any) -> Any:
        if calls is not None:
            calls.append(axis_size)
        return pnp.sin(x) * 2.0, in_batched[0]

    f.def_vmap(rule)
    return f


def sin_vmap_rule_affine(seen: list[Any]) -> Any:
    """``sin``, whose batching rule computes ``2 x + 1`` and records the shapes it saw."""
    f = lax.custom_vmap(lambda x: pnp.sin(x))

    def rule(axis_size: int, in_batched: list[bool], x: Any) -> Any:
        seen.append(x.shape)
        return x * 2.0 + 1.0, in_batched[0]

    f.def_vmap(rule)
    return f


def sin_jvp_rule_thrice() -> Any:
    """``sin``, whose JVP rule gives 3x the true tangent."""
    f = lax.custom_jvp(lambda x: pnp.sin(x))
    f.defjvp(lambda p, t: (pnp.sin(p[0]), t[0] * pnp.cos(p[0]) * 3.0))
    return f


def sin_times_w_vjp() -> Any:
    """``sin(x) * w``, whose VJP rule gives ``5 g cos(x)`` and ``7 sum(g)``."""
    f = lax.custom_vjp(lambda x, w: pnp.sin(x) * w)
    f.defvjp(lambda x, w: (pnp.sin(x) * w, (pnp.cos(x), w)), lambda r, g: (g * r[0] * 5.0, pnp.sum(g) * 7.0))
    return f


def sin_times_sum_vjp() -> Any:
    """``sin(x) * sum(x)``, whose VJP rule gives ``5 g cos(x)``."""
    f = lax.custom_vjp(lambda x: pnp.sin(x) * pnp.sum(x))
    f.defvjp(lambda x: (pnp.sin(x) * pnp.sum(x), (x, pnp.cos(x))), lambda r, g: (g * r[1] * 5.0,))
    return f


def double_ivjp_thrice() -> Any:
    """``2 x``, whose inverse-VJP rule gives ``3 dy`` (not the true VJP, ``2 dy``)."""
    f = lax.custom_ivjp(lambda x: x * 2.0)
    f.defivjp(lambda xs, ys, dys: ((ys / 2.0,), (dys * 3.0,)))
    return f


# ---------------------------------------------------------------------------
# autodiff + batching: vmap outside derivatives of a custom_vmap function


@pytest.mark.parametrize("shape", SHAPES)
def test_vmap_outside_derivatives_uses_the_rule(shape: tuple[int, ...]) -> None:
    calls: list[int] = []
    f = sin_vmap_rule_twice(calls)
    xs, ts = _data((B, *shape), 11), _data((B, *shape), 12)
    primal, tangent = batching.vmap(lambda x, t: ad.jvp(f, (x,), (t,)))(xs, ts)
    np.testing.assert_allclose(primal, 2 * np.sin(xs), rtol=1e-5)
    np.testing.assert_allclose(tangent, 2 * np.cos(xs) * ts, rtol=1e-5)
    g = batching.vmap(ad.grad(lambda v: pnp.sum(f(v))))(xs)
    np.testing.assert_allclose(g, 2 * np.cos(xs), rtol=1e-5)
    scalars = xs.reshape(B, -1)[:, 0]
    gg = batching.vmap(ad.grad(ad.grad(lambda v: pnp.sum(f(v)))))(scalars)
    np.testing.assert_allclose(gg, -2 * np.sin(scalars), rtol=1e-5)
    lin = batching.vmap(lambda x, t: ad.linearize(f, x)[1](t))(xs, ts)
    np.testing.assert_allclose(lin, 2 * np.cos(xs) * ts, rtol=1e-5)
    assert calls and set(calls) == {B}


# ---------------------------------------------------------------------------
# batching + autodiff: grad outside vmap over piles


def test_grad_outside_vmap_over_piles_uses_the_rules() -> None:
    lengths = np.array([2, 4, 3], np.int32)
    data = np.random.default_rng(9).standard_normal((3, 4)).astype(f32)
    keep = np.arange(4)[None] < lengths[:, None]

    def loss(fn: Callable[..., Any], *extra: Any) -> Callable[..., Any]:
        axes = (P, *(None for _ in extra))
        return lambda d, *e: pnp.sum(batching.vmap(lambda v, *a: pnp.sum(fn(v, *a)), in_axes=axes)(Pile(d, lengths), *e))

    np.testing.assert_allclose(ad.grad(loss(sin_jvp_rule_thrice()))(data), 3 * np.cos(data) * keep, rtol=1e-5)
    w = f32(1.5)
    dx, dw = ad.grad(loss(sin_times_w_vjp(), w), argnums=(0, 1))(data, w)
    np.testing.assert_allclose(dx, 5 * np.cos(data) * keep, rtol=1e-5)
    np.testing.assert_allclose(dw, 7 * lengths.sum(), rtol=1e-5)
    np.testing.assert_allclose(ad.grad(loss(pc.invertible(double_ivjp_thrice())))(data), 3.0 * keep, rtol=1e-6)


# ---------------------------------------------------------------------------
# masking + autodiff / batching: transformations outside mask


def test_grad_and_jvp_outside_mask_use_the_rules() -> None:
    x = _data((8,), 5)
    n = 5
    keep = np.arange(8) < n
    jvp_loss = mask(lambda u: pnp.sum(sin_jvp_rule_thrice()(u)), ["n"], "")
    np.testing.assert_allclose(ad.grad(lambda v: jvp_loss([v], {"n": n}))(x), 3 * np.cos(x) * keep, rtol=1e-5)
    _, tangent = ad.jvp(lambda v: jvp_loss([v], {"n": n}), (x,), (np.ones(8, f32),))
    np.testing.assert_allclose(tangent, 3 * np.cos(x[:n]).sum(), rtol=1e-5)
    vjp_loss = mask(lambda u: pnp.sum(sin_times_sum_vjp()(u)), ["n"], "")
    np.testing.assert_allclose(ad.grad(lambda v: vjp_loss([v], {"n": n}))(x), 5 * np.cos(x) * keep, rtol=1e-5)
    inverted = mask(lambda u: double_ivjp_thrice()(u), ["n"], "n")

    def loss(v: Any) -> Any:
        return pnp.sum(lax.invertible(lambda w: inverted([w], {"n": n}))(v))

    np.testing.assert_allclose(ad.grad(loss)(x), 3.0 * keep, rtol=1e-6)


def test_vmap_outside_mask_uses_the_rule() -> None:
    seen: list[Any] = []
    m = mask(sin_vmap_rule_affine(seen), ["n"], "n")

    def g(x: Any, n: Any) -> Any:
        return m([x], {"n": n})

    xb = _data((3, 8), 6)
    out = batching.vmap(lambda v: g(v, np.int32(4)))(xb)
    np.testing.assert_allclose(np.asarray(out)[:, :4], 2 * xb[:, :4] + 1, rtol=1e-6)
    assert len(seen) == 1
    with pytest.raises(NotImplementedError, match=r"gives each element its own logical size \(n\)"):
        batching.vmap(g)(xb, np.array([2, 3, 4], np.int32))


# ---------------------------------------------------------------------------
# dispatch + autodiff: a linearized invertible program on XLA


@contextlib.contextmanager
def numpy_backend() -> Iterator[None]:
    """Evaluate eagerly with core's NumPy implementations (importing
    plait_dispatch makes XLA the eager backend)."""
    prev = pc.set_eager_backend(None)
    try:
        yield
    finally:
        pc.set_eager_backend(prev)


def sample(shape: tuple[int, ...], lo: float = -3.0, hi: float = 3.0, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(f32)


def xla_run(closed: ClosedJaxpr, *args: Any) -> list[np.ndarray]:
    """Lower ``closed`` with ``lower_jaxpr``, compile it with the jaxlib adapter and run it."""
    low = lower_jaxpr(closed)
    dev = _jaxlib.default_device()
    exe = _jaxlib.compile_stablehlo(low.text, dev)
    values = [np.asarray(c) for c in low.const_args]
    values += [np.asarray(a, dtype=av.dtype) for i, (a, av) in enumerate(zip(tree_leaves(args), low.in_avals))
               if i not in low.float0_inputs]
    bufs = [_jaxlib.device_put(v, ShapedArray(v.shape, v.dtype), dev, False) for v in values]
    handlers = [_jaxlib.result_handler(a, dev) for a in low.result_avals]
    assert not low.float0_outputs
    return [_jaxlib.to_numpy(o, a.dtype) for o, a in zip(_jaxlib.execute(exe, bufs, handlers), low.out_avals)]


def test_invertible_lin_with_autodiff() -> None:
    w = sample((3,), 0.5, 2, seed=3)
    f = pc.invertible(lambda x, y: (lax.add(lax.mul(x, w), y), lax.mul(y, 2.0)))
    x, y = sample((3,), seed=1), sample((3,), seed=2)
    tx, ty = sample((3,), seed=4), sample((3,), seed=5)
    with numpy_backend():
        _, f_jvp = ad.linearize(f, x, y)
        closed = pc.make_jaxpr(f_jvp)(tx, ty)
        pc.check_jaxpr(closed)
        want = [np.asarray(r) for r in pc.eval_jaxpr(closed.jaxpr, closed.consts, tx, ty)]
    assert any(e.primitive is invertible_lin_p for e in closed.eqns)
    got = xla_run(closed, tx, ty)
    assert len(got) == len(want) == 2
    for g, v in zip(got, want):
        assert g.dtype == v.dtype and g.shape == v.shape, (g.dtype, g.shape, v.dtype, v.shape)
        np.testing.assert_allclose(g.astype(np.float64), v.astype(np.float64), rtol=1e-5, atol=1e-5)
    # and both are the true tangent of f (w x + y, 2 y)
    np.testing.assert_allclose(want[0], w * tx + ty, rtol=1e-6)
    np.testing.assert_allclose(want[1], 2 * ty, rtol=1e-6)
