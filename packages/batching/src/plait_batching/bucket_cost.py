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
    its first (longest) length."""
    b = len(lengths)
    most = min(MAX_BUCKETS, b)

    def cost(a: int, c: int) -> float:
        width = padded if a == 0 else lengths[a]
        return float((c - a) * width * (width + padded))

    penalty = BUCKET_OVERHEAD * cost(0, b)
    inf = float("inf")
    # best[k][c]: the cheapest cut of the first c lengths into k buckets.
    best = [[inf] * (b + 1) for _ in range(most + 1)]
    back = [[0] * (b + 1) for _ in range(most + 1)]
    best[0][0] = 0.0
    for k in range(1, most + 1):
        for c in range(1, b + 1):
            for a in range(k - 1, c):
                v = best[k - 1][a] + cost(a, c)
                if v < best[k][c]:
                    best[k][c], back[k][c] = v, a
    k = min(range(1, most + 1), key=lambda k: best[k][b] + (k - 1) * penalty)
    bounds: list[tuple[int, int]] = []
    c = b
    while k:
        a = back[k][c]
        bounds.append((a, c))
        c, k = a, k - 1
    return bounds[::-1]
