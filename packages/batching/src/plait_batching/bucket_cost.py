"""The cost model of buckets: how a pile's sorted lengths are cut into buckets.

The cost of a bucket of ``n`` elements padded to ``L`` is taken as
``n * L * (L + N)`` (``N`` the pile's padded size: work that grows with the
square of the length, as attention's, plus work that grows with the length,
as a dense layer's), and every bucket beyond the first costs a fixed share of
the unbucketed cost (its own copy of the program: more to compile, more
operations to launch).  The cheapest split into at most :data:`MAX_BUCKETS`
contiguous runs of the sorted lengths wins.  Used by
:mod:`plait_batching.buckets` (exact lengths) and
:mod:`plait_batching.length_plan` (coarse plans).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["BUCKET_OVERHEAD", "MAX_BUCKETS", "split_sorted"]

#: The most buckets a pile is cut into (each is a copy of the mapped function).
MAX_BUCKETS = 8

#: What each bucket beyond the first costs, as a share of the unbucketed cost.
#: (On the benchmark transformer layer, 32 lengths in 8-125: 0.01 makes 7
#: buckets, forward 0.62-0.64x and grad 0.51-0.52x the padded+masked layer;
#: 0.03 makes 4, 0.73-0.77x and 0.58-0.59x; more buckets compile longer.)
BUCKET_OVERHEAD = 0.01


def split_sorted(lengths: Sequence[int], padded: int) -> list[tuple[int, int]]:
    """The cheapest cut of ``lengths`` (sorted, longest first) into contiguous
    buckets, by the cost model of this module's docstring: ``(start, stop)``
    per bucket.  The first bucket is padded to ``padded``, each other one to
    its first (longest) length.

    Cuts fall only where the length changes, or right after the first
    element: moving a cut from inside a run of equal lengths to the run's
    start moves elements to a bucket no wider (the first bucket, padded to
    ``padded``, is the widest), so it never costs more.  The search is over
    those positions, so its time grows with the square of the number of
    distinct lengths, not of elements (a plan's lengths, on a grid, have at
    most 9; 8,192 lengths of 118 values take 10 ms)."""
    b = len(lengths)
    if not b:
        return []
    starts = [a for a in range(b) if a <= 1 or lengths[a] != lengths[a - 1]]
    points = [*starts, b]  # candidate bucket bounds, by index into the lengths
    m = len(starts)
    most = min(MAX_BUCKETS, m)

    def cost(i: int, j: int) -> float:
        a, c = points[i], points[j]
        width = padded if a == 0 else lengths[a]
        return float((c - a) * width * (width + padded))

    penalty = BUCKET_OVERHEAD * cost(0, m)  # a share of the unbucketed cost
    inf = float("inf")
    # best[k][j]: the cheapest cut of the first points[j] lengths into k buckets.
    best = [[inf] * (m + 1) for _ in range(most + 1)]
    back = [[0] * (m + 1) for _ in range(most + 1)]
    best[0][0] = 0.0
    for k in range(1, most + 1):
        for j in range(1, m + 1):
            for i in range(k - 1, j):
                v = best[k - 1][i] + cost(i, j)
                if v < best[k][j]:
                    best[k][j], back[k][j] = v, i
    k = min(range(1, most + 1), key=lambda k: best[k][m] + (k - 1) * penalty)
    bounds: list[tuple[int, int]] = []
    j = m
    while k:
        i = back[k][j]
        bounds.append((points[i], points[j]))
        j, k = i, k - 1
    return bounds[::-1]
