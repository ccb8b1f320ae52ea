"""``mask`` composed with ``jit``, ``vmap`` and ``grad`` (and they inside ``mask``).

The oracle is always the unpadded computation: the same function applied to
the logical slices of the inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_autodiff import grad
from plait_batching import vmap
from plait_core import lax
from plait_dispatch import jit
from plait_masking import mask

RNG = np.random.default_rng(0)


def _padded(shape: tuple[int, ...], logical: tuple[int, ...]) -> np.ndarray:
    """Random data with NaN padding past the logical shape."""
    x = np.full(shape, np.nan, np.float32)
    x[tuple(slice(0, n) for n in logical)] = RNG.standard_normal(logical).astype(np.float32)
    return x


def _rnn(xs: Any, w: Any, h0: Any) -> Any:
    def step(h: Any, x: Any) -> Any:
        h = pnp.tanh(h @ w + x)
        return h, pnp.sum(h)

    return lax.scan(step, h0, xs)


W = (RNG.standard_normal((4, 4)) * 0.5).astype(np.float32)
H0 = np.zeros(4, np.float32)
MASKED_RNN = mask(_rnn, ["(n, 4)", "(4, 4)", "4"], ("4", "n"))


def test_jit_of_mask_compiles_once_per_padded_shape() -> None:
    traces = []

    def f(x: Any) -> Any:
        traces.append(x.shape)
        return pnp.sum(pnp.cumsum(x[::-1]) * pnp.mean(x))

    jitted = jit(mask(f, ["n"], ""))
    x = _padded((16,), (16,))
    for n in (1, 5, 9, 16):
        got = jitted([x], {"n": np.int32(n)})
        expected = f(x[:n])
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5)
    assert len(traces) == 1 + 4  # one trace for jit, one per eager reference
    jitted([_padded((32,), (32,))], {"n": np.int32(20)})
    assert len(traces) == 6  # a new padded shape traces again


def test_jit_of_masked_rnn_serves_every_length() -> None:
    jitted = jit(MASKED_RNN)
    xs = _padded((12, 4), (12, 4))
    for n in (12, 7, 1):
        h, ys = jitted([xs, W, H0], {"n": np.int32(n)})
        h_ref, ys_ref = _rnn(xs[:n], W, H0)
        np.testing.assert_allclose(np.asarray(h), np.asarray(h_ref), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(ys)[:n], np.asarray(ys_ref), rtol=1e-5, atol=1e-6)


def test_vmap_of_mask_with_per_example_sizes() -> None:
    lengths = np.array([12, 3, 7, 1], np.int32)
    xs = np.stack([_padded((12, 4), (int(n), 4)) for n in lengths])
    h, ys = vmap(MASKED_RNN, in_axes=([0, None, None], {"n": 0}))([xs, W, H0], {"n": lengths})
    for i, n in enumerate(lengths):
        h_ref, ys_ref = _rnn(xs[i, :n], W, H0)
        np.testing.assert_allclose(np.asarray(h)[i], np.asarray(h_ref), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(ys)[i, :n], np.asarray(ys_ref), rtol=1e-5, atol=1e-6)


def test_jit_of_vmap_of_mask() -> None:
    lengths = np.array([5, 2, 8], np.int32)
    xs = np.stack([_padded((8,), (int(n),)) for n in lengths])
    f = jit(vmap(mask(lambda x: pnp.sum(x * x) / lax.dimension_as_value(x.shape[0]), ["n"], "")))
    got = np.asarray(f([xs], {"n": lengths}))
    expected = [np.sum(xs[i, :n] ** 2) / n for i, n in enumerate(lengths)]
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_grad_of_mask_is_zero_in_the_padding() -> None:
    def loss(x: Any) -> Any:
        return pnp.sum(pnp.sin(x) * pnp.cumsum(x))

    masked = mask(loss, ["n"], "")
    x = RNG.standard_normal(10).astype(np.float32)  # finite padding: its gradient must still be zero
    for n in (10, 6, 1):
        g = np.asarray(grad(lambda v, n=n: masked([v], {"n": np.int32(n)}))(x))
        g_ref = np.asarray(grad(loss)(x[:n]))
        np.testing.assert_allclose(g[:n], g_ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(g[n:], 0.0)


def test_grad_through_a_masked_scan() -> None:
    xs = RNG.standard_normal((9, 4)).astype(np.float32)

    def loss(xs_: Any, w: Any) -> Any:
        h, ys = _rnn(xs_, w, H0)
        return pnp.sum(h) + pnp.sum(ys)

    masked = mask(loss, ["(n, 4)", "(4, 4)"], "")
    n = 5
    gx, gw = grad(lambda a, b: masked([a, b], {"n": np.int32(n)}), argnums=(0, 1))(xs, W)
    rx, rw = grad(loss, argnums=(0, 1))(xs[:n], W)
    np.testing.assert_allclose(np.asarray(gx)[:n], np.asarray(rx), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(gx)[n:], 0.0)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(rw), rtol=1e-4, atol=1e-5)


def test_vmap_of_grad_of_mask() -> None:
    lengths = np.array([4, 1, 6], np.int32)
    xs = RNG.standard_normal((3, 6)).astype(np.float32)
    masked = mask(lambda x: pnp.sum(x**3), ["n"], "")
    g = np.asarray(vmap(grad(lambda x, n: masked([x], {"n": n})))(xs, lengths))
    for i, n in enumerate(lengths):
        np.testing.assert_allclose(g[i, :n], 3 * xs[i, :n] ** 2, rtol=1e-5)
        np.testing.assert_array_equal(g[i, n:], 0.0)


def test_transformations_inside_mask() -> None:
    def f(x: Any) -> Any:
        row_sums = vmap(lambda r: pnp.sum(r))(x)  # vmap inside mask
        slope = grad(lambda r: pnp.sum(r * r))(x[0])  # grad inside mask
        compiled = jit(lambda r: pnp.max(r, axis=0))(x)  # a jitted call inside mask
        return row_sums, slope, compiled

    x = _padded((6, 5), (3, 4))
    got = mask(f, ["(n, m)"], ("n", "m", "m"))([x], {"n": 3, "m": 4})
    logical = x[:3, :4]
    np.testing.assert_allclose(np.asarray(got[0])[:3], logical.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1])[:4], 2 * logical[0], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[2])[:4], logical.max(axis=0), rtol=1e-5)


def test_collectives_inside_vmap_of_mask() -> None:
    xs = np.stack([_padded((8,), (5,)) for _ in range(3)])
    f = vmap(mask(lambda x: lax.psum(x, "i") - x, ["n"], "n"), in_axes=([0], None), axis_name="i")
    got = np.asarray(f([xs], {"n": np.int32(5)}))
    expected = xs[:, :5].sum(axis=0) - xs[:, :5]
    np.testing.assert_allclose(got[:, :5], expected, rtol=1e-5, atol=1e-6)


def test_loops_whose_trip_count_is_a_batched_size() -> None:
    def total(x: Any) -> Any:
        def body(i: Any, acc: Any) -> Any:
            return acc + lax.dynamic_slice(x, (i,), (1,), allow_negative_indices=False)[0]

        return lax.fori_loop(0, lax.dimension_as_value(x.shape[0]), body, np.float32(0.0))

    lengths = np.array([6, 1, 3], np.int32)
    xs = np.stack([_padded((6,), (int(n),)) for n in lengths])
    got = np.asarray(jit(vmap(mask(total, ["n"], "")))([xs], {"n": lengths}))
    np.testing.assert_allclose(got, [xs[i, :n].sum() for i, n in enumerate(lengths)], rtol=1e-5)


def test_fori_loop_up_to_a_masked_size_is_a_scan_and_differentiates() -> None:
    def f(x: Any) -> Any:
        return lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i] * i, 0.0)

    masked = mask(f, ["n"], "")
    x = _padded((8,), (8,))
    for n in (1, 3, 8):
        got = masked([x], {"n": np.int32(n)})
        np.testing.assert_allclose(np.asarray(got), np.asarray(f(pnp.asarray(x[:n]))), rtol=1e-5)
    g = grad(lambda x: masked([x], {"n": np.int32(5)}))(x)
    np.testing.assert_allclose(np.asarray(g), [0, 1, 2, 3, 4, 0, 0, 0])
