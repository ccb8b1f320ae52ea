"""vmap of ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan`` and
``map`` against a Python loop: batched and unbatched predicates, operands,
closed-over values and carries, nested vmaps; eager and staged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from batching_checks import arr, check_against_loop

import plait_core as pc
from plait_batching import vmap
from plait_core import lax

f32, i32 = np.float32, np.int32


def double(x: Any) -> Any:
    return lax.mul(x, 2.0)


def negate(x: Any) -> Any:
    return lax.neg(x)


def eqn_names(closed: pc.ClosedJaxpr) -> list[str]:
    return [e.primitive.name for e in closed.eqns]


# ---------------------------------------------------------------------------
# cond / switch


@pytest.mark.parametrize("levels", [[[None, 0]], [[0, 0]], [[0, None]], [[0, 0], [-1, -1]], [[None, 0], [0, None]]])
def test_cond_matches_loop(levels: list[list[int | None]]) -> None:
    check_against_loop(lambda p, x: lax.cond(p, double, negate, x), [arr((), bool), arr((3,))], levels)


def test_cond_with_an_unbatched_predicate_stays_a_cond() -> None:
    closed = pc.make_jaxpr(vmap(lambda p, x: lax.cond(p, double, negate, x), in_axes=(None, 0)))(True, np.ones((4, 3), f32))
    assert eqn_names(closed)[-1:] == ["cond"] and "select_n" not in eqn_names(closed)


def test_cond_with_a_batched_predicate_selects_both_branches() -> None:
    closed = pc.make_jaxpr(vmap(lambda p, x: lax.cond(p, double, negate, x)))(np.ones(4, bool), np.ones((4, 3), f32))
    names = eqn_names(closed)
    assert "cond" not in names and "select_n" in names


@pytest.mark.parametrize("levels", [[[0, 0]], [[None, 0]], [[0, None]], [[0, 0], [0, 0]]])
def test_switch_with_out_of_range_indices_clamps(levels: list[list[int | None]]) -> None:
    branches = [double, negate, lambda x: lax.add(x, 1.0)]
    check_against_loop(lambda i, x: lax.switch(i, branches, x), [arr((), i32, -2, 5), arr((2,))], levels)


def test_cond_branches_closing_over_batched_values() -> None:
    def f(p: Any, x: Any, y: Any) -> Any:
        return lax.cond(p, lambda v: lax.mul(v, y), lambda v: lax.sub(v, y), x)

    for levels in ([[0, 0, 0]], [[None, None, 0]], [[0, None, 0]], [[None, 0, None]]):
        check_against_loop(f, [arr((), bool), arr((3,)), arr((3,))], levels)


def test_cond_with_several_outputs_and_unbatched_ones() -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda v: (v, np.float32(1)), lambda v: (lax.neg(v), np.float32(2)), x)

    check_against_loop(f, [arr((), bool), arr((2,))], [[0, 0]])
    check_against_loop(f, [arr((), bool), arr((2,))], [[None, 0]])


# ---------------------------------------------------------------------------
# while_loop / fori_loop


def count_up(limit: Any, x: Any) -> Any:
    def cond(c: Any) -> Any:
        return lax.lt(c[0], limit)

    def body(c: Any) -> Any:
        return lax.add(c[0], np.int32(1)), lax.add(lax.mul(c[1], 1.5), 1.0)

    return lax.while_loop(cond, body, (np.int32(0), x))


@pytest.mark.parametrize("levels", [[[None, 0]], [[0, 0]], [[0, None]], [[0, 0], [0, -1]], [[None, 0], [0, None]]])
def test_while_matches_loop(levels: list[list[int | None]]) -> None:
    check_against_loop(count_up, [arr((), i32, 0, 6), arr((2,))], levels)


def test_while_with_an_unbatched_predicate_stays_one_loop_over_batched_carries() -> None:
    closed = pc.make_jaxpr(vmap(count_up, in_axes=(None, 0)))(np.int32(3), np.ones((4, 2), f32))
    (eqn,) = [e for e in closed.eqns if e.primitive.name == "while"]
    assert [a.str_short() for a in eqn.params["body_jaxpr"].out_avals] == ["i32[]", "f32[4,2]"]


def test_while_with_a_batched_predicate_runs_until_every_element_is_done() -> None:
    limits = np.array([0, 3, 1], i32)
    counts, values = vmap(count_up, in_axes=(0, None))(limits, np.ones(2, f32))
    np.testing.assert_array_equal(counts, limits)
    expected = [np.ones(2, f32)]
    for _ in range(3):
        expected.append(expected[-1] * np.float32(1.5) + np.float32(1))
    np.testing.assert_allclose(values, np.stack([expected[n] for n in limits]), rtol=1e-6)


def test_fori_loop_with_batched_bounds() -> None:
    def f(n: Any, x: Any) -> Any:
        return lax.fori_loop(0, n, lambda i, c: lax.add(c, lax.convert_element_type(i, f32)), x)

    check_against_loop(f, [arr((), i32, 0, 5), arr(())], [[0, 0]])
    check_against_loop(f, [arr((), i32, 0, 5), arr(())], [[0, None]])


def test_a_carry_that_becomes_batched_in_the_body() -> None:
    def f(y: Any) -> Any:  # the carry starts unbatched; the body adds a batched value
        return lax.fori_loop(0, 3, lambda i, c: lax.add(c, y), np.zeros(2, f32))

    check_against_loop(f, [arr((2,))], [[0]])

    def g(y: Any) -> Any:
        return lax.while_loop(lambda c: lax.lt(c[0], 3), lambda c: (lax.add(c[0], 1), lax.add(c[1], y)),
                              (np.int32(0), np.zeros(2, f32)))[1]  # fmt: skip

    check_against_loop(g, [arr((2,))], [[0]])


# ---------------------------------------------------------------------------
# scan / map


def cumulative(init: Any, xs: Any, w: Any) -> Any:
    def step(c: Any, x: Any) -> Any:
        new = lax.add(lax.mul(c, w), x)
        return new, lax.mul(new, 2.0)

    return lax.scan(step, init, xs)


SCAN_LEVELS = [
    [[0, 0, 0]], [[None, 0, None]], [[0, None, None]], [[None, None, 0]], [[0, 1, 0]], [[-1, -1, -1]],
    [[0, 0, 0], [0, 1, 0]], [[None, 0, None], [0, None, 0]],
]  # fmt: skip


@pytest.mark.parametrize("levels", SCAN_LEVELS)
def test_scan_matches_loop(levels: list[list[int | None]]) -> None:
    check_against_loop(cumulative, [arr((2,)), arr((4, 2)), arr((2,), lo=0, hi=1)], levels)


def test_scan_in_reverse() -> None:
    def f(xs: Any) -> Any:
        return lax.scan(lambda c, x: (lax.add(c, x), c), np.float32(0), xs, reverse=True)

    check_against_loop(f, [arr((5,))], [[0]])
    check_against_loop(f, [arr((5,))], [[0], [0]])


def test_scan_keeps_one_scan() -> None:
    closed = pc.make_jaxpr(vmap(cumulative, in_axes=(None, 1, None)))(
        np.zeros(2, f32), np.zeros((4, 3, 2), f32), np.ones(2, f32)
    )
    assert eqn_names(closed).count("scan") == 1


def test_lax_map() -> None:
    check_against_loop(lambda xs: lax.map(lambda x: lax.reduce_sum(lax.mul(x, x), (0,)), xs), [arr((4, 3))], [[0]])


def test_loops_nested_in_cond_nested_in_scan() -> None:
    def f(p: Any, xs: Any) -> Any:
        def step(c: Any, x: Any) -> Any:
            c = lax.cond(p, lambda v: lax.add(v, x), lambda v: lax.sub(v, x), c)
            return c, lax.fori_loop(0, 2, lambda i, a: lax.mul(a, c), x)

        return lax.scan(step, np.float32(0), xs)

    check_against_loop(f, [arr((), bool), arr((3,))], [[0, 0]])
    check_against_loop(f, [arr((), bool), arr((3,))], [[0, None], [None, 0]])
