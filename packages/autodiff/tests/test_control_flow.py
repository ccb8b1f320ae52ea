"""Differentiation of cond, while and scan (and fori_loop, map on top of them)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from autodiff_checks import check_all

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_core import lax
from plait_core.primitives.control_flow import cond_p, scan_p, while_p

R = np.random.default_rng(1)


def normal(*shape: int) -> np.ndarray:
    return R.standard_normal(shape)


def _eqn_names(closed: pc.ClosedJaxpr) -> list[str]:
    return [e.primitive.name for e in closed.eqns]


# ---------------------------------------------------------------------------
# cond / switch


def cond_both_ways(x: Any, y: Any) -> Any:
    return lax.cond((x.sum() > 0), lambda a, b: (pnp.sin(a) * b, a + 1.0), lambda a, b: (a * a, b), x, y)


def switch_three(x: Any) -> Any:
    i = pnp.argmax(x).astype(np.int32)
    return lax.switch(i, [lambda v: v * 2.0, lambda v: pnp.exp(v), lambda v: v[::-1] * v], x)


def cond_closure(x: Any) -> Any:
    w = pnp.cos(x)
    return lax.cond(x[0] > 0, lambda: w * x, lambda: w + x)


def cond_integer_operand(x: Any) -> Any:
    n = np.int32(3)
    return lax.cond(x[0] < 10, lambda v, k: v * k, lambda v, k: v - k, x, n)


@pytest.mark.parametrize(
    "f,args",
    [
        (cond_both_ways, (normal(3) + 2, normal(3))),
        (cond_both_ways, (normal(3) - 2, normal(3))),
        (switch_three, (np.array([0.3, 1.5, -0.2]),)),
        (switch_three, (np.array([2.5, 1.5, -0.2]),)),
        (switch_three, (np.array([0.1, 0.5, 0.9]),)),
        (cond_closure, (np.array([0.5, 2.0]),)),
        (cond_closure, (np.array([-0.5, 2.0]),)),
        (cond_integer_operand, (normal(2),)),
    ],
)
def test_cond(f: Any, args: tuple[Any, ...]) -> None:
    check_all(f, args, seed=f.__name__)


def test_cond_jvp_is_a_cond_and_transpose_too() -> None:
    f = lambda x: lax.cond(x > 0, pnp.sin, pnp.cos, x)  # noqa: E731
    jvp_jaxpr = pc.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(np.float32(1.0), np.float32(1.0))
    assert _eqn_names(jvp_jaxpr).count("cond") == 1
    grad_jaxpr = pc.make_jaxpr(ad.grad(f))(np.float32(1.0))
    assert _eqn_names(grad_jaxpr).count("cond") == 2  # the known half now, the transposed half later
    assert cond_p in [e.primitive for e in grad_jaxpr.eqns]


# ---------------------------------------------------------------------------
# scan, fori_loop, map


def scan_cumulative(x: Any, w: Any) -> Any:
    def body(c: Any, xi: Any) -> Any:
        c = pnp.tanh(c * w + xi)
        return c, c * xi

    c, ys = lax.scan(body, pnp.zeros_like(w), x)
    return c.sum() + ys.sum()


def scan_reverse_two_carries(x: Any) -> Any:
    def body(carry: Any, xi: Any) -> Any:
        a, b = carry
        return (a * xi, b + pnp.sin(a)), a * b

    (a, b), ys = lax.scan(body, (np.float64(1.0), np.float64(0.0)), x, reverse=True)
    return a + b + ys.sum()


def scan_constant_carry(x: Any) -> Any:
    def body(c: Any, xi: Any) -> Any:
        return c + 1.0, xi * c

    _, ys = lax.scan(body, np.float64(0.0), x)
    return ys


def scan_no_xs(x: Any) -> Any:
    c, ys = lax.scan(lambda c, _: (c * x, c), np.float64(1.0), None, length=4)
    return c + ys.sum()


def nested_scan(x: Any) -> Any:
    def outer(c: Any, row: Any) -> Any:
        inner_c, _ = lax.scan(lambda d, v: (d * v + c, None), c, row)
        return inner_c, inner_c

    c, ys = lax.scan(outer, np.float64(0.5), x)
    return c + ys.sum()


def fori_static(x: Any) -> Any:
    return lax.fori_loop(0, 4, lambda i, c: c * x + i, np.float64(1.0))


def map_rows(x: Any) -> Any:
    return lax.map(lambda r: (pnp.sin(r) * r).sum(), x)


def scan_with_cond(x: Any) -> Any:
    def body(c: Any, xi: Any) -> Any:
        return lax.cond(xi > 0, lambda: c * xi, lambda: c - xi), c

    c, ys = lax.scan(body, np.float64(1.0), x)
    return c + ys.sum()


@pytest.mark.parametrize(
    "f,args",
    [
        (scan_cumulative, (normal(5, 3), normal(3))),
        (scan_reverse_two_carries, (normal(4),)),
        (scan_constant_carry, (normal(3),)),
        (scan_no_xs, (np.float64(0.7),)),
        (nested_scan, (normal(3, 2) * 0.5,)),
        (fori_static, (np.float64(0.8),)),
        (map_rows, (normal(3, 4),)),
        (scan_with_cond, (np.array([0.5, -1.0, 2.0]),)),
    ],
)
def test_scan(f: Any, args: tuple[Any, ...]) -> None:
    check_all(f, args, seed=f.__name__)


def test_scan_stays_a_scan_in_both_modes() -> None:
    x = np.arange(1, 5, dtype=np.float32)
    f = lambda x: lax.scan(lambda c, v: (c * v, c), np.float32(1.0), x)[0]  # noqa: E731
    jvp_jaxpr = pc.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(x, x)
    assert [e.primitive for e in jvp_jaxpr.eqns if e.primitive is scan_p] == [scan_p]
    grad_jaxpr = pc.make_jaxpr(ad.grad(f))(x)
    scans = [e for e in grad_jaxpr.eqns if e.primitive is scan_p]
    assert len(scans) == 2 and scans[1].params["reverse"] is True
    np.testing.assert_allclose(ad.grad(f)(x), [24, 12, 8, 6])


# ---------------------------------------------------------------------------
# while: forward mode only


def while_power(x: Any) -> Any:
    def body(c: Any) -> Any:
        i, v = c
        return i + 1, v * x

    return lax.while_loop(lambda c: c[0] < 3, body, (0, np.float64(1.0)))[1]


def fori_traced_bounds(x: Any, n: Any) -> Any:
    return lax.fori_loop(0, n, lambda i, c: pnp.sin(c) + x, x)


def test_while_jvp_against_differences() -> None:
    from autodiff_checks import check_jvp

    with pc.enable_x64():
        check_jvp(while_power, (np.float64(1.3),))
        check_jvp(lambda x: fori_traced_bounds(x, np.int64(3)), (np.array([0.2, -0.4]),))


def test_while_jvp_is_a_while_and_linearize_works() -> None:
    jaxpr = pc.make_jaxpr(lambda x, t: ad.jvp(while_power, (x,), (t,)))(np.float32(2.0), np.float32(1.0))
    assert [e.primitive for e in jaxpr.eqns].count(while_p) == 1
    out, f_jvp = ad.linearize(while_power, np.float32(2.0))
    np.testing.assert_allclose(out, 8.0)
    np.testing.assert_allclose(f_jvp(np.float32(1.0)), 12.0)


def test_while_reverse_mode_error() -> None:
    with pytest.raises(ValueError, match=r"reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with traced bounds"):
        ad.grad(while_power)(np.float32(2.0))
