"""Tracing cost: ``make_jaxpr`` of a 1000-equation chain ``x = x + 1.0``."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.harness import Result, interleaved


def bench_make_jaxpr_chain(jax: Any | None, repeats: int = 15) -> Result:
    import plait

    def fresh_chain() -> Any:
        # A new function object each time, so no tracing cache can answer.
        def chain(x: Any) -> Any:
            for _ in range(1000):
                x = x + 1.0
            return x

        return chain

    x = np.zeros(3, np.float32)
    plait_fn = lambda: plait.make_jaxpr(fresh_chain())(x)  # noqa: E731
    jax_fn = (lambda: jax.make_jaxpr(fresh_chain())(x)) if jax is not None else None
    plait_fn()
    if jax_fn is not None:
        jax_fn()
    p, j = interleaved(plait_fn, jax_fn, repeats)
    return Result("make_jaxpr of a 1000-equation chain", p, j, "≤ 0.5× JAX")
