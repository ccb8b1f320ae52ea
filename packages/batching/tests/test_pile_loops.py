"""Loops inside ``vmap`` over piles: ``scan``, ``fori_loop`` and ``while_loop``.

Every result is compared with a Python loop over each element's true data
(:func:`pile_checks.check_pile`: eagerly, staged and with NaN in the
padding).  Scans over a ragged axis (an RNN over each sequence) stop
changing an element's carry after its length, forward and in reverse, and
stack their outputs into piles of the same lengths; loops whose carry or
consts are ragged run their body on ragged values; a trip count that
depends on the ragged length is a trip count per element.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pile_checks import check_pile, ragged_pile

import plait_core as pc
import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, vmap
from plait_core import lax

P = pile_axis
f32 = np.float32
D, H = 3, 4
LENGTHS = [[3, 1, 5], [1], [4, 4], [2, 6, 1, 6]]
rng = np.random.default_rng(11)
WX = (rng.standard_normal((D, H)) / 2).astype(f32)
WH = (rng.standard_normal((H, H)) / 2).astype(f32)
H0 = rng.standard_normal(H).astype(f32)


def rnn(xs: Any, h0: Any = H0, reverse: bool = False) -> tuple[Any, Any]:
    """An Elman RNN over ``xs`` (``(n, D)``): the final state and every state."""

    def cell(h: Any, x: Any) -> tuple[Any, Any]:
        h = pnp.tanh(h @ WH + x @ WX)
        return h, h

    return lax.scan(cell, h0, xs, reverse=reverse)


def numpy_rnn(xs: np.ndarray, h0: np.ndarray = H0, reverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    h, states = h0.astype(np.float64), [np.zeros(H)] * len(xs)
    for t in reversed(range(len(xs))) if reverse else range(len(xs)):
        h = np.tanh(h @ WH + xs[t] @ WX)
        states[t] = h
    return h.astype(f32), np.array(states, f32).reshape(len(xs), H)


# ---------------------------------------------------------------------------
# scan over the ragged axis


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("lengths", LENGTHS)
def test_rnn_over_each_sequence(lengths: list[int], reverse: bool) -> None:
    pile, _ = ragged_pile(rng, lengths, (D,))
    check_pile(lambda x: rnn(x, reverse=reverse), lambda x: numpy_rnn(x, reverse=reverse), [pile], P, (0, P))


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_rnn_with_a_padded_size_above_every_length(reverse: bool) -> None:
    elems = [rng.standard_normal((n, D)).astype(f32) for n in (2, 5, 1)]
    pile = Pile.from_arrays(elems, pad_to=8)
    check_pile(lambda x: rnn(x, reverse=reverse), lambda x: numpy_rnn(x, reverse=reverse), [pile], P, (0, P))


def test_rnn_with_a_batched_initial_state() -> None:
    pile, _ = ragged_pile(rng, [4, 2, 3], (D,))
    h0 = rng.standard_normal((3, H)).astype(f32)
    check_pile(rnn, numpy_rnn, [pile, h0], (P, 0), (0, P))


def test_mean_of_the_states_divides_by_each_length() -> None:
    pile, _ = ragged_pile(rng, [5, 1, 3], (D,))

    def summary(xs: Any) -> Any:
        last, states = rnn(xs)
        return last, pnp.mean(states, axis=0)

    check_pile(summary, lambda x: (numpy_rnn(x)[0], numpy_rnn(x)[1].mean(0)), [pile], P)


def test_scan_of_a_ragged_length_without_xs() -> None:
    pile, _ = ragged_pile(rng, [3, 1, 4])

    def count(x: Any) -> Any:
        return lax.scan(lambda c, _: (c + 2.0, c * c), f32(1.0), None, length=x.shape[0])

    def oracle(x: np.ndarray) -> Any:
        cs = f32(1.0) + 2 * np.arange(len(x), dtype=f32)
        return cs[-1] + 2, cs * cs

    check_pile(count, oracle, [pile], P, (0, P))


def test_scan_of_pytrees_and_several_outputs() -> None:
    pile, _ = ragged_pile(rng, [2, 5, 3], (2,))

    def f(xs: Any) -> Any:
        def step(c: dict[str, Any], x: Any) -> tuple[dict[str, Any], Any]:
            new = {"sum": c["sum"] + x, "max": pnp.maximum(c["max"], x[0]), "n": c["n"] + 1}
            return new, (x[0] * c["sum"][1], pnp.stack([x[1], c["max"]]))

        init = {"sum": pnp.zeros(2, f32), "max": f32(-10.0), "n": np.int32(0)}
        return lax.scan(step, init, xs)

    def oracle(xs: np.ndarray) -> Any:
        s, m, n, ys0, ys1 = np.zeros(2, f32), f32(-10.0), 0, [], []
        for x in xs:
            ys0.append(x[0] * s[1])
            ys1.append([x[1], m])
            s, m, n = s + x, max(m, x[0]), n + 1
        return {"max": m, "n": np.int32(n), "sum": s}, (np.array(ys0, f32), np.array(ys1, f32))

    check_pile(f, oracle, [pile], P, ({"max": 0, "n": 0, "sum": 0}, (P, P)))


def test_scan_rows_of_a_square_ragged_value() -> None:
    """The scanned slices are ragged too (rows of an ``n x n`` value), and so is the carry."""
    pile, _ = ragged_pile(rng, [3, 1, 4])

    def f(x: Any) -> Any:
        return lax.scan(lambda c, row: (c * 0.5 + row, pnp.sum(row * c)), pnp.zeros_like(x), pnp.outer(x, x))

    def oracle(x: np.ndarray) -> Any:
        c, ys = np.zeros_like(x), []
        for row in np.outer(x, x):
            ys.append(np.sum(row * c))
            c = c * 0.5 + row
        return c, np.array(ys, f32)

    check_pile(f, oracle, [pile], P, P)


def test_nested_scans_over_the_ragged_axis() -> None:
    pile, _ = ragged_pile(rng, [4, 1, 3])

    def cumsum_thrice(x: Any) -> Any:
        return lax.fori_loop(0, 3, lambda i, v: lax.scan(lambda c, a: (c + a, c + a), f32(0.0), v)[1], x)

    check_pile(cumsum_thrice, lambda x: np.cumsum(np.cumsum(np.cumsum(x))), [pile], P, P)


# ---------------------------------------------------------------------------
# Loops of a static trip count over ragged values


def test_fori_loop_over_a_ragged_carry() -> None:
    pile, _ = ragged_pile(rng, [3, 1, 5], lo=-1, hi=1)

    def oracle(x: np.ndarray) -> np.ndarray:
        for _ in range(5):
            x = x * 2 + x.sum()
        return x

    check_pile(lambda x: lax.fori_loop(0, 5, lambda i, v: v * 2 + v.sum(), x), oracle, [pile], P, P, rtol=1e-4)


def test_scan_with_ragged_consts_and_a_static_length() -> None:
    pile, _ = ragged_pile(rng, [2, 4], (2,))
    ws = rng.standard_normal((3, 2)).astype(f32)

    def f(x: Any, ws: Any) -> Any:
        return lax.scan(lambda c, w: (c + pnp.sum(pnp.tanh(x @ w)), pnp.max(x @ w)), f32(0.0), ws)

    def oracle(x: np.ndarray, ws: np.ndarray) -> Any:
        return f32(sum(np.tanh(x @ w).sum() for w in ws)), np.array([(x @ w).max() for w in ws], f32)

    check_pile(f, oracle, [pile, ws], (P, None))


def test_while_loop_with_an_unbatched_predicate() -> None:
    pile, _ = ragged_pile(rng, [2, 3])

    def f(x: Any) -> Any:
        return lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2 + pnp.mean(c[0]), c[1] + 1), (x, 0))

    def oracle(x: np.ndarray) -> Any:
        for _ in range(3):
            x = x * 2 + x.mean()
        return x, np.int32(3)

    check_pile(f, oracle, [pile], P, (P, 0))


# ---------------------------------------------------------------------------
# Trip counts per element


def test_while_loop_until_a_ragged_condition_holds() -> None:
    pile, _ = ragged_pile(rng, [3, 1, 6, 2], lo=0.5, hi=2)

    def f(x: Any) -> Any:
        return lax.while_loop(lambda v: pnp.sum(v) < 40.0, lambda v: v * 1.5, x)

    def oracle(x: np.ndarray) -> np.ndarray:
        while x.sum() < 40.0:
            x = x * f32(1.5)
        return x

    check_pile(f, oracle, [pile], P, P)


@pytest.mark.parametrize("lengths", LENGTHS)
def test_fori_loop_up_to_the_ragged_length(lengths: list[int]) -> None:
    pile, _ = ragged_pile(rng, lengths, lo=-1, hi=1)

    def f(x: Any) -> Any:
        n = pnp.asarray(x.shape[0])
        return lax.fori_loop(0, n, lambda i, v: v * 0.5 + pnp.sum(v) * i.astype(f32), x)

    def oracle(x: np.ndarray) -> np.ndarray:
        for i in range(len(x)):
            x = x * f32(0.5) + x.sum() * f32(i)
        return x

    check_pile(f, oracle, [pile], P, P, rtol=1e-4)


def test_fori_loop_up_to_the_ragged_length_with_an_unragged_carry() -> None:
    """Nothing ragged is in the loop but its trip count: the ordinary batched
    ``while`` runs each element its own number of steps."""
    pile, _ = ragged_pile(rng, [3, 1, 6])

    def f(x: Any) -> Any:
        return lax.fori_loop(0, pnp.asarray(x.shape[0]), lambda i, c: c * 0.5 + i.astype(f32), f32(1.0))

    def oracle(x: np.ndarray) -> Any:
        c = f32(1.0)
        for i in range(len(x)):
            c = c * f32(0.5) + f32(i)
        return c

    check_pile(f, oracle, [pile], P)


def test_fori_loop_up_to_the_ragged_length_reading_each_entry() -> None:
    """The loop of an RNN written with indices: ``x[i]`` for ``i`` below the
    element's length (a dynamic slice of the ragged axis)."""
    pile, _ = ragged_pile(rng, [3, 1, 5], (D,))

    def f(x: Any) -> Any:
        return lax.fori_loop(0, pnp.asarray(x.shape[0]), lambda i, h: pnp.tanh(h @ WH + x[i] @ WX), H0)

    check_pile(f, lambda x: numpy_rnn(x)[0], [pile], P)


def test_fori_loop_bound_by_the_symbolic_size() -> None:
    pile, _ = ragged_pile(rng, [3, 1, 4])
    check_pile(lambda x: lax.fori_loop(0, x.shape[0], lambda i, v: v * 2.0, x), lambda x: x * 2.0 ** len(x), [pile], P, P)
    # The counter runs over the element's own range: 1 + 2 + ... + (n - 1).
    check_pile(lambda x: lax.fori_loop(1, x.shape[0], lambda i, c: c + i, 0), lambda x: np.int32(sum(range(1, len(x)))),
               [pile], P, 0)  # fmt: skip


# ---------------------------------------------------------------------------
# Refusals


def test_a_body_that_changes_the_ragged_size_of_its_carry() -> None:
    a, _ = ragged_pile(rng, [2, 3])
    b, _ = ragged_pile(rng, [4, 1])
    with pytest.raises(TypeError, match=r"the carry init_val has type f32\[_pile\d+\] on entry but the body returns f32\[_pile\d+\], so the shapes differ"):
        vmap(lambda x, y: lax.fori_loop(0, 2, lambda i, v: y, x), in_axes=(P, P), out_axes=P)(a, b)


def test_a_loop_that_combines_two_ragged_sizes() -> None:
    a, _ = ragged_pile(rng, [2, 3])
    b, _ = ragged_pile(rng, [4, 1])
    with pytest.raises(ValueError, match=r"vmap over piles: scan combines values of different ragged sizes .*Piles combine only when their lengths are equal"):
        vmap(lambda x, y: lax.scan(lambda c, xi: (c + pnp.sum(y) * xi, c), f32(0.0), x), in_axes=(P, P), out_axes=(0, P))(a, b)


def test_rules_inside_a_loop_body_still_refuse() -> None:
    pile, _ = ragged_pile(rng, [2, 3])
    with pytest.raises(ValueError, match=r"vmap over piles: psum reduces ragged values over the pile's own axis 'b'"):
        vmap(lambda x: lax.fori_loop(0, 2, lambda i, v: lax.psum(v, "b"), x), in_axes=P, out_axes=P, axis_name="b")(pile)


# ---------------------------------------------------------------------------
# The staged loop


def scans_in(closed: pc.ClosedJaxpr) -> list[Any]:
    return [e for e in closed.eqns if e.primitive.name == "scan"]


@pytest.mark.whole_pile(reason="buckets make one scan per bucket, each over the bucket's padded size")
def test_a_ragged_scan_stays_one_scan_over_the_padded_size() -> None:
    pile = Pile.from_arrays([np.ones((n, D), f32) for n in (2, 5, 1)], pad_to=7)
    closed = pc.make_jaxpr(vmap(rnn, in_axes=P, out_axes=(0, P)))(pile)
    (scan,) = scans_in(closed)
    assert scan.params["length"] == 7
    # The step counter (core's padded scan freezes each element's carry past its length), then the carry and ys.
    assert [v.aval.shape for v in scan.outvars] == [(), (3, H), (7, 3, H)]



def test_empty_sequences_keep_the_initial_carry() -> None:
    pile, _ = ragged_pile(rng, [0, 3, 0], (D,))
    check_pile(rnn, numpy_rnn, [pile], P, (0, P))


def test_while_loop_whose_predicate_reads_a_ragged_const() -> None:
    pile, _ = ragged_pile(rng, [2, 5, 1], lo=1, hi=3)

    def f(x: Any) -> Any:
        return lax.while_loop(lambda c: c < pnp.sum(x), lambda c: c * 2.0, f32(0.25))

    def oracle(x: np.ndarray) -> Any:
        c = f32(0.25)
        while c < x.sum():
            c = c * f32(2.0)
        return c

    check_pile(f, oracle, [pile], P)
