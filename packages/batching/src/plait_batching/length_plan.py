"""Length plans: the static part of a pile whose buckets share compilations.

A pile built with ``static_lengths="plan"`` keeps its lengths as leaves
(traced under ``jit``) and carries in its static structure only a coarse
:class:`LengthPlan`: for each bucket, in the order of the sorted lengths
(longest first), how many elements it holds and the size it is padded to
(its *bound*).  ``vmap`` sorts the elements by their (traced) lengths while
running, cuts the sorted elements into the plan's buckets and maps each
padded to its bound (see :mod:`plait_batching.buckets`), so one compiled
program serves every batch with the same plan: a batch fits a plan when the
``k``-th longest length is at most the bound of the bucket holding position
``k``.

How a plan is made (:func:`make_plan`, from concrete lengths): the lengths
rounded up to a grid of steps of ``ceil(N / PLAN_GRID)`` rounded up to a
multiple of 8 (``N`` the padded size: 16 for 128) are cut by the cost model
of :mod:`plait_batching.bucket_cost`; the cuts move to the nearest multiple
of ``ceil(B / PLAN_BUCKETS)`` (``B`` elements: 11 for 32), so at most
:data:`PLAN_BUCKETS` buckets; each bucket's bound is its longest length on
the grid (the first bucket's is ``N``, so results have the shapes ``vmap``
gives without buckets), and neighbouring buckets of one bound merge.  The
coarser the grids, the more batches share a plan, and the more padding each
computes: on 32 lengths uniform in 8-125 padded to 128, 50 random batches
make 9 plans (exact static lengths: 50; 1000 batches make 12), and the cost
model's work is about 1.36x that of buckets of the exact lengths (see
``benchmarks/RESULTS.md`` for the time).  Batches of one plan share a
compilation when they also share their shapes: ``Pile.from_arrays`` pads to
the longest length unless given ``pad_to``.

A plan is what ``Pile.from_arrays`` makes static by default (without
``pad_to`` or ``capacity``): see :meth:`plait_batching.Pile.from_arrays`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from plait_batching.bucket_cost import split_sorted

__all__ = ["PLAN_BUCKETS", "PLAN_GRID", "LengthPlan", "make_plan"]

#: The padded size is cut into this many steps of the bounds' grid (rounded up to multiples of 8).
PLAN_GRID = 8

#: At most this many buckets: the cuts fall on multiples of ``ceil(B / PLAN_BUCKETS)`` elements.  (On the
#: benchmark layer, 32 lengths uniform in 8-125, 2 CPU cores: 3 buckets of 10-11 elements ran forward at
#: 0.60-0.65x the padded+masked layer, 4 buckets of 8 at 0.65-0.73x although they compute less: a bucket of
#: 8 sequences is too small for XLA to spread its dense layers over both cores; 2 buckets at 0.74-0.78x.
#: 3 also makes fewer plans: 9 per 50 random batches, 12 per 1000, against 16 and 47.)
PLAN_BUCKETS = 3


class LengthPlan:
    """A coarse bucket plan: ``buckets`` is a tuple of ``(count, bound)``, one
    per bucket in the order of the sorted lengths (longest first); the counts
    sum to the number of elements, the first bound is the padded size and the
    bounds decrease.  Immutable and hashable (part of a pile's pytree
    structure, so ``jit`` compiles once per plan)."""

    __slots__ = ("buckets",)

    buckets: tuple[tuple[int, int], ...]

    def __init__(self, buckets: Sequence[tuple[int, int]]) -> None:
        object.__setattr__(self, "buckets", tuple((int(n), int(b)) for n, b in buckets))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("LengthPlan is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is LengthPlan and other.buckets == self.buckets

    def __hash__(self) -> int:
        return hash((LengthPlan, self.buckets))

    def __repr__(self) -> str:
        return "LengthPlan(" + ", ".join(f"{n} ≤{b}" for n, b in self.buckets) + ")"

    def __reduce__(self) -> tuple[type[LengthPlan], tuple[tuple[tuple[int, int], ...]]]:
        return LengthPlan, (self.buckets,)

    @property
    def num_elements(self) -> int:
        """How many elements the plan is for."""
        return sum(n for n, _ in self.buckets)

    def starts(self) -> list[tuple[int, int]]:
        """Each bucket's ``(start, stop)`` among the sorted elements."""
        out, a = [], 0
        for n, _ in self.buckets:
            out.append((a, a + n))
            a += n
        return out

    def misfit(self, lengths: np.ndarray) -> str | None:
        """Why concrete ``lengths`` do not fit the plan, or ``None`` when they do."""
        if lengths.shape != (self.num_elements,):
            return f"the plan is for {self.num_elements} elements, the pile has {lengths.shape[0]}"
        ordered = np.sort(lengths)[::-1]
        for k, ((a, _), (_, bound)) in enumerate(zip(self.starts(), self.buckets)):
            if a < len(ordered) and int(ordered[a]) > bound:
                return (
                    f"bucket {k} holds the sorted elements from position {a} on, padded to {bound}, but the "
                    f"length there is {int(ordered[a])}"
                )
        return None


def _round_up(n: int, step: int) -> int:
    return -(-n // step) * step


def grid_step(padded: int) -> int:
    """The step of the bounds' grid for a padded size: ``padded / PLAN_GRID`` rounded up to a multiple of 8."""
    return max(8, _round_up(math.ceil(padded / PLAN_GRID), 8))


def make_plan(lengths: np.ndarray, padded: int) -> LengthPlan:
    """The coarse plan of concrete ``lengths`` (each in ``[0, padded]``), as the
    module's docstring says; valid by construction (checked)."""
    b = len(lengths)
    if b < 2:
        return LengthPlan([(b, padded)] if b else [])
    step = grid_step(padded)
    on_grid = sorted((min(_round_up(int(n), step), padded) for n in lengths), reverse=True)
    quantum = math.ceil(b / PLAN_BUCKETS)
    cuts = sorted({min(b, quantum * round(a / quantum)) for a, _ in split_sorted(on_grid, padded)[1:]} - {0, b})
    buckets: list[tuple[int, int]] = []
    for a, c in zip([0, *cuts], [*cuts, b]):
        bound = padded if a == 0 else on_grid[a]
        if buckets and buckets[-1][1] == bound:
            buckets[-1] = (buckets[-1][0] + c - a, bound)
        else:
            buckets.append((c - a, bound))
    plan = LengthPlan(buckets)
    assert plan.misfit(np.asarray(lengths)) is None, (plan, lengths)
    return plan
