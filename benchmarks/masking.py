"""Masking: a ``scan`` RNN over 16 sequence lengths up to 128.

plait compiles ``jit(mask(rnn))`` once for the padded length and serves all
16 lengths from it; JAX (which has no ``mask``) compiles ``jit(rnn)`` once per
length.  Both totals include tracing and compilation, since avoiding them
is the point: each repetition uses a fresh function, so no cache answers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, interleaved

MAX_LEN = 128
HIDDEN = 32
LENGTHS = [int(n) for n in np.linspace(8, MAX_LEN, 16)]


def _make_rnn(np_mod: Any, lax_mod: Any) -> Callable[..., Any]:
    """A fresh RNN function (a new object each call, so no tracing cache hits)."""

    def rnn(xs: Any, w: Any, u: Any, h0: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = np_mod.tanh(h @ w + x @ u)
            return h, None

        h, _ = lax_mod.scan(step, h0, xs)
        return h

    return rnn


def _plait_jit() -> Any | None:
    try:
        return importlib.import_module("plait_dispatch").jit
    except (ImportError, AttributeError):
        return None


def bench_masked_rnn(jax: Any | None, repeats: int = 3) -> Result | None:
    """``None`` when plait-dispatch (``jit``) is not installed."""
    jit = _plait_jit()
    if jit is None:
        return None
    import plait_core.numpy as pnp
    from plait_core import lax
    from plait_masking import mask

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((MAX_LEN, HIDDEN)).astype(np.float32)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    u = (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    h0 = np.zeros(HIDDEN, np.float32)
    specs = [f"(n, {HIDDEN})", f"({HIDDEN}, {HIDDEN})", f"({HIDDEN}, {HIDDEN})", f"{HIDDEN}"]

    def plait_all() -> list[np.ndarray]:
        f = jit(mask(_make_rnn(pnp, lax), specs, f"{HIDDEN}"))
        return [np.asarray(f([xs, w, u, h0], {"n": np.int32(n)})) for n in LENGTHS]

    jax_all: Callable[[], list[np.ndarray]] | None = None
    if jax is not None:

        def jax_all() -> list[np.ndarray]:
            f = jax.jit(_make_rnn(jax.numpy, jax.lax))
            return [np.asarray(f(xs[:n], w, u, h0)) for n in LENGTHS]

        for a, b in zip(plait_all(), jax_all()):  # same answers before timing
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    p, j = interleaved(plait_all, jax_all, repeats)
    return Result(f"scan RNN over {len(LENGTHS)} lengths ≤ {MAX_LEN}: jit(mask) once vs JAX jit per length",
                  p, j, "≤ 0.2× JAX")
