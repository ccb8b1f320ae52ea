"""Timing helpers: interleaved repetitions, medians and ratios.

plait and JAX run alternately in one process so that machine noise hits both
alike; each figure is the median of the repetitions.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Result:
    """One benchmark row: medians in seconds (``jax`` is None when JAX is absent)."""

    name: str
    plait: float
    jax: float | None
    target: str

    @property
    def ratio(self) -> float | None:
        return None if self.jax is None else self.plait / self.jax


def interleaved(plait_fn: Callable[[], object], jax_fn: Callable[[], object] | None, repeats: int) -> tuple[float, float | None]:
    """Median wall time of each function over ``repeats`` alternating runs."""
    p_times: list[float] = []
    j_times: list[float] = []
    for _ in range(repeats):
        t = time.perf_counter()
        plait_fn()
        p_times.append(time.perf_counter() - t)
        if jax_fn is not None:
            t = time.perf_counter()
            jax_fn()
            j_times.append(time.perf_counter() - t)
    return statistics.median(p_times), (statistics.median(j_times) if j_times else None)


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def markdown_table(results: list[Result]) -> str:
    lines = [
        "| benchmark | plait | JAX 0.10.2 | plait / JAX | target |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        ratio = "—" if r.ratio is None else f"{r.ratio:.2f}×"
        lines.append(f"| {r.name} | {fmt_seconds(r.plait)} | {fmt_seconds(r.jax)} | {ratio} | {r.target} |")
    return "\n".join(lines)
