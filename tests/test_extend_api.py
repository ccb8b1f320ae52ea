"""Primitives defined the JAX way (``plait.extend.core.Primitive`` with rules
given through ``plait.interpreters``) are plait primitives: eager, ``jit``,
``grad``, ``vmap``, ``mask`` and piles, in composition; and what cannot be
done is refused with an error naming the primitive."""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import plait
import plait.extend.core as xcore
import plait.numpy as jnp
import plait_core
from plait import Pile, pile_axis
from plait.extend import backend, source_info_util
from plait.extend import linear_util as lu
from plait.extend._flatten import debug_info, flatten_fun, flatten_fun_nokwargs
from plait.extend.core import (
    ClosedJaxpr,
    Effect,
    Primitive,
    get_opaque_trace_state,
    mapped_aval,
    primitives,
    take_current_trace,
    unmapped_aval,
)
from plait.extend.random import threefry_2x32
from plait.interpreters import ad, batching, mlir, xla
from plait.interpreters import partial_eval as pe
from plait_core import Primitive as CorePrimitive
from plait_core import ShapedArray, ShapeDtypeStruct, all_primitives, current_trace, dce_jaxpr

X = np.array([0.3, -1.2, 2.0], np.float32)


# ---------------------------------------------------------------------------
# A unary primitive with every rule: sin, with a NumPy implementation


def _make_sin() -> Primitive:
    p = Primitive("my_sin")
    p.def_impl(lambda x: np.sin(np.asarray(x)))
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    ad.defjvp(p, lambda g, x: g * jnp.cos(x))

    def batch(args: Any, dims: Any) -> Any:
        return p.bind(*args), dims[0]

    batching.primitive_batchers[p] = batch
    mlir.register_lowering(p, mlir.lower_fun(jnp.sin, multiple_results=False))
    return p


sin_p = _make_sin()


def my_sin(x: Any) -> Any:
    return sin_p.bind(x)


def test_eager_runs_the_impl() -> None:
    out = my_sin(X)
    assert isinstance(out, np.ndarray)  # what the NumPy impl returns, as in JAX
    np.testing.assert_allclose(out, np.sin(X), rtol=1e-6)


def test_jit_lowers_the_lower_fun_function() -> None:
    out = plait.jit(my_sin)(X)
    assert isinstance(out, plait.Array)
    np.testing.assert_allclose(out, np.sin(X), rtol=1e-6)
    assert "my_sin" in str(plait.make_jaxpr(my_sin)(X))


def test_grad_uses_defjvp() -> None:
    np.testing.assert_allclose(plait.grad(lambda x: my_sin(x).sum())(X), np.cos(X), rtol=1e-6)
    # second order: the JVP rule is written with plait operations
    np.testing.assert_allclose(plait.grad(plait.grad(lambda x: my_sin(x)))(1.1), -np.sin(1.1), rtol=1e-6)


def test_vmap_uses_the_batching_rule() -> None:
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(plait.vmap(my_sin)(xs), np.sin(xs), rtol=1e-6)
    np.testing.assert_allclose(plait.vmap(my_sin, in_axes=1)(xs.T), np.sin(xs), rtol=1e-6)


@pytest.mark.parametrize(
    "transform",
    [
        lambda f: plait.jit(plait.vmap(plait.grad(f))),
        lambda f: plait.vmap(plait.jit(plait.grad(f))),
        lambda f: plait.grad(lambda x: plait.vmap(f)(x).sum()),
        lambda f: plait.jit(plait.grad(lambda x: plait.vmap(f)(x).sum())),
        lambda f: plait.vmap(plait.grad(plait.jit(f))),
    ],
    ids=["jit(vmap(grad))", "vmap(jit(grad))", "grad(vmap)", "jit(grad(vmap))", "vmap(grad(jit))"],
)
def test_compositions(transform: Any) -> None:
    np.testing.assert_allclose(transform(my_sin)(X), np.cos(X), rtol=1e-6)


def test_jvp_and_jacobians() -> None:
    out, t = plait.jvp(my_sin, (X,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(out, np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(t, np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(plait.jacrev(my_sin)(X), np.diag(np.cos(X)), rtol=1e-6)
    np.testing.assert_allclose(plait.jacfwd(my_sin)(X), np.diag(np.cos(X)), rtol=1e-6)


def test_extension_primitives_stay_out_of_the_catalog() -> None:
    assert sin_p not in all_primitives()
    assert Primitive("my_sin").name == sin_p.name  # JAX lets two primitives share a name
    # Primitive.__init__ does not run core's (which enters the catalog): it must set every field core's sets
    fresh = Primitive("fresh")
    for slot in CorePrimitive.__slots__:
        if slot != "__weakref__":
            getattr(fresh, slot)
    assert fresh.family == "extension" and not fresh.multiple_results


# ---------------------------------------------------------------------------
# A linear primitive: transposes through deflinear2


def _make_double() -> Primitive:
    p = Primitive("double")
    p.def_impl(lambda x: 2 * np.asarray(x))
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: 2 * x, multiple_results=False))
    batching.defvectorized(p)
    seen: list[Any] = []

    def transpose(ct: Any, x: Any) -> list[Any]:
        seen.append(ad.is_undefined_primal(x))
        return [p.bind(ct)]

    ad.deflinear2(p, transpose)
    p.seen = seen  # type: ignore[attr-defined]
    return p


double_p = _make_double()


def test_deflinear2_transposes_under_grad_and_vjp() -> None:
    f = lambda x: (double_p.bind(x) * X).sum()  # noqa: E731
    np.testing.assert_allclose(plait.grad(f)(X), 2 * X, rtol=1e-6)
    np.testing.assert_allclose(plait.jit(plait.grad(f))(X), 2 * X, rtol=1e-6)
    np.testing.assert_allclose(plait.vmap(plait.grad(lambda x: double_p.bind(x) ** 2))(X), 8 * X, rtol=1e-6)
    _, pullback = plait.vjp(double_p.bind, X)
    np.testing.assert_allclose(pullback(np.ones(3, np.float32))[0], np.full(3, 2.0), rtol=1e-6)
    assert double_p.seen and all(double_p.seen)  # type: ignore[attr-defined]


def test_linear_transpose_of_a_linear_primitive() -> None:
    t = plait.linear_transpose(double_p.bind, X)
    np.testing.assert_allclose(t(np.array([1.0, 2.0, 3.0], np.float32))[0], [2.0, 4.0, 6.0])


def test_transpose_rule_reached_through_primitive_transposes() -> None:
    p = Primitive("scale_by")
    p.def_impl(lambda x, s: np.asarray(x) * np.asarray(s))
    p.def_abstract_eval(lambda x, s: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda x, s: x * s, multiple_results=False))

    def jvp(primals: Any, tangents: Any) -> Any:
        x, s = primals
        tx, ts = tangents
        out = p.bind(x, s)
        t = p.bind(ad.instantiate_zeros(tx), s)
        if type(ts) is not ad.Zero:
            t = t + x * ts
        return out, t

    def transpose(ct: Any, x: Any, s: Any) -> Any:
        assert ad.is_undefined_primal(x) and not ad.is_undefined_primal(s)
        return p.bind(ct, s), None

    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    assert ad.primitive_jvps[p] is jvp and ad.primitive_transposes[p] is transpose
    g = plait.grad(lambda x, s: p.bind(x, s).sum(), argnums=(0, 1))(X, np.float32(3.0))
    np.testing.assert_allclose(g[0], np.full(3, 3.0))
    np.testing.assert_allclose(g[1], X.sum(), rtol=1e-6)


# ---------------------------------------------------------------------------
# multiple_results


def _make_sincos() -> Primitive:
    p = Primitive("sincos")
    p.multiple_results = True
    p.def_impl(lambda x: [np.sin(np.asarray(x)), np.cos(np.asarray(x))])
    p.def_abstract_eval(lambda x: (ShapeDtypeStruct(x.shape, x.dtype), ShapeDtypeStruct(x.shape, x.dtype)))

    def jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        s, c = p.bind(x)
        return (s, c), (c * t, -s * t)

    def batch(args: Any, dims: Any) -> Any:
        return p.bind(*args), (dims[0], dims[0])

    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = batch
    mlir.register_lowering(p, mlir.lower_fun(lambda x: (jnp.sin(x), jnp.cos(x))))  # multiple_results=True
    return p


sincos_p = _make_sincos()


def test_multiple_results_everywhere() -> None:
    def f(x: Any) -> Any:
        s, c = sincos_p.bind(x)
        return (s * c).sum()

    expected_grad = np.cos(X) ** 2 - np.sin(X) ** 2
    s, c = sincos_p.bind(X)
    np.testing.assert_allclose([s, c], [np.sin(X), np.cos(X)], rtol=1e-6)
    np.testing.assert_allclose(plait.jit(lambda x: sincos_p.bind(x))(X)[1], np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(plait.grad(f)(X), expected_grad, rtol=1e-5)
    np.testing.assert_allclose(
        plait.jit(plait.vmap(plait.grad(lambda x: f(x[None]))))(X), expected_grad, rtol=1e-5
    )
    outs = plait.vmap(lambda x: sincos_p.bind(x), out_axes=1)(np.stack([X, X]))
    np.testing.assert_allclose(outs[1], np.cos(np.stack([X, X])).T, rtol=1e-6)


# ---------------------------------------------------------------------------
# mask and piles follow the lower_fun function


def _make_total() -> Primitive:
    p = Primitive("total")
    p.def_impl(lambda x: np.sum(np.asarray(x)))
    p.def_abstract_eval(lambda x: ShapedArray((), x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(jnp.sum, multiple_results=False))
    ad.deflinear2(p, lambda ct, x: [jnp.broadcast_to(ct, x.aval.shape)])
    return p


total_p = _make_total()


def test_mask_follows_the_lower_fun_function() -> None:
    f = plait.mask(lambda x: total_p.bind(my_sin(x)), ["n"], "")
    data = np.arange(6.0, dtype=np.float32)
    out = f([data], dict(n=4))
    np.testing.assert_allclose(out, np.sin(data[:4]).sum(), rtol=1e-6)


def test_piles_follow_the_lower_fun_function() -> None:
    pile = Pile.from_arrays([np.arange(2.0, dtype=np.float32), np.arange(5.0, dtype=np.float32)])
    out = plait.vmap(lambda x: total_p.bind(my_sin(x)), in_axes=pile_axis)(pile)
    np.testing.assert_allclose(out, [np.sin(np.arange(2.0)).sum(), np.sin(np.arange(5.0)).sum()], rtol=1e-6)
    grads = plait.vmap(plait.grad(lambda x: total_p.bind(my_sin(x))), in_axes=pile_axis, out_axes=pile_axis)(
        pile
    )
    np.testing.assert_allclose(grads.unpack()[1], np.cos(np.arange(5.0)), rtol=1e-6)


def _masked_total(d: Any, n: int = 2) -> Any:
    return plait.mask(lambda x: total_p.bind(my_sin(x)), ["n"], "")([d], dict(n=n))


D = np.arange(4.0, dtype=np.float32)


@pytest.mark.parametrize(
    ("name", "run", "expected"),
    [
        ("grad(checkpoint)", lambda: plait.grad(plait.checkpoint(lambda x: my_sin(x).sum()))(X), np.cos(X)),
        (
            "grad(invertible)",
            lambda: plait.grad(lambda x: plait.invertible(lambda x: my_sin(x) + x)(x).sum())(X),
            np.cos(X) + 1,
        ),
        ("hessian", lambda: np.diag(plait.hessian(lambda x: my_sin(x).sum())(X)), -np.sin(X)),
        ("linearize", lambda: plait.linearize(my_sin, X)[1](np.ones(3, np.float32)), np.cos(X)),
        ("pmap", lambda: plait.pmap(my_sin)(X[:1]), np.sin(X[:1])),
        ("grad(mask)", lambda: plait.grad(_masked_total)(D), [1.0, np.cos(1.0), 0.0, 0.0]),
        (
            "mask(grad)",
            lambda: plait.mask(plait.grad(lambda x: total_p.bind(my_sin(x))), ["n"], "n")([D], dict(n=2))[:2],
            np.cos(D[:2]),
        ),
        (
            "vmap(mask)",
            lambda: plait.vmap(_masked_total)(np.stack([D, 2 * D])),
            [np.sin(D[:2]).sum(), np.sin(2 * D[:2]).sum()],
        ),
        ("jit(mask)", lambda: plait.jit(_masked_total)(D), np.sin(D[:2]).sum()),
        (
            "jit(piles)",
            lambda: plait.jit(plait.vmap(lambda x: total_p.bind(my_sin(x)), in_axes=pile_axis))(
                Pile.from_arrays([D[:2], D[:3]])
            ),
            [np.sin(D[:2]).sum(), np.sin(D[:3]).sum()],
        ),
        (
            "piles(multiple_results)",
            lambda: plait.vmap(lambda x: total_p.bind(sincos_p.bind(x)[1]), in_axes=pile_axis)(
                Pile.from_arrays([D[:2], D[:3]])
            ),
            [np.cos(D[:2]).sum(), np.cos(D[:3]).sum()],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_more_compositions(name: str, run: Any, expected: Any) -> None:
    np.testing.assert_allclose(np.asarray(run()), expected, rtol=1e-5, atol=1e-6)


def _make_ste_round() -> Primitive:
    """A straight-through estimator: rounds, differentiates as the identity
    (so its JVP rule is not the derivative of its lower_fun function)."""
    p = Primitive("ste_round")
    p.def_impl(lambda x: np.round(np.asarray(x)))
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    ad.defjvp(p, lambda g, x: g)
    mlir.register_lowering(p, mlir.lower_fun(jnp.round, multiple_results=False))
    return p


ste_p = _make_ste_round()
R = np.array([0.3, 1.7, 2.2, 5.0], np.float32)


def _ste_loss(x: Any) -> Any:
    return (ste_p.bind(x) * x).sum()


def test_mask_and_piles_keep_the_primitives_jvp_rule() -> None:
    expected = np.round(R) + R  # d/dx round(x) * x with round's derivative taken as 1
    np.testing.assert_allclose(plait.grad(_ste_loss)(R), expected, rtol=1e-6)
    masked = plait.mask(_ste_loss, ["n"], "")
    np.testing.assert_allclose(masked([R], dict(n=3)), (np.round(R) * R)[:3].sum(), rtol=1e-6)
    g = plait.jit(plait.grad(lambda d: masked([d], dict(n=3))))(R)
    np.testing.assert_allclose(g, [*expected[:3], 0.0], rtol=1e-6)
    pile = Pile.from_arrays([R[:2], R[:3]])
    grads = plait.vmap(plait.grad(_ste_loss), in_axes=pile_axis, out_axes=pile_axis)(pile).unpack()
    np.testing.assert_allclose(grads[1], expected[:3], rtol=1e-6)


def test_mask_and_piles_refuse_a_primitive_without_lower_fun() -> None:
    p = Primitive("unlowered")
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="mask: the primitive unlowered has no lowering"):
        plait.mask(lambda x: p.bind(x), ["n"], "n")([np.ones(4, np.float32)], dict(n=2))
    pile = Pile.from_arrays([np.ones(2, np.float32), np.ones(3, np.float32)])
    with pytest.raises(NotImplementedError, match="vmap over piles: the primitive unlowered has no lowering"):
        plait.vmap(lambda x: p.bind(x), in_axes=pile_axis, out_axes=pile_axis)(pile)


# ---------------------------------------------------------------------------
# Other ways of registering rules


def test_fancy_and_axis_batchers_see_the_axis() -> None:
    seen: dict[str, Any] = {}
    p = Primitive("axis_aware")
    p.def_impl(lambda x: np.asarray(x) + 1)
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x + 1, multiple_results=False))

    def fancy(axis_data: Any, args: Any, dims: Any) -> Any:
        seen["fancy"] = (axis_data.size, axis_data.name)
        return p.bind(*args), dims[0]

    batching.fancy_primitive_batchers[p] = fancy
    out = plait.vmap(lambda x: p.bind(x), axis_name="i")(np.zeros((4, 2), np.float32))
    np.testing.assert_allclose(out, np.ones((4, 2)))
    assert seen["fancy"] == (4, "i")

    def old(size: Any, name: Any, trace_type: Any, args: Any, dims: Any) -> Any:
        seen["axis"] = (size, name, trace_type)
        return p.bind(*args), dims[0]

    batching.axis_primitive_batchers[p] = old
    plait.jit(plait.vmap(lambda x: p.bind(x), axis_name="j"))(np.zeros((3, 2), np.float32))
    assert seen["axis"] == (3, "j", None)


def test_defjvp2_and_defbilinear() -> None:
    exp_p = Primitive("my_exp")
    exp_p.def_impl(lambda x: np.exp(np.asarray(x)))
    exp_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    ad.defjvp2(exp_p, lambda g, ans, x: g * ans)
    np.testing.assert_allclose(plait.grad(lambda x: exp_p.bind(x).sum())(X), np.exp(X), rtol=1e-6)

    mul_p = Primitive("bimul")
    mul_p.def_impl(lambda x, y: np.asarray(x) * np.asarray(y))
    mul_p.def_abstract_eval(lambda x, y: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(mul_p, mlir.lower_fun(lambda x, y: x * y, multiple_results=False))
    ad.defbilinear(mul_p, lambda ct, x, y: mul_p.bind(ct, y), lambda ct, x, y: mul_p.bind(x, ct))
    gx, gy = plait.grad(lambda x, y: mul_p.bind(x, y).sum(), argnums=(0, 1))(X, 2 * X)
    np.testing.assert_allclose(gx, 2 * X, rtol=1e-6)
    np.testing.assert_allclose(gy, X, rtol=1e-6)


def test_apply_primitive_as_impl_runs_the_lowering_eagerly() -> None:
    p = Primitive("cube")
    p.def_impl(functools.partial(xla.apply_primitive, p))
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x * x * x, multiple_results=False))
    out = p.bind(X)
    assert isinstance(out, plait.Array)
    np.testing.assert_allclose(out, X**3, rtol=1e-6)


def test_platform_specific_lowering() -> None:
    p = Primitive("tpu_only")
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False), platform="tpu")
    with pytest.raises(NotImplementedError, match="tpu_only has no lowering for the platform 'cpu'"):
        plait.jit(lambda x: p.bind(x))(X)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: -x, multiple_results=False), platform="cpu")
    np.testing.assert_allclose(plait.jit(lambda x: p.bind(x))(X), -X)
    masked = plait.mask(lambda x: p.bind(x), ["n"], "n")(
        [X], dict(n=2)
    )  # mask follows the platform's lowering
    np.testing.assert_allclose(masked[:2], -X[:2])


def test_effectful_equations_survive_dead_code_elimination() -> None:
    class Log(Effect):
        pass

    pure, loud = Primitive("pure_id"), Primitive("loud_id")
    pure.def_abstract_eval(lambda x: x)
    loud.def_effectful_abstract_eval(lambda x: (x, {Log()}))

    def f(x: Any) -> Any:
        pure.bind(x)
        loud.bind(x)
        return x

    jaxpr = plait.make_jaxpr(f)(X).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["pure_id", "loud_id"]
    kept, _ = dce_jaxpr(jaxpr)
    assert [e.primitive.name for e in kept.eqns] == ["loud_id"]


def test_reading_plait_rules_through_the_tables() -> None:
    rule = ad.primitive_jvps[primitives.sin_p]
    out, t = rule([np.float32(0.5)], [np.float32(2.0)])
    np.testing.assert_allclose([out, t], [np.sin(0.5), 2 * np.cos(0.5)], rtol=1e-6)
    assert primitives.sin_p in ad.primitive_jvps and sin_p in ad.primitive_jvps
    assert sin_p not in ad.primitive_transposes
    with pytest.raises(KeyError):
        batching.primitive_batchers[primitives.sin_p]  # plait's batching rules take the axis first


# ---------------------------------------------------------------------------
# Wrong registrations and missing rules: clear errors naming the primitive


def _bare(name: str) -> Primitive:
    p = Primitive(name)
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    p.def_impl(lambda x: np.asarray(x))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))
    return p


def test_missing_rules_name_the_primitive_and_the_registration() -> None:
    p = _bare("bare")
    with pytest.raises(NotImplementedError, match=r"bare.*ad\.defjvp\(bare"):
        plait.grad(lambda x: p.bind(x).sum())(X)
    with pytest.raises(NotImplementedError, match=r"bare.*batching\.primitive_batchers\[bare\]"):
        plait.vmap(lambda x: p.bind(x))(np.ones((2, 3), np.float32))
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), p.bind(*tangents))
    with pytest.raises(TypeError, match=r"cannot transpose bare.*ad\.primitive_transposes\[bare\]"):
        plait.grad(lambda x: p.bind(x).sum())(X)
    q = Primitive("nothing")
    with pytest.raises(NotImplementedError, match=r"nothing has no implementation: .*nothing\.def_impl"):
        q.bind(X)
    with pytest.raises(NotImplementedError, match=r"nothing has no abstract evaluation rule"):
        plait.jit(lambda x: q.bind(x))(X)


def test_wrong_rule_results_are_reported() -> None:
    p = _bare("bad_abstract")
    p.def_abstract_eval(lambda x: "f32[3]")
    with pytest.raises(TypeError, match="abstract evaluation rule of bad_abstract must return a ShapedArray"):
        plait.jit(lambda x: p.bind(x))(X)
    m = _bare("bad_multi")
    m.multiple_results = True
    with pytest.raises(TypeError, match="bad_multi must return a sequence of types"):
        plait.jit(lambda x: m.bind(x))(X)

    j = _bare("bad_jvp")
    ad.primitive_jvps[j] = lambda primals, tangents: j.bind(*primals)
    with pytest.raises(TypeError, match=r"the JVP rule of bad_jvp must return \(primal_out, tangent_out\)"):
        plait.jvp(lambda x: j.bind(x), (X,), (X,))

    t = _bare("bad_transpose")
    ad.deflinear2(t, lambda ct, x: [ct, ct])
    with pytest.raises(
        ValueError, match="transpose rule of bad_transpose returned 2 cotangents for 1 operands"
    ):
        plait.grad(lambda x: t.bind(x).sum())(X)

    b = _bare("bad_batch")
    batching.primitive_batchers[b] = lambda args, dims: (b.bind(*args), 5)
    with pytest.raises(ValueError, match="batching rule of bad_batch returned the batch dimension 5"):
        plait.vmap(lambda x: b.bind(x))(np.ones((2, 3), np.float32))

    w = _bare("bad_lowering")
    mlir.register_lowering(w, mlir.lower_fun(lambda x: x[:2], multiple_results=False))
    with pytest.raises(
        TypeError, match=r"lower_fun for bad_lowering returns \(f32\[2\]\).*says \(f32\[3\]\)"
    ):
        plait.jit(lambda x: w.bind(x))(X)


def test_wrong_registrations_are_refused() -> None:
    with pytest.raises(
        TypeError, match=r"expected a primitive \(plait\.extend\.core\.Primitive\), got 'sin'"
    ):
        ad.primitive_jvps["sin"] = lambda p, t: (p, t)  # type: ignore[index]
    with pytest.raises(TypeError, match=r"not a primitive made with plait\.extend\.core\.Primitive"):
        mlir.register_lowering(primitives.sin_p, mlir.lower_fun(jnp.sin))
    with pytest.raises(ValueError, match="defjvp: sincos has multiple results"):
        ad.defjvp(sincos_p, None)
    with pytest.raises(ValueError, match="unknown platform 'vulkan'"):
        mlir.register_lowering(sin_p, mlir.lower_fun(jnp.sin), platform="vulkan")
    with pytest.raises(TypeError, match="must be callable"):
        batching.primitive_batchers[sin_p] = 3  # type: ignore[assignment]
    with pytest.raises(TypeError, match="the name must be a string"):
        Primitive(3)  # type: ignore[arg-type]


def test_a_hand_written_mlir_rule_building_mlir_is_refused_when_used() -> None:
    p = _bare("hand_written")

    def _hand_written_rule(ctx: Any, x: Any) -> Any:
        return [mlir.ir_constant(1.0)]  # type: ignore[attr-defined]  # JAX's MLIR builders: plait has none

    mlir.register_lowering(p, _hand_written_rule)  # registering works, so a library imports
    with pytest.raises(
        NotImplementedError,
        match=r"not supported: the hand-written MLIR lowering of the primitive hand_written "
        r"\(_hand_written_rule\) uses what plait does not have: .*ir_constant",
    ):
        plait.jit(lambda x: p.bind(x))(X)
    np.testing.assert_allclose(p.bind(X), X)  # eager runs the impl


# ---------------------------------------------------------------------------
# The pattern of equinox's filter primitives: arbitrary objects as params,
# multiple results, rules that see pytrees


class _Flatten:
    """Records the output structure the first time it sees it (as equinox's does)."""

    def __init__(self) -> None:
        self.structure: Any = None

    def __call__(self, outs: Any) -> list[Any]:
        leaves, tree = plait.tree_util.tree_flatten(outs)
        if self.structure is None:
            self.structure = tree
        assert self.structure == tree
        return leaves


def _filter_primitive() -> Primitive:
    p = Primitive("filter_like")
    p.multiple_results = True

    def impl(*dynamic: Any, treedef: Any, static: Any, flatten: _Flatten) -> Any:
        a, b = plait.tree_util.tree_unflatten(treedef, dynamic)
        return flatten({"sum": a + b * static[0], "diff": a - b})

    def abstract(*dynamic: Any, treedef: Any, static: Any, flatten: _Flatten) -> Any:
        return flatten({"sum": dynamic[0], "diff": dynamic[0]})

    def jvp(primals: Any, tangents: Any, *, treedef: Any, static: Any, flatten: _Flatten) -> Any:
        tangents = [ad.instantiate_zeros(t) for t in tangents]
        outs = p.bind(*primals, treedef=treedef, static=static, flatten=flatten)
        touts = p.bind(*tangents, treedef=treedef, static=static, flatten=flatten)
        return outs, touts

    def transpose(cts: Any, *dynamic: Any, treedef: Any, static: Any, flatten: _Flatten) -> Any:
        cts = [ad.instantiate_zeros(c) for c in cts]
        diff, total = cts  # the flattened dict's order: "diff", "sum"
        return [total + diff if ad.is_undefined_primal(dynamic[0]) else None,
                total * static[0] - diff if ad.is_undefined_primal(dynamic[1]) else None]  # fmt: skip

    def batch(size: Any, name: Any, trace_type: Any, dynamic: Any, dims: Any, **params: Any) -> Any:
        moved = [batching.bdim_at_front(x, d, size) for x, d in zip(dynamic, dims)]
        return p.bind(*moved, **params), [0, 0]

    p.def_impl(impl)
    p.def_abstract_eval(abstract)
    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    batching.axis_primitive_batchers[p] = batch
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=True))
    return p


filter_p = _filter_primitive()


def _filter_call(a: Any, b: Any, scale: float) -> Any:
    flat, treedef = plait.tree_util.tree_flatten((a, b))
    flatten = _Flatten()
    outs = filter_p.bind(*flat, treedef=treedef, static=(scale,), flatten=flatten)
    return plait.tree_util.tree_unflatten(flatten.structure, outs)


def test_a_filter_primitive_in_the_manner_of_equinox() -> None:
    a, b = X, np.float32(2.0) * X
    out = _filter_call(a, b, 3.0)
    np.testing.assert_allclose(out["sum"], a + 3 * b, rtol=1e-6)
    out = plait.jit(lambda a, b: _filter_call(a, b, 3.0))(a, b)
    np.testing.assert_allclose(out["diff"], a - b, rtol=1e-6)
    ga, gb = plait.grad(lambda a, b: _filter_call(a, b, 3.0)["sum"].sum(), argnums=(0, 1))(a, b)
    np.testing.assert_allclose([ga, gb], [np.ones(3), np.full(3, 3.0)])
    vs = plait.vmap(lambda a: _filter_call(a, b, 3.0)["diff"])(np.stack([a, 2 * a]))
    np.testing.assert_allclose(vs, np.stack([a - b, 2 * a - b]), rtol=1e-6)
    g = plait.jit(plait.vmap(plait.grad(lambda a: _filter_call(a, a, 2.0)["diff"].sum() + 0 * a.sum())))
    np.testing.assert_allclose(g(np.stack([a, a])), np.zeros((2, 3)))


# ---------------------------------------------------------------------------
# Helpers libraries use next to their primitives


def test_partial_eval_of_a_wrapped_function() -> None:
    def f(x: Any, y: Any) -> Any:
        return [jnp.sin(x) * 2, x + y]

    aval = ShapedArray((3,), np.dtype(np.float32))
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(f), [pe.PartialVal.known(X), pe.PartialVal.unknown(aval)]
    )
    (pv0, known0), (pv1, known1) = out_pvals
    assert pv0 is None and pv1 == aval and known1 is None
    np.testing.assert_allclose(known0, 2 * np.sin(X), rtol=1e-6)
    assert len(jaxpr.invars) == 1 and len(consts) == len(jaxpr.constvars)


def test_linear_util_transformations() -> None:
    @lu.transformation2
    def add_one(f: Any, x: Any) -> Any:
        return f(x + 1)

    @lu.transformation_with_aux2
    def record(f: Any, store: Any, x: Any) -> Any:
        out = f(x)
        store.store(out * 10)
        return out

    @lu.transformation
    def times_two(x: Any) -> Any:
        ans = yield (2 * x,), {}
        yield ans

    fun, aux = record(times_two(add_one(lu.wrap_init(lambda x: x * x))))
    assert fun.call_wrapped(3) == 49  # ((3 * 2) + 1) ** 2
    assert aux() == 490
    with pytest.raises(lu.StoreException):
        record(lu.wrap_init(abs))[1]()


def test_opaque_trace_state_and_avals() -> None:
    outside = get_opaque_trace_state(convention="flax")
    assert outside == get_opaque_trace_state()
    inside: list[Any] = []
    plait.jit(lambda x: inside.append(get_opaque_trace_state()) or x)(X)
    assert inside[0] != outside
    aval = ShapedArray((4, 3), np.dtype(np.float32))
    assert mapped_aval(4, 0, aval).shape == (3,)
    assert unmapped_aval(5, 1, aval).shape == (4, 5, 3)
    assert isinstance(plait.make_jaxpr(my_sin)(X), ClosedJaxpr)


def test_a_jax_program_defines_a_primitive_under_compat(tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(
        textwrap.dedent("""
        import jax
        import numpy as np

        # `import jax` alone reaches jax.interpreters, as tensorflow-probability relies on
        print(jax.interpreters.xla.canonicalize_dtype_handlers[np.ndarray](np.ones(1)).dtype)

        import jax.numpy as jnp
        from jax.extend.core import Primitive
        from jax.interpreters import ad, batching, mlir

        cube_p = Primitive("cube")
        cube_p.def_impl(lambda x: np.asarray(x) ** 3)
        cube_p.def_abstract_eval(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype))
        ad.defjvp(cube_p, lambda g, x: 3 * x * x * g)
        batching.primitive_batchers[cube_p] = lambda args, dims: (cube_p.bind(*args), dims[0])
        mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x, multiple_results=False))

        x = jnp.arange(3.0)
        print(jax.jit(jax.vmap(jax.grad(lambda x: cube_p.bind(x))))(x).tolist())
        """)
    )
    done = subprocess.run(
        [sys.executable, "-m", "plait.compat", str(program)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["float32", str([0.0, 3.0, 12.0])]


def test_threefry_matches_jax() -> None:
    # recorded from JAX 0.10.2: jax.extend.random.threefry_2x32((0, 42), arange(4 | 5, dtype=uint32))
    out4 = threefry_2x32((np.uint32(0), np.uint32(42)), np.arange(4, dtype=np.uint32))
    out5 = threefry_2x32(np.array([0, 42], np.uint32), np.arange(5, dtype=np.uint32))
    np.testing.assert_array_equal(out4, [2465931498, 3679230171, 255383827, 267815257])
    np.testing.assert_array_equal(out5, [3134548294, 3733159049, 843694964, 894150801, 801545058])
    with pytest.raises(TypeError, match="key and count must be uint32"):
        threefry_2x32(np.array([0, 42], np.uint32), np.arange(4))


def test_canonicalize_dtype_handlers_make_a_type_an_array_type() -> None:
    class Wrapped:
        def __init__(self, value: Any) -> None:
            self.value = value

    xla.canonicalize_dtype_handlers[Wrapped] = lambda w: np.asarray(w.value)
    np.testing.assert_allclose(jnp.sin(Wrapped(X)), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(plait.jit(lambda x: x * 2)(Wrapped(X)), 2 * X)
    assert xla.canonicalize_dtype_handlers[np.ndarray](np.arange(2.0)).dtype == np.float32


def test_backend_and_source_info() -> None:
    assert backend.get_backend().platform == plait.default_backend()
    assert backend.get_backend().devices() == plait.devices()
    with pytest.raises(RuntimeError, match="Unknown backend 'tpu'"):
        backend.get_backend("tpu")
    source_info_util.register_exclusion("/some/library")
    assert "/some/library" in source_info_util.excluded_paths()
    with source_info_util.extend_name_stack("outer"), source_info_util.transform_name_stack("vmap"):
        assert str(source_info_util.current_name_stack()) == "outer/vmap()"
    assert str(source_info_util.current_name_stack()) == ""


def test_bind_with_trace_and_take_current_trace() -> None:
    def f(x: Any) -> Any:
        with take_current_trace() as trace:
            with pytest.raises(RuntimeError, match="my_sin was bound while the current trace was taken"):
                sin_p.bind(x)
            a = sin_p.bind_with_trace(trace, (x,), (None,), {})
            b = sin_p.bind_with_trace(trace, (x,), {})
        return a + b

    np.testing.assert_allclose(plait.jit(f)(X), 2 * np.sin(X), rtol=1e-6)
    with pytest.raises(TypeError, match="the params dict comes last"):
        sin_p.bind_with_trace(current_trace(), (X,))
    assert not (sin_p.call_primitive or sin_p.map_primitive)


def test_lazy_init_in_the_manner_of_flax() -> None:
    """flax's ``lazy_init``: flatten the call, partially evaluate with the
    ShapeDtypeStruct arguments unknown; the outputs must all be known."""

    def init(params: Any, x: Any) -> Any:
        return {"w": params["scale"] * jnp.ones(3), "shape_only": x.shape[0]}

    args = ({"scale": np.float32(2.0)}, ShapeDtypeStruct((5,), np.float32))
    leaves, in_tree = plait.tree_util.tree_flatten((args, {}))
    f_flat, out_tree = flatten_fun(
        lu.wrap_init(init, debug_info=debug_info("lazy_init", init, args, {})), in_tree
    )
    in_pvals = [
        pe.PartialVal.unknown(ShapedArray(x.shape, x.dtype))
        if isinstance(x, ShapeDtypeStruct)
        else pe.PartialVal.known(x)
        for x in leaves
    ]
    _, out_pvals, _ = pe.trace_to_jaxpr_nounits(f_flat, in_pvals)
    assert all(pv is None for pv, _ in out_pvals)
    out = plait.tree_util.tree_unflatten(out_tree(), [const for _, const in out_pvals])
    np.testing.assert_allclose(out["w"], np.full(3, 2.0))
    assert out["shape_only"] == 5
    g, g_tree = flatten_fun_nokwargs(lu.wrap_init(lambda a, b: a * b), plait.tree_util.tree_structure((1, 2)))
    assert g.call_wrapped(3, 4) == [12] and g_tree().num_leaves == 1


def test_a_library_gives_one_of_plaits_primitives_a_rule() -> None:
    """lineax gives stop_gradient a transpose rule at import, as JAX allows; it
    then replaces plait's refusal (in a fresh process: it is global)."""
    program = textwrap.dedent("""
        import numpy as np
        import plait
        from plait.extend.core import primitives
        from plait.interpreters import ad

        f = lambda x: plait.lax.stop_gradient(x) * 2.0
        ones = np.ones(2, np.float32)
        try:
            plait.linear_transpose(f, ones)(ones)
        except TypeError as e:
            print("before:", type(e).__name__)
        ad.primitive_transposes[primitives.stop_gradient_p] = lambda ct, x: (ct,)
        print("after:", plait.linear_transpose(f, ones)(ones)[0].tolist())
        print("grad:", plait.grad(lambda x: (plait.lax.stop_gradient(x) * x).sum())(ones).tolist())
        """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["before: NonlinearError", "after: [2.0, 2.0]", "grad: [1.0, 1.0]"]


def test_rule_tables_behave_as_mappings() -> None:
    p = _bare("deletable")
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(*args), dims[0])
    ys = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(plait.vmap(lambda x: p.bind(x))(ys), ys)
    assert p in batching.primitive_batchers and p in dict(batching.primitive_batchers.items())
    del batching.primitive_batchers[p]
    assert p not in batching.primitive_batchers
    with pytest.raises(NotImplementedError, match=r"its rule was deleted from batching\.primitive_batchers"):
        plait.vmap(lambda x: p.bind(x))(ys)
    with pytest.raises(KeyError):
        del batching.primitive_batchers[p]
    assert primitives.sin_p in set(ad.primitive_jvps.keys())


def test_trace_queries() -> None:
    seen: dict[str, Any] = {}

    def f(x: Any) -> Any:
        seen["jit"] = xcore.unsafe_am_i_under_a_jit_DO_NOT_USE()
        seen["vmap"] = xcore.unsafe_am_i_under_a_vmap_DO_NOT_USE()
        seen["names"] = xcore.unsafe_get_axis_names_DO_NOT_USE()
        seen["top_is_x"] = xcore.find_top_trace([np.float32(1.0), x]) is x._trace
        return x

    plait.jit(plait.vmap(f, axis_name="rows"))(np.ones((2, 3), np.float32))
    assert seen == {"jit": True, "vmap": True, "names": ("rows",), "top_is_x": True}
    assert not xcore.unsafe_am_i_under_a_jit_DO_NOT_USE() and not xcore.unsafe_am_i_under_a_vmap_DO_NOT_USE()
    assert xcore.find_top_trace([1.0]) is current_trace()
    v = xcore.gensym()(ShapedArray((2,), np.dtype(np.float32)))
    assert isinstance(v, xcore.Var) and not isinstance(v, xcore.DropVar)
    assert xcore.DropVar is plait.core.DropVar  # one class, as in JAX


def test_apply_primitive_without_a_lowering_is_refused() -> None:
    p = Primitive("no_lowering_apply")
    p.def_impl(functools.partial(xla.apply_primitive, p))
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    with pytest.raises(
        NotImplementedError, match="apply_primitive: the primitive no_lowering_apply has no lowering"
    ):
        p.bind(X)


def _make_badd() -> Primitive:
    p = Primitive("broadcasting_add")
    p.def_impl(lambda x, y: np.add(np.asarray(x), np.asarray(y)))
    p.def_abstract_eval(
        lambda x, y: ShapedArray(np.broadcast_shapes(x.shape, y.shape), np.result_type(x.dtype, y.dtype))
    )
    mlir.register_lowering(p, mlir.lower_fun(lambda x, y: x + y, multiple_results=False))
    batching.defbroadcasting(p)
    return p


badd_p = _make_badd()


@pytest.mark.parametrize(
    ("x", "y", "in_axes"),
    [
        (np.ones((4, 3), np.float32), np.arange(12.0, dtype=np.float32).reshape(4, 3), (0, 0)),
        (np.arange(12.0, dtype=np.float32).reshape(4, 3), np.arange(3.0, dtype=np.float32), (0, None)),
        (np.arange(12.0, dtype=np.float32).reshape(3, 4), np.float32(5.0), (1, None)),
        (np.arange(4.0, dtype=np.float32), np.arange(3.0, dtype=np.float32), (0, None)),
        (np.arange(3.0, dtype=np.float32), np.arange(12.0, dtype=np.float32).reshape(3, 4), (None, 1)),
    ],
    ids=["both", "x only", "axis 1 and a scalar", "batched scalar", "y on axis 1"],
)
def test_defbroadcasting(x: Any, y: Any, in_axes: Any) -> None:
    out = plait.jit(plait.vmap(lambda a, b: badd_p.bind(a, b), in_axes=in_axes))(x, y)
    size = (x if in_axes[0] is not None else y).shape[in_axes[0] if in_axes[0] is not None else in_axes[1]]
    expected = [
        np.add(
            x if in_axes[0] is None else np.take(x, i, in_axes[0]),
            y if in_axes[1] is None else np.take(y, i, in_axes[1]),
        )
        for i in range(size)
    ]
    np.testing.assert_allclose(out, np.stack(expected), rtol=1e-6)


def test_batching_tables_share_one_registry() -> None:
    p = _bare("two_tables")
    plain = lambda args, dims: (p.bind(*args), dims[0])  # noqa: E731
    fancy = lambda axis, args, dims: (p.bind(*args) * axis.size, dims[0])  # noqa: E731
    batching.primitive_batchers[p] = plain
    batching.fancy_primitive_batchers[p] = fancy  # the later registration is the rule
    ys = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(plait.vmap(lambda x: p.bind(x))(ys), 2 * ys)
    assert p not in batching.primitive_batchers and batching.fancy_primitive_batchers[p] is fancy
    with pytest.raises(KeyError):
        del batching.primitive_batchers[p]
    del batching.fancy_primitive_batchers[p]  # back to the rule it replaced
    np.testing.assert_allclose(plait.vmap(lambda x: p.bind(x))(ys), ys)
    assert batching.primitive_batchers[p] is plain and p not in batching.fancy_primitive_batchers
    assert list(ad.primitive_jvps).count(primitives.sin_p) == 1


def test_compile_time_eval_stages_on_a_running_transformation() -> None:
    """As in JAX (equinox's error_if relies on it): inside ensure_compile_time_eval
    under jit, the primitive applied to a traced operand is staged, not refused."""
    seen: list[Any] = []

    def f(x: Any) -> Any:
        with plait.ensure_compile_time_eval():
            y = sin_p.bind(x)
            seen.append(isinstance(y, plait_core.Tracer))
            z = sin_p.bind(np.float32(0.5))  # no tracer: evaluated now
            seen.append(isinstance(z, plait_core.Tracer))
        return y + z

    np.testing.assert_allclose(plait.jit(f)(X), np.sin(X) + np.sin(0.5), rtol=1e-6)
    assert seen == [True, False]
    leaked: list[Any] = []
    plait.jit(lambda x: leaked.append(x) or x)(X)
    with pytest.raises(plait_core.TracerLeakError):
        sin_p.bind(leaked[0])


EQUINOX_PROGRAM = """
import jax
import jax.numpy as jnp
import equinox as eqx
import equinox.internal as eqxi
from equinox._unvmap import unvmap_any

x = jnp.arange(3.0)
print(bool(jax.jit(unvmap_any)(x > 1)), jax.vmap(unvmap_any)(x > 1).tolist())
print(jax.jit(jax.vmap(lambda x: eqx.error_if(x, x > 5, "too big")))(x).tolist())
print(jax.jit(eqxi.nondifferentiable_backward)(x).tolist())
try:
    jax.grad(lambda x: eqxi.nondifferentiable_backward(x).sum())(x)
except RuntimeError as e:
    print("refused:", str(e).split(".")[0])
try:
    jax.vmap(eqxi.nonbatchable)(x)
except ValueError as e:
    print("refused:", str(e).split(".")[0])
"""


@pytest.mark.skipif(importlib.util.find_spec("equinox") is None, reason="equinox is not installed")
def test_equinox_primitives_under_compat(tmp_path: Path) -> None:
    """equinox's own primitives (made with jax.extend.core.Primitive), run by
    plait through plait.compat; the expected lines are JAX 0.10.2's."""
    program = tmp_path / "program.py"
    program.write_text(EQUINOX_PROGRAM)
    done = subprocess.run(
        [sys.executable, "-m", "plait.compat", str(program)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "True [True, True, True]",
        "[0.0, 1.0, 2.0]",
        "[0.0, 1.0, 2.0]",
        "refused: Unexpected cotangent",
        "refused: Unexpected batch tracer",
    ]
