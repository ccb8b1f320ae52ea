"""``numpy.stack`` of thousands of small arrays, eagerly, as a user collecting
per-step results in a list does.  One XLA concatenate of n operands compiles in
time superlinear in n; plait joins chunks of 32 through one shared program."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from benchmarks.harness import Result

# JAX needs ~10 s at 2,000 arrays and ~6 minutes at 10,000 (measured once on this
# machine), so the side-by-side row uses 2,000; plait alone is also shown at 10,000.
SIDE_BY_SIDE = 2_000
PLAIT_ONLY = 10_000


def _first_call(stack: Any, xs: list[Any]) -> float:
    t = time.perf_counter()
    stack(xs).block_until_ready()
    return time.perf_counter() - t


def bench_stack(jax: Any | None) -> list[Result]:
    import plait.numpy as pnp

    rows = np.arange(3 * PLAIT_ONLY, dtype=np.float32).reshape(PLAIT_ONLY, 3)
    p_xs = [pnp.asarray(r) for r in rows]
    p_big = _first_call(pnp.stack, p_xs)
    p_small = _first_call(pnp.stack, p_xs[:SIDE_BY_SIDE])
    j_small = None
    if jax is not None:
        j_xs = [jax.numpy.asarray(r) for r in rows[:SIDE_BY_SIDE]]
        j_small = _first_call(jax.numpy.stack, j_xs)
    return [
        Result(f"stack of {SIDE_BY_SIDE:,} float32[3] arrays (first call, eager)", p_small, j_small, "≤ 1.0× JAX"),
        Result(f"stack of {PLAIT_ONLY:,} float32[3] arrays (first call, eager; JAX ~6 min)", p_big, None,
               "well under 1 s"),
    ]
