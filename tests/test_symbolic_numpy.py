"""``plait.numpy`` at symbolic sizes: inside ``mask`` and inside ``vmap`` over piles.

There ``x.shape[0]`` is a polynomial (``n``, or a pile's ragged length), so
negative indices, ``roll``, strided slices and cumulative log-sum-exp must
compute with the size as a value.  The oracle is NumPy on each element's
true part: for ``mask`` the logical slice of the padded input (padding is
NaN, so a read of it shows), for piles each element of the pile.  Gradients
are checked against central differences of a float64 NumPy twin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import plait.numpy as pnp
from plait import Pile, grad, jit, lax, mask, pile_axis, vmap

P = pile_axis
LENGTHS = [1, 2, 5, 3]
RNG = np.random.default_rng(11)


class Program(NamedTuple):
    name: str
    f: Callable[[Any], Any]  # plait, of one vector, returning a vector of the same length
    ref: Callable[[np.ndarray], np.ndarray]  # its NumPy twin


def _np_set(x: np.ndarray, idx: Any, value: Any, add: bool = False) -> np.ndarray:
    y = np.array(x, np.float64)
    if add:
        np.add.at(y, idx, value)
    else:
        y[idx] = value
    return y


def _np_cumlogsumexp(x: np.ndarray, reverse: bool = False) -> np.ndarray:
    x = np.asarray(x, np.float64)
    if reverse:
        return np.logaddexp.accumulate(x[::-1])[::-1]
    return np.logaddexp.accumulate(x)


PROGRAMS = [
    Program("at_last_set", lambda x: x.at[-1].set(7.0), lambda x: _np_set(x, -1, 7.0)),
    Program("at_last_add", lambda x: x.at[-1].add(x[0]), lambda x: _np_set(x, -1, x[0], add=True)),
    Program("at_last_two_set", lambda x: x.at[-2:].set(-4.0), lambda x: _np_set(x, np.s_[-2:], -4.0)),
    # For an element of length 1 or 2, NumPy's slice clips the positions before 0 away.
    Program("at_window_from_end", lambda x: x.at[-3:-1].add(10.0), lambda x: _np_set(x, np.s_[-3:-1], 10.0, add=True)),
    Program(
        "at_negative_array", lambda x: x.at[np.array([-1, 0])].add(np.array([5.0, 1.0], np.float32)),
        lambda x: _np_set(x, np.array([len(x) - 1, 0]), np.array([5.0, 1.0]), add=True),
    ),
    Program(
        "at_last_get_clip", lambda x: x * x.at[-1].get(mode="clip"), lambda x: np.asarray(x, np.float64) * x[-1]
    ),
    Program("take_negative", lambda x: x * pnp.take(x, np.array([-1]))[0], lambda x: x * np.take(x, [-1])[0]),
    Program(
        "take_negative_clip", lambda x: x + pnp.take(x, np.array([-1, 0]), mode="clip").sum(),
        lambda x: x + np.take(x, [-1, 0]).sum(),
    ),
    Program("getitem_negative_array", lambda x: x - x[np.array([-1, -1])].sum(), lambda x: x - 2 * x[-1]),
    Program(
        "take_along_negative", lambda x: x * pnp.take_along_axis(x, np.array([-1]), 0)[0], lambda x: x * x[-1]
    ),
    Program("roll_1", lambda x: pnp.roll(x, 1), lambda x: np.roll(x, 1)),
    Program("roll_minus_1", lambda x: pnp.roll(x, -1), lambda x: np.roll(x, -1)),
    Program("roll_7", lambda x: pnp.roll(x, 7), lambda x: np.roll(x, 7)),
    Program("roll_0", lambda x: pnp.roll(x, 0), lambda x: np.roll(x, 0)),
    Program("cumlogsumexp", lambda x: lax.cumlogsumexp(x), _np_cumlogsumexp),
    Program(
        "cumlogsumexp_reverse", lambda x: lax.cumlogsumexp(x, reverse=True), lambda x: _np_cumlogsumexp(x, True)
    ),
    Program(
        "normalized", lambda x: x / (1.0 + pnp.linalg.norm(x)), lambda x: x / (1.0 + np.linalg.norm(x.astype(np.float64)))
    ),
    Program(
        "norm_3", lambda x: x * pnp.linalg.norm(x, 3), lambda x: x * np.linalg.norm(x.astype(np.float64), 3)
    ),
    Program(
        "norm_inf", lambda x: x - pnp.linalg.norm(x, pnp.inf), lambda x: x - np.linalg.norm(x, np.inf)
    ),
    Program(
        "norm_minus_inf_and_0", lambda x: x * pnp.linalg.vector_norm(x, ord=-pnp.inf) + pnp.linalg.norm(x, 0),
        lambda x: x * np.linalg.norm(x, -np.inf) + np.linalg.norm(x, 0),
    ),
]
IDS = [p.name for p in PROGRAMS]


def close(actual: Any, expected: Any, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64), rtol=tol, atol=tol)


def elements(lengths: list[int]) -> list[np.ndarray]:
    return [RNG.uniform(-2.0, 2.0, n).astype(np.float32) for n in lengths]


def nan_padded(x: np.ndarray, size: int = 8) -> np.ndarray:
    out = np.full((size, *x.shape[1:]), np.nan, np.float32)
    out[: len(x)] = x
    return out


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_inside_vmap_over_a_pile(program: Program) -> None:
    xs = elements(LENGTHS)
    out = vmap(program.f, in_axes=P, out_axes=P)(Pile.from_arrays(xs))
    np.testing.assert_array_equal(np.asarray(out.lengths), LENGTHS)
    for got, x in zip(out.unpack(), xs):
        close(got, program.ref(x))


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_inside_mask(program: Program) -> None:
    masked = mask(program.f, ["n"], "n")
    for n in (1, 2, 5):
        x = elements([n])[0]
        got = np.asarray(masked([nan_padded(x)], {"n": n}))
        close(got[:n], program.ref(x))


def test_inside_jit_of_vmap_over_piles_of_one_padded_size() -> None:
    f = jit(vmap(lambda x: pnp.roll(x.at[-1].add(1.0), 2) + lax.cumlogsumexp(x), in_axes=P, out_axes=P))
    for lengths in ([1, 4, 3], [4, 2, 2]):
        xs = elements(lengths)
        out = f(Pile.from_arrays(xs, pad_to=4))
        for got, x in zip(out.unpack(), xs):
            close(got, np.roll(_np_set(x, -1, 1.0, add=True), 2) + _np_cumlogsumexp(x))


# ---------------------------------------------------------------------------
# roll along a symbolic axis of a matrix, and norms of matrices with a symbolic axis


def test_roll_and_matrix_norms_along_a_symbolic_axis() -> None:
    def f(m: Any) -> Any:
        rolled = pnp.roll(m, (2, 1), axis=(0, 1))
        norms = pnp.stack([pnp.linalg.norm(m), pnp.linalg.norm(m, 1), pnp.linalg.norm(m, -pnp.inf),
                           pnp.linalg.matrix_norm(m, ord=pnp.inf)])
        return rolled, pnp.linalg.norm(m, axis=1), norms

    def ref(m: np.ndarray) -> tuple[np.ndarray, ...]:
        norms = [np.linalg.norm(m), np.linalg.norm(m, 1), np.linalg.norm(m, -np.inf), np.linalg.norm(m, np.inf)]
        return np.roll(m, (2, 1), axis=(0, 1)), np.linalg.norm(m, axis=1), np.asarray(norms)

    ms = [RNG.standard_normal((n, 3)).astype(np.float32) for n in (1, 4, 2)]
    rolled, rows, norms = vmap(f, in_axes=P, out_axes=(P, P, 0))(Pile.from_arrays(ms))
    masked = mask(f, ["(n, 3)"], ("(n, 3)", "n", "4"))
    for i, m in enumerate(ms):
        want = ref(m)
        close(rolled.unpack()[i], want[0])
        close(rows.unpack()[i], want[1])
        close(np.asarray(norms)[i], want[2])
        got = masked([nan_padded(m)], {"n": len(m)})
        n = len(m)
        close(np.asarray(got[0])[:n], want[0])
        close(np.asarray(got[1])[:n], want[1])
        close(got[2], want[2])


# ---------------------------------------------------------------------------
# Strided slices: a length that is a polynomial works, any other is a clear error


@pytest.mark.parametrize("index", [np.s_[::2], np.s_[1::2], np.s_[::-2], np.s_[-2::-2]], ids=str)
def test_strided_slice_of_an_even_symbolic_size(index: Any) -> None:
    masked = mask(lambda v: v[index] * 2.0, ["2 * n"], "n")
    updated = mask(lambda v: v.at[index].add(100.0), ["2 * n"], "2 * n")
    for n in (1, 3):
        x = RNG.standard_normal(2 * n).astype(np.float32)
        close(np.asarray(masked([nan_padded(x, 10)], {"n": n}))[:n], x[index] * 2.0)
        close(np.asarray(updated([nan_padded(x, 10)], {"n": n}))[: 2 * n], _np_set(x, index, 100.0, add=True))


def test_strided_slice_whose_length_rounds_is_an_error() -> None:
    message = r"slicing the symbolic dimension (n|_pile\d+) .* the slice slice\(None, None, 2\) has length ceil"
    with pytest.raises(TypeError, match=message):
        mask(lambda v: v[::2], ["n"], "n")([np.zeros(4, np.float32)], {"n": 3})
    with pytest.raises(TypeError, match=message):
        vmap(lambda v: v[::2], in_axes=P, out_axes=P)(Pile.from_arrays(elements([2, 3])))


# ---------------------------------------------------------------------------
# unique with a static size inside vmap over piles and mask


def _np_unique_padded(x: np.ndarray, size: int, fill: float) -> tuple[np.ndarray, np.ndarray]:
    values, counts = np.unique(x, return_counts=True)
    out_v = np.full(size, fill, np.float64)
    out_c = np.zeros(size, np.int64)
    k = min(size, len(values))
    out_v[:k], out_c[:k] = values[:k], counts[:k]
    return out_v, out_c


def test_unique_with_size_inside_vmap_over_a_pile_and_mask() -> None:
    xs = [np.array(v, np.float32) for v in ([3.0], [2.0, 2.0, 1.0], [5.0, 4.0, 5.0, 4.0, 9.0, 1.0])]

    def f(x: Any) -> Any:
        return pnp.unique(x, size=3, fill_value=-1.0, return_counts=True)

    values, counts = vmap(f, in_axes=P)(Pile.from_arrays(xs))
    masked = mask(f, ["n"], ("3", "3"))
    for i, x in enumerate(xs):
        want_v, want_c = _np_unique_padded(x, 3, -1.0)
        close(np.asarray(values)[i], want_v)
        np.testing.assert_array_equal(np.asarray(counts)[i], want_c)
        got_v, got_c = masked([nan_padded(x)], {"n": len(x)})
        close(got_v, want_v)
        np.testing.assert_array_equal(np.asarray(got_c), want_c)


# ---------------------------------------------------------------------------
# Gradients at symbolic sizes (central differences of the NumPy twin)


def numeric_grad(ref: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        out.flat[i] = (ref(x + e) - ref(x - e)) / (2 * eps)
    return out


def _weights(n: int) -> np.ndarray:
    return np.arange(1.0, n + 1.0)


GRAD_PROGRAMS = [p for p in PROGRAMS if p.name not in ("norm_inf", "norm_minus_inf_and_0")]


@pytest.mark.parametrize("program", GRAD_PROGRAMS, ids=[p.name for p in GRAD_PROGRAMS])
def test_grad_inside_vmap_over_a_pile_and_mask(program: Program) -> None:
    def loss(x: Any) -> Any:
        return (program.f(x) * (pnp.arange(x.shape[0]) + 1.0)).sum()

    def ref(x: np.ndarray) -> float:
        return float((program.ref(x) * _weights(len(x))).sum())

    xs = [RNG.uniform(0.5, 2.0, n).astype(np.float32) for n in LENGTHS]
    g = vmap(grad(loss), in_axes=P, out_axes=P)(Pile.from_arrays(xs))
    masked = mask(grad(loss), ["n"], "n")
    for got, x in zip(g.unpack(), xs):
        want = numeric_grad(ref, x)
        close(got, want, 2e-3)
        padded = np.full(8, 3.0, np.float32)
        padded[: len(x)] = x
        close(np.asarray(masked([padded], {"n": len(x)}))[: len(x)], want, 2e-3)


# ---------------------------------------------------------------------------
# Norm gradients at concrete shapes: finite differences, and zero at the zero vector


@pytest.mark.parametrize("ord", [None, 1, 3, 0.5, np.inf, -np.inf], ids=str)
def test_vector_norm_gradient_matches_finite_differences(ord: Any) -> None:
    x = np.array([0.7, -1.3, 2.1, -0.4], np.float32)
    close(grad(lambda v: pnp.linalg.norm(v, ord))(x), numeric_grad(lambda v: float(np.linalg.norm(v, ord)), x), 1e-3)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf], ids=str)
def test_matrix_norm_gradient_matches_finite_differences(ord: Any) -> None:
    m = np.array([[0.7, -1.3, 2.1], [-0.4, 0.9, 1.6]], np.float32)
    close(grad(lambda v: pnp.linalg.norm(v, ord))(m), numeric_grad(lambda v: float(np.linalg.norm(v, ord)), m), 1e-3)


@pytest.mark.parametrize("ord", [None, 2, 3, 0.5, 1, np.inf], ids=str)
def test_norm_gradient_at_zero_is_zero_not_nan(ord: Any) -> None:
    # JAX's norm differentiates to NaN here; plait's gives the zero subgradient.
    g = np.asarray(grad(lambda v: pnp.linalg.norm(v, ord))(np.zeros(3, np.float32)))
    np.testing.assert_array_equal(g, np.zeros(3))
    gm = np.asarray(grad(lambda v: pnp.linalg.norm(v))(np.zeros((2, 2), np.float32)))
    np.testing.assert_array_equal(gm, np.zeros((2, 2)))


def test_norm_gradient_with_a_zero_entry_is_finite() -> None:
    x = np.array([0.0, 3.0, -4.0], np.float32)
    for ord in (None, 3):
        got = np.asarray(grad(lambda v, o=ord: pnp.linalg.norm(v, o))(x))
        # d/dx_i ||x||_p = sign(x_i) |x_i|^(p-1) / ||x||_p^(p-1): 0 at the zero entry.
        p = 2 if ord is None else ord
        want = np.sign(x) * np.abs(x) ** (p - 1) / np.linalg.norm(x, p) ** (p - 1)
        close(got, want)


# ---------------------------------------------------------------------------
# More of plait.numpy at symbolic sizes: pad modes, median, diagonals, linspace


def _each_element(f: Callable[[Any], Any], out_spec: str, out_axes: Any, xs: list[np.ndarray]) -> list[Any]:
    """``f`` on every element of ``xs``: through vmap over a pile, and under mask
    on NaN-padded copies; the pairs of results, one per element."""
    piled = vmap(f, in_axes=P, out_axes=out_axes)(Pile.from_arrays(xs))
    per_pile = piled.unpack() if isinstance(piled, Pile) else list(np.asarray(piled))
    masked = mask(f, ["n"], out_spec)
    return [(got, masked([nan_padded(x)], {"n": len(x)})) for got, x in zip(per_pile, xs)]


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric", "maximum", "mean"])
@pytest.mark.parametrize("width", [(1, 2), (3, 0)], ids=str)
def test_pad_modes_along_a_symbolic_axis(mode: str, width: tuple[int, int]) -> None:
    xs = elements(LENGTHS)
    pairs = _each_element(lambda v: pnp.pad(v, width, mode=mode), f"n + {sum(width)}", P, xs)
    for (piled, masked), x in zip(pairs, xs):
        want = np.pad(x, width, mode=mode)
        close(piled, want)
        close(np.asarray(masked)[: len(want)], want)


def test_median_and_trace_along_a_symbolic_axis() -> None:
    xs = elements(LENGTHS)

    def f(v: Any) -> Any:
        stats = [pnp.median(v), pnp.trace(pnp.outer(v, v + 1.0)), pnp.trace(pnp.outer(v, v + 1.0), offset=1),
                 pnp.diagonal(pnp.outer(v, v), -1).sum()]
        return pnp.stack(stats)

    def ref(x: np.ndarray) -> np.ndarray:
        m = np.outer(x, x + 1.0)
        return np.array([np.median(x), np.trace(m), np.trace(m, 1), np.diagonal(np.outer(x, x), -1).sum()])

    for (piled, masked), x in zip(_each_element(f, "4", 0, xs), xs):
        close(piled, ref(x))
        close(masked, ref(x))


@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_with_a_symbolic_number_of_samples(endpoint: bool) -> None:
    xs = elements(LENGTHS)

    def f(v: Any) -> Any:
        samples, step = pnp.linspace(-1.0, 2.0, v.shape[0], endpoint=endpoint, retstep=True)
        return samples * v, step

    pairs = _each_element(lambda v: f(v)[0], "n", P, xs)
    steps = vmap(lambda v: f(v)[1], in_axes=P)(Pile.from_arrays(xs))
    for i, ((piled, masked), x) in enumerate(zip(pairs, xs)):
        samples, step = np.linspace(-1.0, 2.0, len(x), endpoint=endpoint, retstep=True)
        close(piled, samples * x)
        close(np.asarray(masked)[: len(x)], samples * x)
        np.testing.assert_allclose(np.asarray(steps)[i], step, rtol=1e-6)  # NaN for one sample with the endpoint


def test_grads_of_median_and_of_a_reflecting_pad_inside_vmap_over_a_pile() -> None:
    xs = [RNG.uniform(0.5, 2.0, n).astype(np.float32) for n in LENGTHS]

    def loss(v: Any) -> Any:
        return pnp.median(v) * 3.0 + (pnp.pad(v, (2, 1), mode="reflect") ** 2).sum()

    def ref(v: np.ndarray) -> float:
        return float(np.median(v) * 3.0 + (np.pad(v, (2, 1), mode="reflect") ** 2).sum())

    g = vmap(grad(loss), in_axes=P, out_axes=P)(Pile.from_arrays(xs))
    for got, x in zip(g.unpack(), xs):
        close(got, numeric_grad(ref, x), 2e-3)


def test_cumlogsumexp_over_a_ragged_axis_keeps_a_weak_operands_type() -> None:
    # A weakly typed operand (int entries where-ed with a Python float) gives a weak result on one element; over a
    # ragged axis cumlogsumexp runs as a scan, whose start value must keep that weak type (found by the fuzzer).
    def f(x: Any) -> Any:
        return lax.cumlogsumexp(pnp.where(x > 0, x, 0.0), reverse=True)

    elements = [np.array([-2, -3, 4, 3, -2], np.int32), np.array([-4, 0], np.int32)]
    assert f(pnp.asarray(elements[0])).weak_type
    for static in (False, None):  # a whole pile, and the default (a plan)
        out = vmap(f, in_axes=P, out_axes=P)(Pile.from_arrays(elements, static_lengths=static))
        for got, x in zip(out.unpack(), elements):
            assert got.weak_type and got.dtype == np.float32
            np.testing.assert_allclose(np.asarray(got), _np_cumlogsumexp(np.where(x > 0, x, 0.0), True), rtol=1e-6)
