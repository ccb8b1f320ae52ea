"""custom_jvp, custom_vjp, custom_vmap and custom_ivjp front-ends: eager and
staged values against NumPy, keyword resolution, the params protocol the
interpreters use (jvp_jaxpr_fun, fwd_jaxpr_thunk, bwd, the vmap rule, the
ivjp rule) and every error a user can cause."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import dtypes, lax
from plait_core.abstract import ShapedArray
from plait_core.custom_batching import CustomVmapRule, custom_vmap, custom_vmap_rule_missing_error
from plait_core.custom_derivatives import (
    CustomVJPPrimal,
    FwdJaxpr,
    JvpJaxpr,
    SymbolicZero,
    custom_jvp,
    custom_vjp,
    tangent_aval,
)
from plait_core.invertible import IvjpRule, custom_ivjp, custom_ivjp_rule_missing_error
from plait_core.jaxpr import ClosedJaxpr, JaxprEqn
from plait_core.primitives.calls import (
    custom_ivjp_call_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
    custom_vmap_call_p,
)
from plait_core.tree_util import PyTreeDef

FLOATS = [dtypes.float32, dtypes.float16, dtypes.bfloat16]
SHAPES = [(), (3,), (2, 3)]


def _x(shape: tuple[int, ...], dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.2, 1.5, shape).astype(dtype)


def _close(actual: Any, expected: Any) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
    tol = 2e-2 if a.dtype.itemsize == 2 else 1e-6
    np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=tol, atol=tol)


def _only_eqn(closed: ClosedJaxpr) -> JaxprEqn:
    (eqn,) = closed.eqns
    return eqn


def _run(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return pc.eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ---------------------------------------------------------------------------
# custom_jvp: values and staging


def _make_sin_times() -> custom_jvp[Any]:
    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(lax.sin(x), y)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        x, y = primals
        xd, yd = tangents
        return f(x, y), lax.add(lax.mul(lax.mul(lax.cos(x), xd), y), lax.mul(lax.sin(x), yd))

    return f


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_custom_jvp_eager_staged_numpy(shape: tuple[int, ...], dtype: Any) -> None:
    f = _make_sin_times()
    x, y = _x(shape, dtype, 1), _x(shape, dtype, 2)
    expected = (np.sin(x.astype(np.float32)) * y.astype(np.float32)).astype(dtype)
    _close(f(x, y), expected)
    closed = pc.make_jaxpr(f)(x, y)
    pc.check_jaxpr(closed)
    _close(_run(closed, x, y)[0], expected)
    eqn = _only_eqn(closed)
    assert eqn.primitive is custom_jvp_call_p
    p = eqn.params
    assert isinstance(p["call_jaxpr"], ClosedJaxpr) and p["call_jaxpr"].consts == []
    assert callable(p["jvp_jaxpr_fun"]) and p["num_consts"] == 0 and p["symbolic_zeros"] is False
    hash(p["jvp_jaxpr_fun"])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_jvp_jaxpr_fun_computes_the_rule(dtype: Any) -> None:
    f = _make_sin_times()
    x, y = _x((3,), dtype, 3), _x((3,), dtype, 4)
    xd, yd = _x((3,), dtype, 5), _x((3,), dtype, 6)
    fun = _only_eqn(pc.make_jaxpr(f)(x, y)).params["jvp_jaxpr_fun"]
    both = fun((True, True))
    assert isinstance(both, JvpJaxpr) and both.out_nonzeros == (True,)
    pc.check_jaxpr(both.jaxpr)
    out, tan = _run(both.jaxpr, x, y, xd, yd)
    xf, yf, xdf, ydf = (v.astype(np.float32) for v in (x, y, xd, yd))
    _close(out, (np.sin(xf) * yf).astype(dtype))
    _close(tan, (np.cos(xf) * xdf * yf + np.sin(xf) * ydf).astype(dtype))
    only_x = fun((True, False))
    assert [a.str_short() for a in only_x.jaxpr.in_avals] == [ShapedArray((3,), dtype).str_short()] * 3
    _, tan_x = _run(only_x.jaxpr, x, y, xd)
    _close(tan_x, (np.cos(xf) * xdf * yf).astype(dtype))
    assert fun((True, False)) is only_x  # memoized


def test_custom_jvp_pytrees_kwargs_and_defaults() -> None:
    @custom_jvp
    def f(d: dict[str, Any], scale: Any = 2.0) -> tuple[Any, dict[str, Any]]:
        s = lax.add(d["a"], d["b"])
        return s, {"scaled": lax.mul(s, scale)}

    f.defjvp(lambda p, t: (f(*p), f(t[0], p[1])))
    a, b = _x((2,), seed=1), _x((2,), seed=2)
    s, d = f({"a": a, "b": b})
    _close(s, a + b)
    _close(d["scaled"], (a + b) * np.float32(2))
    _, d2 = f(scale=np.float32(3), d={"a": a, "b": b})
    _close(d2["scaled"], (a + b) * np.float32(3))
    closed = pc.make_jaxpr(lambda u, v: f({"a": u, "b": v}))(a, b)
    eqn = _only_eqn(closed)
    assert len(eqn.invars) == 3  # a, b and the default scale
    outs = _run(closed, a, b)
    _close(outs[0], a + b)
    _close(outs[1], (a + b) * np.float32(2))
    r = eqn.params["jvp_jaxpr_fun"]((True, True, False))
    assert r.out_nonzeros == (True, True)
    *_, t_s, t_d = _run(r.jaxpr, a, b, np.float32(2), np.ones(2, np.float32), np.ones(2, np.float32))
    _close(t_s, np.full(2, 2, np.float32))
    _close(t_d, np.full(2, 4, np.float32))


def test_custom_jvp_keyword_errors() -> None:
    @custom_jvp
    def f(x: Any, *, power: int = 2) -> Any:
        return lax.mul(x, x)

    x = _x((2,))
    _close(f(x), x * x)  # a keyword-only argument left at its default is fine
    with pytest.raises(TypeError, match="custom_jvp function f was called with the keyword-only argument"):
        f(x, power=3)
    with pytest.raises(TypeError, match="custom_jvp functions can't take keyword-only arguments"):
        pc.make_jaxpr(lambda v: f(v, power=3))(x)
    with pytest.raises(TypeError, match="custom_jvp function f: missing a required argument: 'x'"):
        f()
    with pytest.raises(TypeError, match="custom_jvp function f: too many positional arguments"):
        f(x, x)


def test_custom_jvp_caches_staging() -> None:
    count = []

    @custom_jvp
    def f(x: Any) -> Any:
        count.append(1)
        return lax.sin(x)

    x = _x((3,))
    j1 = pc.make_jaxpr(f)(x)
    j2 = pc.make_jaxpr(f)(x + 1)
    assert len(count) == 1 and j1.eqns[0].params["call_jaxpr"] is j2.eqns[0].params["call_jaxpr"]
    pc.make_jaxpr(f)(x.astype(np.float16))
    assert len(count) == 2
    f(x)  # eager: runs fun directly
    assert len(count) == 3


def test_custom_jvp_eager_runs_python_control_flow() -> None:
    @custom_jvp
    def f(x: Any) -> Any:
        return lax.neg(x) if float(np.sum(x)) < 0 else x

    x = _x((3,))
    _close(f(x), x)
    _close(f(-x), x)


def test_custom_jvp_symbolic_zeros() -> None:
    seen: list[Any] = []

    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(x, y)

    def f_jvp(primals: Any, tangents: Any) -> Any:
        seen.append(tangents)
        x, y = primals
        xd, yd = tangents
        if isinstance(yd, SymbolicZero):
            return f(x, y), lax.mul(xd, y)
        return f(x, y), lax.add(lax.mul(xd, y), lax.mul(x, yd))

    f.defjvp(f_jvp, symbolic_zeros=True)
    x, y, xd = _x((2,), seed=1), _x((2,), seed=2), _x((2,), seed=3)
    eqn = _only_eqn(pc.make_jaxpr(f)(x, y))
    assert eqn.params["symbolic_zeros"] is True
    r = eqn.params["jvp_jaxpr_fun"]((True, False))
    (_, yd_seen), = seen
    assert isinstance(yd_seen, SymbolicZero) and yd_seen.aval == ShapedArray((2,), np.float32)
    assert yd_seen.shape == (2,) and yd_seen.dtype == np.float32
    np.testing.assert_array_equal(yd_seen.instantiate(), np.zeros(2, np.float32))
    _, t = _run(r.jaxpr, x, y, xd)
    _close(t, xd * y)


def test_custom_jvp_zero_tangents_are_instantiated_without_symbolic_zeros() -> None:
    f = _make_sin_times()
    x, y = _x((2,), seed=1), _x((2,), seed=2)
    r = _only_eqn(pc.make_jaxpr(f)(x, y)).params["jvp_jaxpr_fun"]((False, True))
    assert "zeros_like" in {e.primitive.name for e in r.jaxpr.eqns}
    _, t = _run(r.jaxpr, x, y, np.ones(2, np.float32))
    _close(t, np.sin(x))


def test_custom_jvp_int_and_zero_output_tangents() -> None:
    @custom_jvp
    def f(x: Any, n: Any) -> tuple[Any, Any]:
        return lax.mul(x, x), lax.add(n, n)

    @f.defjvp
    def f_jvp(p: Any, t: Any) -> Any:
        x, n = p
        return f(x, n), (lax.mul(lax.add(x, x), t[0]), np.zeros(2, np.int32))

    x, n = _x((2,)), np.arange(2, dtype=np.int32)
    fun = _only_eqn(pc.make_jaxpr(f)(x, n)).params["jvp_jaxpr_fun"]
    r = fun((True, False))
    assert r.out_nonzeros == (True, False)  # the integer output's tangent is float0, i.e. zero
    outs = _run(r.jaxpr, x, n, np.ones(2, np.float32))
    assert len(outs) == 3
    _close(outs[2], 2 * x)
    r2 = fun((True, True))  # a float0 tangent for the integer input is accepted and unused
    assert r2.jaxpr.in_avals[3].dtype == dtypes.float0
    assert tangent_aval(ShapedArray((2,), np.int32)) == ShapedArray((2,), dtypes.float0)
    assert tangent_aval(ShapedArray((2,), np.float16)) == ShapedArray((2,), np.float16)


def test_custom_jvp_defjvps() -> None:
    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(lax.sin(x), y)

    f.defjvps(lambda xd, ans, x, y: lax.mul(lax.mul(lax.cos(x), xd), y), lambda yd, ans, x, y: lax.mul(lax.sin(x), yd))
    x, y, xd, yd = (_x((3,), seed=s) for s in range(4))
    fun = _only_eqn(pc.make_jaxpr(f)(x, y)).params["jvp_jaxpr_fun"]
    out, t = _run(fun((True, True)).jaxpr, x, y, xd, yd)
    _close(out, np.sin(x) * y)
    _close(t, np.cos(x) * xd * y + np.sin(x) * yd)
    _, t_y = _run(fun((False, True)).jaxpr, x, y, yd)
    _close(t_y, np.sin(x) * yd)
    assert fun((False, False)).out_nonzeros == (False,)

    @custom_jvp
    def g(x: Any, y: Any) -> Any:
        return lax.mul(x, y)

    g.defjvps(None, lambda yd, ans, x, y: lax.mul(x, yd))
    gfun = _only_eqn(pc.make_jaxpr(g)(x, y)).params["jvp_jaxpr_fun"]
    assert gfun((True, False)).out_nonzeros == (False,)
    _, t_g = _run(gfun((True, True)).jaxpr, x, y, xd, yd)
    _close(t_g, x * yd)
    g.defjvps(None)
    with pytest.raises(TypeError, match="custom_jvp g: defjvps was given 1 rules but the function has 2 differentiable arguments"):
        _only_eqn(pc.make_jaxpr(g)(x, y)).params["jvp_jaxpr_fun"]((True, True))


def test_custom_jvp_nondiff_argnums_static_and_array() -> None:
    def apply(fn: Any, x: Any, w: Any) -> Any:
        return lax.mul(fn(x), w)

    f = custom_jvp(apply, nondiff_argnums=(0, 2))
    calls: list[Any] = []

    @f.defjvp
    def f_jvp(fn: Any, w: Any, primals: Any, tangents: Any) -> Any:
        calls.append((fn, w))
        (x,), (xd,) = primals, tangents
        return f(fn, x, w), lax.mul(lax.mul(lax.cos(x), xd), w)

    x, w, xd = _x((3,), seed=1), _x((3,), seed=2), _x((3,), seed=3)
    _close(f(lax.sin, x, w), np.sin(x) * w)
    closed = pc.make_jaxpr(lambda a, b: f(lax.sin, a, b))(x, w)
    eqn = _only_eqn(closed)
    assert len(eqn.invars) == 2  # the function argument is static, the array w is an operand
    _close(_run(closed, x, w)[0], np.sin(x) * w)
    r = eqn.params["jvp_jaxpr_fun"]((True, True))  # w's tangent is ignored (taken as zero)
    assert calls[-1][0] is lax.sin
    _, t = _run(r.jaxpr, x, w, xd, np.full(3, 100, np.float32))
    _close(t, np.cos(x) * xd * w)
    varargs = custom_jvp(lambda *a: a[0], nondiff_argnums=(2,))
    with pytest.raises(ValueError, match="custom_jvp function <lambda>: nondiff_argnums 2 is out of range for a call with 2 positional arguments"):
        varargs(x, x)
    with pytest.raises(TypeError, match="custom_jvp function apply: missing a required argument: 'w'"):
        f(lax.sin, x)
    with pytest.raises(TypeError, match="custom_jvp: nondiff_argnums must be ints, got 'a'"):
        custom_jvp(apply, nondiff_argnums=("a",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"custom_jvp: nondiff_argnums \(0, 0\) has repeated entries"):
        custom_jvp(apply, nondiff_argnums=(0, 0))


def test_custom_jvp_closure_consts_and_closure_error() -> None:
    w = np.arange(1, 4, dtype=np.float32)

    @custom_jvp
    def f(x: Any) -> Any:
        return lax.mul(x, w)

    f.defjvp(lambda p, t: (f(*p), lax.mul(t[0], w)))
    x = _x((3,))
    eqn = _only_eqn(pc.make_jaxpr(f)(x))
    assert eqn.params["num_consts"] == 1 and len(eqn.invars) == 2
    fun = eqn.params["jvp_jaxpr_fun"]
    _, t = _run(fun((False, True)).jaxpr, w, x, np.ones(3, np.float32))
    _close(t, w)
    with pytest.raises(TypeError, match="The custom_jvp function f was differentiated with respect to a value it closes over"):
        fun((True, True))
    with pytest.raises(ValueError, match=r"jvp_jaxpr_fun of f: expected 2 flags \(one per operand\), got 1"):
        fun((True,))


def test_custom_jvp_without_rule() -> None:
    @custom_jvp
    def f(x: Any) -> Any:
        return lax.sin(x)

    x = _x((2,))
    _close(f(x), np.sin(x))
    closed = pc.make_jaxpr(f)(x)
    _close(_run(closed, x)[0], np.sin(x))
    with pytest.raises(AttributeError, match="No JVP rule is defined for the custom_jvp function f"):
        _only_eqn(closed).params["jvp_jaxpr_fun"]((True,))
    with pytest.raises(TypeError, match="custom_jvp f: defjvp expects a function, got int"):
        f.defjvp(3)  # type: ignore[arg-type]


def _rule_error(rule: Any) -> Any:
    @custom_jvp
    def f(x: Any) -> Any:
        return lax.sin(x)

    f.defjvp(rule)
    x = _x((2,))
    return lambda: _only_eqn(pc.make_jaxpr(f)(x)).params["jvp_jaxpr_fun"]((True,))


@pytest.mark.parametrize(
    "rule, message",
    [
        (lambda p, t: lax.sin(p[0]), r"custom_jvp rule <lambda> of f must return a pair \(primal_out, tangent_out\), got a value of type StagingTracer"),
        (lambda p, t: (p[0],), r"must return a pair \(primal_out, tangent_out\), got a tuple of length 1"),
        (lambda p, t: ((p[0], p[0]), t[0]), r"returned primal outputs with the structure PyTreeDef\(\(\*, \*\)\), but f returns PyTreeDef\(\*\)"),
        (lambda p, t: (np.zeros(3, np.float32), t[0]), r"primal output leaf 0 has type f32\[3\], expected the shape of f32\[2\]"),
        (lambda p, t: (p[0], np.zeros(2, np.int32)), r"tangent output leaf 0 has dtype int32 \(i32\[2\]\), expected f32\[2\]"),
        (lambda p, t: (p[0], np.zeros(3, np.float32)), r"tangent output leaf 0 has type f32\[3\], expected the shape of f32\[2\]"),
        (lambda p, t: (p[0], (t[0],)), r"the tangent output has the structure PyTreeDef\(\(\*,\)\), but the expected structure is PyTreeDef\(\*\)"),
        (lambda p, t: (p[0], "zero"), r"tangent output leaf 0 is a value of type str, expected an array of type f32\[2\]"),
    ],
)
def test_custom_jvp_rule_output_errors(rule: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        _rule_error(rule)()


def test_custom_jvp_none_tangent_is_a_zero() -> None:
    r = _rule_error(lambda p, t: (p[0], None))()
    assert r.out_nonzeros == (False,)


# ---------------------------------------------------------------------------
# custom_vjp


def _make_vjp(**defvjp_kwargs: Any) -> custom_vjp[Any]:
    @custom_vjp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(lax.sin(x), y)

    def f_fwd(x: Any, y: Any) -> Any:
        return f(x, y), (lax.cos(x), lax.sin(x), y)

    def f_bwd(res: Any, g: Any) -> Any:
        cos_x, sin_x, y = res
        return lax.mul(lax.mul(cos_x, g), y), lax.mul(sin_x, g)

    f.defvjp(f_fwd, f_bwd, **defvjp_kwargs)
    return f


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_custom_vjp_eager_staged_and_rules(shape: tuple[int, ...], dtype: Any) -> None:
    f = _make_vjp()
    x, y, g = _x(shape, dtype, 1), _x(shape, dtype, 2), _x(shape, dtype, 3)
    xf, yf, gf = (v.astype(np.float32) for v in (x, y, g))
    _close(f(x, y), (np.sin(xf) * yf).astype(dtype))
    closed = pc.make_jaxpr(f)(x, y)
    pc.check_jaxpr(closed)
    _close(_run(closed, x, y)[0], (np.sin(xf) * yf).astype(dtype))
    eqn = _only_eqn(closed)
    assert eqn.primitive is custom_vjp_call_p
    p = eqn.params
    assert p["num_consts"] == 0 and p["symbolic_zeros"] is False and p["optimize_remat"] is False
    fwd = p["fwd_jaxpr_thunk"]()
    assert isinstance(fwd, FwdJaxpr) and fwd.num_res == 3
    assert fwd.out_tree == p["out_trees"]()[0] and p["out_trees"]()[1] == fwd.res_tree
    pc.check_jaxpr(fwd.jaxpr)
    out, *res = _run(fwd.jaxpr, x, y)
    _close(out, (np.sin(xf) * yf).astype(dtype))
    ct_x, ct_y = p["bwd"](*res, g)
    _close(ct_x, (np.cos(xf) * gf * yf).astype(dtype))
    _close(ct_y, (np.sin(xf) * gf).astype(dtype))
    assert p["fwd_jaxpr_thunk"]() is fwd  # memoized


def test_custom_vjp_params_flags_and_zero_cotangents() -> None:
    f = _make_vjp(optimize_remat=True)
    x, y = _x((2,), seed=1), _x((2,), seed=2)
    p = _only_eqn(pc.make_jaxpr(f)(x, y)).params
    assert p["optimize_remat"] is True
    fwd = p["fwd_jaxpr_thunk"]((True, True))
    _, *res = _run(fwd.jaxpr, x, y)
    ct_x, ct_y = p["bwd"](*res, None)  # a zero output cotangent
    _close(ct_x, np.zeros(2, np.float32))
    _close(ct_y, np.zeros(2, np.float32))


def test_custom_vjp_symbolic_zeros_and_none_cotangents() -> None:
    seen: dict[str, Any] = {}

    @custom_vjp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(x, y)

    def fwd(x: Any, y: Any) -> Any:
        seen["fwd"] = (x, y)
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res: Any, g: Any) -> Any:
        seen["g"] = g
        _, y = res
        if isinstance(g, SymbolicZero):
            return None, None
        return lax.mul(y, g), None

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    x, y, g = _x((2,), seed=1), _x((2,), seed=2), _x((2,), seed=3)
    p = _only_eqn(pc.make_jaxpr(f)(x, y)).params
    fwd_j = p["fwd_jaxpr_thunk"]((True, False))
    px, py = seen["fwd"]
    assert isinstance(px, CustomVJPPrimal) and px.perturbed is True and py.perturbed is False
    assert "perturbed=False" in repr(py)
    _, *res = _run(fwd_j.jaxpr, x, y)
    ct_x, ct_y = p["bwd"](*res, g)
    _close(ct_x, y * g)
    assert ct_y is None
    assert p["bwd"](*res, None) == [None, None]
    assert isinstance(seen["g"], SymbolicZero)


def test_custom_vjp_pytrees_nondiff_and_int_inputs() -> None:
    def f(scale: float, d: dict[str, Any], n: Any) -> Any:
        return lax.mul(lax.add(d["a"], d["b"]), scale)

    fv = custom_vjp(f, nondiff_argnums=(0,))
    fv.defvjp(
        lambda scale, d, n: (fv(scale, d, n), None),
        lambda scale, res, g: ({"a": lax.mul(g, scale), "b": None}, np.zeros(2, np.int32)),
    )
    a, b, n = _x((2,), seed=1), _x((2,), seed=2), np.arange(2, dtype=np.int32)
    _close(fv(2.0, {"a": a, "b": b}, n), (a + b) * np.float32(2))
    p = _only_eqn(pc.make_jaxpr(lambda u, v, m: fv(2.0, {"a": u, "b": v}, m))(a, b, n)).params
    fwd = p["fwd_jaxpr_thunk"]()
    assert fwd.num_res == 0
    g = _x((2,), seed=3)
    ct_a, ct_b, ct_n = p["bwd"](g)
    _close(ct_a, g * np.float32(2))
    assert ct_b is None and ct_n is None  # None subtree and integer input


def test_custom_vjp_array_nondiff_argument_travels_as_a_residual() -> None:
    def f(x: Any, w: Any) -> Any:
        return lax.mul(x, w)

    fv = custom_vjp(f, nondiff_argnums=(1,))
    fv.defvjp(lambda x, w: (fv(x, w), ()), lambda w, res, g: (lax.mul(g, w),))
    x, w, g = _x((3,), seed=1), _x((3,), seed=2), _x((3,), seed=3)
    p = _only_eqn(pc.make_jaxpr(fv)(x, w)).params
    fwd = p["fwd_jaxpr_thunk"]()
    assert fwd.num_res == 1  # no user residuals, plus the array nondiff argument
    _, w_res = _run(fwd.jaxpr, x, w)
    ct_x, ct_w = p["bwd"](w_res, g)
    _close(ct_x, g * w)
    assert ct_w is None


def test_custom_vjp_keyword_resolution_and_eager() -> None:
    f = _make_vjp()
    x, y = _x((2,), seed=1), _x((2,), seed=2)
    _close(f(y=y, x=x), np.sin(x) * y)

    @custom_vjp
    def h(x: Any, *, k: Any = 1.0) -> Any:
        return x

    with pytest.raises(TypeError, match="custom_vjp function h was called with the keyword-only argument"):
        h(x, k=2.0)


def test_custom_vjp_without_rules_and_closure() -> None:
    w = np.arange(1, 3, dtype=np.float32)

    @custom_vjp
    def f(x: Any) -> Any:
        return lax.mul(x, w)

    x = _x((2,))
    _close(f(x), x * w)
    p = _only_eqn(pc.make_jaxpr(f)(x)).params
    assert p["num_consts"] == 1
    with pytest.raises(AttributeError, match="No VJP rules are defined for the custom_vjp function f"):
        p["fwd_jaxpr_thunk"]()
    with pytest.raises(AttributeError, match="No VJP rules are defined for the custom_vjp function f"):
        p["bwd"](x)
    f.defvjp(lambda x: (f(x), None), lambda res, g: (lax.mul(g, w),))
    p = _only_eqn(pc.make_jaxpr(f)(x)).params
    with pytest.raises(TypeError, match="The custom_vjp function f was differentiated with respect to a value it closes over"):
        p["fwd_jaxpr_thunk"]((True, True))
    with pytest.raises(TypeError, match="custom_vjp f: defvjp expects a function as bwd, got int"):
        f.defvjp(lambda x: x, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"bwd of f: expected 0 residuals and 1 output cotangents, got 2 values"):
        p["fwd_jaxpr_thunk"]((False, True))
        p["bwd"](x, x)


def _vjp_with(fwd: Any = None, bwd: Any = None) -> tuple[Any, Any]:
    @custom_vjp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(x, y)

    f.defvjp(
        fwd or (lambda x, y: (f(x, y), (x, y))),
        bwd or (lambda res, g: (lax.mul(res[1], g), lax.mul(res[0], g))),
    )
    x, y = _x((2,), seed=1), _x((2,), seed=2)
    p = _only_eqn(pc.make_jaxpr(f)(x, y)).params
    return p, (x, y)


@pytest.mark.parametrize(
    "fwd, message",
    [
        (lambda x, y: lax.mul(x, y), r"custom_vjp fwd rule <lambda> of f must return a pair \(output, residuals\) where output has the structure PyTreeDef\(\*\), got a value of type StagingTracer"),
        (lambda x, y: (x, y, x), r"must return a pair \(output, residuals\) .* got a tuple of length 3"),
        (lambda x, y: ((x, y), None), r"returned an output with the structure PyTreeDef\(\(\*, \*\)\), but f returns PyTreeDef\(\*\)"),
        (lambda x, y: (np.zeros(2, np.int32), None), r"returned output leaf 0 of type i32\[2\], but f returns f32\[2\] there \(expected output types: f32\[2\]\)"),
        (lambda x, y: (x, "residual"), r"returned residual leaf 0 of type str; residuals must be arrays"),
    ],
)
def test_custom_vjp_fwd_errors(fwd: Any, message: str) -> None:
    p, _ = _vjp_with(fwd=fwd)
    with pytest.raises(TypeError, match=message):
        p["fwd_jaxpr_thunk"]()


@pytest.mark.parametrize(
    "bwd, error, message",
    [
        (lambda res, g: [g, g], TypeError, r"custom_vjp bwd rule <lambda> of f must return a tuple with one cotangent per differentiable argument \(2\), of the structures \(PyTreeDef\(\*\), PyTreeDef\(\*\)\); got a list of length 2"),
        (lambda res, g: (g,), TypeError, r"one cotangent per differentiable argument \(2\).*got a tuple of length 1"),
        (lambda res, g: (g, (g, g)), TypeError, r"the cotangent of argument 1 has the structure PyTreeDef\(\(\*, \*\)\), but the expected structure is PyTreeDef\(\*\)"),
        (lambda res, g: (g, np.zeros(2, np.int32)), TypeError, r"cotangent leaf 0 of argument 1 has dtype int32 \(i32\[2\]\), expected f32\[2\]"),
        (lambda res, g: (g, np.zeros(3, np.float32)), ValueError, r"cotangent leaf 0 of argument 1 has type f32\[3\], expected the shape of f32\[2\]"),
    ],
)
def test_custom_vjp_bwd_errors(bwd: Any, error: type[Exception], message: str) -> None:
    p, (x, y) = _vjp_with(bwd=bwd)
    fwd = p["fwd_jaxpr_thunk"]()
    _, *res = _run(fwd.jaxpr, x, y)
    with pytest.raises(error, match=message):
        p["bwd"](*res, np.ones(2, np.float32))


def test_custom_vjp_bwd_accepts_weak_python_scalars_and_none() -> None:
    p, (x, y) = _vjp_with(bwd=lambda res, g: (None, np.ones(2, np.float32)))
    _, *res = _run(p["fwd_jaxpr_thunk"]().jaxpr, x, y)
    ct_x, ct_y = p["bwd"](*res, np.ones(2, np.float32))
    assert ct_x is None
    _close(ct_y, np.ones(2, np.float32))


# ---------------------------------------------------------------------------
# custom_vmap


def _make_vmap() -> custom_vmap[Any]:
    @custom_vmap
    def f(x: Any, y: Any) -> Any:
        return lax.add(lax.sin(x), y)

    @f.def_vmap
    def rule(axis_size: int, in_batched: list[Any], x: Any, y: Any) -> Any:
        x_b, y_b = in_batched
        if x_b and not y_b:
            y = lax.broadcast_in_dim(y, (axis_size, *y.shape), tuple(range(1, y.ndim + 1)))
        return lax.add(lax.sin(x), y), x_b or y_b

    return f


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_custom_vmap_eager_staged_numpy(shape: tuple[int, ...], dtype: Any) -> None:
    f = _make_vmap()
    x, y = _x(shape, dtype, 1), _x(shape, dtype, 2)
    expected = (np.sin(x.astype(np.float32)) + y.astype(np.float32)).astype(dtype)
    _close(f(x, y), expected)
    closed = pc.make_jaxpr(f)(x, y)
    pc.check_jaxpr(closed)
    _close(_run(closed, x, y)[0], expected)
    eqn = _only_eqn(closed)
    assert eqn.primitive is custom_vmap_call_p
    p = eqn.params
    assert isinstance(p["rule"], CustomVmapRule) and p["num_consts"] == 0
    assert isinstance(p["in_tree"], PyTreeDef) and p["in_tree"].num_leaves == 2
    assert isinstance(p["out_tree"], PyTreeDef) and p["out_tree"].num_leaves == 1


def test_custom_vmap_rule_protocol() -> None:
    f = _make_vmap()
    xb, y = _x((4, 3), seed=1), _x((3,), seed=2)
    rule = _only_eqn(pc.make_jaxpr(f)(y, y)).params["rule"]
    outs, batched = rule(4, [True, False], xb, y)
    assert batched == [True]
    _close(outs[0], np.sin(xb) + y)
    with pytest.raises(ValueError, match=r"custom_vmap rule of f: expected 2 operands and as many flags, got 2 operands and 1 flags"):
        rule(4, [True], xb, y)


def test_custom_vmap_kwargs_pytrees_and_tree_of_flags() -> None:
    @custom_vmap
    def f(d: dict[str, Any], scale: Any = 2.0) -> dict[str, Any]:
        return {"p": lax.mul(d["a"], scale), "q": d["b"]}

    @f.def_vmap
    def rule(n: int, in_batched: list[Any], d: dict[str, Any], scale: Any) -> Any:
        assert in_batched == [{"a": True, "b": False}, False]
        return f(d, scale), {"p": True, "q": False}

    a, b = _x((5, 2), seed=1), _x((2,), seed=2)
    out = f(d={"a": a[0], "b": b})
    _close(out["p"], a[0] * np.float32(2))
    rule_w = _only_eqn(pc.make_jaxpr(lambda u, v: f({"a": u, "b": v}))(a[0], b)).params["rule"]
    outs, flags = rule_w(5, [True, False, False], a, b, np.float32(2))
    assert flags == [True, False]
    _close(outs[0], a * np.float32(2))
    _close(outs[1], b)


def test_custom_vmap_errors() -> None:
    @custom_vmap
    def f(x: Any) -> Any:
        return lax.sin(x)

    x, xb = _x((3,)), _x((2, 3))
    _close(f(x), np.sin(x))  # no rule: calling outside vmap is fine
    rule = _only_eqn(pc.make_jaxpr(f)(x)).params["rule"]
    with pytest.raises(AttributeError, match="No batching rule is defined for the custom_vmap function f"):
        rule(2, [True], xb)
    assert custom_vmap_rule_missing_error(f.fun) == custom_vmap_rule_missing_error("f")
    with pytest.raises(TypeError, match="custom_vmap f: def_vmap expects a function, got int"):
        f.def_vmap(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="custom_vmap function <lambda> was called with the keyword-only argument"):
        custom_vmap(lambda x, *, k=1: x)(x, k=2)

    def rule_of(result: Any) -> Any:
        g = custom_vmap(lambda x: lax.sin(x))
        g.def_vmap(lambda n, b, x: result(x))
        return _only_eqn(pc.make_jaxpr(g)(x)).params["rule"]

    with pytest.raises(TypeError, match=r"custom_vmap rule <lambda> of <lambda> must return a pair \(out, out_batched\), got StagingTracer|must return a pair \(out, out_batched\), got ndarray"):
        rule_of(lambda x: x)(2, [True], xb)
    with pytest.raises(TypeError, match=r"returned outputs with the structure PyTreeDef\(\(\*, \*\)\), but <lambda> returns PyTreeDef\(\*\)"):
        rule_of(lambda x: ((x, x), True))(2, [True], xb)
    with pytest.raises(TypeError, match=r"returned out_batched 'yes'; it must be a bool or a tree of bools with the structure PyTreeDef\(\*\)"):
        rule_of(lambda x: (x, "yes"))(2, [True], xb)
    with pytest.raises(ValueError, match=r"batched output leaf 0 has type f32\[2,3\], expected the shape of f32\[4,3\]"):
        rule_of(lambda x: (x, True))(4, [True], xb)
    with pytest.raises(ValueError, match=r"unbatched output leaf 0 has type f32\[2,3\], expected the shape of f32\[3\]"):
        rule_of(lambda x: (x, False))(2, [True], xb)

    w = _x((3,), seed=5)
    h = custom_vmap(lambda x: lax.mul(x, w))
    h.def_vmap(lambda n, b, x: (lax.mul(x, w), b[0]))
    hr = _only_eqn(pc.make_jaxpr(h)(x)).params["rule"]
    with pytest.raises(TypeError, match="The custom_vmap function <lambda> closes over a value that vmap batches"):
        hr(2, [True, False], w, x)


# ---------------------------------------------------------------------------
# custom_ivjp


def _make_ivjp() -> custom_ivjp[Any]:
    @custom_ivjp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(x, y)

    @f.defivjp
    def f_ivjp(xs: Any, ys: Any, dys: Any) -> Any:
        x, y = xs  # y is known; x is rebuilt from the output
        x = lax.div(ys, y)
        return (x, y), (lax.mul(dys, y), lax.mul(dys, x))

    return f


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_custom_ivjp_eager_staged_and_rule(shape: tuple[int, ...]) -> None:
    f = _make_ivjp()
    x, y, dy = _x(shape, seed=1), _x(shape, seed=2), _x(shape, seed=3)
    _close(f(x, y), x * y)
    closed = pc.make_jaxpr(f)(x, y)
    pc.check_jaxpr(closed)
    _close(_run(closed, x, y)[0], x * y)
    eqn = _only_eqn(closed)
    assert eqn.primitive is custom_ivjp_call_p
    p = eqn.params
    assert isinstance(p["ivjp"], IvjpRule) and p["num_consts"] == 0
    assert p["in_tree"].num_leaves == 2 and p["out_tree"].num_leaves == 1
    xs, dxs = p["ivjp"]([None, y], [x * y], [dy])
    _close(xs[0], x)
    _close(xs[1], y)
    _close(dxs[0], dy * y)
    _close(dxs[1], dy * x)


def test_custom_ivjp_errors() -> None:
    @custom_ivjp
    def f(x: Any) -> Any:
        return lax.neg(x)

    x = _x((2,))
    _close(f(x), -x)
    rule = _only_eqn(pc.make_jaxpr(f)(x)).params["ivjp"]
    with pytest.raises(AttributeError, match="No inverse-VJP rule is defined for the custom_ivjp function f"):
        rule([None], [x], [x])
    assert "defivjp" in custom_ivjp_rule_missing_error("f")
    with pytest.raises(TypeError, match="custom_ivjp f: defivjp expects a function, got int"):
        f.defivjp(3)  # type: ignore[arg-type]

    def rule_of(ivjp: Any) -> Any:
        g = custom_ivjp(lambda x: lax.neg(x))
        g.defivjp(ivjp)
        return _only_eqn(pc.make_jaxpr(g)(x)).params["ivjp"]

    with pytest.raises(ValueError, match=r"ivjp of <lambda>: expected 1 inputs and 1 outputs and output cotangents, got 2, 1 and 1"):
        rule_of(lambda xs, ys, dys: xs)([None, None], [x], [x])
    with pytest.raises(TypeError, match=r"must return a pair \(xs, dxs\), got a tuple of length 1"):
        rule_of(lambda xs, ys, dys: (xs,))([None], [x], [x])
    with pytest.raises(TypeError, match=r"returned inputs xs with the structure PyTreeDef\(\*\), but the arguments have the structure PyTreeDef\(\(\*,\)\)"):
        rule_of(lambda xs, ys, dys: (ys, (dys,)))([None], [x], [x])
    with pytest.raises(ValueError, match=r"input leaf 0 has type f32\[3\], expected the shape of f32\[2\]"):
        rule_of(lambda xs, ys, dys: ((np.zeros(3, np.float32),), (dys,)))([None], [x], [x])
    with pytest.raises(TypeError, match=r"the input cotangents dxs has the structure PyTreeDef\(\*\), but the expected structure is PyTreeDef\(\(\*,\)\)"):
        rule_of(lambda xs, ys, dys: ((ys,), dys))([None], [x], [x])
    xs, dxs = rule_of(lambda xs, ys, dys: ((lax.neg(ys),), None))([None], [x], [None])
    _close(xs[0], -x)
    assert dxs == [None]


# ---------------------------------------------------------------------------
# Shared front-end behaviour


def test_custom_functions_nest_inside_calls() -> None:
    from plait_core.lax import named_call

    f = _make_sin_times()
    g = named_call(lambda x: f(x, lax.add(x, x)), name="outer")
    x = _x((3,))
    closed = pc.make_jaxpr(g)(x)
    pc.check_jaxpr(closed)
    (call,) = closed.eqns
    inner = {e.primitive.name for e in call.params["call_jaxpr"].eqns}
    assert "custom_jvp_call" in inner
    _close(_run(closed, x)[0], np.sin(x) * (x + x))
    _close(g(x), np.sin(x) * (x + x))


def test_non_array_arguments_and_missing_signatures() -> None:
    f = _make_sin_times()
    with pytest.raises(TypeError, match=r"custom_jvp function f: the argument leaf at \[1\] has type str, which is not an array or scalar"):
        pc.make_jaxpr(lambda v: f(v, "y"))(_x((2,)))
    g = custom_jvp(max)
    with pytest.raises(TypeError, match=r"custom_jvp function max: cannot resolve the keyword arguments \['key'\] because the function's signature is not available"):
        g(1.0, 2.0, key=abs)
    assert g(1.0, 2.0) == 2.0


def test_unhashable_static_argument_is_not_cached() -> None:
    count = []

    def f(fns: list[Any], x: Any) -> Any:
        count.append(1)
        return fns[0](x)

    fj = custom_jvp(f, nondiff_argnums=(0,))
    x = _x((2,))
    for _ in range(2):
        closed = pc.make_jaxpr(lambda v: fj([lax.sin], v))(x)
        _close(_run(closed, x)[0], np.sin(x))
    assert len(count) == 2


def test_rule_wrappers_check_their_arguments() -> None:
    p, (x, y) = _vjp_with()
    with pytest.raises(ValueError, match=r"fwd_jaxpr_thunk of f: expected 2 flags \(one per operand\), got 3"):
        p["fwd_jaxpr_thunk"]((True, True, True))
    body = _only_eqn(pc.make_jaxpr(_make_vmap())(x, y)).params
    tree1 = pc.tree_util.tree_structure((1,))
    with pytest.raises(ValueError, match="custom_vmap_call: in_tree has 1 leaves but there are 2 values"):
        custom_vmap_call_p.bind(x, y, **dict(body, in_tree=tree1))
    with pytest.raises(TypeError, match="custom_vmap_call: the param out_tree must be a PyTreeDef, got tuple"):
        custom_vmap_call_p.bind(x, y, **dict(body, out_tree=(1,)))
