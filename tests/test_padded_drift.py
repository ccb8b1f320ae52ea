"""Behaviours that differed between ``mask`` and ``vmap`` over piles while
each had its own copy of the padded rules (issue 16, part B), now one rule in
:mod:`plait_core.padded`: each checked on both interpreters against a NumPy
oracle (mask: the logical slice; piles: a Python loop over the elements),
under ``jit`` and ``grad``."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
import plait.numpy as pnp
from plait import lax

# ---------------------------------------------------------------------------
# A scan over a padded length whose scanned inputs hold non-finite padding.
# Piles zeroed that padding; mask did not, so the steps past the length
# multiplied inf into the carry's cotangent (0 * inf = NaN) and grad(mask(f))
# was NaN in the logical part.


def _product(c0: Any, xs: Any) -> Any:
    final, _ = lax.scan(lambda c, x: (c * x, c), c0, xs)
    return final


def _product_grads(c0: float, xs: np.ndarray) -> tuple[float, np.ndarray]:
    """d/dc0 and d/dxs of c0 * prod(xs), in NumPy."""
    total = np.prod(xs)
    return float(total), np.array([c0 * np.prod(np.delete(xs, k)) for k in range(len(xs))], np.float32)


def test_mask_scan_over_non_finite_padding_has_finite_gradients() -> None:
    n = 3
    xs = np.array([1.5, -2.0, 0.5, np.inf, np.inf], np.float32)  # logical part: 3 entries, then inf padding
    c0 = np.float32(2.0)

    def loss(c: Any, v: Any) -> Any:
        return _product(c, v)

    masked = plait.jit(plait.mask(loss, ["", "n"], ""))
    np.testing.assert_allclose(np.asarray(masked([c0, xs], dict(n=n))), c0 * np.prod(xs[:n]), rtol=1e-6)
    want_dc, want_dxs = _product_grads(float(c0), xs[:n])
    # Differentiated inside mask, the backward scan is masked too; outside, grad differentiates
    # the padded program itself, whose steps past n read the padding.
    inside = plait.jit(plait.mask(plait.grad(loss, argnums=(0, 1)), ["", "n"], ("", "n")))
    outside = plait.jit(plait.grad(lambda c, v: masked([c, v], dict(n=n)), argnums=(0, 1)))
    for dc, dxs in (inside([c0, xs], dict(n=n)), outside(c0, xs)):
        np.testing.assert_allclose(np.asarray(dc), want_dc, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(dxs)[:n], want_dxs, rtol=1e-6)


def test_pile_scan_over_non_finite_padding_has_finite_gradients() -> None:
    elems = [np.array([1.5, -2.0, 0.5], np.float32), np.array([3.0, 0.25], np.float32)]
    pile = plait.Pile.from_arrays(elems)
    data = np.asarray(pile.data).copy()
    data[1, 2:] = np.inf  # non-finite padding
    pile = plait.Pile(data, pile.lengths)
    c0 = np.float32(2.0)

    def total(v: Any) -> Any:
        return plait.vmap(lambda x: _product(c0, x), in_axes=plait.pile_axis)(v).sum()

    np.testing.assert_allclose(np.asarray(plait.jit(total)(pile)), sum(c0 * np.prod(e) for e in elems), rtol=1e-6)
    g = plait.jit(plait.grad(lambda d: total(plait.Pile(d, pile.lengths))))(pile.data)
    for k, e in enumerate(elems):
        np.testing.assert_allclose(np.asarray(g)[k, : len(e)], _product_grads(float(c0), e)[1], rtol=1e-6)


# ---------------------------------------------------------------------------
# Windows over a value with two padded sizes (an n x m value).  Under mask the
# windows rule took any padded axis that is only a batch axis of the windows;
# on piles it refused an equation with two ragged sizes.


def _windows(z: Any) -> Any:
    # Windows of 2 along the static last axis; the n and m axes are batch axes of the windows.
    return lax.reduce_window(z, 0.0, lax.add, (1, 1, 2), (1, 1, 1), "VALID").sum(axis=(0, 1))


def _pairs(x: Any, y: Any) -> Any:
    return x[:, None, :] * y[None, :, :]


def _windows_numpy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    z = x[:, None, :] * y[None, :, :]
    return (z[..., :-1] + z[..., 1:]).sum(axis=(0, 1))


def _windows_grad_numpy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d/dx of the sum of :func:`_windows_numpy`: each entry counted once per window holding it."""
    counts = np.array([1.0, 2.0, 2.0, 1.0], np.float32)
    return np.tile(counts * y.sum(axis=0), (x.shape[0], 1))


def test_pile_windows_over_two_ragged_sizes() -> None:
    rng = np.random.default_rng(16)
    xs = [rng.standard_normal((n, 4)).astype(np.float32) for n in (2, 5, 3)]
    ys = [rng.standard_normal((m, 4)).astype(np.float32) for m in (4, 1, 3)]
    px, py = plait.Pile.from_arrays(xs), plait.Pile.from_arrays(ys)

    def per_element(x: Any, y: Any) -> Any:
        return _windows(_pairs(x, y))

    mapped = plait.jit(plait.vmap(per_element, in_axes=(plait.pile_axis, plait.pile_axis)))
    got = np.asarray(mapped(px, py))
    np.testing.assert_allclose(got, np.stack([_windows_numpy(x, y) for x, y in zip(xs, ys)]), rtol=1e-5)

    def loss(d: Any) -> Any:
        return plait.vmap(per_element, in_axes=(plait.pile_axis, plait.pile_axis))(plait.Pile(d, px.lengths), py).sum()

    g = np.asarray(plait.jit(plait.grad(loss))(px.data))
    for k, (x, y) in enumerate(zip(xs, ys)):
        np.testing.assert_allclose(g[k, : len(x)], _windows_grad_numpy(x, y), rtol=1e-5)
        np.testing.assert_array_equal(g[k, len(x) :], 0.0)


def test_mask_windows_over_two_symbolic_sizes() -> None:
    rng = np.random.default_rng(17)
    x, y = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    n, m = 4, 2

    def f(a: Any, b: Any) -> Any:
        return _windows(_pairs(a, b))

    got = plait.jit(plait.mask(f, ["(n, 4)", "(m, 4)"], "3"))([x, y], dict(n=n, m=m))
    np.testing.assert_allclose(np.asarray(got), _windows_numpy(x[:n], y[:m]), rtol=1e-5)
    g = plait.jit(plait.mask(plait.grad(lambda a, b: f(a, b).sum()), ["(n, 4)", "(m, 4)"], "(n, 4)"))(
        [x, y], dict(n=n, m=m)
    )
    np.testing.assert_allclose(np.asarray(g)[:n], _windows_grad_numpy(x[:n], y[:m]), rtol=1e-5)
    assert pnp.asarray(g).shape == (6, 4)


# ---------------------------------------------------------------------------
# A size used as a value and as an axis.  ``x.shape[0] - 3`` is integer
# arithmetic (``dim_as_value``, core's one padded rule): negative for short
# elements, as in the loop.  An axis of that size is empty there (the padded
# environments' ``size`` is never negative), so a sum over it is 0.


def _sizes(x: Any) -> Any:
    return pnp.asarray(x.shape[0] - 3), pnp.arange(x.shape[0] - 3).sum(), pnp.ones(x.shape[0] - 3).sum()


def _sizes_loop(n: int) -> tuple[int, int, float]:
    return n - 3, int(np.arange(n - 3).sum()), float(np.ones(max(n - 3, 0)).sum())


def test_a_size_as_a_value_may_be_negative_and_an_axis_of_it_is_empty() -> None:
    data = np.arange(1.0, 6.0, dtype=np.float32)
    for n in (5, 4, 1):
        masked = plait.jit(plait.mask(_sizes, ["n"], ("", "", "")))([data], {"n": n})
        assert [np.asarray(v).item() for v in masked] == list(_sizes_loop(n)), n
    lengths = (5, 1, 4)
    pile = plait.Pile.from_arrays([data[:k] for k in lengths])
    for run in (plait.vmap(_sizes, in_axes=plait.pile_axis), plait.jit(plait.vmap(_sizes, in_axes=plait.pile_axis))):
        out = run(pile)
        assert [np.asarray(v).tolist() for v in out] == [list(col) for col in zip(*map(_sizes_loop, lengths))]


# ---------------------------------------------------------------------------
# A fixed index past a short element's end: JAX clamps a static index
# (jnp.arange(2.)[3] is 1.0), so each element reads its own last entry,
# never the padding; take's default mode fills with NaN.


def test_a_fixed_index_past_an_elements_end_clamps_to_that_element() -> None:
    elements = [np.arange(1.0, 6.0, dtype=np.float32), np.arange(1.0, 3.0, dtype=np.float32)]
    pile = plait.Pile.from_arrays(elements)
    for run in (plait.vmap, lambda f, **kw: plait.jit(plait.vmap(f, **kw))):
        got = run(lambda x: x[3], in_axes=plait.pile_axis)(pile)
        assert np.asarray(got).tolist() == [4.0, 2.0]  # the loop: e[min(3, len(e) - 1)]
        taken = run(lambda x: pnp.take(x, 3), in_axes=plait.pile_axis)(pile)
        np.testing.assert_array_equal(np.asarray(taken), [4.0, np.nan])
    masked = plait.mask(lambda x: x[3], ["n"], "")([np.arange(1.0, 6.0, dtype=np.float32)], {"n": 2})
    assert float(masked) == 2.0
