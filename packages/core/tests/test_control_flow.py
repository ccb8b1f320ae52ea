"""Control flow: cond, switch, while_loop, fori_loop, scan, map — eager and
staged against Python-loop / NumPy oracles; partial evaluation and DCE of
the control-flow primitives; every user error."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import dtypes, lax
from plait_core.abstract import ShapedArray
from plait_core.jaxpr import ClosedJaxpr, Jaxpr, Var
from plait_core.partial_eval import trace_to_jaxpr_partial
from plait_core.primitives.control_flow import cond_p, scan_p, while_p
from plait_core.tree_util import tree_flatten, tree_leaves

f32, i32 = np.float32, np.int32
DTYPES = [dtypes.float32, dtypes.int32, dtypes.bool_, dtypes.float16, dtypes.bfloat16]
SHAPES = [(), (3,), (2, 3)]


def _sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == dtypes.bool_:
        return rng.random(shape) < 0.5
    return (rng.integers(0, 5, shape)).astype(dtype)


def _binary_ops(dtype: Any) -> list[tuple[Callable[..., Any], Callable[..., Any]]]:
    """(lax function, NumPy oracle) pairs valid for ``dtype``."""
    if dtype == dtypes.bool_:
        return [(lax.bitwise_and, np.logical_and), (lax.bitwise_or, np.logical_or)]
    return [(lax.add, np.add), (lax.mul, np.multiply)]


def _assert_same(actual: Any, expected: Any, rtol: float = 1e-6) -> None:
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    assert a_tree == e_tree
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        assert a.shape == e.shape, (a.shape, e.shape)
        if np.issubdtype(e.dtype, np.inexact) or e.dtype == dtypes.bfloat16:
            np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, e)


def _eager_and_staged(f: Callable[..., Any], *args: Any) -> list[Any]:
    """``f(*args)`` eagerly and through make_jaxpr + eval_jaxpr (checked);
    asserts both agree and returns the eager result."""
    eager = f(*args)
    closed = pc.make_jaxpr(f)(*args)
    pc.check_jaxpr(closed)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, *tree_leaves(args))
    _assert_same(staged, tree_leaves(eager))
    return eager  # type: ignore[no-any-return]


def _prims(closed: ClosedJaxpr | Jaxpr) -> list[str]:
    j = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    return [e.primitive.name for e in j.eqns]


# ---------------------------------------------------------------------------
# cond and switch


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("pred", [True, False])
def test_cond_matches_numpy(dtype: Any, shape: tuple[int, ...], pred: bool) -> None:
    (t_op, t_np), (f_op, f_np) = _binary_ops(dtype)
    x, y = _sample(shape, dtype, 1), _sample(shape, dtype, 2)

    def f(p: Any, x: Any, y: Any) -> Any:
        return lax.cond(p, lambda a, b: (t_op(a, b), b), lambda a, b: (f_op(a, b), a), x, y)

    out = _eager_and_staged(f, np.bool_(pred), x, y)
    expected = (t_np(x, y), y) if pred else (f_np(x, y), x)
    _assert_same(out, tuple(np.asarray(e, dtype) for e in expected))


@pytest.mark.parametrize("pred", [-2, 0, 1, 7])
def test_cond_integer_predicate_is_true_when_nonzero(pred: int) -> None:
    x = np.arange(3, dtype=f32)

    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda v: lax.add(v, 1.0), lambda v: lax.neg(v), x)

    out = _eager_and_staged(f, np.int32(pred), x)
    _assert_same(out, x + 1 if pred != 0 else -x)
    assert f(pred, x).dtype == f32  # a Python int predicate works too


def test_cond_traced_predicate_takes_both_branches() -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(lax.lt(p, 0.0), lambda v: lax.sin(v), lambda v: lax.cos(v), x)

    closed = pc.make_jaxpr(f)(f32(1), np.zeros(4, f32))
    assert "cond" in _prims(closed)
    x = np.linspace(0, 1, 4).astype(f32)
    for p, oracle in ((-1.0, np.sin), (1.0, np.cos)):
        (out,) = pc.eval_jaxpr(closed.jaxpr, closed.consts, f32(p), x)
        _assert_same(out, oracle(x))


def test_cond_old_per_branch_form_and_operand_keyword() -> None:
    x, y = np.arange(3, dtype=f32), np.full(2, 5.0, f32)
    out = lax.cond(True, x, lambda a: lax.reduce_sum(a, (0,)), y, lambda b: lax.reduce_max(b, (0,)))
    _assert_same(out, np.sum(x))
    out = lax.cond(False, x, lambda a: lax.reduce_sum(a, (0,)), y, lambda b: lax.reduce_max(b, (0,)))
    _assert_same(out, np.max(y))
    _assert_same(lax.cond(True, lambda a: lax.neg(a), lambda a: a, operand=x), -x)


def test_cond_without_operands_and_with_pytrees() -> None:
    _assert_same(lax.cond(False, lambda: np.float32(1), lambda: np.float32(2)), f32(2))
    a = np.arange(2, dtype=f32)
    tree = {"a": a, "b": (np.int32(3), np.ones(2, f32))}

    def f(p: Any, t: Any) -> Any:
        return lax.cond(
            p,
            lambda t: {"s": lax.add(t["a"], t["b"][1]), "n": t["b"][0]},
            lambda t: {"s": lax.sub(t["a"], t["b"][1]), "n": lax.neg(t["b"][0])},
            t,
        )

    out = _eager_and_staged(f, np.bool_(False), tree)
    _assert_same(out, {"n": np.int32(-3), "s": a - 1})


def test_cond_closures_over_arrays_and_outer_tracers_become_operands() -> None:
    w = np.array([2.0, 3.0], f32)

    def f(x: Any, y: Any) -> Any:
        # closes over a NumPy constant and over y, a tracer of the outer staging
        return lax.cond(True, lambda v: lax.mul(v, w), lambda v: lax.add(v, y), x)

    closed = pc.make_jaxpr(f)(np.ones(2, f32), np.ones(2, f32))
    (eqn,) = [e for e in closed.eqns if e.primitive is cond_p]
    for branch in eqn.params["branches"]:
        assert branch.consts == [] and branch.jaxpr.constvars == []
    assert len(eqn.invars) == 1 + 2 + 1  # index, the two closed-over values, the operand
    x, y = np.array([1.0, 4.0], f32), np.array([10.0, 20.0], f32)
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, x, y), [x * w])
    _assert_same(_eager_and_staged(f, x, y), x * w)


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 9])
def test_switch_clamps_the_index(index: int) -> None:
    x = np.arange(4, dtype=f32)
    branches = [lambda v: lax.neg(v), lambda v: lax.mul(v, 2.0), lambda v: lax.add(v, 10.0)]
    oracles = [lambda v: -v, lambda v: v * 2, lambda v: v + 10]

    def f(i: Any, x: Any) -> Any:
        return lax.switch(i, branches, x)

    out = _eager_and_staged(f, np.int32(index), x)
    _assert_same(out, oracles[min(max(index, 0), 2)](x))
    _assert_same(f(index, x), oracles[min(max(index, 0), 2)](x))


def test_switch_converts_other_integer_index_dtypes() -> None:
    x = np.arange(3, dtype=i32)
    f = lambda i, x: lax.switch(i, [lambda v: v, lambda v: lax.neg(v)], x)  # noqa: E731
    closed = pc.make_jaxpr(f)(np.uint8(1), x)
    assert _prims(closed)[0] == "convert_element_type"
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, np.uint8(1), x), [-x])


def test_switch_with_one_branch_calls_it_directly() -> None:
    closed = pc.make_jaxpr(lambda i, x: lax.switch(i, [lambda v: lax.neg(v)], x))(np.int32(0), np.ones(2, f32))
    assert _prims(closed) == ["neg"]


def test_nested_cond_in_cond() -> None:
    def f(p: Any, q: Any, x: Any) -> Any:
        inner = lambda v: lax.cond(q, lambda u: lax.mul(u, 3.0), lambda u: lax.sub(u, 1.0), v)  # noqa: E731
        return lax.cond(p, inner, lambda v: lax.neg(v), x)

    x = np.arange(3, dtype=f32)
    for p, q in itertools.product([True, False], repeat=2):
        out = _eager_and_staged(f, np.bool_(p), np.bool_(q), x)
        _assert_same(out, (x * 3 if q else x - 1) if p else -x)


def test_cond_predicate_errors() -> None:
    x = np.ones(2, f32)
    with pytest.raises(TypeError, match=r"cond: the predicate must be a scalar, got a value of type bool\[3\]"):
        lax.cond(np.array([True, False, True]), lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match=r"cond: the predicate must be a boolean or integer scalar, got f32\[\]"):
        lax.cond(np.float32(1.0), lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match=r"the predicate of cond: expected an array.*str"):
        lax.cond("yes", lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match=r"cond operand leaf 1: expected an array.*object"):
        lax.cond(True, lambda a, b: a, lambda a, b: a, x, object())
    with pytest.raises(TypeError, match=r"cond: false_fun must be callable, got a value of type int"):
        lax.cond(True, lambda v: v, 3, x)
    with pytest.raises(TypeError, match=r"no operands may be passed positionally"):
        lax.cond(True, lambda v: v, lambda v: v, x, operand=x)


def test_cond_branch_output_errors() -> None:
    x = np.ones(2, f32)
    with pytest.raises(TypeError, match=r"false_fun and true_fun must return the same tree structure, but "
                       r"false_fun returns PyTreeDef\(\(\*, \*\)\) and true_fun returns PyTreeDef\(\*\)"):
        lax.cond(True, lambda v: v, lambda v: (v, v), x)
    with pytest.raises(TypeError, match=r"must return values of the same types, but output\['b'\] is f32\[2\] "
                       r"in false_fun and i32\[2\] in true_fun"):
        lax.cond(
            True,
            lambda v: {"a": v, "b": lax.convert_element_type(v, np.int32)},
            lambda v: {"a": v, "b": v},
            x,
        )
    with pytest.raises(TypeError, match=r"output is f32\[1\] in branches\[0\] and f32\[2\] in branches\[1\]"):
        lax.switch(0, [lambda v: lax.slice(v, (0,), (1,)), lambda v: v], x)
    with pytest.raises(TypeError, match=r"cond: true_fun must return arrays, but output leaf 0 .* has type str"):
        lax.cond(True, lambda v: "x", lambda v: v, x)


def test_switch_errors() -> None:
    x = np.ones(2, f32)
    with pytest.raises(ValueError, match=r"switch: branches must be a non-empty sequence of functions, got an empty one"):
        lax.switch(0, [], x)
    with pytest.raises(TypeError, match=r"switch: branches\[1\] must be callable, got a value of type str"):
        lax.switch(0, [lambda v: v, "nope"], x)  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"switch: the branch index must be an integer scalar, got f32\[\]"):
        lax.switch(np.float32(0), [lambda v: v, lambda v: v], x)
    with pytest.raises(TypeError, match=r"switch: the branch index must be an integer scalar, got i32\[2\]"):
        lax.switch(np.zeros(2, i32), [lambda v: v, lambda v: v], x)
    with pytest.raises(TypeError, match=r"switch: branches must be a sequence of functions, got int"):
        lax.switch(0, 3, x)  # type: ignore[arg-type]


def _branch(fun: Callable[..., Any], *avals: ShapedArray) -> ClosedJaxpr:
    return pc.trace_to_jaxpr(lambda *a: [fun(*a)], list(avals))


def test_cond_primitive_type_errors() -> None:
    s = ShapedArray((2,), f32)
    b0 = _branch(lambda v: v, s)
    b_int = _branch(lambda v: lax.convert_element_type(v, np.int32), s)
    idx, x = np.int32(0), np.ones(2, f32)
    with pytest.raises(TypeError, match=r"cond: all branches must have the same types, but output 0 of branch 1 "
                       r"has type i32\[2\] while branch 0 has f32\[2\]"):
        cond_p.bind(idx, x, branches=(b0, b_int))
    with pytest.raises(TypeError, match=r"cond: the branch index must be an int32 scalar, got bool\[\]"):
        cond_p.bind(np.bool_(True), x, branches=(b0, b0))
    with pytest.raises(TypeError, match=r"cond: operand 0 has type i32\[2\] but the input type of the branches there is f32\[2\] "
                       r"\(the dtypes differ\)"):
        cond_p.bind(idx, np.ones(2, i32), branches=(b0, b0))
    with pytest.raises(TypeError, match=r"cond: the param branches must be a non-empty tuple of ClosedJaxpr"):
        cond_p.bind(idx, x, branches=())


# ---------------------------------------------------------------------------
# while_loop


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32, dtypes.float16, dtypes.bfloat16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_while_loop_matches_python_loop(dtype: Any, shape: tuple[int, ...]) -> None:
    x0 = _sample(shape, dtype, 3)
    step = np.asarray(2, dtype)

    def f(x: Any) -> Any:
        return lax.while_loop(
            lambda c: lax.lt(c[0], 5),
            lambda c: (lax.add(c[0], 1), lax.add(lax.mul(c[1], step), step)),
            (np.int32(0), x),
        )

    i, x = 0, x0.copy()
    while i < 5:
        i, x = i + 1, (x * step + step).astype(dtype)
    out = _eager_and_staged(f, x0)
    _assert_same(out, (np.int32(i), x))


def test_while_loop_collatz_steps_against_python() -> None:
    def steps(n: Any) -> Any:
        def body(c: Any) -> Any:
            m, k = c
            even = lax.eq(lax.rem(m, 2), 0)
            return lax.cond(even, lambda v: lax.div(v, 2), lambda v: lax.add(lax.mul(v, 3), 1), m), lax.add(k, 1)

        return lax.while_loop(lambda c: lax.ne(c[0], 1), body, (n, np.int32(0)))[1]

    for n in (1, 6, 7, 27):
        m, k = n, 0
        while m != 1:
            m, k = (m // 2 if m % 2 == 0 else 3 * m + 1), k + 1
        _assert_same(_eager_and_staged(steps, np.int32(n)), np.int32(k))


def test_while_loop_closure_over_outer_tracer() -> None:
    def f(limit: Any, x: Any) -> Any:
        return lax.while_loop(lambda v: lax.lt(lax.reduce_sum(v, (0,)), limit), lambda v: lax.mul(v, 2.0), x)

    closed = pc.make_jaxpr(f)(f32(0), np.ones(2, f32))
    (eqn,) = [e for e in closed.eqns if e.primitive is while_p]
    assert eqn.params["cond_nconsts"] == 1 and eqn.params["cond_jaxpr"].consts == []
    x = np.array([1.0, 2.0], f32)
    v = x.copy()
    while v.sum() < 50:
        v = v * 2
    _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, f32(50), x), [v])


def test_while_loop_promotes_a_weak_carry_to_the_body_type() -> None:
    def f(w: Any) -> Any:
        # 0.0 is a weak f32[]; adding the strong f32 w makes the carry strong
        return lax.while_loop(lambda c: lax.lt(c[0], 3), lambda c: (lax.add(c[0], 1), lax.add(c[1], w)), (0, 0.0))

    w = np.float32(1.25)
    _assert_same(_eager_and_staged(f, w), (np.int32(3), f32(3.75)))
    closed = pc.make_jaxpr(f)(w)
    assert closed.out_avals[1] == ShapedArray((), f32)  # strongly typed now
    (eqn,) = closed.eqns
    assert eqn.params["body_jaxpr"].in_avals[-1] == ShapedArray((), f32)


def test_while_loop_errors() -> None:
    x = np.ones(2, f32)
    with pytest.raises(TypeError, match=r"while_loop: cond_fun must return a boolean scalar, but it returned f32\[\]"):
        lax.while_loop(lambda v: lax.reduce_sum(v, (0,)), lambda v: v, x)
    with pytest.raises(TypeError, match=r"while_loop: cond_fun must return a boolean scalar, but it returned bool\[2\]"):
        lax.while_loop(lambda v: lax.lt(v, 1.0), lambda v: v, x)
    with pytest.raises(TypeError, match=r"while_loop: body_fun must return a carry with the same tree structure as its "
                       r"input, but the carry is PyTreeDef\(\(\*, \*\)\) and body_fun returned PyTreeDef\(\*\)"):
        lax.while_loop(lambda c: lax.lt(c[0], 1), lambda c: c[0], (np.int32(0), x))
    with pytest.raises(TypeError, match=r"while_loop: the carry init_val\[1\] has type f32\[2\] on entry but the body "
                       r"returns i32\[2\], so the dtypes differ"):
        lax.while_loop(
            lambda c: lax.lt(c[0], 1),
            lambda c: (c[0], lax.convert_element_type(c[1], np.int32)),
            (np.int32(0), x),
        )
    with pytest.raises(TypeError, match=r"the carry init_val has type i32\[\] on entry but the body "
                       r"returns f32\[\], so the dtypes differ"):  # a strongly typed carry is not promoted
        lax.while_loop(lambda c: lax.lt(c, 1.0), lambda c: lax.convert_element_type(c, np.float32), np.int32(0))
    with pytest.raises(TypeError, match=r"the carry init_val has type f32\[\] on entry but the body "
                       r"returns f32\[2\], so the shapes differ"):  # promoted, then still the wrong shape
        lax.while_loop(lambda c: c < 1.0, lambda c: c + np.ones(2, f32), 0)
    with pytest.raises(TypeError, match=r"init_val\['a'\] has type f32\[2\] on entry but the body returns f32\[1\], "
                       r"so the shapes differ"):
        lax.while_loop(lambda c: lax.lt(c["n"], 1), lambda c: {"a": lax.slice(c["a"], (0,), (1,)), "n": c["n"]},
                       {"a": x, "n": np.int32(0)})
    with pytest.raises(TypeError, match=r"while_loop: body_fun must be callable, got a value of type NoneType"):
        lax.while_loop(lambda c: True, None, x)  # type: ignore[arg-type]


def _typed(loop: Callable[[], Any]) -> list[tuple[Any, str, bool]]:
    """Each output of ``loop()``: its value, and its dtype and weakness as staged
    (core's NumPy backend does not keep weak types on eager values)."""
    values = tree_leaves(loop())
    staged = pc.make_jaxpr(loop)()
    return [(np.asarray(v).tolist(), o.aval.dtype.name, o.aval.weak_type) for v, o in zip(values, staged.jaxpr.outvars)]


def test_weak_carries_are_promoted_as_in_jax() -> None:
    # A weakly typed carry whose dtype the body changes takes the promoted dtype, strongly typed (JAX 0.10.2).
    assert _typed(lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0)) == [(3.0, "float32", False)]
    assert _typed(lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0.0)) == [(3.0, "float32", True)]
    to_f16 = lambda c: lax.convert_element_type(c + 1.5, np.float16)  # noqa: E731
    assert _typed(lambda: lax.while_loop(lambda c: c < 3, to_f16, 0.0)) == [(3.0, "float16", False)]
    pair = lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1.5, c[1] + 1), (0, 0))  # noqa: E731
    assert _typed(pair) == [(3.0, "float32", False), (2, "int32", True)]
    assert _typed(lambda: lax.fori_loop(0, 3, lambda i, c: c + 1.5, 0)) == [(4.5, "float32", False)]
    traced_bound = lambda: lax.fori_loop(0, pc.numpy.array(3), lambda i, c: c + 1.5, 0)  # noqa: E731
    assert _typed(traced_bound) == [(4.5, "float32", False)]
    assert _typed(lambda: lax.fori_loop(0, 3, lambda i, c: c + i, 0.0)) == [(3.0, "float32", True)]
    xs = np.arange(3, dtype=f32)
    assert _typed(lambda: lax.scan(lambda c, x: (c + x, c), 0, xs)) == [
        (3.0, "float32", False), ([0.0, 0.0, 1.0], "float32", False)]
    assert _typed(lambda: lax.scan(lambda c, x: (c + 0.5, c), 0, None, length=3)) == [
        (1.5, "float32", False), ([0.0, 0.5, 1.0], "float32", False)]
    under_jit = pc.make_jaxpr(lambda x: lax.while_loop(lambda c: c < x, lambda c: c + 1.5, 0))(f32(3))
    assert [v.aval.str_short() for v in under_jit.jaxpr.outvars] == ["f32[]"]


def test_while_primitive_rejects_weak_carry_made_strong() -> None:
    weak = ShapedArray((), f32, weak_type=True)
    cond_j = _branch(lambda c: lax.lt(c, 3.0), weak)
    body_j = _branch(lambda c: lax.add(c, np.float32(1)), weak)
    assert body_j.out_avals[0].weak_type is False
    with pytest.raises(TypeError, match=r"while: the carry element 0 is weakly typed \(f32\[\], from a Python scalar\) "
                       r"but the body returns a strongly typed f32\[\].*fix the initial value's dtype, e.g. "
                       r"numpy.float32\(...\)"):
        while_p.bind(0.0, cond_jaxpr=cond_j, body_jaxpr=body_j, cond_nconsts=0, body_nconsts=0)
    strong = ShapedArray((), f32)
    bad_cond = _branch(lambda c: c, strong)
    with pytest.raises(TypeError, match=r"while: cond_jaxpr must return one boolean scalar, got f32\[\]"):
        while_p.bind(f32(0), cond_jaxpr=bad_cond, body_jaxpr=_branch(lambda c: c, strong), cond_nconsts=0,
                     body_nconsts=0)


# ---------------------------------------------------------------------------
# fori_loop


def test_fori_loop_with_concrete_bounds_is_a_scan() -> None:
    def f(x: Any) -> Any:
        return lax.fori_loop(2, 7, lambda i, v: lax.add(lax.mul(v, 2.0), lax.convert_element_type(i, np.float32)), x)

    closed = pc.make_jaxpr(f)(np.zeros(3, f32))
    assert _prims(closed) == ["scan"]
    assert closed.eqns[0].params["length"] == 5
    x = np.arange(3, dtype=f32)
    v = x.copy()
    for i in range(2, 7):
        v = v * 2 + i
    _assert_same(_eager_and_staged(f, x), v)


def test_fori_loop_with_traced_bounds_is_a_while() -> None:
    def f(n: Any, x: Any) -> Any:
        return lax.fori_loop(0, n, lambda i, v: lax.add(v, lax.convert_element_type(i, np.float32)), x)

    closed = pc.make_jaxpr(f)(np.int32(0), f32(0))
    assert _prims(closed) == ["while"]
    for n in (0, 1, 6):
        _assert_same(pc.eval_jaxpr(closed.jaxpr, closed.consts, np.int32(n), f32(1.5)), [f32(1.5 + sum(range(n)))])


def test_fori_loop_empty_range_and_pytree_carry() -> None:
    init = {"s": np.int32(4), "p": np.ones(2, f32)}
    body = lambda i, c: {"s": lax.add(c["s"], i), "p": lax.mul(c["p"], 2.0)}  # noqa: E731
    _assert_same(lax.fori_loop(5, 3, body, init), init)
    _assert_same(lax.fori_loop(0, 4, body, init), {"p": np.full(2, 16.0, f32), "s": np.int32(4 + 6)})
    _assert_same(lax.fori_loop(0, 4, body, init, unroll=2), {"p": np.full(2, 16.0, f32), "s": np.int32(10)})


def test_fori_loop_errors() -> None:
    with pytest.raises(ValueError, match=r"fori_loop: unroll can only be used when lower and upper are concrete"):
        pc.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, v: v, f32(0), unroll=2))(np.int32(3))
    with pytest.raises(TypeError, match=r"fori_loop: lower and upper must be integer scalars, got lower f32\[\]"):
        lax.fori_loop(0.0, 3, lambda i, v: v, f32(0))
    with pytest.raises(TypeError, match=r"fori_loop: the carry init_val has type f32\[\] on entry but the body returns "
                       r"i32\[\], so the dtypes differ"):
        lax.fori_loop(0, 3, lambda i, v: i, f32(0))
    with pytest.raises(TypeError, match=r"fori_loop: body_fun must return a carry with the same tree structure"):
        lax.fori_loop(0, 3, lambda i, v: (v, v), f32(0))


# ---------------------------------------------------------------------------
# scan and map


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32, dtypes.float16, dtypes.bfloat16], ids=str)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", [(5,), (4, 3), (3, 2, 2)], ids=str)
def test_scan_cumulative_sum_matches_numpy(dtype: Any, reverse: bool, shape: tuple[int, ...]) -> None:
    xs = _sample(shape, dtype, 4)

    def f(xs: Any) -> Any:
        init = np.zeros(shape[1:], dtype)
        return lax.scan(lambda c, x: (lax.add(c, x), c), init, xs, reverse=reverse)

    out = _eager_and_staged(f, xs)
    seq = xs[::-1] if reverse else xs
    total = np.cumsum(seq.astype(np.float64), axis=0).astype(dtype)
    before = np.concatenate([np.zeros((1, *shape[1:]), dtype), total[:-1]])
    _assert_same(out, (total[-1], before[::-1] if reverse else before))


def test_scan_pytrees_for_carry_xs_and_ys() -> None:
    xs = {"a": np.arange(8, dtype=f32).reshape(4, 2), "b": np.arange(4, dtype=i32)}
    init = (f32(0), {"n": np.int32(1)})

    def body(c: Any, x: Any) -> Any:
        s, d = c
        s2 = lax.add(s, lax.reduce_sum(x["a"], (0,)))
        return (s2, {"n": lax.mul(d["n"], lax.add(x["b"], 1))}), [lax.neg(x["a"]), None, s2]

    out = _eager_and_staged(lambda init, xs: lax.scan(body, init, xs), init, xs)
    sums = np.cumsum(xs["a"].sum(1))
    _assert_same(out, ((f32(sums[-1]), {"n": np.int32(24)}), [-xs["a"], None, sums.astype(f32)]))


def test_scan_without_xs_uses_length_and_unroll_true() -> None:
    def f(x: Any) -> Any:
        return lax.scan(lambda c, _: (lax.mul(c, 2.0), c), x, None, length=4, unroll=True)

    closed = pc.make_jaxpr(f)(f32(1))
    assert closed.eqns[0].params["unroll"] == 4
    out = _eager_and_staged(f, f32(3))
    _assert_same(out, (f32(48), np.array([3, 6, 12, 24], f32)))


def test_scan_of_length_zero_returns_init_and_empty_ys() -> None:
    xs = np.zeros((0, 3), f32)
    out = _eager_and_staged(lambda xs: lax.scan(lambda c, x: (lax.add(c, x), lax.mul(x, 2.0)), np.ones(3, f32), xs), xs)
    _assert_same(out, (np.ones(3, f32), np.zeros((0, 3), f32)))


def test_scan_closure_over_outer_tracer_and_constant() -> None:
    table = np.array([1.0, -1.0], f32)

    def f(w: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (lax.add(lax.mul(c, w), lax.mul(x, table)), c), np.zeros(2, f32), xs)

    closed = pc.make_jaxpr(f)(f32(0), np.zeros((3, 2), f32))
    (eqn,) = closed.eqns
    assert eqn.params["num_consts"] == 2 and eqn.params["jaxpr"].consts == []
    xs = np.arange(6, dtype=f32).reshape(3, 2)
    c, ys = np.zeros(2, f32), []
    for x in xs:
        ys.append(c)
        c = c * f32(0.5) + x * table
    _assert_same(_eager_and_staged(f, f32(0.5), xs), (c, np.stack(ys)))


def test_map_matches_numpy() -> None:
    xs = np.arange(12, dtype=f32).reshape(4, 3)
    out = _eager_and_staged(lambda xs: lax.map(lambda x: (lax.reduce_sum(x, (0,)), lax.sin(x)), xs), xs)
    _assert_same(out, (xs.sum(1), np.sin(xs)))


def test_nested_scan_while_cond() -> None:
    def f(xs: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            def grow(v: Any) -> Any:
                return lax.while_loop(lambda u: lax.lt(u, 100.0), lambda u: lax.mul(u, 3.0), v)

            y = lax.cond(lax.gt(x, 2.0), grow, lambda v: lax.neg(v), lax.add(x, 1.0))
            return lax.add(c, y), lax.fori_loop(0, 3, lambda i, a: lax.add(a, x), y)

        return lax.scan(body, f32(0), xs)

    xs = np.array([0.0, 3.0, 1.0, 5.0], f32)
    c, ys = f32(0), []
    for x in xs:
        v = x + 1
        if x > 2:
            while v < 100:
                v = v * 3
        else:
            v = -v
        c = c + v
        ys.append(v + 3 * x)
    _assert_same(_eager_and_staged(f, xs), (f32(c), np.array(ys, f32)))


def test_scan_errors() -> None:
    body = lambda c, x: (c, x)  # noqa: E731
    with pytest.raises(ValueError, match=r"scan: the leaves of xs must all have the same leading size, but they are "
                       r"xs\[0\]: f32\[3\], xs\[1\]: f32\[4,2\]"):
        lax.scan(body, f32(0), (np.zeros(3, f32), np.zeros((4, 2), f32)))
    with pytest.raises(ValueError, match=r"scan: length=5 was given, and the leaves of xs must all have the same "
                       r"leading size, but they are xs: f32\[3\]"):
        lax.scan(body, f32(0), np.zeros(3, f32), length=5)
    with pytest.raises(ValueError, match=r"scan: every leaf of xs needs a leading axis to scan over, but xs\['k'\] "
                       r"has type f32\[\]"):
        lax.scan(body, f32(0), {"k": f32(1)})
    with pytest.raises(ValueError, match=r"scan: there are no xs to scan over and no length was given"):
        lax.scan(body, f32(0), None)
    with pytest.raises(TypeError, match=r"scan: f must return a pair \(carry, y\), but it returned a value of type"):
        lax.scan(lambda c, x: c, f32(0), np.zeros(3, f32))
    with pytest.raises(TypeError, match=r"scan: the carry init\[1\]\['w'\] has type f32\[\] on entry but the body "
                       r"returns i32\[\], so the dtypes differ"):
        lax.scan(lambda c, x: ((c[0], {"w": lax.convert_element_type(x, np.int32)}), None),
                 (f32(0), {"w": f32(0)}), np.zeros(3, f32))
    with pytest.raises(TypeError, match=r"scan: f must return a carry with the same tree structure"):
        lax.scan(lambda c, x: ((c, c), None), f32(0), np.zeros(3, f32))
    with pytest.raises(ValueError, match=r"scan: unroll must be a bool or a positive int, got 0"):
        lax.scan(body, f32(0), np.zeros(3, f32), unroll=0)
    with pytest.raises(ValueError, match=r"scan: length must be non-negative, got -1"):
        lax.scan(body, f32(0), None, length=-1)
    with pytest.raises(TypeError, match=r"scan xs leaf 0: expected an array.*str"):
        lax.scan(body, f32(0), ["abc"])


def test_scan_primitive_errors() -> None:
    s = ShapedArray((), f32)
    body = pc.trace_to_jaxpr(lambda c, x: [lax.add(c, x), c], [s, s])
    params = dict(jaxpr=body, num_consts=0, num_carry=1, length=3, reverse=False, unroll=1, linear=(False, False))
    with pytest.raises(ValueError, match=r"scan: scanned operand 0 has type f32\[4\], but every scanned operand needs "
                       r"a leading axis of the scan length 3"):
        scan_p.bind(f32(0), np.zeros(4, f32), **params)
    with pytest.raises(TypeError, match=r"scan: the param linear must be a tuple of 2 bools"):
        scan_p.bind(f32(0), np.zeros(3, f32), **dict(params, linear=(False,)))
    weak_body = pc.trace_to_jaxpr(lambda c, x: [lax.add(c, x), c], [s.update(weak_type=True), s])
    with pytest.raises(TypeError, match=r"scan: the carry element 0 is weakly typed .* fix the initial value's dtype"):
        scan_p.bind(0.0, np.zeros(3, f32), **dict(params, jaxpr=weak_body))


# ---------------------------------------------------------------------------
# Partial evaluation


def _pe_roundtrip(closed: ClosedJaxpr, in_unknowns: Sequence[bool], args: Sequence[Any]) -> tuple[Any, ...]:
    """Split, run the known part then the unknown part, and compare the
    recombined outputs with evaluating the original."""
    known, unknown, out_uk, nres = pc.partial_eval_jaxpr(closed, in_unknowns)
    pc.check_jaxpr(known)
    pc.check_jaxpr(unknown)
    k_out = pc.eval_jaxpr(known.jaxpr, known.consts, *[a for a, u in zip(args, in_unknowns) if not u])
    nk = out_uk.count(False)
    assert len(k_out) == nk + nres
    u_out = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, *k_out[nk:], *[a for a, u in zip(args, in_unknowns) if u])
    ik, iu = iter(k_out[:nk]), iter(u_out)
    recombined = [next(iu) if u else next(ik) for u in out_uk]
    _assert_same(recombined, pc.eval_jaxpr(closed.jaxpr, closed.consts, *args), rtol=1e-5)
    return known, unknown, out_uk, nres


def _cond_program(p: Any, x: Any, y: Any) -> Any:
    return lax.cond(
        p,
        lambda a, b: (lax.sin(a), lax.mul(lax.cos(a), b), lax.add(a, 1.0)),
        lambda a, b: (lax.mul(a, 2.0), lax.exp(b), lax.neg(a)),
        x,
        y,
    )


@pytest.mark.parametrize("unknowns", list(itertools.product([False, True], repeat=3)), ids=str)
def test_partial_eval_cond(unknowns: tuple[bool, bool, bool]) -> None:
    x, y = np.linspace(-1, 1, 3).astype(f32), np.linspace(0, 2, 3).astype(f32)
    closed = pc.make_jaxpr(_cond_program)(np.bool_(True), x, y)
    for p in (True, False):
        known, _, out_uk, _ = _pe_roundtrip(closed, unknowns, [np.bool_(p), x, y])
    p_uk, x_uk, y_uk = unknowns
    if p_uk:
        assert all(out_uk) and "cond" not in _prims(known)
    else:
        # output 0 and 2 need only x; output 1 needs y in one branch
        assert out_uk == [x_uk, x_uk or y_uk, x_uk]


def test_partial_eval_cond_computes_known_half_now_with_merged_residuals() -> None:
    x, y = np.linspace(-1, 1, 3).astype(f32), np.linspace(0, 2, 3).astype(f32)
    closed = pc.make_jaxpr(_cond_program)(np.bool_(True), x, y)
    known, unknown, out_uk, _ = _pe_roundtrip(closed, [False, False, True], [np.bool_(False), x, y])
    assert out_uk == [False, True, False]
    assert "cond" in _prims(known) and "cond" in _prims(unknown)
    # true branch keeps cos(x) as its residual; false branch has none and fills zeros
    (k_cond,) = [e for e in known.eqns if e.primitive is cond_p]
    assert len(k_cond.outvars) == 2 + 1


def _scan_program(w: Any, a0: Any, b0: Any, xs: Any, ys: Any, reverse: bool = False) -> Any:
    def body(c: Any, xy: Any) -> Any:
        a, b = c
        x, y = xy
        a2 = lax.add(lax.mul(a, w), x)
        b2 = lax.add(lax.mul(b, lax.sin(a)), y)
        return (a2, b2), (lax.cos(a2), lax.mul(b2, x), lax.add(y, w))

    return lax.scan(body, (a0, b0), (xs, ys), reverse=reverse)


@pytest.mark.parametrize("unknowns", list(itertools.product([False, True], repeat=5)), ids=str)
@pytest.mark.parametrize("reverse", [False, True])
def test_partial_eval_scan(unknowns: tuple[bool, ...], reverse: bool) -> None:
    rng = np.random.default_rng(7)
    args = [f32(0.9), rng.random(3).astype(f32), rng.random(3).astype(f32),
            rng.random((4, 3)).astype(f32), rng.random((4, 3)).astype(f32)]

    closed = pc.make_jaxpr(lambda w, a0, b0, xs, ys: _scan_program(w, a0, b0, xs, ys, reverse=reverse))(*args)
    _, _, out_uk, _ = _pe_roundtrip(closed, unknowns, args)
    w_uk, a_uk, b_uk, x_uk, y_uk = unknowns
    a = w_uk or a_uk or x_uk  # carry a depends on w, a0 and xs only
    b = a or b_uk or y_uk
    # outputs: carry a, carry b, ys cos(a2), b2 * x, y + w
    assert out_uk == [a, b, a, b or x_uk, y_uk or w_uk]


def test_partial_eval_scan_runs_known_scan_and_stacks_residuals() -> None:
    rng = np.random.default_rng(8)
    args = [f32(0.9), rng.random(3).astype(f32), rng.random(3).astype(f32),
            rng.random((4, 3)).astype(f32), rng.random((4, 3)).astype(f32)]
    closed = pc.make_jaxpr(_scan_program)(*args)
    known, unknown, out_uk, _ = _pe_roundtrip(closed, [False, False, False, False, True], args)
    assert out_uk == [False, True, False, True, True]
    assert _prims(known) == ["scan"] and _prims(unknown) == ["scan"]
    # known scan: carry a, ys cos(a2), and sin(a) stacked (it varies per iteration)
    assert [v.aval for v in known.eqns[0].outvars] == [ShapedArray((3,), f32), *[ShapedArray((4, 3), f32)] * 2]
    # unknown scan: w forwarded as a const, carry b, xs = (stacked sin(a), xs forwarded whole, ys)
    u_eqn = unknown.eqns[0]
    assert (u_eqn.params["num_consts"], u_eqn.params["num_carry"], len(u_eqn.invars)) == (1, 1, 5)


def test_partial_eval_on_concrete_known_values_runs_the_known_scan_now() -> None:
    rng = np.random.default_rng(9)
    w, a0, b0 = f32(0.9), rng.random(3).astype(f32), rng.random(3).astype(f32)
    xs, ys = rng.random((4, 3)).astype(f32), rng.random((4, 3)).astype(f32)
    pvals = [pc.PartialVal.known(v) for v in (w, a0, b0, xs)] + [pc.PartialVal.unknown(ShapedArray((4, 3), f32))]
    flat = lambda *a: tree_leaves(_scan_program(*a))  # noqa: E731
    unknown, out_pvals = trace_to_jaxpr_partial(flat, pvals)
    expected = tree_leaves(_scan_program(w, a0, b0, xs, ys))
    assert [pv.is_known for pv in out_pvals] == [True, False, True, False, False]
    for pv, e in zip(out_pvals, expected):
        if pv.is_known:
            assert isinstance(pv.value, np.ndarray)  # computed eagerly, now
            _assert_same(pv.value, e, rtol=1e-5)
    assert any(np.shape(c) == (4, 3) for c in unknown.consts)  # stacked residuals are concrete
    _assert_same(pc.eval_jaxpr(unknown.jaxpr, unknown.consts, ys), [e for pv, e in zip(out_pvals, expected)
                                                                      if not pv.is_known], rtol=1e-5)


def test_partial_eval_scan_carry_fixed_point() -> None:
    # carry a becomes unknown only through the unknown carry b (swap each step)
    def prog(a: Any, b: Any) -> Any:
        return lax.scan(lambda c, _: ((c[1], lax.mul(c[0], 2.0)), lax.add(c[0], 1.0)), (a, b), None, length=3)

    args = [f32(1.5), f32(-2)]
    closed = pc.make_jaxpr(prog)(*args)
    _, _, out_uk, _ = _pe_roundtrip(closed, [False, True], args)
    assert out_uk == [True, True, True]


def _while_program(n: Any, w: Any, i0: Any, a0: Any, b0: Any) -> Any:
    return lax.while_loop(
        lambda c: lax.lt(c[0], n),
        lambda c: (lax.add(c[0], 1), lax.add(lax.mul(c[1], w), 1.0), lax.add(c[2], lax.sin(c[1]))),
        (i0, a0, b0),
    )


@pytest.mark.parametrize("unknowns", list(itertools.product([False, True], repeat=5)), ids=str)
def test_partial_eval_while(unknowns: tuple[bool, ...]) -> None:
    args = [np.int32(4), f32(0.5), np.int32(0), np.linspace(0, 1, 3).astype(f32), np.zeros(3, f32)]
    closed = pc.make_jaxpr(_while_program)(*args)
    known, _, out_uk, _ = _pe_roundtrip(closed, unknowns, args)
    n_uk, w_uk, i_uk, a_uk, b_uk = unknowns
    pred_uk = n_uk or i_uk
    if pred_uk:
        assert all(out_uk) and "while" not in _prims(known)
    else:
        a = w_uk or a_uk
        assert out_uk == [False, a, a or b_uk]
        assert ("while" in _prims(known)) == (not all(out_uk))


def test_dce_scan_removes_unused_ys_and_independent_carries() -> None:
    def prog(a0: Any, b0: Any, k0: Any, xs: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            a, b, k = c  # b feeds a; k is independent
            return (lax.add(a, b), lax.mul(b, 2.0), lax.add(k, lax.sin(x))), (lax.mul(a, x), lax.exp(x))

        (a, _, _), (y0, _) = lax.scan(body, (a0, b0, k0), xs)
        return a, y0

    args = [f32(1), f32(0.5), f32(0), np.linspace(0, 1, 4).astype(f32)]
    closed = pc.make_jaxpr(prog)(*args)
    (eqn,) = closed.eqns
    assert len(eqn.outvars) == 5 and len(eqn.params["jaxpr"].eqns) == 6
    pruned, used_inputs = pc.dce_jaxpr(closed.jaxpr)
    (new,) = pruned.eqns
    assert len(new.outvars) == 3  # carries a, b and y0
    assert new.params["num_carry"] == 2 and len(new.invars) == 3
    assert _prims(new.params["jaxpr"]) == ["add", "mul", "mul"]
    assert used_inputs == [True, True, False, True]
    pc.check_jaxpr(pruned)
    _assert_same(pc.eval_jaxpr(pruned, closed.consts, *args), pc.eval_jaxpr(closed.jaxpr, closed.consts, *args))


def test_dce_cond_prunes_outputs_and_operands() -> None:
    def prog(p: Any, x: Any, y: Any) -> Any:
        out = lax.cond(p, lambda a, b: (lax.sin(a), lax.exp(b)), lambda a, b: (lax.cos(a), lax.neg(b)), x, y)
        return out[0]

    args = [np.bool_(True), f32(0.3), f32(2)]
    closed = pc.make_jaxpr(prog)(*args)
    pruned, used = pc.dce_jaxpr(closed.jaxpr)
    (eqn,) = [e for e in pruned.eqns if e.primitive is cond_p]
    assert len(eqn.outvars) == 1 and len(eqn.invars) == 2
    assert [_prims(b) for b in eqn.params["branches"]] == [["cos"], ["sin"]]
    assert used == [True, True, False]
    pc.check_jaxpr(pruned)
    for p in (True, False):
        a = [np.bool_(p), *args[1:]]
        _assert_same(pc.eval_jaxpr(pruned, closed.consts, *a), pc.eval_jaxpr(closed.jaxpr, closed.consts, *a))


def test_dce_while_keeps_carries_the_predicate_reads() -> None:
    def prog(x: Any, junk: Any) -> Any:
        _, v, _ = lax.while_loop(
            lambda c: lax.lt(c[0], 3),
            lambda c: (lax.add(c[0], 1), lax.mul(c[1], 2.0), lax.exp(c[2])),
            (np.int32(0), x, junk),
        )
        return v

    args = [f32(1.5), np.ones(2, f32)]
    closed = pc.make_jaxpr(prog)(*args)
    pruned, used = pc.dce_jaxpr(closed.jaxpr)
    (eqn,) = pruned.eqns
    assert len(eqn.outvars) == 2 and used == [True, False]
    assert "exp" not in _prims(eqn.params["body_jaxpr"])
    pc.check_jaxpr(pruned)
    _assert_same(pc.eval_jaxpr(pruned, closed.consts, *args), [f32(12)])


def test_join_consts_gives_branches_common_inputs() -> None:
    from plait_core.primitives.control_flow import join_consts

    s = ShapedArray((2,), f32)
    c1, c2 = np.ones(2, f32), np.full(2, 3.0, f32)
    b1 = pc.trace_to_jaxpr(lambda v: [lax.add(v, c1)], [s])
    b2 = pc.trace_to_jaxpr(lambda v: [lax.mul(lax.add(v, c1), c2)], [s])
    joined, consts = join_consts([b1, b2])
    assert [id(c) for c in consts] == [id(c1), id(c2)]
    assert all(len(j.in_avals) == 3 and isinstance(j.jaxpr.invars[0], Var) for j in joined)
    x = np.arange(2, dtype=f32)
    _assert_same(pc.eval_jaxpr(joined[1].jaxpr, [], *consts, x), [(x + c1) * c2])
    _assert_same(pc.eval_jaxpr(joined[0].jaxpr, [], *consts, x), [x + c1])


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 10])
def test_map_batch_size_gives_the_unbatched_values(batch_size: int) -> None:
    from plait_core import lax as _lax

    xs = np.arange(14.0, dtype=f32).reshape(7, 2)
    got = _lax.map(lambda x: {"s": _lax.reduce_sum(x, (0,)), "d": _lax.mul(x, x)}, xs, batch_size=batch_size)
    _assert_same([got["s"], got["d"]], [xs.sum(1), xs * xs])


def test_map_batch_size_errors() -> None:
    from plait_core import lax as _lax

    with pytest.raises(ValueError, match="map: batch_size must be at least 1, got 0"):
        _lax.map(lambda v: v, np.ones(4, np.float32), batch_size=0)
    with pytest.raises(TypeError, match=r"map: batch_size must be an int, got 2\.5"):
        _lax.map(lambda v: v, np.ones(4, np.float32), batch_size=2.5)  # type: ignore[arg-type]
