"""Calls inside ``vmap`` over piles stay calls, and keep their custom rules.

``closed_call``, ``checkpoint`` and ``invertible_call`` on ragged values are
bound again around their body mapped over the piles; ``custom_jvp_call``,
``custom_vjp_call`` and ``custom_ivjp_call`` also keep their rules, mapped
the same way, so that a transformation outside the ``vmap`` uses them.
These tests call the mapped rules the way autodiff does (through the staged
equation's params) and compare each element's true slice with the user's
rule applied by NumPy; the rules are deliberately not the true derivatives,
so a bypassed rule shows.  ``custom_vmap_call`` on ragged values is refused.
The end-to-end test with ``grad`` is in the root ``tests/test_cross_package_rules.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from pile_checks import check_pile, ragged_pile

import plait_core as pc
import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, ragged_rules, vmap
from plait_core import ClosedJaxpr, JaxprEqn, lax
from plait_core.dims import symbolic_dims
from plait_core.jaxpr import Literal, literal_value
from plait_core.primitives.calls import custom_vmap_call_p

P = pile_axis
f32 = np.float32
LENGTHS = [[2, 4, 3], [1, 1], [3, 3, 3]]
TAILS = [(), (2,)]
rng = np.random.default_rng(9)


def whole(x: Any) -> Any:
    """``x``, a pile mapped as a whole (without static lengths, so not in
    buckets: the tests that read the one equation of a call need it)."""
    if not isinstance(x, Pile):
        return x
    return Pile(x.data, x.lengths, x.ragged_axis, layout=x.layout, capacity=x.capacity, full=x.full,
                static_lengths=False)  # fmt: skip


def eqn_and_operands(fun: Callable[..., Any], args: Sequence[Any], name: str) -> tuple[JaxprEqn, list[Any]]:
    """Stage ``fun`` (checked) on ``args`` with their piles mapped whole, then
    evaluate it up to its equation ``name``: that equation and the values of
    its operands."""
    args = [whole(a) for a in args]
    flat = pc.tree_util.tree_leaves(list(args))
    closed: ClosedJaxpr = pc.make_jaxpr(fun)(*args)
    pc.check_jaxpr(closed)
    env: dict[Any, Any] = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, flat))

    def read(a: Any) -> Any:
        return literal_value(a) if type(a) is Literal else env[a]

    for e in closed.eqns:
        vals = [read(a) for a in e.invars]
        if e.primitive.name == name:
            return e, vals
        out = e.primitive.bind(*vals, **e.params)
        env.update(zip(e.outvars, out if e.primitive.multiple_results else [out]))
    raise AssertionError(f"no {name} equation in {closed}")


def slices(x: Any, lengths: Sequence[int]) -> list[np.ndarray]:
    return [np.asarray(x)[i, : int(n)] for i, n in enumerate(lengths)]


def padding(x: Any, lengths: Sequence[int]) -> list[np.ndarray]:
    return [np.asarray(x)[i, int(n) :] for i, n in enumerate(lengths)]


# ---------------------------------------------------------------------------
# custom_jvp


def cjvp() -> Any:
    f = lax.custom_jvp(lambda x: pnp.sin(x))
    f.defjvp(lambda p, t: (pnp.sin(p[0]), t[0] * pnp.cos(p[0]) * 3.0))  # 3x the true tangent
    return f


@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("lengths", LENGTHS)
def test_mapped_jvp_rule_is_the_users_rule(lengths: list[int], tail: tuple[int, ...]) -> None:
    pile, elems = ragged_pile(rng, lengths, tail)
    eqn, ops = eqn_and_operands(vmap(cjvp(), in_axes=P, out_axes=P), [pile], "custom_jvp_call")
    lead = eqn.params["num_consts"]
    assert lead >= 1  # the lengths are a leading operand
    jj = eqn.params["jvp_jaxpr_fun"]([False] * lead + [True])
    pc.check_jaxpr(jj.jaxpr)
    t = rng.standard_normal(np.shape(pile.data)).astype(f32)
    primal, tangent = pc.eval_jaxpr(jj.jaxpr.jaxpr, jj.jaxpr.consts, *ops, t)
    for x, p, d, tt in zip(elems, slices(primal, lengths), slices(tangent, lengths), slices(t, lengths)):
        np.testing.assert_allclose(p, np.sin(x), rtol=1e-5)
        np.testing.assert_allclose(d, 3 * np.cos(x) * tt, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match=r"The custom_jvp function <lambda> was differentiated with respect to a value it closes over"):
        eqn.params["jvp_jaxpr_fun"]([True] * (lead + 1))


@pytest.mark.parametrize("lengths", LENGTHS)
def test_custom_jvp_values_over_piles(lengths: list[int]) -> None:
    pile, _ = ragged_pile(rng, lengths, (2,))
    check_pile(cjvp(), np.sin, [pile], P, P)


# ---------------------------------------------------------------------------
# custom_vjp


def cvjp() -> Any:
    f = lax.custom_vjp(lambda x, w: pnp.sin(x) * w)
    f.defvjp(lambda x, w: (pnp.sin(x) * w, (pnp.cos(x), w)), lambda r, g: (g * r[0] * 5.0, pnp.sum(g) * 7.0))
    return f


@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("lengths", LENGTHS)
def test_mapped_fwd_and_bwd_are_the_users_rules(lengths: list[int], tail: tuple[int, ...]) -> None:
    pile, elems = ragged_pile(rng, lengths, tail)
    w = f32(1.5)
    eqn, ops = eqn_and_operands(vmap(cvjp(), in_axes=(P, None), out_axes=P), [pile, w], "custom_vjp_call")
    lead = eqn.params["num_consts"]
    fj = eqn.params["fwd_jaxpr_thunk"]()
    pc.check_jaxpr(fj.jaxpr)
    outs = pc.eval_jaxpr(fj.jaxpr.jaxpr, fj.jaxpr.consts, *ops)
    out, res = outs[0], outs[1:]
    assert fj.num_res == len(res) == 3  # cos(x), w, then the lengths
    for x, o in zip(elems, slices(out, lengths)):
        np.testing.assert_allclose(o, np.sin(x) * w, rtol=1e-5)
    g = rng.standard_normal(np.shape(out)).astype(f32)
    cts = eqn.params["bwd"](*res, g)
    assert cts[:lead] == [None] * lead
    dx, dw = cts[lead:]
    for x, d, gg in zip(elems, slices(dx, lengths), slices(g, lengths)):
        np.testing.assert_allclose(d, 5 * gg * np.cos(x), rtol=1e-5, atol=1e-6)
    for pad in padding(dx, lengths):
        np.testing.assert_array_equal(pad, np.zeros_like(pad))
    # w is the same for every element: its cotangent is summed over them (each
    # element's rule sums the true slice of its cotangent).
    np.testing.assert_allclose(dw, 7 * sum(gg.sum() for gg in slices(g, lengths)), rtol=1e-4)
    zero = eqn.params["bwd"](*res, None)[lead]
    np.testing.assert_array_equal(zero, np.zeros_like(dx))


# ---------------------------------------------------------------------------
# custom_ivjp


def civjp() -> Any:
    f = lax.custom_ivjp(lambda x: x * 2.0)
    f.defivjp(lambda xs, ys, dys: ((ys / 2.0,), (dys * 3.0,)))  # 3: not the true VJP (2)
    return f


@pytest.mark.parametrize("lengths", LENGTHS)
def test_mapped_ivjp_is_the_users_rule(lengths: list[int]) -> None:
    pile, elems = ragged_pile(rng, lengths, (2,))
    eqn, ops = eqn_and_operands(vmap(civjp(), in_axes=P, out_axes=P), [pile], "custom_ivjp_call")
    lead = eqn.params["num_consts"]
    y = 2 * np.asarray(pile.data)
    dy = rng.standard_normal(y.shape).astype(f32)
    xs, dxs = eqn.params["ivjp"]([*ops[:lead], None], [y], [dy])
    assert xs[:lead] == ops[:lead] and dxs[:lead] == [None] * lead
    for x, got, d, g in zip(elems, slices(xs[lead], lengths), slices(dxs[lead], lengths), slices(dy, lengths)):
        np.testing.assert_allclose(got, x, rtol=1e-6)
        np.testing.assert_allclose(d, 3 * g, rtol=1e-6)
    for pad in padding(dxs[lead], lengths):
        np.testing.assert_array_equal(pad, np.zeros_like(pad))


# ---------------------------------------------------------------------------
# custom_vmap: refused on ragged values


def cvmap(calls: list[int]) -> Any:
    f = lax.custom_vmap(lambda x: pnp.sin(x))

    def rule(axis_size: int, in_batched: list[bool], x: Any) -> Any:
        calls.append(axis_size)
        return pnp.sin(x) * 2.0, in_batched[0]

    f.def_vmap(rule)
    return f


def test_custom_vmap_on_ragged_values_is_refused() -> None:
    pile, _ = ragged_pile(rng, [2, 4], (2,))
    with pytest.raises(NotImplementedError, match=r"vmap over piles: custom_vmap_call is not supported on ragged values \(element types f32\[_pile\d+,2\]\): a custom_vmap function's batching rule expects a rectangular batch"):
        vmap(cvmap([]), in_axes=P, out_axes=P)(pile)
    reason = ragged_rules.unsupported_reason(custom_vmap_call_p)
    assert reason is not None and "custom_vmap" in reason and "pile" in reason


def test_custom_vmap_on_rectangular_values_inside_a_pile_vmap_uses_the_rule(layout_of_piles: str) -> None:
    pile, _ = ragged_pile(rng, [2, 4], (2,))
    calls: list[int] = []
    f = cvmap(calls)
    ys = rng.standard_normal((2, 3)).astype(f32)
    out = vmap(lambda x, y: (x * 1.0, f(y)), in_axes=(P, 0), out_axes=(P, 0))(pile, ys)
    np.testing.assert_allclose(out[1], 2 * np.sin(ys), rtol=1e-6)
    assert calls == ([1, 1] if layout_of_piles == "buckets" else [2])  # once per bucket (lengths 4, then 2)


# ---------------------------------------------------------------------------
# Plain calls stay calls


def body(x: Any) -> Any:
    return pnp.sin(x) * 2.0 + pnp.mean(x)


@pytest.mark.parametrize(
    ("wrap", "prim"),
    [(pc.checkpoint, "checkpoint"), (pc.invertible, "invertible_call"), (lax.named_call, "closed_call")],
)
@pytest.mark.parametrize("lengths", LENGTHS)
def test_calls_stay_calls_over_piles(wrap: Any, prim: str, lengths: list[int]) -> None:
    pile, _ = ragged_pile(rng, lengths, (2,))
    fun = wrap(body)
    check_pile(fun, lambda x: np.sin(x) * 2 + x.mean(), [pile], P, P)
    closed = pc.make_jaxpr(vmap(fun, in_axes=P, out_axes=P))(whole(pile))
    (eqn,) = [e for e in closed.eqns if e.primitive.name == prim]
    inner = eqn.params["call_jaxpr" if prim == "closed_call" else "jaxpr"]
    avals = [a.str_short() for a in inner.in_avals]
    assert f"i32[{len(lengths)}]" in avals[:-1]  # the lengths, a leading operand
    assert avals[-1] == pc.get_aval(pile.data).str_short()  # the padded data


# ---------------------------------------------------------------------------
# A Pile needs concrete sizes


def test_pile_with_a_symbolic_padded_size_is_an_error() -> None:
    (n,) = symbolic_dims("n")
    lengths = np.array([1, 2], np.int32)
    with pytest.raises(TypeError, match=r"Pile: a Pile's padded size must be a concrete integer, got n \(axis 1 of data of shape \(2, n\)\)"):
        pc.eval_shape(lambda x: Pile(x, lengths).data, pc.ShapeDtypeStruct((2, n), f32))
    with pytest.raises(TypeError, match=r"Pile: a Pile's number of elements must be a concrete integer, got n \(axis 0 of data of shape \(n, 3\)\)"):
        pc.eval_shape(lambda x: Pile(x, lengths).data, pc.ShapeDtypeStruct((n, 3), f32))

