"""plait_core.rebound_rules with a toy interpreter: the identity, with one
hoisted constant and one size as leading operands, recording what the
wrapped rules ask of it.  Values against NumPy; every error's message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import lax
from plait_core.abstract import ShapedArray, get_aval
from plait_core.custom_derivatives import SymbolicZero, custom_jvp, custom_vjp
from plait_core.invertible import custom_ivjp
from plait_core.jaxpr import ClosedJaxpr, JaxprEqn
from plait_core.primitives.calls import custom_jvp_call_p, custom_vmap_call_p
from plait_core.rebound_rules import (
    ReboundBwd,
    ReboundFwdJaxprThunk,
    ReboundIvjp,
    ReboundJvpJaxprFun,
    RuleFrame,
    rebind_custom_call,
    rebound_rules,
    rule_name,
)
from plait_core.staging import trace_to_jaxpr

CONST, SIZE = np.float32(7.0), np.int32(5)


class ToyFrame(RuleFrame[None]):
    """The identity interpreter; leading operands ``(CONST, SIZE)``."""

    label, where, sizes_noun = "toy", "toy", "the toy sizes"

    def __init__(self) -> None:
        super().__init__(2, 1)
        self.lead_avals = [get_aval(CONST), get_aval(SIZE)]
        self.staged: list[tuple[list[int | None], bool]] = []
        self.runs: list[tuple[list[Any], list[int | None]]] = []
        self.zeroed: list[ShapedArray] = []

    def stage(self, closed: ClosedJaxpr, origin: Sequence[int | None], with_sizes: bool) -> ClosedJaxpr:
        self.staged.append((list(origin), with_sizes))

        def flat(*xs: Any) -> list[Any]:
            outs = pc.eval_jaxpr(closed.jaxpr, closed.consts, *xs[self.num_lead :])
            return [*outs, *self.sizes_of(xs)] if with_sizes else outs

        return trace_to_jaxpr(flat, [*self.lead_avals, *closed.in_avals])

    def run(
        self, sizes: Sequence[Any], fun: Callable[..., Any], values: Sequence[Any], avals: Sequence[ShapedArray],
        origin: Sequence[int | None],
    ) -> tuple[None, Any]:  # fmt: skip
        self.runs.append((list(sizes), list(origin)))
        return None, fun(*values)

    def zeros(self, aval: ShapedArray) -> Any:
        self.zeroed.append(aval)
        return np.zeros(aval.shape, aval.dtype)

    def operand_values(self, trace: None, xs: Sequence[Any]) -> list[Any]:
        return list(xs)

    def cotangents(self, trace: None, cts: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
        return list(cts)


def _x(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.2, 1.5, (3,)).astype(np.float32)


def _eqn(f: Any, *args: Any) -> JaxprEqn:
    closed: ClosedJaxpr = pc.make_jaxpr(f)(*args)
    (eqn,) = closed.eqns
    return eqn


def _run(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return pc.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _close(actual: Any, expected: Any) -> None:
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-6, atol=1e-6)


def _sin_times() -> custom_jvp[Any]:
    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return lax.mul(lax.sin(x), y)

    f.defjvp(lambda p, t: (f(*p), lax.add(lax.mul(lax.mul(lax.cos(p[0]), t[0]), p[1]), lax.mul(lax.sin(p[0]), t[1]))))
    return f


def test_jvp_jaxpr_fun_stages_the_rule_under_the_frame() -> None:
    x, y, xd = _x(1), _x(2), _x(3)
    eqn = _eqn(_sin_times(), x, y)
    frame = ToyFrame()
    fun = ReboundJvpJaxprFun(eqn.params["jvp_jaxpr_fun"], frame, eqn.params["call_jaxpr"].in_avals, [])
    jj = fun([False, False, True, False])
    assert frame.staged == [([0, 1, 0], False)]  # the tangent of x is like x
    assert len(jj.jaxpr.in_avals) == 5 and jj.out_nonzeros == (True,)
    out, tan = _run(jj.jaxpr, CONST, SIZE, x, y, xd)
    _close(out, np.sin(x) * y)
    _close(tan, np.cos(x) * xd * y)
    assert fun([False, False, True, False]) is jj and len(frame.staged) == 1  # memoized per flags
    assert repr(fun).startswith("toy(")
    with pytest.raises(TypeError, match=r"The custom_jvp function f was differentiated with respect to a value it closes over"):
        fun([False, True, True, False])


def _sin_vjp(symbolic_zeros: bool) -> custom_vjp[Any]:
    @custom_vjp
    def f(x: Any) -> Any:
        return lax.sin(x)

    def bwd(res: Any, g: Any) -> Any:
        if isinstance(g, SymbolicZero):
            return (None,)
        return (lax.mul(res, g),)

    def fwd(x: Any) -> Any:
        x = x.value if symbolic_zeros else x  # a CustomVJPPrimal
        return f(x), lax.cos(x)

    f.defvjp(fwd, bwd, symbolic_zeros=symbolic_zeros)
    return f


def _wrapped_vjp(symbolic_zeros: bool) -> tuple[ToyFrame, ReboundFwdJaxprThunk, ReboundBwd]:
    p = _eqn(_sin_vjp(symbolic_zeros), _x(1)).params
    frame = ToyFrame()
    closed = p["call_jaxpr"]
    thunk = ReboundFwdJaxprThunk(p["fwd_jaxpr_thunk"], frame, closed.in_avals, closed.out_avals)
    return frame, thunk, ReboundBwd(p["bwd"], thunk, symbolic_zeros)


def test_fwd_jaxpr_returns_the_sizes_and_bwd_runs_with_them() -> None:
    x, g = _x(1), _x(2)
    frame, thunk, bwd = _wrapped_vjp(False)
    fj = thunk([False, False, True])
    assert frame.staged == [([0], True)] and fj.num_res == 2  # cos(x), then the size
    out, res, size = _run(fj.jaxpr, CONST, SIZE, x)
    _close(out, np.sin(x))
    _close(res, np.cos(x))
    assert int(size) == SIZE
    assert thunk(None) is not fj and thunk([False, False, True]) is fj
    cts = bwd(res, size, g)
    assert frame.runs == [([size], [None, None])]
    assert cts[:2] == [None, None]
    _close(cts[2], np.cos(x) * g)
    with pytest.raises(TypeError, match=r"The custom_vjp function f was differentiated with respect to a value it closes over"):
        thunk([True, False, True])


def test_bwd_zero_cotangents_and_bwd_before_the_thunk() -> None:
    x = _x(1)
    frame, thunk, bwd = _wrapped_vjp(False)
    assert thunk.latest is None
    cts = bwd(np.cos(x), SIZE, None)  # stages the forward rule itself
    assert thunk.latest is not None and [a.str_short() for a in frame.zeroed] == ["f32[3]"]
    _close(cts[2], np.zeros(3, np.float32))
    frame, _, bwd = _wrapped_vjp(True)
    assert bwd(np.cos(x), SIZE, None) == [None, None, None] and frame.zeroed == []  # a SymbolicZero reached the rule


def f(x: Any, y: Any) -> Any:
    return lax.mul(x, y)


TIMES = custom_ivjp(f)  # x is rebuilt from the output and y
TIMES.defivjp(lambda xs, ys, dys: ((lax.div(ys, xs[1]), xs[1]), (lax.mul(dys, xs[1]), lax.mul(dys, lax.div(ys, xs[1])))))


def test_ivjp_runs_the_rule_with_the_sizes_among_the_leading_operands() -> None:
    x, y, dy = _x(1), _x(2), _x(3)
    p = _eqn(TIMES, x, y).params
    frame = ToyFrame()
    closed = p["call_jaxpr"]
    rule = ReboundIvjp(p["ivjp"], frame, closed.in_avals, closed.out_avals)
    xs, dxs = rule([CONST, SIZE, None, y], [x * y], [dy])
    assert frame.runs == [([SIZE], [0, 1, None, None])]
    assert xs[:2] == [CONST, SIZE] and dxs[:2] == [None, None]
    _close(xs[2], x)
    _close(dxs[2], dy * y)
    _close(dxs[3], dy * x)
    xs, dxs = rule([CONST, SIZE, None, y], [x * y], [None])
    assert [a.str_short() for a in frame.zeroed] == ["f32[3]"]
    _close(dxs[2], np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"toy: the inverse-VJP rule of the custom_ivjp function f needs the toy sizes, but they are not available"):
        rule([CONST, None, None, y], [x * y], [dy])


def test_rebind_custom_call_wraps_the_rules() -> None:
    x, y = _x(1), _x(2)
    params = _eqn(_sin_times(), x, y).params
    frame = ToyFrame()
    body = frame.stage(params["call_jaxpr"], [0, 1], False)

    def rebound(a: Any, b: Any) -> list[Any]:
        return rebind_custom_call(custom_jvp_call_p, frame, body, [CONST, SIZE], [a, b], params)

    (out,) = rebound(x, y)
    _close(out, np.sin(x) * y)
    eqn = _eqn(rebound, x, y)
    assert eqn.primitive is custom_jvp_call_p and eqn.params["num_consts"] == 2
    assert isinstance(eqn.params["jvp_jaxpr_fun"], ReboundJvpJaxprFun) and eqn.params["call_jaxpr"] is body
    with pytest.raises(ValueError, match=r"rebound_rules: custom_vmap_call is not a custom-rule call whose rules can be wrapped"):
        rebound_rules(custom_vmap_call_p, frame, params)


def test_rule_name_looks_through_wrappers() -> None:
    class Spec:
        name = "g"

    class Rule:
        spec = Spec()

    class Wrapped:
        inner = Spec()

    assert [rule_name(r) for r in (Spec(), Rule(), Wrapped())] == ["g", "g", "g"]
    assert rule_name(3) == "3"
