"""Call primitives: closed_call (named_call), checkpoint, invertible_call —
eager and staged values against NumPy, params, abstract-evaluation errors,
dead-code elimination and partial evaluation (known part computed now,
unknown part staged as a call; recombination equals the original)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import dtypes, lax
from plait_core.abstract import ShapedArray
from plait_core.checkpoint import (
    checkpoint,
    checkpoint_policies,
    dots_saveable,
    everything_saveable,
    nothing_saveable,
    remat,
    save_from_both_policies,
)
from plait_core.dce import dce_jaxpr
from plait_core.invertible import invertible
from plait_core.jaxpr import ClosedJaxpr, JaxprEqn
from plait_core.lax import named_call
from plait_core.partial_eval import PartialVal, partial_eval_jaxpr, trace_to_jaxpr_partial
from plait_core.primitive import Primitive
from plait_core.primitives.calls import (
    CALL_PRIMITIVES,
    bind_closed_call,
    called_jaxpr,
    checkpoint_p,
    closed_call_p,
    hoist_consts,
    invertible_call_p,
    remap_jit_info,
)

DTYPES = [dtypes.float32, dtypes.int32, dtypes.bool_, dtypes.float16, dtypes.bfloat16]
SHAPES = [(), (3,), (2, 3)]


def _sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == dtypes.bool_:
        return rng.random(shape) < 0.5
    return rng.integers(1, 5, shape).astype(dtype)


def _ops(dtype: Any) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """(lax op1, lax op2, NumPy op1, NumPy op2) valid for ``dtype``."""
    if dtype == dtypes.bool_:
        return lax.bitwise_and, lax.bitwise_or, np.logical_and, np.logical_or
    return lax.add, lax.mul, np.add, np.multiply


def _body(dtype: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A two-output function of (x, y) and its NumPy oracle."""
    op1, op2, np1, np2 = _ops(dtype)

    def f(x: Any, y: Any) -> tuple[Any, Any]:
        a = op1(x, y)
        return a, op2(a, x)

    def oracle(x: Any, y: Any) -> tuple[Any, Any]:
        a = np1(x, y).astype(dtype)
        return a, np2(a, x).astype(dtype)

    return f, oracle


def _assert_same(actual: Any, expected: Any) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype, (a.dtype, e.dtype)
    assert a.shape == e.shape
    if dtypes.is_inexact(a.dtype):
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=1e-2 if a.itemsize == 2 else 1e-6)
    else:
        np.testing.assert_array_equal(a, e)


def _eqns_named(closed: ClosedJaxpr, name: str) -> list[JaxprEqn]:
    return [e for e in closed.eqns if e.primitive.name == name]


def _prim_names(closed: ClosedJaxpr) -> set[str]:
    return {e.primitive.name for e in closed.eqns}


# ---------------------------------------------------------------------------
# The catalog


def test_call_primitives_are_in_the_catalog() -> None:
    names = {p.name for p in pc.all_primitives()}
    for p in CALL_PRIMITIVES:
        assert p.name in names and p.family == "call" and p.multiple_results
    assert {p.name for p in CALL_PRIMITIVES} == {
        "closed_call",
        "custom_jvp_call",
        "custom_vjp_call",
        "checkpoint",
        "invertible_call",
        "custom_ivjp_call",
        "custom_vmap_call",
    }


# ---------------------------------------------------------------------------
# closed_call


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_named_call_eager_staged_numpy(shape: tuple[int, ...], dtype: Any) -> None:
    f, oracle = _body(dtype)
    x, y = _sample(shape, dtype, 1), _sample(shape, dtype, 2)
    g = named_call(f)
    eager = g(x, y)
    closed = pc.make_jaxpr(g)(x, y)
    pc.check_jaxpr(closed)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    for e, s, o in zip(eager, staged, oracle(x, y)):
        _assert_same(e, o)
        _assert_same(s, o)
    (eqn,) = closed.eqns
    assert eqn.primitive is closed_call_p
    assert eqn.params["name"] == "f" and eqn.params["jit_info"] is None
    body = eqn.params["call_jaxpr"]
    assert isinstance(body, ClosedJaxpr) and body.consts == []
    assert [a.str_short() for a in body.in_avals] == [ShapedArray(shape, dtype).str_short()] * 2


def test_named_call_name_kwargs_and_pytrees() -> None:
    def f(d: dict[str, Any], *, scale: Any) -> dict[str, Any]:
        return {"s": lax.mul(lax.add(d["a"], d["b"]), scale)}

    a, b, s = np.arange(3, dtype=np.float32), np.ones(3, np.float32), np.float32(2)
    g = named_call(f, name="my_call")
    out = g({"a": a, "b": b}, scale=s)
    _assert_same(out["s"], (a + b) * s)
    closed = pc.make_jaxpr(g)({"a": a, "b": b}, scale=s)
    assert closed.eqns[0].params["name"] == "my_call"
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, a, b, s)[0], (a + b) * s)


def test_named_call_hoists_closed_over_arrays_into_operands() -> None:
    w = np.arange(4, dtype=np.float32)
    g = named_call(lambda x: lax.mul(x, w), name="scaled")
    x = np.full(4, 3, np.float32)
    closed = pc.make_jaxpr(g)(x)
    (eqn,) = closed.eqns
    assert len(eqn.invars) == 2 and eqn.params["call_jaxpr"].consts == []
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], x * w)


def test_named_call_closing_over_an_outer_tracer_is_not_cached() -> None:
    calls = []

    def outer(x: Any) -> Any:
        def inner(y: Any) -> Any:
            calls.append(1)
            return lax.mul(y, x)

        return named_call(inner)(lax.add(x, x))

    x = np.arange(3, dtype=np.float32)
    closed = pc.make_jaxpr(outer)(x)
    pc.check_jaxpr(closed)
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], (x + x) * x)
    (call,) = _eqns_named(closed, "closed_call")
    assert len(call.invars) == 2  # the outer tracer x travels as a leading operand
    _assert_same(outer(x), (x + x) * x)


def test_staging_is_cached_per_argument_types() -> None:
    count = []

    def f(x: Any) -> Any:
        count.append(1)
        return lax.add(x, x)

    g = named_call(f)
    x32, xi = np.ones(3, np.float32), np.ones(3, np.int32)
    j1 = pc.make_jaxpr(g)(x32)
    j2 = pc.make_jaxpr(g)(x32 + 1)
    assert len(count) == 1
    assert j1.eqns[0].params["call_jaxpr"] is j2.eqns[0].params["call_jaxpr"]
    j3 = pc.make_jaxpr(g)(xi)
    assert len(count) == 2 and j3.eqns[0].params["call_jaxpr"] is not j1.eqns[0].params["call_jaxpr"]
    _assert_same(g(xi), xi + xi)


def test_bind_closed_call_and_hoist_consts() -> None:
    w = np.arange(3, dtype=np.float32)
    closed = pc.make_jaxpr(lambda x: lax.mul(x, w))(np.ones(3, np.float32))
    assert len(closed.consts) == 1
    body, consts = hoist_consts(closed)
    assert body.consts == [] and len(body.in_avals) == 2 and consts[0] is closed.consts[0]
    x = np.full(3, 2, np.float32)
    (out,) = bind_closed_call(closed, x, name="c")
    _assert_same(out, x * w)
    assert called_jaxpr(closed_call_p, {"call_jaxpr": body}) is body


def _body_of(f: Callable[..., Any], *args: Any) -> ClosedJaxpr:
    return hoist_consts(pc.make_jaxpr(f)(*args))[0]


def test_closed_call_abstract_eval_errors() -> None:
    body = _body_of(lambda x: [lax.add(x, x)], np.ones(3, np.float32))
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"closed_call: operand 0 has type i32\[3\] but the called jaxpr takes f32\[3\]"):
        closed_call_p.bind(np.ones(3, np.int32), call_jaxpr=body, name="b", jit_info=None)
    with pytest.raises(TypeError, match=r"closed_call: operand 0 has type f32\[4\]"):
        pc.make_jaxpr(lambda v: closed_call_p.bind(v, call_jaxpr=body, name="b", jit_info=None))(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="closed_call: the called jaxpr takes 1 operands, got 2"):
        closed_call_p.bind(x, x, call_jaxpr=body, name="b", jit_info=None)
    with pytest.raises(TypeError, match=r"closed_call: wrong params \(missing: jit_info, name; unexpected: none\)"):
        closed_call_p.bind(x, call_jaxpr=body)
    with pytest.raises(TypeError, match="unexpected: bogus"):
        closed_call_p.bind(x, call_jaxpr=body, name="b", jit_info=None, bogus=1)
    with pytest.raises(TypeError, match="closed_call: the param call_jaxpr must be a ClosedJaxpr, got function"):
        closed_call_p.bind(x, call_jaxpr=lambda v: v, name="b", jit_info=None)
    with pytest.raises(TypeError, match="closed_call: the param name must be a str, got int"):
        closed_call_p.bind(x, call_jaxpr=body, name=3, jit_info=None)
    with pytest.raises(TypeError, match="closed_call: the param jit_info must be hashable, got list"):
        closed_call_p.bind(x, call_jaxpr=body, name="b", jit_info=[1])
    with_consts = pc.make_jaxpr(lambda v: lax.mul(v, np.arange(3, dtype=np.float32)))(x)
    with pytest.raises(ValueError, match="closed_call: the param call_jaxpr must have no constants"):
        closed_call_p.bind(x, call_jaxpr=with_consts, name="b", jit_info=None)
    with pytest.raises(TypeError, match=r"expected an array, a scalar or a traced value, got a value of type builtins\.str"):
        closed_call_p.bind("x", call_jaxpr=body, name="b", jit_info=None)


def test_named_call_errors() -> None:
    with pytest.raises(TypeError, match="named_call expects a function, got int"):
        named_call(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="named_call: name must be a str, got int"):
        named_call(lambda x: x, name=3)  # type: ignore[arg-type]
    g = named_call(lambda x: x, name="ident")
    with pytest.raises(TypeError, match=r"named_call of ident: the argument leaf at \[0\]\[0\] has type str"):
        g("text")
    h = named_call(lambda x: (x, "tag"), name="tagged")
    with pytest.raises(TypeError, match=r"named_call of tagged: output leaf 1 .* has type str, which is not an array"):
        h(np.ones(2, np.float32))


# ---------------------------------------------------------------------------
# closed_call: dead-code elimination


def _two_output_call() -> tuple[ClosedJaxpr, np.ndarray, np.ndarray]:
    def f(x: Any, y: Any) -> tuple[Any, Any]:
        return lax.sin(x), lax.mul(y, y)

    x, y = np.linspace(0, 1, 4, dtype=np.float32), np.arange(4, dtype=np.float32)
    return pc.make_jaxpr(named_call(f))(x, y), x, y


def test_closed_call_dce_prunes_outputs_and_inputs() -> None:
    closed, x, y = _two_output_call()
    jaxpr, used = dce_jaxpr(closed.jaxpr, [False, True])
    assert used == [False, True]
    (eqn,) = jaxpr.eqns
    assert eqn.primitive is closed_call_p and len(eqn.invars) == 1 and len(eqn.outvars) == 1
    body = eqn.params["call_jaxpr"]
    assert _prim_names(body) == {"mul"} and len(body.in_avals) == 1
    pc.check_jaxpr(jaxpr)
    (out,) = pc.eval_jaxpr(jaxpr, [], x, y)
    _assert_same(out, y * y)


def test_closed_call_dce_keeps_an_unchanged_equation_and_drops_a_dead_one() -> None:
    closed, _, _ = _two_output_call()
    jaxpr, _ = dce_jaxpr(closed.jaxpr, [True, True])
    assert jaxpr.eqns[0] is closed.eqns[0]
    dead, used = dce_jaxpr(closed.jaxpr, [False, False])
    assert dead.eqns == [] and used == [False, False]


class _Info:
    """A jit_info recording how operands were remapped."""

    def __init__(self, origin: tuple[int | None, ...] | None = None) -> None:
        self.origin = origin

    def remap_operands(self, origin: tuple[int | None, ...]) -> _Info:
        return _Info(origin)


def test_closed_call_dce_remaps_jit_info() -> None:
    closed, _, _ = _two_output_call()
    eqn = closed.eqns[0]
    closed.eqns[0] = eqn.replace(params=dict(eqn.params, jit_info=_Info()))
    jaxpr, _ = dce_jaxpr(closed.jaxpr, [False, True])
    assert jaxpr.eqns[0].params["jit_info"].origin == (1,)
    assert remap_jit_info(None, (0,)) is None and remap_jit_info("cpu", (0,)) == "cpu"


# ---------------------------------------------------------------------------
# closed_call: partial evaluation


def _mixed(x: Any, y: Any) -> tuple[Any, Any]:
    a = lax.sin(x)
    return lax.mul(a, a), lax.mul(a, y)


def test_closed_call_partial_eval_known_now_unknown_staged() -> None:
    x, y = np.linspace(0.1, 1, 3).astype(np.float32), np.arange(3, dtype=np.float32)
    g = named_call(_mixed, name="mixed")
    unknown, out_pvals = trace_to_jaxpr_partial(
        lambda a, b: g(a, b), [PartialVal.known(x), PartialVal.unknown(ShapedArray((3,), np.float32))]
    )
    assert out_pvals[0].is_known and not out_pvals[1].is_known
    _assert_same(out_pvals[0].value, np.sin(x) * np.sin(x))
    (eqn,) = unknown.eqns
    assert eqn.primitive is closed_call_p and eqn.params["name"] == "mixed"
    assert _prim_names(eqn.params["call_jaxpr"]) == {"mul"}
    pc.check_jaxpr(unknown)
    (late,) = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, y)
    _assert_same(late, np.sin(x) * y)
    eager = g(x, y)
    _assert_same(eager[0], out_pvals[0].value)
    _assert_same(eager[1], late)


def test_closed_call_partial_eval_keeps_both_halves_as_calls() -> None:
    x, y = np.linspace(0.1, 1, 3).astype(np.float32), np.arange(3, dtype=np.float32)
    closed = pc.make_jaxpr(named_call(_mixed))(x, y)
    eqn = closed.eqns[0]
    closed.eqns[0] = eqn.replace(params=dict(eqn.params, jit_info=_Info()))
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [False, True] and num_res == 1
    (k_eqn,) = _eqns_named(known, "closed_call")
    (u_eqn,) = _eqns_named(unknown, "closed_call")
    assert _prim_names(k_eqn.params["call_jaxpr"]) == {"sin", "mul"}
    assert _prim_names(u_eqn.params["call_jaxpr"]) == {"mul"}
    assert k_eqn.params["jit_info"].origin == (0,)
    assert u_eqn.params["jit_info"].origin == (None, 1)
    pc.check_jaxpr(known)
    pc.check_jaxpr(unknown)
    k_out, res = pc.eval_jaxpr(known.jaxpr, known.consts, x)
    (u_out,) = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, res, y)
    full = pc.eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    _assert_same(k_out, full[0])
    _assert_same(u_out, full[1])
    _assert_same(u_out, np.sin(x) * y)


def test_closed_call_partial_eval_all_unknown_forwards() -> None:
    x = np.linspace(0.1, 1, 3).astype(np.float32)
    closed = pc.make_jaxpr(named_call(_mixed))(x, x)
    known, unknown, out_unknowns, _ = partial_eval_jaxpr(closed, [True, True])
    assert out_unknowns == [True, True] and known.eqns == []
    outs = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, x, x)
    _assert_same(outs[0], np.sin(x) ** 2)
    _assert_same(outs[1], np.sin(x) * x)


# ---------------------------------------------------------------------------
# checkpoint


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_checkpoint_eager_staged_numpy(shape: tuple[int, ...], dtype: Any) -> None:
    f, oracle = _body(dtype)
    x, y = _sample(shape, dtype, 3), _sample(shape, dtype, 4)
    g = checkpoint(f)
    closed = pc.make_jaxpr(g)(x, y)
    pc.check_jaxpr(closed)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    for e, s, o in zip(g(x, y), staged, oracle(x, y)):
        _assert_same(e, o)
        _assert_same(s, o)
    (eqn,) = closed.eqns
    assert eqn.primitive is checkpoint_p
    p = eqn.params
    assert isinstance(p["jaxpr"], ClosedJaxpr) and p["jaxpr"].consts == []
    assert p["prevent_cse"] is True and p["differentiated"] is False and p["policy"] is nothing_saveable


def test_checkpoint_params_static_argnums_kwargs_and_alias() -> None:
    assert remat is checkpoint

    def f(x: Any, power: int, *, shift: Any) -> Any:
        out = x
        for _ in range(power - 1):  # Python control flow on a static argument
            out = lax.mul(out, x)
        return lax.add(out, shift)

    g = checkpoint(f, static_argnums=(1,), prevent_cse=False, policy=dots_saveable)
    x, s = np.array([1.0, 2.0, 3.0], np.float32), np.float32(0.5)
    _assert_same(g(x, 3, shift=s), x**3 + s)
    closed = pc.make_jaxpr(lambda a, b: g(a, 3, shift=b))(x, s)
    p = closed.eqns[0].params
    assert p["prevent_cse"] is False and p["policy"] is dots_saveable
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, x, s)[0], x**3 + s)
    _assert_same(g(x, 2, shift=s), x**2 + s)
    h = checkpoint(f, static_argnums=-1)
    _assert_same(h(x, 2, shift=s), x**2 + s)


def test_checkpoint_errors() -> None:
    with pytest.raises(TypeError, match="checkpoint expects a function, got int"):
        checkpoint(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"checkpoint: policy must be a function policy\(prim, \*avals, \*\*params\), got str"):
        checkpoint(lambda x: x, policy="dots")  # type: ignore[arg-type]
    g = checkpoint(lambda x: x, static_argnums=(2,))
    with pytest.raises(ValueError, match="checkpoint of <lambda>: static_argnums 2 is out of range for a call with 1 positional arguments"):
        g(np.ones(2, np.float32))
    body = _body_of(lambda x: [x], np.ones(2, np.float32))
    with pytest.raises(TypeError, match="checkpoint: the param policy must be callable, got NoneType"):
        checkpoint_p.bind(np.ones(2, np.float32), jaxpr=body, prevent_cse=True, differentiated=False, policy=None)
    with pytest.raises(TypeError, match="checkpoint: the param prevent_cse must be a bool, got 1"):
        checkpoint_p.bind(np.ones(2, np.float32), jaxpr=body, prevent_cse=1, differentiated=False, policy=nothing_saveable)


def test_checkpoint_dce() -> None:
    x, y = np.linspace(0.1, 1, 3).astype(np.float32), np.arange(3, dtype=np.float32)
    closed = pc.make_jaxpr(checkpoint(_mixed))(x, y)
    jaxpr, used = dce_jaxpr(closed.jaxpr, [True, False])
    assert used == [True, False]
    (eqn,) = jaxpr.eqns
    assert eqn.primitive is checkpoint_p and len(eqn.invars) == 1
    assert _prim_names(eqn.params["jaxpr"]) == {"sin", "mul"} and len(eqn.params["jaxpr"].eqns) == 2
    (out,) = pc.eval_jaxpr(jaxpr, [], x, y)
    _assert_same(out, np.sin(x) ** 2)


def _chain(x: Any, y: Any) -> tuple[Any, Any]:
    a = lax.sin(x)
    b = lax.mul(a, a)
    return b, lax.mul(b, y)


@pytest.mark.parametrize(
    "policy, num_saved, recomputed",
    [(nothing_saveable, 1, {"sin", "mul"}), (everything_saveable, 1, {"mul"}), (None, 1, {"sin", "mul"})],
)
def test_checkpoint_partial_eval_follows_the_policy(policy: Any, num_saved: int, recomputed: set[str]) -> None:
    x, y = np.linspace(0.1, 1, 3).astype(np.float32), np.arange(3, dtype=np.float32)
    closed = pc.make_jaxpr(checkpoint(_chain, policy=policy))(x, y)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [False, True] and num_res == num_saved
    (u_eqn,) = _eqns_named(unknown, "checkpoint")
    assert u_eqn.params["differentiated"] is True
    assert _prim_names(u_eqn.params["jaxpr"]) == recomputed
    pc.check_jaxpr(known)
    pc.check_jaxpr(unknown)
    k_out, res = pc.eval_jaxpr(known.jaxpr, known.consts, x)
    if policy is everything_saveable:
        _assert_same(res, np.sin(x) ** 2)  # the intermediate itself is saved
    else:
        _assert_same(res, x)  # only the checkpoint's input is saved
    (u_out,) = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, res, y)
    eager = checkpoint(_chain)(x, y)
    _assert_same(k_out, eager[0])
    _assert_same(u_out, eager[1])
    _assert_same(u_out, np.sin(x) ** 2 * y)


def _dot_net(x: Any, w: Any, y: Any) -> list[Any]:
    d = lax.dot_general(x, w, (((1,), (0,)), ((), ())))
    return [lax.mul(lax.sin(d), y)]


def test_checkpoint_partial_eval_dots_saveable_saves_only_the_product() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=(2, 4)).astype(np.float32)
    seen: list[tuple[Primitive, tuple[ShapedArray, ...]]] = []

    def policy(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
        seen.append((prim, avals))
        return dots_saveable(prim, *avals, **params)

    closed = pc.make_jaxpr(checkpoint(_dot_net, policy=policy))(x, w, y)
    known, unknown, _, num_res = partial_eval_jaxpr(closed, [False, False, True])
    assert num_res == 1
    (u_eqn,) = _eqns_named(unknown, "checkpoint")
    assert _prim_names(u_eqn.params["jaxpr"]) == {"sin", "mul"}
    assert {p.name for p, _ in seen} == {"dot_general", "sin"}
    assert all(isinstance(a, ShapedArray) for _, avals in seen for a in avals)
    (res,) = pc.eval_jaxpr(known.jaxpr, known.consts, x, w)
    _assert_same(res, x @ w)
    (out,) = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, res, y)
    np.testing.assert_allclose(out, np.sin(x @ w) * y, rtol=1e-5)


def test_checkpoint_partial_eval_through_trace() -> None:
    x, y = np.linspace(0.1, 1, 3).astype(np.float32), np.arange(3, dtype=np.float32)
    g = checkpoint(_chain)
    unknown, pvals = trace_to_jaxpr_partial(
        lambda a, b: list(g(a, b)), [PartialVal.known(x), PartialVal.unknown(ShapedArray((3,), np.float32))]
    )
    _assert_same(pvals[0].value, np.sin(x) ** 2)
    (late,) = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, y)
    _assert_same(late, np.sin(x) ** 2 * y)


def test_checkpoint_policies_namespace() -> None:
    p = checkpoint_policies
    assert p.checkpoint_dots is p.dots_saveable is dots_saveable
    assert p.nothing_saveable is nothing_saveable and p.everything_saveable is everything_saveable
    dot = pc.primitive_by_name("dot_general")
    sin = pc.primitive_by_name("sin")
    a = ShapedArray((2, 3), np.float32)
    no_batch = {"dimension_numbers": (((1,), (0,)), ((), ()))}
    batch = {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}
    assert p.dots_saveable(dot, a, a, **batch) and not p.dots_saveable(sin, a)
    assert p.dots_with_no_batch_dims_saveable(dot, a, a, **no_batch)
    assert not p.dots_with_no_batch_dims_saveable(dot, a, a, **batch)
    assert not p.dots_with_no_batch_dims_saveable(sin, a)
    assert p.checkpoint_dots_with_no_batch_dims is p.dots_with_no_batch_dims_saveable
    either = save_from_both_policies(nothing_saveable, dots_saveable)
    assert either(dot, a, a, **batch) and not either(sin, a)
    assert everything_saveable(sin, a) and not nothing_saveable(dot, a, a, **batch)


# ---------------------------------------------------------------------------
# invertible_call


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32, dtypes.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_invertible_eager_staged_numpy(shape: tuple[int, ...], dtype: Any) -> None:
    f, oracle = _body(dtype)
    x, y = _sample(shape, dtype, 5), _sample(shape, dtype, 6)
    g = invertible(f)
    closed = pc.make_jaxpr(g)(x, y)
    pc.check_jaxpr(closed)
    (eqn,) = closed.eqns
    assert eqn.primitive is invertible_call_p
    assert eqn.params["name"] == "f" and eqn.params["num_consts"] == 0
    assert isinstance(eqn.params["jaxpr"], ClosedJaxpr)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    for e, s, o in zip(g(x, y), staged, oracle(x, y)):
        _assert_same(e, o)
        _assert_same(s, o)


def test_invertible_closure_consts_and_errors() -> None:
    w = np.arange(1, 4, dtype=np.float32)

    def scale(x: Any) -> Any:
        return lax.mul(x, w)

    g = invertible(scale)
    x = np.ones(3, np.float32)
    closed = pc.make_jaxpr(g)(x)
    (eqn,) = closed.eqns
    assert eqn.params["num_consts"] == 1 and len(eqn.invars) == 2
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], x * w)
    _assert_same(g(x), x * w)
    with pytest.raises(TypeError, match="invertible expects a function, got int"):
        invertible(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="invertible_call: num_consts must be an int in \\[0, 1\\], got 2"):
        invertible_call_p.bind(x, jaxpr=_body_of(lambda v: [v], x), name="n", num_consts=2, check=None)
    with pytest.raises(ValueError, match="invertible: check must be a bool or a positive relative tolerance, got -1"):
        invertible(scale, check=-1)
