"""lax.reduce_window under every transformation: values against a NumPy loop
over windows written from XLA's definition, derivatives against finite
differences and the JVP/VJP pairing, vmap against a loop, mask's refusal
of windows along symbolic axes."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import plait
from plait import lax

PadT = Sequence[tuple[int, int]]


def naive(
    x: np.ndarray, init: float, op: Callable[[Any, Any], Any], dims: Sequence[int], strides: Sequence[int],
    pads: PadT, base: Sequence[int], wdil: Sequence[int],
) -> np.ndarray:  # fmt: skip
    """Every window combined from ``init``; padding and holes are skipped."""
    spans = [(w - 1) * d + 1 for w, d in zip(dims, wdil)]
    sizes = [(n - 1) * b + 1 + lo + hi for n, b, (lo, hi) in zip(x.shape, base, pads)]
    out_shape = [max(0, (s - sp) // st + 1) for s, sp, st in zip(sizes, spans, strides)]
    out = np.zeros(out_shape, x.dtype)
    for o in itertools.product(*map(range, out_shape)):
        acc = init
        for k in itertools.product(*map(range, dims)):
            pos = [oi * st + ki * d - lo for oi, st, ki, d, (lo, _) in zip(o, strides, k, wdil, pads)]
            if all(p >= 0 and p % b == 0 and p // b < n for p, b, n in zip(pos, base, x.shape)):
                acc = op(acc, x[tuple(p // b for p, b in zip(pos, base))])
        out[o] = acc
    return out


CONFIGS = [
    ((2, 3), (1, 2), "VALID", None, None),
    ((3, 2), (2, 1), "SAME", None, None),
    ((2, 2), (1, 1), [(1, 0), (2, 1)], (1, 2), (2, 1)),
    ((1, 3), (1, 3), [(0, 0), (-1, 2)], (2, 1), (1, 1)),
]
OPS = [(lax.add, 0.0, np.add), (lax.max, -np.inf, np.maximum), (lax.min, np.inf, np.minimum), (lax.mul, 1.0, np.multiply), (lax.add, 2.0, np.add)]


def _pairs(padding: Any, shape: Sequence[int], dims: Sequence[int], strides: Sequence[int], wdil: Any) -> PadT:
    if not isinstance(padding, str):
        return padding
    spans = [(w - 1) * d + 1 for w, d in zip(dims, wdil or (1,) * len(dims))]
    return lax.padtype_to_pads(shape, spans, strides, padding)  # type: ignore[return-value]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("op", OPS, ids=["sum", "max", "min", "prod", "add-from-2"])
def test_values_match_the_definition(config: Any, op: Any) -> None:
    dims, strides, padding, base, wdil = config
    comp, init, np_op = op
    x = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    got = np.asarray(lax.reduce_window(x, np.float32(init), comp, dims, strides, padding, base, wdil))
    pads = _pairs(padding, x.shape, dims, strides, wdil)
    want = naive(x, np.float32(init), np_op, dims, strides, pads, base or (1, 1), wdil or (1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    jitted = plait.jit(lambda v: lax.reduce_window(v, np.float32(init), comp, dims, strides, padding, base, wdil))
    np.testing.assert_allclose(np.asarray(jitted(x)), want, rtol=1e-5, atol=1e-6)


def test_pytree_operands_and_shape_tuple() -> None:
    x = np.arange(6.0, dtype=np.float32)
    i = np.array([3, 1, 4, 1, 5, 9], np.int32)

    def argmax_window(a: Any, b: Any) -> Any:
        take_a = lax.ge(a[0], b[0])
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])

    vals, idx = lax.reduce_window((x * i, i), (np.float32(-np.inf), np.int32(-1)), argmax_window, (3,), (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(vals), [8.0, 8.0, 20.0, 45.0])
    np.testing.assert_array_equal(np.asarray(idx), [4, 4, 5, 9])
    assert lax.reduce_window_shape_tuple((5, 6), (2, 2), (1, 1), [(1, 0), (2, 1)], (1, 2), (2, 1)) == (4, 13)


def test_errors() -> None:
    x = np.zeros((4, 4), np.float32)
    with pytest.raises(TypeError, match="window_strides must have one entry per operand axis"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1,))
    with pytest.raises(ValueError, match="every entry of window_dimensions must be at least 1"):
        lax.reduce_window(x, 0.0, lax.add, (0, 2))
    with pytest.raises(TypeError, match="init value's dtype int32 differs from its operand's dtype float32"):
        lax.reduce_window(x, np.int32(0), lax.add, (2, 2))
    # a weak float init value saturates into an integer operand's dtype, as in JAX
    ints = np.arange(6, dtype=np.int32).reshape(1, 6)
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(ints, -np.inf, lax.max, (1, 2), (1, 2), "VALID")),
                                  [[1, 3, 5]])
    np.testing.assert_array_equal(
        np.asarray(lax.reduce_window(ints, -np.inf, lax.max, (1, 3), (1, 1), ((0, 0), (1, 1)))), [[1, 2, 3, 4, 5, 5]])
    with pytest.raises(ValueError, match="operand has the structure"):
        lax.reduce_window((x, x), 0.0, lax.add, (2, 2))
    with pytest.raises(TypeError, match="the computation returned the structure"):
        lax.reduce_window((x, x), (0.0, 0.0), lambda a, b: a[0] + b[0], (2, 2))


def _f(comp: Any, init: float, config: Any) -> Callable[[Any], Any]:
    dims, strides, padding, base, wdil = config
    return lambda v: lax.reduce_window(v, init, comp, dims, strides, padding, base, wdil)


# Max/min windows with window_dilation have no reverse mode (tested below).
GRAD_CASES = [(c, o) for c in CONFIGS[:3] for o in OPS[:3] if o[0] is lax.add or c[4] is None]


@pytest.mark.parametrize(("config", "op"), GRAD_CASES)
def test_gradients(config: Any, op: Any) -> None:
    comp, init, _ = op
    f = _f(comp, init, config)
    x = np.random.default_rng(1).standard_normal((5, 6))
    with plait.enable_x64():
        loss = lambda v: (f(v) ** 2).sum()  # noqa: E731
        g = np.asarray(plait.grad(loss)(x))
        d = np.random.default_rng(2).standard_normal(x.shape)
        eps = 1e-6
        fd = (float(loss(x + eps * d)) - float(loss(x - eps * d))) / (2 * eps)
        np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-6)
        _, t = plait.jvp(loss, (x,), (d,))
        np.testing.assert_allclose(float(t), fd, rtol=1e-6)


def test_generic_jvp_and_its_limits() -> None:
    config = CONFIGS[1]
    f = _f(lax.mul, 1.0, config)
    x = np.random.default_rng(3).standard_normal((5, 6))
    d = np.random.default_rng(4).standard_normal((5, 6))
    with plait.enable_x64():
        _, t = plait.jvp(f, (x,), (d,))
        eps = 1e-6
        fd = (np.asarray(f(x + eps * d)) - np.asarray(f(x - eps * d))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-6, atol=1e-8)
        with pytest.raises(TypeError, match=r"cannot differentiate lax\.reduce_window with a general computation in reverse mode"):
            plait.grad(lambda v: f(v).sum())(x)
        with pytest.raises(TypeError, match="cannot differentiate with respect to the init values"):
            plait.jvp(lambda i: lax.reduce_window(x, i, lax.mul, (2, 2)), (1.0,), (1.0,))
    with pytest.raises(NotImplementedError, match="not supported: reverse-mode differentiation of a max/min"):
        plait.grad(lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 1), "VALID", None, (2, 1)).sum())(
            np.ones((5, 5), np.float32)
        )


@pytest.mark.parametrize("op", OPS, ids=["sum", "max", "min", "prod", "add-from-2"])
def test_vmap_matches_a_loop(op: Any) -> None:
    comp, init, _ = op
    f = _f(comp, init, ((2, 2), (1, 1), [(1, 0), (2, 1)], (1, 2), None))
    x = np.random.default_rng(5).standard_normal((3, 5, 6)).astype(np.float32)
    got = np.asarray(plait.vmap(f, in_axes=2)(x.transpose(1, 2, 0)))
    want = np.stack([np.asarray(f(x[i])) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if comp is not lax.mul and not (comp is lax.add and init == 2.0):
        grads = np.asarray(plait.vmap(plait.grad(lambda v: f(v).sum()))(x))
        loop = np.stack([np.asarray(plait.grad(lambda v: f(v).sum())(x[i])) for i in range(3)])
        np.testing.assert_allclose(grads, loop, rtol=1e-6)


def test_mask_windows_static_axes_only() -> None:
    x = np.random.default_rng(6).standard_normal((5, 6)).astype(np.float32)
    f = _f(lax.max, -np.inf, ((1, 3), (1, 2), "SAME", None, None))
    out = plait.mask(f, ["(n, 6)"], "(n, 3)")([x], dict(n=3))
    np.testing.assert_array_equal(np.asarray(out)[:3], np.asarray(f(x[:3])))
    grad = plait.mask(plait.grad(lambda v: f(v).sum()), ["(n, 6)"], "(n, 6)")([x], dict(n=3))
    np.testing.assert_array_equal(np.asarray(grad)[:3], np.asarray(plait.grad(lambda v: f(v).sum())(x[:3])))
    windowed = _f(lax.add, 0.0, ((1, 2), (1, 1), [(0, 0), (0, 0)], None, None))
    with pytest.raises(NotImplementedError, match=r"has a window of 2 .* along the symbolic axis 1 of size n"):
        plait.mask(windowed, ["(5, n)"], "(5, n - 1)")([x], dict(n=4))
    with pytest.raises(NotImplementedError, match="padding 'SAME' along axis 1 of symbolic size n"):
        plait.mask(_f(lax.add, 0.0, ((1, 2), (1, 2), "SAME", None, None)), ["(5, n)"], "(5, n)")([x], dict(n=4))


def test_vmap_over_piles_windows_static_axes_only() -> None:
    pile = plait.Pile.from_arrays([np.arange(6, dtype=np.float32).reshape(3, 2), np.arange(10, dtype=np.float32).reshape(5, 2)])
    f = _f(lax.max, -np.inf, ((1, 2), (1, 1), [(0, 0), (0, 0)], None, None))
    out = plait.vmap(f, in_axes=plait.pile_axis, out_axes=plait.pile_axis)(pile)
    assert [np.asarray(a).ravel().tolist() for a in out.unpack()] == [[1.0, 3.0, 5.0], [1.0, 3.0, 5.0, 7.0, 9.0]]
    grads = plait.vmap(plait.grad(lambda v: f(v).sum()), in_axes=plait.pile_axis, out_axes=plait.pile_axis)(pile)
    for g, n in zip(grads.unpack(), (3, 5)):
        np.testing.assert_array_equal(np.asarray(g), np.tile([0.0, 1.0], (n, 1)))
    windowed = _f(lax.add, 0.0, ((2, 1), (1, 1), [(0, 0), (0, 0)], None, None))
    with pytest.raises(ValueError, match=r"reduce_window_sum has a window of 2 .* along the ragged axis 0"):
        plait.vmap(windowed, in_axes=plait.pile_axis, out_axes=plait.pile_axis)(pile)
