"""Derivatives at symbolic sizes: ``grad`` and ``jvp`` inside ``mask`` and
inside ``vmap`` over piles.

There the program is differentiated with shapes such as ``(n,)``, so the
rules of plait-autodiff must compute with symbolic dimensions: a slice at
``n - 1`` transposes to a write at the start's value, cumulative products
differentiate through a loop of symbolic length, a convolution's kernel
gradient is built tap by tap, and a window of static size along a ragged
axis (``x[:2]``) is read from a grown tangent (see plait_autodiff's
``rules/windows.py``).

The oracle is NumPy: central differences in float64 of a NumPy twin of each
program, on each element's true (logical) part.  A pile's gradient has zeros
in its padding, and so has the gradient of the padded data when ``grad`` is
outside (``grad`` of ``vmap`` or of ``mask``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import Pile, grad, jvp, lax, mask, nn, pile_axis, vmap

P = pile_axis
LENGTHS = [2, 5, 3]
RNG = np.random.default_rng(7)


class Program(NamedTuple):
    name: str
    f: Callable[[Any], Any]  # plait, of one vector
    ref: Callable[[np.ndarray], float]  # its NumPy twin
    # A window of static size along the axis (x[:2]): core cannot prove it fits
    # every n, so mask refuses it for every n, while piles check each length.
    ragged_only: bool = False


def _set_first_two(x: np.ndarray) -> float:
    y = x.copy()
    y[:2] = 7.0
    return float((y**2).sum())


def _add_window(x: np.ndarray) -> float:
    y = x.copy()
    y[:2] += x[-2:]
    return float((y**2).sum())


def _dynamic_window(x: np.ndarray) -> float:
    start = min(max(1, 0), len(x) - 2)  # dynamic_slice clamps the start
    return float((x[start : start + 2] ** 2).sum())


PROGRAMS = [
    Program("last", lambda x: x[-1] * 2.0, lambda x: x[-1] * 2.0),
    Program("all_but_last", lambda x: (x[:-1] ** 2).sum(), lambda x: (x[:-1] ** 2).sum()),
    Program("all_but_first", lambda x: (x[1:] ** 3).sum(), lambda x: (x[1:] ** 3).sum()),
    Program("differences", lambda x: ((x[1:] - x[:-1]) ** 2).sum(), lambda x: ((x[1:] - x[:-1]) ** 2).sum()),
    Program("first_times_last", lambda x: x[0] * x[-1], lambda x: x[0] * x[-1]),
    Program(
        "pad", lambda x: (pnp.pad(x, (1, 2)) * pnp.arange(x.shape[0] + 3)).sum(),
        lambda x: (np.pad(x, (1, 2)) * np.arange(len(x) + 3)).sum(),
    ),
    Program(
        "concatenate", lambda x: (pnp.concatenate([x[-1:], x, x[:1]]) ** 2).sum(),
        lambda x: (np.concatenate([x[-1:], x, x[:1]]) ** 2).sum(),
    ),
    Program("cumprod", lambda x: (pnp.cumprod(x) ** 2).sum(), lambda x: (np.cumprod(x) ** 2).sum()),
    Program(
        "cummax_reverse", lambda x: (lax.cummax(x, axis=0, reverse=True) * pnp.arange(x.shape[0])).sum(),
        lambda x: (np.maximum.accumulate(x[::-1])[::-1] * np.arange(len(x))).sum(),
    ),
    Program(
        "sort", lambda x: (pnp.sort(x) * pnp.arange(x.shape[0])).sum(), lambda x: (np.sort(x) * np.arange(len(x))).sum()
    ),
    Program("variance", lambda x: pnp.var(x), lambda x: float(np.var(x))),
    Program("softmax", lambda x: (nn.softmax(x) * x).sum(), lambda x: float((np.exp(x) / np.exp(x).sum() * x).sum())),
    Program("first_two", lambda x: (x[:2] ** 2).sum(), lambda x: (x[:2] ** 2).sum(), ragged_only=True),
    Program("last_two", lambda x: (x[-2:] ** 3).sum(), lambda x: (x[-2:] ** 3).sum(), ragged_only=True),
    Program("set_first_two", lambda x: (x.at[:2].set(7.0) ** 2).sum(), _set_first_two, ragged_only=True),
    Program("add_window", lambda x: (x.at[:2].add(x[-2:]) ** 2).sum(), _add_window, ragged_only=True),
    Program(
        "dynamic_window", lambda x: (lax.dynamic_slice_in_dim(x, 1, 2) ** 2).sum(), _dynamic_window, ragged_only=True
    ),
]
IDS = [p.name for p in PROGRAMS]
MASKABLE = [p for p in PROGRAMS if not p.ragged_only]


def numeric_grad(ref: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        out.flat[i] = (ref(x + e) - ref(x - e)) / (2 * eps)
    return out


def close(actual: Any, expected: Any) -> None:
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=1e-4, atol=1e-4)


def elements(lengths: list[int]) -> list[np.ndarray]:
    return [RNG.uniform(0.5, 1.5, n).astype(np.float32) for n in lengths]


def padded(x: np.ndarray, size: int = 8) -> np.ndarray:
    """``x`` padded with a finite value that is not zero (so a gradient that
    reads the padding shows)."""
    out = np.full(size, 3.0, np.float32)
    out[: len(x)] = x
    return out


# ---------------------------------------------------------------------------
# vmap over piles


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_grad_inside_vmap_over_a_pile(program: Program) -> None:
    xs = elements(LENGTHS)
    g = vmap(grad(program.f), in_axes=P, out_axes=P)(Pile.from_arrays(xs))
    np.testing.assert_array_equal(np.asarray(g.lengths), LENGTHS)
    for got, x in zip(g.unpack(), xs):
        close(got, numeric_grad(program.ref, x))
    data = np.asarray(g.data)
    for i, n in enumerate(LENGTHS):
        assert (data[i, n:] == 0).all()


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_grad_of_vmap_over_a_pile_is_zero_in_the_padding(program: Program) -> None:
    xs = elements(LENGTHS)
    data = np.stack([padded(x, max(LENGTHS)) for x in xs])
    lengths = np.asarray(LENGTHS, np.int32)
    g = np.asarray(grad(lambda d: vmap(program.f, in_axes=P)(Pile(d, lengths)).sum())(data))
    for i, (x, n) in enumerate(zip(xs, LENGTHS)):
        close(g[i, :n], numeric_grad(program.ref, x))
        assert (g[i, n:] == 0).all()


def test_jvp_inside_vmap_over_a_pile() -> None:
    xs, ts = elements(LENGTHS), elements(LENGTHS)
    for program in PROGRAMS:
        _, out = vmap(lambda x, t, f=program.f: jvp(f, (x,), (t,)), in_axes=P)(Pile.from_arrays(xs), Pile.from_arrays(ts))
        expected = [np.dot(numeric_grad(program.ref, x), t) for x, t in zip(xs, ts)]
        close(out, expected)


# ---------------------------------------------------------------------------
# mask


@pytest.mark.parametrize("program", MASKABLE, ids=[p.name for p in MASKABLE])
def test_grad_inside_mask(program: Program) -> None:
    masked = mask(grad(program.f), ["n"], "n")
    for n in (3, 5):
        x = elements([n])[0]
        got = np.asarray(masked([padded(x)], {"n": n}))
        close(got[:n], numeric_grad(program.ref, x))  # the rest is padding, unspecified as every mask output's


@pytest.mark.parametrize("program", MASKABLE, ids=[p.name for p in MASKABLE])
def test_grad_of_mask_is_zero_in_the_padding(program: Program) -> None:
    masked = mask(program.f, ["n"], "")
    x = elements([4])[0]
    g = np.asarray(grad(lambda v: masked([v], {"n": 4}))(padded(x)))
    close(g[:4], numeric_grad(program.ref, x))
    assert (g[4:] == 0).all()


def test_jvp_inside_mask() -> None:
    x, t = elements([4, 4])
    for program in MASKABLE:
        masked = mask(lambda v, w, f=program.f: jvp(f, (v,), (w,))[1], ["n", "n"], "")
        close(masked([padded(x), padded(t)], {"n": 4}), np.dot(numeric_grad(program.ref, x), t))


# ---------------------------------------------------------------------------
# Windows longer than an element: a clear error, never the padding's values


def test_a_window_longer_than_an_element_of_a_pile_is_an_error() -> None:
    short = Pile.from_arrays([np.ones(1, np.float32), np.ones(3, np.float32)])
    for program in (p for p in PROGRAMS if p.ragged_only and p.name != "set_first_two"):
        with pytest.raises(ValueError, match=r"the elements of lengths \[1\] do not have"):
            vmap(grad(program.f), in_axes=P, out_axes=P)(short)
    # An update through a static slice clips to each element, as a loop over the elements does.
    out = vmap(grad(lambda x: (x.at[:2].set(7.0) ** 2).sum()), in_axes=P, out_axes=P)(short)
    assert [np.asarray(a).tolist() for a in out.unpack()] == [[0.0], [0.0, 0.0, 2.0]]


def test_mask_refuses_a_window_it_cannot_prove_fits_every_size() -> None:
    # Core cannot prove 2 <= n, so mask refuses x[:2] for every n, n = 1
    # included, rather than read the padding (mask has no check of its own).
    masked = mask(grad(lambda x: (x[:2] ** 2).sum()), ["n"], "n")
    for n in (1, 3):
        with pytest.raises(ValueError, match=r"slice: dimension 0 of the operand f32\[n\] cannot be sliced from 0 to 2"):
            masked([padded(np.ones(n, np.float32))], {"n": n})


# ---------------------------------------------------------------------------
# Convolutions over a symbolic length: input and kernel gradients


def _conv_loss(x: Any, w: Any, padding: Any) -> Any:
    y = lax.conv_general_dilated(x.T[None], w, (1,), padding)
    return (pnp.tanh(y) ** 2).sum()


def _np_conv_loss(x: np.ndarray, w: np.ndarray, lo: int, hi: int) -> float:
    xp = np.pad(x.T, ((0, 0), (lo, hi)))  # (features, length)
    k = w.shape[2]
    out_len = xp.shape[1] - k + 1
    y = sum(w[:, :, j] @ xp[:, j : j + out_len] for j in range(k))
    return float((np.tanh(y) ** 2).sum())


@pytest.mark.parametrize("padding, lo, hi", [("VALID", 0, 0), ("SAME", 1, 1), (((2, 0),), 2, 0)])
def test_conv_grads_per_element_of_a_pile_and_under_mask(padding: Any, lo: int, hi: int) -> None:
    w = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    xs = [RNG.standard_normal((n, 2)).astype(np.float32) for n in (4, 7)]

    def f(x: Any, w: Any) -> Any:
        return _conv_loss(x, w, padding)

    gx, gw = vmap(grad(f, argnums=(0, 1)), in_axes=(P, None), out_axes=(P, 0))(Pile.from_arrays(xs), w)
    masked = mask(grad(f, argnums=(0, 1)), ["(n, 2)", "(2, 2, 3)"], ("(n, 2)", "(2, 2, 3)"))
    for i, x in enumerate(xs):
        ex = numeric_grad(lambda v: _np_conv_loss(v, w, lo, hi), x)
        ew = numeric_grad(lambda v, x=x: _np_conv_loss(x, v, lo, hi), w)
        close(gx.unpack()[i], ex)
        close(np.asarray(gw)[i], ew)
        xp = np.full((9, 2), 3.0, np.float32)
        xp[: len(x)] = x
        mx, mw = masked([xp, w], {"n": len(x)})
        close(np.asarray(mx)[: len(x)], ex)
        close(mw, ew)


def test_jit_of_vmap_of_grad_over_piles_of_one_padded_size() -> None:
    f = plait.jit(vmap(grad(lambda x: (x[:2] ** 2).sum() + x[-1] * (pnp.cumprod(x) ** 2).sum()), in_axes=P, out_axes=P))

    def ref(x: np.ndarray) -> float:
        return float((x[:2] ** 2).sum() + x[-1] * (np.cumprod(x) ** 2).sum())

    for lengths in ([2, 5, 3], [4, 2, 6]):
        xs = elements(lengths)
        g = f(Pile.from_arrays(xs, pad_to=6))
        for got, x in zip(g.unpack(), xs):
            close(got, numeric_grad(ref, x))
