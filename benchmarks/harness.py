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
    neighbour_ratio: float | None = None
    """The median of the per-repetition ratios (see :func:`interleaved_ratio`),
    when the row measured it: steadier than the ratio of the medians on a busy machine."""

    @property
    def ratio(self) -> float | None:
        if self.jax is None:
            return None
        return self.neighbour_ratio if self.neighbour_ratio is not None else self.plait / self.jax


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


def interleaved_ratio(
    plait_fn: Callable[[], object], jax_fn: Callable[[], object] | None, repeats: int
) -> tuple[float, float | None, float | None]:
    """As :func:`interleaved`, plus the median of the ratios of neighbouring
    samples (plait's repetition over the JAX repetition right after it)."""
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
    if not j_times:
        return statistics.median(p_times), None, None
    ratios = [p / j for p, j in zip(p_times, j_times)]
    return statistics.median(p_times), statistics.median(j_times), statistics.median(ratios)


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
