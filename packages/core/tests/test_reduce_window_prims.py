"""Core's NumPy implementations of the windows family, against a loop over
windows written from XLA's definition and small hand-worked cases."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from plait_core import lax, make_jaxpr
from plait_core.primitives import reduce_window as rw


def naive(x: np.ndarray, init: Any, op: Callable[[Any, Any], Any], params: dict[str, Any]) -> np.ndarray:
    dims, strides, pads = params["window_dimensions"], params["window_strides"], params["padding"]
    base, wdil = params["base_dilation"], params["window_dilation"]
    sizes = [(n - 1) * b + 1 + lo + hi for n, b, (lo, hi) in zip(x.shape, base, pads)]
    spans = [(w - 1) * d + 1 for w, d in zip(dims, wdil)]
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


PARAMS = [
    dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (1, 1)), base_dilation=(1, 2),
         window_dilation=(2, 1)),
    dict(window_dimensions=(3, 1), window_strides=(2, 1), padding=((0, -1), (0, 0)), base_dilation=(1, 1),
         window_dilation=(1, 1)),
]  # fmt: skip


@pytest.mark.parametrize("params", PARAMS)
def test_monoids_and_generic(params: dict[str, Any]) -> None:
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    for prim, init, op in ((rw.reduce_window_sum_p, 0.0, np.add), (rw.reduce_window_max_p, -np.inf, np.maximum),
                           (rw.reduce_window_min_p, np.inf, np.minimum)):  # fmt: skip
        np.testing.assert_allclose(np.asarray(prim.bind(x, **params)), naive(x, np.float32(init), op, params), rtol=1e-6)
    generic = lax.reduce_window(x, np.float32(2.0), lax.mul, **params)
    np.testing.assert_allclose(np.asarray(generic), naive(x, np.float32(2.0), np.multiply, params), rtol=1e-5)


def test_select_and_gather_and_scatter() -> None:
    x = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], np.float32)
    t = np.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]], np.float32)
    win = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding=((0, 0), (0, 0)))
    ones = dict(base_dilation=(1, 1), window_dilation=(1, 1))
    # Windows [[1, 5], [7, 0]] and [[5, 2], [0, 3]]: maxima 7 (row 1, col 0) and 5 (row 0, col 1).
    got = rw.select_and_gather_add_p.bind(t, x, select="ge", **win, **ones)
    np.testing.assert_array_equal(np.asarray(got), [[40.0, 20.0]])
    scattered = rw.select_and_scatter_add_p.bind(np.array([[1.0, 2.0]], np.float32), x, select="le", **win)
    # Minima 0 (row 1, col 1) in both windows.
    np.testing.assert_array_equal(np.asarray(scattered), [[0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])


def test_shape_rule_errors() -> None:
    x = np.zeros((3, 3), np.float32)
    bad = dict(PARAMS[0], window_strides=(1,))
    with pytest.raises(TypeError, match=r"window_strides must be a tuple of 2 ints"):
        rw.reduce_window_sum_p.bind(x, **bad)
    with pytest.raises(ValueError, match=r"select must be 'ge' \(maximum\) or 'le' \(minimum\)"):
        rw.select_and_gather_add_p.bind(x, x, select="gt", **PARAMS[1])


def test_a_weak_init_converted_to_the_operands_dtype_keeps_the_dedicated_forms_under_a_trace() -> None:
    # 0.0 (a Python float) into a float16 operand's sum, -inf into an int32 operand's max (saturating): converted
    # while the init is concrete, so that even inside a staged program they are the sum and max primitives (the
    # general form has no reverse-mode derivative; the fuzzer found a float16 sum pool under jit(grad)).
    x16 = np.arange(10, dtype=np.float16).reshape(2, 5)
    xi = np.array([[3, -7, 2, 9, 1]], np.int32)
    cases = [
        (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "VALID"), x16, "reduce_window_sum",
         x16[:, :-1] + x16[:, 1:]),
        (lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 1), "SAME"), xi, "reduce_window_max",
         np.maximum(xi, np.concatenate([xi[:, 1:], np.full((1, 1), np.iinfo(np.int32).min, np.int32)], 1))),
    ]  # fmt: skip
    for f, x, prim, want in cases:
        names = [e.primitive.name for e in make_jaxpr(f)(x).jaxpr.eqns]
        assert names == [prim], names
        got = np.asarray(f(x))
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, want)
