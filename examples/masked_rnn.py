"""A masked RNN: one compiled program for every sequence length.

``jit`` specialises a function to its arguments' shapes, so an RNN over a
sequence of length 7 and one of length 8 are two traces and two XLA
compilations.  ``plait.mask`` makes one program serve every length up to a
padded size:

    masked = plait.jit(plait.mask(rnn, in_shapes=[param_specs, "(n, _)"], out_shape=("_", "_")))
    final, mean_state = masked([params, padded_xs], {"n": 7})

``"(n, _)"`` says the sequence has ``n`` rows (named, tracked) and any number
of columns (``_``, not tracked); ``{"n": 7}`` gives the logical size at the
call.  Inside ``rnn``, ``xs.shape[0]`` is the symbolic size ``n``: the
``lax.scan`` runs ``n`` steps, and ``pnp.mean`` over the states divides by
``n``, not by the padded length.  Under ``jit`` the logical size is a traced
value, so changing it neither retraces nor recompiles.

The script runs the RNN at 22 lengths both ways, counts the traces (1 for
the masked RNN, one per length for the plain ``jit``), compares the results
(with each other and with a NumPy loop) and times both.

Run it with ``python examples/masked_rnn.py``; it checks its own results.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import plait
from plait import lax
from plait import numpy as pnp

HIDDEN, FEATURES, MAX_LEN = 32, 16, 64
LENGTHS = list(range(1, MAX_LEN + 1, 3))

traces = 0


def rnn(params: dict[str, Any], xs: Any) -> tuple[Any, Any]:
    """An Elman RNN over ``xs`` of shape ``(n, FEATURES)``: the final state and the mean state."""
    global traces
    traces += 1  # runs only while plait traces the function

    def cell(h: Any, x: Any) -> tuple[Any, Any]:
        h = pnp.tanh(h @ params["wh"] + x @ params["wx"] + params["b"])
        return h, h

    final, states = lax.scan(cell, pnp.zeros(HIDDEN, np.float32), xs)
    return final, pnp.mean(states, axis=0)


def numpy_rnn(params: dict[str, np.ndarray], xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = np.zeros(HIDDEN)
    states = []
    for x in xs:
        h = np.tanh(h @ params["wh"] + x @ params["wx"] + params["b"])
        states.append(h)
    return h, np.mean(states, axis=0)


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"masked_rnn.py: check failed: {what}")


def main() -> None:
    global traces
    rng = np.random.default_rng(0)
    params = {
        "wh": (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32),
        "wx": (rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES)).astype(np.float32),
        "b": (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32),
    }
    xs = rng.standard_normal((MAX_LEN, FEATURES)).astype(np.float32)  # padded to the longest

    # One program for every length: the parameters' shapes are not tracked ('_'),
    # the sequence has n rows.
    param_specs = {"wh": "(_, _)", "wx": "(_, _)", "b": "_"}
    masked = plait.jit(plait.mask(rnn, [param_specs, "(n, _)"], ("_", "_")))
    traces = 0
    start = time.perf_counter()
    masked_out = [plait.block_until_ready(masked([params, xs], {"n": n})) for n in LENGTHS]
    masked_time, masked_traces = time.perf_counter() - start, traces

    # The plain way: jit traces and compiles once per length.
    plain = plait.jit(rnn)
    traces = 0
    start = time.perf_counter()
    plain_out = [plait.block_until_ready(plain(params, xs[:n])) for n in LENGTHS]
    plain_time, plain_traces = time.perf_counter() - start, traces

    print(f"{len(LENGTHS)} lengths from {LENGTHS[0]} to {LENGTHS[-1]}")
    print(f"masked:    traced {masked_traces} time(s), {masked_time:.2f} s")
    print(f"plain jit: traced {plain_traces} time(s), {plain_time:.2f} s")

    diff = 0.0
    for n, got, want in zip(LENGTHS, masked_out, plain_out):
        oracle = numpy_rnn(params, xs[:n])
        for g, w, o in zip(got, want, oracle):
            diff = max(diff, float(np.max(np.abs(np.asarray(g) - np.asarray(w)))))
            np.testing.assert_allclose(np.asarray(g), o, rtol=1e-4, atol=1e-5)
    print(f"max |masked - plain| = {diff:.2e}; both match a NumPy loop")

    check(masked_traces == 1, f"the masked RNN is traced once, not {masked_traces} times")
    check(plain_traces == len(LENGTHS), f"plain jit traces once per length ({plain_traces})")
    print("masked_rnn.py: all checks passed")


if __name__ == "__main__":
    main()
