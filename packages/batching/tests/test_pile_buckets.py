"""Piles with static lengths: vmap by buckets of similar lengths (plait_batching.buckets)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, vmap
from plait_batching.buckets import BUCKET_OVERHEAD, MAX_BUCKETS, split_sorted
from plait_batching.length_plan import PLAN_BUCKETS, LengthPlan, grid_step, make_plan
from plait_batching.pile import pile_static_lengths
from plait_core import lax, make_jaxpr, nn

LENGTHS = [5, 17, 3, 30, 12, 29, 8, 1, 22, 16, 30, 2]
# Other lengths, each in the same cell of the plans' grid (steps of 8 for the padded size 32) as LENGTHS's: one plan.
SAME_CELLS = [4, 18, 6, 31, 9, 25, 7, 2, 20, 13, 26, 1][::-1]


def _seqs(lengths: list[int], width: int = 4, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, width)).astype(np.float32) for n in lengths]


def _attention(x: Any, w: Any) -> Any:
    s = (x @ w) @ x.T / 2.0
    return nn.softmax(s, axis=-1) @ x + pnp.tanh(x @ w)


def _count(jaxpr: Any, name: str) -> int:
    return sum(e.primitive.name == name for e in jaxpr.jaxpr.eqns)


def test_buckets_give_the_whole_piles_results() -> None:
    seqs = _seqs(LENGTHS)
    w = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    f = vmap(_attention, in_axes=(pile_axis, None), out_axes=pile_axis)
    whole = f(Pile.from_arrays(seqs, static_lengths=False), w)
    bucketed = f(Pile.from_arrays(seqs, static_lengths=True), w)
    assert bucketed.data.shape == whole.data.shape
    np.testing.assert_array_equal(np.asarray(bucketed.lengths), LENGTHS)
    for i, (a, b) in enumerate(zip(bucketed, seqs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(_attention(b, w)), rtol=1e-5, atol=1e-5,
                                   err_msg=f"element {i}")  # fmt: skip


def test_the_program_holds_one_copy_per_bucket() -> None:
    seqs = _seqs(LENGTHS)
    w = np.eye(4, dtype=np.float32)

    def total(p: Pile) -> Any:
        return vmap(lambda x: pnp.sum(_attention(x, w)), in_axes=pile_axis)(p)

    buckets = len(split_sorted(sorted(LENGTHS, reverse=True), max(LENGTHS)))
    assert buckets > 1
    # One softmax (reduce_max, exp) and one tanh per copy of the function; the
    # number of dot_generals depends on the layout each bucket computes on.
    for name in ("reduce_max", "exp", "tanh"):
        assert _count(make_jaxpr(total)(Pile.from_arrays(seqs, static_lengths=True)), name) == buckets, name
        assert _count(make_jaxpr(total)(Pile.from_arrays(seqs, static_lengths=False)), name) == 1, name




def test_a_collective_over_the_mapped_axis_sees_every_element() -> None:
    seqs = _seqs(LENGTHS, seed=6)
    f = vmap(lambda x: lax.psum(pnp.sum(x), "i"), in_axes=pile_axis, axis_name="i")
    got = f(Pile.from_arrays(seqs, static_lengths=True))
    total = sum(float(np.sum(s)) for s in seqs)
    np.testing.assert_allclose(np.asarray(got), np.full(len(LENGTHS), total, np.float32), rtol=1e-5)


def test_cost_model_cuts() -> None:
    assert split_sorted([40] * 16, 40) == [(0, 16)]  # equal lengths: one bucket
    two = split_sorted([100] * 16 + [10] * 16, 100)
    assert two == [(0, 16), (16, 32)]
    spread = split_sorted(sorted(range(1, 200), reverse=True), 199)
    assert 1 < len(spread) <= MAX_BUCKETS
    assert spread[0][0] == 0 and spread[-1][1] == 199
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spread))


def _cheapest_cut_by_every_position(lengths: list[int], padded: int) -> float:
    """The oracle: the cost model's cheapest cut searched over every position (quadratic in the elements)."""
    b, most = len(lengths), min(MAX_BUCKETS, len(lengths))

    def cost(a: int, c: int) -> float:
        width = padded if a == 0 else lengths[a]
        return float((c - a) * width * (width + padded))

    best = [[float("inf")] * (b + 1) for _ in range(most + 1)]
    best[0][0] = 0.0
    for k in range(1, most + 1):
        for c in range(1, b + 1):
            best[k][c] = min((best[k - 1][a] + cost(a, c) for a in range(k - 1, c)), default=float("inf"))
    return min(best[k][b] + (k - 1) * BUCKET_OVERHEAD * cost(0, b) for k in range(1, most + 1))


def _cost_of(cut: list[tuple[int, int]], lengths: list[int], padded: int) -> float:
    widths = [padded if a == 0 else lengths[a] for a, _ in cut]
    total = sum(float((c - a) * w * (w + padded)) for (a, c), w in zip(cut, widths))
    return total + (len(cut) - 1) * BUCKET_OVERHEAD * float(len(lengths) * padded * 2 * padded)


def test_the_cut_search_over_run_starts_is_the_cheapest() -> None:
    # split_sorted searches cuts only where the length changes (and after the first element): as cheap as a search
    # over every position, on random lengths with many ties (on a grid) and without.
    rng = np.random.default_rng(11)
    for _ in range(300):
        b, top = int(rng.integers(1, 30)), int(rng.integers(1, 130))
        lengths = sorted(rng.integers(0, top + 1, b).tolist(), reverse=True)
        if rng.random() < 0.5:
            lengths = sorted(np.minimum(-(-np.array(lengths) // 8) * 8, top).tolist(), reverse=True)
        padded = max(top, lengths[0])
        cut = split_sorted(lengths, padded)
        assert cut[0][0] == 0 and cut[-1][1] == b and all(x[1] == y[0] for x, y in itertools.pairwise(cut))
        assert _cost_of(cut, lengths, padded) == pytest.approx(_cheapest_cut_by_every_position(lengths, padded))
    # A large batch is planned from its few distinct lengths (the search grew with the square of the elements).
    many = np.random.default_rng(12).integers(8, 126, 8192)
    plan = make_plan(many, 128)
    assert plan.num_elements == 8192 and plan.misfit(many) is None and len(plan.buckets) <= PLAN_BUCKETS


def test_equal_static_lengths_stay_one_full_pile() -> None:
    seqs = _seqs([6] * 5)
    pile = Pile.from_arrays(seqs, static_lengths=True)
    assert pile.full
    jaxpr = make_jaxpr(vmap(lambda x: pnp.sum(_attention(x, np.eye(4, dtype=np.float32))), in_axes=pile_axis))(pile)
    assert _count(jaxpr, "select_n") == 0


def test_static_lengths_errors() -> None:
    seqs = _seqs([3, 4])
    with pytest.raises(TypeError, match="static_lengths must be True, False, 'plan' or None, got 'yes'"):
        Pile.from_arrays(seqs, static_lengths="yes")  # type: ignore[arg-type]

    def build(data: Any, lengths: Any) -> Any:
        return Pile(data, lengths, static_lengths=True).data

    p = Pile.from_arrays(seqs)
    with pytest.raises(TypeError, match="static_lengths=True needs concrete lengths"):
        make_jaxpr(build)(p.data, p.lengths)



def test_empty_elements_make_a_bucket_of_their_own() -> None:
    lengths = [0, 30, 0, 29, 0, 0, 1, 2, 28, 0]
    seqs = _seqs(lengths, seed=8)
    w = np.eye(4, dtype=np.float32)
    f = vmap(lambda x: _attention(x, w), in_axes=pile_axis, out_axes=pile_axis)
    got = f(Pile.from_arrays(seqs, static_lengths=True))
    np.testing.assert_array_equal(np.asarray(got.lengths), lengths)
    for a, b in zip(got, seqs):
        assert a.shape == b.shape
        if len(b):
            np.testing.assert_allclose(np.asarray(a), np.asarray(_attention(b, w)), rtol=1e-5, atol=1e-5)
    sums = vmap(pnp.sum, in_axes=pile_axis)(Pile.from_arrays(seqs, static_lengths=True))
    np.testing.assert_allclose(np.asarray(sums), [float(np.sum(s)) for s in seqs], rtol=1e-5, atol=1e-6)


def test_errors_name_the_whole_piles_lengths() -> None:
    # Each bucket alone would name its own lengths ([5], then [3]); the error names the pile's.
    pile = Pile.from_arrays([np.ones((3, 2), np.float32), np.ones((5, 2), np.float32)], static_lengths=True)
    with pytest.raises(ValueError, match=r"the function's result is ragged .*_pile\d+ with lengths \[3 5\]\)"):
        vmap(lambda x: x * 2.0, in_axes=pile_axis, out_axes=0)(pile)
    with pytest.raises(ValueError, match=r"slice takes the entries \[0, 4\) of the ragged axis 0, which the elements "
                                         r"of lengths \[3\] do not have"):  # fmt: skip
        vmap(lambda x: x[:4], in_axes=pile_axis, out_axes=pile_axis)(pile)


def test_a_shrinking_size_over_an_empty_bucket() -> None:
    # x[1:] has n - 1 entries: -1 at the padded size 0 of a bucket of empty elements, so that bucket is
    # computed at the pile's padded size, where the empty elements' sizes clip to 0.
    lengths = [0, 0, 0, 0, 9, 9, 9, 9]
    seqs = _seqs(lengths)
    pile = Pile.from_arrays(seqs, static_lengths=True)
    assert len(split_sorted(sorted(lengths, reverse=True), 9)) == 2
    out = vmap(lambda x: x[1:] * 2.0, in_axes=pile_axis, out_axes=pile_axis)(pile)
    np.testing.assert_array_equal(np.asarray(out.lengths), [0, 0, 0, 0, 8, 8, 8, 8])
    assert out.data.shape == (8, 8, 4)
    for a, b in zip(out, seqs):
        np.testing.assert_allclose(np.asarray(a), b[1:] * 2.0, rtol=1e-6)


def test_axis_size_is_checked_against_the_whole_pile() -> None:
    seqs = _seqs(LENGTHS)
    pile = Pile.from_arrays(seqs, static_lengths=True)
    got = vmap(lambda x: pnp.sum(x), in_axes=pile_axis, axis_size=len(LENGTHS))(pile)
    np.testing.assert_allclose(np.asarray(got), [s.sum() for s in seqs], rtol=1e-5)
    with pytest.raises(ValueError, match=r"(?s)axis_size=5 was given.*argument x of type Pile has size 12"):
        vmap(lambda x: pnp.sum(x), in_axes=pile_axis, axis_size=5)(pile)


def test_a_static_pile_without_elements() -> None:
    pile = Pile(np.zeros((0, 3, 4), np.float32), np.zeros(0, np.int32), static_lengths=True)
    assert pile.static_lengths == ()
    got = vmap(lambda x: pnp.sum(x, 0), in_axes=pile_axis)(pile)
    assert np.asarray(got).shape == (0, 4)


def test_other_arguments_mapped_along_a_negative_axis() -> None:
    seqs = _seqs(LENGTHS)
    ws = np.random.default_rng(3).standard_normal((4, len(LENGTHS))).astype(np.float32)
    got = vmap(lambda x, w: pnp.sum(x * w, 0), in_axes=(pile_axis, -1), out_axes=-1)(
        Pile.from_arrays(seqs, static_lengths=True), ws
    )
    assert got.shape == (4, len(LENGTHS))
    for i, s in enumerate(seqs):
        np.testing.assert_allclose(np.asarray(got)[:, i], (s * ws[:, i]).sum(0), rtol=1e-5, atol=1e-6)


def test_the_default_switch_for_tests() -> None:
    seqs = _seqs([3, 4])
    with pile_static_lengths(True):
        assert Pile.from_arrays(seqs).static_lengths == (3, 4)
        assert Pile(np.zeros((2, 4)), [1, 4]).static_lengths == (1, 4)
        assert Pile.from_arrays(seqs, static_lengths=False).static_lengths is None
        # Traced lengths cannot be static: the default leaves such piles as they are.
        p = Pile.from_arrays(seqs)
        statics: list[Any] = []
        make_jaxpr(lambda d, n: statics.append(Pile(d, n).static_lengths))(p.data, p.lengths)
        assert statics == [None]
        with pile_static_lengths(False):
            assert Pile.from_arrays(seqs).static_lengths is None
            assert Pile.from_arrays(seqs).capacity == 7  # (lengths traced: the sum is recorded)
        with pile_static_lengths(None):  # the library's defaults: from_arrays plans, Pile(...) keeps values
            assert Pile.from_arrays(seqs).static_lengths == LengthPlan([(2, 4)])
            assert Pile.from_arrays(seqs, storage="padded").capacity is None  # (packed: the values' rows)
            assert Pile(np.zeros((2, 4)), [1, 4]).static_lengths is None
    with pytest.raises(TypeError, match="pile_static_lengths: static must be True, False, 'plan' or None, got 'yes'"):
        pile_static_lengths("yes").__enter__()  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Plans: static_lengths="plan" (plait_batching.length_plan)


def test_plan_rounding() -> None:
    assert (grid_step(128), grid_step(125), grid_step(30), grid_step(1000)) == (16, 16, 8, 128)
    # Sorted and on the grid (steps of 8): 32 32 32 24 24 16 16 8 8 8 8 8; cuts on multiples of 4.
    assert make_plan(np.array(LENGTHS), 32) == LengthPlan([(4, 32), (4, 24), (4, 8)])
    rng = np.random.default_rng(5)
    for _ in range(20):
        lengths = rng.integers(8, 126, 32)
        plan = make_plan(lengths, 128)
        counts, bounds = [n for n, _ in plan.buckets], [b for _, b in plan.buckets]
        assert sum(counts) == 32 and bounds[0] == 128 and 1 <= len(counts) <= PLAN_BUCKETS
        assert all(n % 11 == 0 for n in counts[:-1])  # cuts on multiples of ceil(32 / PLAN_BUCKETS)
        assert all(b % 16 == 0 for b in bounds) and bounds == sorted(set(bounds), reverse=True)
        ordered = np.sort(lengths)[::-1]
        starts = np.cumsum([0, *counts[:-1]])
        assert all(ordered[a] <= b for a, b in zip(starts, bounds))  # fits
        assert all(ordered[a] > b - 16 for a, b in zip(starts[1:], bounds[1:]))  # on the grid: the least bound
        assert plan.misfit(lengths) is None
    assert make_plan(np.array([40] * 16), 40) == LengthPlan([(16, 40)])  # equal lengths: one bucket
    assert make_plan(np.array([7]), 9) == LengthPlan([(1, 9)])
    assert make_plan(np.zeros(0, np.int32), 0) == LengthPlan([])
    # Batches whose lengths fall in the same cells of the grid share a plan.
    assert make_plan(np.array(LENGTHS), 32) == make_plan(np.array(SAME_CELLS), 32)


def test_a_plan_is_static_structure() -> None:
    seqs = _seqs(LENGTHS)
    pile = Pile.from_arrays(seqs, pad_to=32, static_lengths="plan")
    assert pile.static_lengths == LengthPlan([(4, 32), (4, 24), (4, 8)])
    assert hash(pile.static_lengths) == hash(LengthPlan([(4, 32), (4, 24), (4, 8)]))
    assert repr(pile).endswith("(plan 4 ≤32, 4 ≤24, 4 ≤8)")
    assert Pile(pile.data, pile.lengths, static_lengths="plan").static_lengths == pile.static_lengths
    with pytest.raises(AttributeError, match="LengthPlan is immutable"):
        # On purpose: assigning to the immutable plan must raise (mypy rightly rejects the assignment).
        pile.static_lengths.buckets = ()  # type: ignore[misc, union-attr]
    with pile_static_lengths("plan"):
        assert Pile.from_arrays(seqs, pad_to=32).static_lengths == pile.static_lengths
    with pytest.raises(TypeError, match=r"static_lengths='plan' needs concrete lengths, but the lengths are traced"):
        make_jaxpr(lambda d, n: Pile(d, n, static_lengths="plan").data)(pile.data, pile.lengths)


def test_a_plan_sorts_while_running_and_gives_the_whole_piles_results() -> None:
    seqs = _seqs(LENGTHS, seed=2)
    w = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    f = vmap(_attention, in_axes=(pile_axis, None), out_axes=pile_axis)
    planned = Pile.from_arrays(seqs, pad_to=32, static_lengths="plan")
    got = f(planned, w)
    whole = f(Pile.from_arrays(seqs, pad_to=32, static_lengths=False), w)
    assert got.data.shape == whole.data.shape == (12, 32, 4)
    np.testing.assert_array_equal(np.asarray(got.lengths), LENGTHS)
    for a, b, x in zip(got, whole, seqs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(a), np.asarray(_attention(x, w)), rtol=1e-5, atol=1e-5)

    def total(p: Pile) -> Any:
        return vmap(lambda x: pnp.sum(_attention(x, w)), in_axes=pile_axis)(p)

    program = make_jaxpr(total)(planned)
    assert _count(program, "sort") == 2  # the order and its inverse, from the (traced) lengths
    assert _count(program, "reduce_max") == 3  # one copy of the softmax per bucket
    exact = make_jaxpr(total)(Pile.from_arrays(seqs, pad_to=32, static_lengths=True))
    assert _count(exact, "sort") == 0  # exact static lengths: the order is a constant
    sums = total(planned)
    np.testing.assert_allclose(np.asarray(sums), [float(np.sum(_attention(x, w))) for x in seqs], rtol=1e-4)


def test_piles_of_one_plan_but_other_lengths_map_whole() -> None:
    one = Pile.from_arrays(_seqs(LENGTHS, seed=3), pad_to=32, static_lengths="plan")
    other = Pile.from_arrays(_seqs(SAME_CELLS, seed=4), pad_to=32, static_lengths="plan")
    assert one.static_lengths == other.static_lengths

    def both(x: Any, y: Any) -> Any:
        return pnp.sum(x) + 2.0 * pnp.sum(y)

    f = vmap(both, in_axes=(pile_axis, pile_axis))
    got = f(one, other)
    want = [float(np.sum(a)) + 2.0 * float(np.sum(b)) for a, b in zip(one.unpack(), other.unpack())]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    assert _count(make_jaxpr(f)(one, other), "sort") == 0  # mapped whole
    assert _count(make_jaxpr(lambda p: f(p, p))(one), "sort") == 2  # one lengths value: buckets
    np.testing.assert_allclose(np.asarray(f(one, one)), [3.0 * float(np.sum(a)) for a in one.unpack()], rtol=1e-5)
