"""Numerical checks of derivatives shared by the autodiff tests.

* :func:`check_jvp`: forward mode against central differences (run with x64 on);
* :func:`check_vjp`: reverse mode against forward mode by the dot-product
  test ``<ct, J t> == <J^T ct, t>``;
* :func:`check_linearize`: the linearized function equals the JVP;
* :func:`check_staged`: the same derivatives computed under ``make_jaxpr``
  and evaluated from the jaxpr.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import plait_autodiff as ad
import plait_core as pc
from plait_core.tree_util import tree_flatten, tree_map


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by ``name`` (stable across processes, unlike ``hash``)."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def leaves(x: Any) -> list[np.ndarray]:
    return [np.asarray(v) for v in tree_flatten(x)[0]]


def random_like(x: Any, rng: np.random.Generator) -> Any:
    def one(v: Any) -> Any:
        a = np.asarray(v)
        if np.issubdtype(a.dtype, np.complexfloating):
            return (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(a.dtype)
        return rng.standard_normal(a.shape).astype(a.dtype)

    return tree_map(one, x)


def inner(a: Any, b: Any) -> float:
    return float(sum(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)) for x, y in zip(leaves(a), leaves(b))))


def axpy(alpha: float, t: Any, x: Any) -> Any:
    return tree_map(lambda ti, xi: (np.asarray(xi) + alpha * np.asarray(ti)).astype(np.asarray(xi).dtype), t, x)


def numerical_jvp(f: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any], eps: float) -> Any:
    plus = f(*axpy(eps, tangents, args))
    minus = f(*axpy(-eps, tangents, args))
    return tree_map(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps), plus, minus)


def assert_close(actual: Any, expected: Any, rtol: float, atol: float, what: str) -> None:
    a_leaves, e_leaves = leaves(actual), leaves(expected)
    assert len(a_leaves) == len(e_leaves), what
    for k, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        assert a.shape == e.shape, f"{what}: leaf {k} shape {a.shape} != {e.shape}"
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, err_msg=f"{what}: leaf {k}")


def check_jvp(f: Callable[..., Any], args: Sequence[Any], *, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-6, seed: str = "") -> None:
    """``jvp(f)`` against central differences, for random tangents."""
    rng = rng_for(seed or getattr(f, "__name__", "f"))
    tangents = tuple(random_like(a, rng) for a in args)
    out, t_out = ad.jvp(f, tuple(args), tangents)
    assert_close(out, f(*args), 0, 0, "jvp primal output")
    assert_close(t_out, numerical_jvp(f, args, tangents, eps), rtol, atol, "jvp tangent vs central differences")


def check_vjp(f: Callable[..., Any], args: Sequence[Any], *, rtol: float = 1e-7, atol: float = 1e-9, seed: str = "") -> None:
    """The dot-product test: ``<ct, jvp(t)> == <vjp(ct), t>``."""
    rng = rng_for("vjp" + (seed or getattr(f, "__name__", "f")))
    tangents = tuple(random_like(a, rng) for a in args)
    out, t_out = ad.jvp(f, tuple(args), tangents)
    ct = random_like(out, rng)
    out2, pullback = ad.vjp(f, *args)
    assert_close(out2, out, 0, 0, "vjp primal output")
    cts_in = pullback(ct)
    lhs, rhs = inner(ct, t_out), inner(cts_in, tangents)
    scale = max(1.0, abs(lhs), abs(rhs))
    assert abs(lhs - rhs) <= atol + rtol * scale, f"dot-product test failed: <ct, Jt> = {lhs}, <J^T ct, t> = {rhs}"


def check_linearize(f: Callable[..., Any], args: Sequence[Any], *, seed: str = "") -> None:
    rng = rng_for("lin" + (seed or getattr(f, "__name__", "f")))
    tangents = tuple(random_like(a, rng) for a in args)
    out, t_out = ad.jvp(f, tuple(args), tangents)
    out2, f_jvp = ad.linearize(f, *args)
    assert_close(out2, out, 0, 0, "linearize primal output")
    assert_close(f_jvp(*tangents), t_out, 1e-12, 1e-12, "linearize vs jvp")


def check_staged(f: Callable[..., Any], args: Sequence[Any], *, seed: str = "") -> None:
    """jvp and vjp staged with make_jaxpr, type-checked, evaluated: equal to eager."""
    rng = rng_for("staged" + (seed or getattr(f, "__name__", "f")))
    tangents = tuple(random_like(a, rng) for a in args)
    eager = ad.jvp(f, tuple(args), tangents)

    def jvp_fun(xs: Any, ts: Any) -> Any:
        return ad.jvp(f, tuple(xs), tuple(ts))

    closed = pc.make_jaxpr(jvp_fun)(tuple(args), tangents)
    pc.check_jaxpr(closed)
    flat_in = leaves((tuple(args), tangents))
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, *flat_in)
    assert_close(staged, leaves(eager), 1e-12, 1e-12, "staged jvp")

    ct = random_like(eager[0], rng)

    def vjp_fun(xs: Any, c: Any) -> Any:
        _, pullback = ad.vjp(f, *xs)
        return pullback(c)

    eager_ct = vjp_fun(tuple(args), ct)
    closed = pc.make_jaxpr(vjp_fun)(tuple(args), ct)
    pc.check_jaxpr(closed)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, *leaves((tuple(args), ct)))
    assert_close(staged, leaves(eager_ct), 1e-12, 1e-12, "staged vjp")


def check_all(f: Callable[..., Any], args: Sequence[Any], *, linear_only: bool = False, **tol: Any) -> None:
    """Every check, with x64 on (the arguments should be float64)."""
    with pc.enable_x64():
        args = tuple(args)
        seed = tol.pop("seed", "")
        vjp_rtol = tol.pop("vjp_rtol", 1e-7)
        check_jvp(f, args, seed=seed, **tol)
        check_vjp(f, args, seed=seed, rtol=vjp_rtol)
        check_linearize(f, args, seed=seed)
        check_staged(f, args, seed=seed)
