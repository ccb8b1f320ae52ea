"""The custom-rule calls under ``mask`` keep their rules.

``mask`` binds ``custom_jvp_call``, ``custom_vjp_call``, ``custom_ivjp_call``
and ``custom_vmap_call`` again with masked rules; a transformation applied
outside ``mask`` calls those.  These tests call the masked rules the way
autodiff and batching do (through the staged equation's params) and compare
the logical part of what they return with the user's rule applied by NumPy;
cotangents must be zero in the padding.  The rules below are deliberately
not the true derivatives (or batching) of their functions, so a bypassed
rule shows.  The end-to-end tests with ``grad``/``vmap`` are in the root
``tests/test_cross_package_rules.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import ClosedJaxpr, JaxprEqn, check_jaxpr, eval_jaxpr, lax, make_jaxpr
from plait_core.jaxpr import Literal, literal_value
from plait_masking import mask

SHAPES = [("n", (8,)), ("(n, 2)", (6, 2))]
SIZES = [1, 3, 6]
DTYPES = [np.float32, np.float16]
rng = np.random.default_rng(5)


def _data(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return rng.uniform(-1.5, 1.5, shape).astype(dtype)


def _tol(dtype: Any) -> dict[str, Any]:
    return {"rtol": 2e-2, "atol": 2e-2} if np.dtype(dtype) == np.float16 else {"rtol": 1e-5, "atol": 1e-6}


def eqn_and_operands(fun: Callable[..., Any], args: Sequence[Any], name: str) -> tuple[JaxprEqn, list[Any]]:
    """Stage ``fun`` (checked), then evaluate it up to its equation ``name``:
    that equation and the values of its operands."""
    closed: ClosedJaxpr = make_jaxpr(fun)(*args)
    check_jaxpr(closed)
    env: dict[Any, Any] = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))

    def read(a: Any) -> Any:
        return literal_value(a) if type(a) is Literal else env[a]

    for e in closed.eqns:
        vals = [read(a) for a in e.invars]
        if e.primitive.name == name:
            return e, vals
        out = e.primitive.bind(*vals, **e.params)
        env.update(zip(e.outvars, out if e.primitive.multiple_results else [out]))
    raise AssertionError(f"no {name} equation in {closed}")


def _logical(x: np.ndarray, n: int) -> np.ndarray:
    return np.asarray(x)[:n]


def _masked(f: Callable[..., Any], spec: str) -> Callable[..., Any]:
    m = mask(f, [spec], spec)
    return lambda x, n: m([x], {"n": n})


# ---------------------------------------------------------------------------
# custom_jvp


def _cjvp() -> Any:
    f = lax.custom_jvp(lambda x: pnp.sin(x))
    f.defjvp(lambda p, t: (pnp.sin(p[0]), t[0] * pnp.cos(p[0]) * 3.0))  # 3x the true tangent
    return f


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("spec", "shape"), SHAPES)
def test_masked_jvp_rule_is_the_users_rule(spec: str, shape: tuple[int, ...], n: int, dtype: Any) -> None:
    x, t = _data(shape, dtype), _data(shape, dtype)
    eqn, ops = eqn_and_operands(_masked(_cjvp(), spec), [x, np.int32(n)], "custom_jvp_call")
    lead = eqn.params["num_consts"]
    assert lead >= 1  # the logical size is a leading operand
    jj = eqn.params["jvp_jaxpr_fun"]([False] * lead + [True])
    check_jaxpr(jj.jaxpr)
    primal, tangent = eval_jaxpr(jj.jaxpr.jaxpr, jj.jaxpr.consts, *ops, t)
    x64, t64 = x.astype(np.float64), t.astype(np.float64)
    np.testing.assert_allclose(_logical(primal, n), np.sin(x64)[:n], **_tol(dtype))
    np.testing.assert_allclose(_logical(tangent, n), (3 * t64 * np.cos(x64))[:n], **_tol(dtype))
    assert jj.out_nonzeros == (True,)


def test_masked_jvp_rule_refuses_a_perturbed_leading_operand() -> None:
    eqn, _ = eqn_and_operands(_masked(_cjvp(), "n"), [np.ones(8, np.float32), np.int32(3)], "custom_jvp_call")
    lead = eqn.params["num_consts"]
    with pytest.raises(TypeError, match=r"The custom_jvp function <lambda> was differentiated with respect to a value it closes over"):
        eqn.params["jvp_jaxpr_fun"]([True] * lead + [True])


@pytest.mark.parametrize("n", SIZES)
def test_masked_custom_jvp_value_eager_and_staged(n: int) -> None:
    x = _data((8,), np.float32)
    g = _masked(_cjvp(), "n")
    closed = make_jaxpr(g)(x, np.int32(n))
    check_jaxpr(closed)
    (staged,) = eval_jaxpr(closed.jaxpr, closed.consts, x, np.int32(n))
    np.testing.assert_allclose(np.asarray(g(x, n))[:n], np.sin(x)[:n], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(staged)[:n], np.sin(x)[:n], rtol=1e-6)


# ---------------------------------------------------------------------------
# custom_vjp


def _cvjp() -> Any:
    f = lax.custom_vjp(lambda x: pnp.sin(x) * pnp.sum(x))
    f.defvjp(lambda x: (pnp.sin(x) * pnp.sum(x), (x, pnp.cos(x))), lambda r, g: (g * r[1] * 5.0,))
    return f


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("spec", "shape"), SHAPES)
def test_masked_fwd_and_bwd_are_the_users_rules(spec: str, shape: tuple[int, ...], n: int, dtype: Any) -> None:
    x = _data(shape, dtype)
    x[n:] = np.nan  # padding: must reach neither the logical results nor the cotangent
    g = _data(shape, dtype)
    eqn, ops = eqn_and_operands(_masked(_cvjp(), spec), [x, np.int32(n)], "custom_vjp_call")
    lead = eqn.params["num_consts"]
    fj = eqn.params["fwd_jaxpr_thunk"]([False] * lead + [True])
    check_jaxpr(fj.jaxpr)
    outs = eval_jaxpr(fj.jaxpr.jaxpr, fj.jaxpr.consts, *ops)
    out, res = outs[0], outs[1:]
    assert fj.num_res == len(res) == 3  # x, cos(x), then the logical size
    x64 = x.astype(np.float64)[:n]
    np.testing.assert_allclose(_logical(out, n), np.sin(x64) * x64.sum(), **_tol(dtype))
    cts = eqn.params["bwd"](*res, g)
    assert cts[:lead] == [None] * lead
    (ct,) = cts[lead:]
    np.testing.assert_allclose(_logical(ct, n), 5 * g.astype(np.float64)[:n] * np.cos(x64), **_tol(dtype))
    np.testing.assert_array_equal(np.asarray(ct)[n:], np.zeros_like(x[n:]))


def test_masked_bwd_with_a_zero_output_cotangent() -> None:
    x = _data((8,), np.float32)
    eqn, ops = eqn_and_operands(_masked(_cvjp(), "n"), [x, np.int32(3)], "custom_vjp_call")
    fj = eqn.params["fwd_jaxpr_thunk"]()
    res = eval_jaxpr(fj.jaxpr.jaxpr, fj.jaxpr.consts, *ops)[1:]
    ct = eqn.params["bwd"](*res, None)[-1]
    np.testing.assert_array_equal(ct, np.zeros(8, np.float32))


def test_masked_fwd_refuses_a_perturbed_leading_operand() -> None:
    eqn, _ = eqn_and_operands(_masked(_cvjp(), "n"), [np.ones(8, np.float32), np.int32(3)], "custom_vjp_call")
    lead = eqn.params["num_consts"]
    with pytest.raises(TypeError, match=r"The custom_vjp function <lambda> was differentiated with respect to a value it closes over"):
        eqn.params["fwd_jaxpr_thunk"]([True] * (lead + 1))


# ---------------------------------------------------------------------------
# custom_ivjp


def _civjp() -> Any:
    f = lax.custom_ivjp(lambda x: x * 2.0)
    f.defivjp(lambda xs, ys, dys: ((ys / 2.0,), (dys * 3.0,)))  # 3: not the true VJP (2)
    return f


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("spec", "shape"), SHAPES)
def test_masked_ivjp_is_the_users_rule(spec: str, shape: tuple[int, ...], n: int) -> None:
    x, dy = _data(shape, np.float32), _data(shape, np.float32)
    eqn, ops = eqn_and_operands(_masked(_civjp(), spec), [x, np.int32(n)], "custom_ivjp_call")
    lead = eqn.params["num_consts"]
    y = 2 * x
    xs, dxs = eqn.params["ivjp"]([*ops[:lead], None], [y], [dy])
    assert dxs[:lead] == [None] * lead
    np.testing.assert_allclose(_logical(xs[lead], n), x[:n], rtol=1e-6)
    np.testing.assert_allclose(_logical(dxs[lead], n), 3 * dy[:n], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(dxs[lead])[n:], np.zeros_like(x[n:]))
    _, zero = eqn.params["ivjp"]([*ops[:lead], None], [y], [None])
    np.testing.assert_array_equal(zero[lead], np.zeros_like(x))


# ---------------------------------------------------------------------------
# custom_vmap


def _cvmap(seen: list[Any]) -> Any:
    f = lax.custom_vmap(lambda x: pnp.sin(x))

    def rule(axis_size: int, in_batched: list[bool], x: Any) -> Any:
        seen.append(x.shape)
        return x * 2.0 + 1.0, in_batched[0]  # not the batched sin: shows that the rule ran

    f.def_vmap(rule)
    return f


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("spec", "shape"), SHAPES)
def test_masked_vmap_rule_is_the_users_rule(spec: str, shape: tuple[int, ...], n: int) -> None:
    seen: list[Any] = []
    eqn, ops = eqn_and_operands(_masked(_cvmap(seen), spec), [np.ones(shape, np.float32), np.int32(n)], "custom_vmap_call")
    lead = eqn.params["num_consts"]
    xb = _data((4, *shape), np.float32)
    outs, out_batched = eqn.params["rule"](4, [False] * lead + [True], *ops[:lead], xb)
    assert out_batched == [True]
    np.testing.assert_allclose(np.asarray(outs[0])[:, :n], 2 * xb[:, :n] + 1, rtol=1e-6)
    assert len(seen) == 1 and str(seen[0][1]) == "n"  # the rule saw the logical shape (4, n, ...)


def test_masked_vmap_rule_refuses_per_element_logical_sizes() -> None:
    eqn, ops = eqn_and_operands(_masked(_cvmap([]), "n"), [np.ones(8, np.float32), np.int32(3)], "custom_vmap_call")
    lead = eqn.params["num_consts"]
    sizes = np.array([2, 3, 4, 5], np.int32)
    with pytest.raises(NotImplementedError, match=r"mask: the custom_vmap function <lambda> is batched by a vmap outside mask that gives each element its own logical size \(n\); its batching rule expects a batch of values of one logical shape"):
        eqn.params["rule"](4, [False] * (lead - 1) + [True, True], *ops[: lead - 1], sizes, np.ones((4, 8), np.float32))

