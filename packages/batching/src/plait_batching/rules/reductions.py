"""Batching rules of the reductions family.

Reductions, ``argmax``/``argmin`` and the cumulative operations name
dimensions of one element in a param; :func:`~plait_batching.factories.defreducer`
shifts them past the batch.  ``sort`` sorts its operands together, so they
must agree on the batch: it goes in front of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.factories import defreducer
from plait_batching.moves import BDim, shift, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core.primitives import reductions as r

defreducer(
    r.reduce_sum_p, r.reduce_prod_p, r.reduce_max_p, r.reduce_min_p, r.reduce_and_p, r.reduce_or_p,
    r.argmax_p, r.argmin_p,
)  # fmt: skip
defreducer(r.cumsum_p, r.cumprod_p, r.cummax_p, r.cummin_p, param="axis")


def _sort_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, dimension: int, is_stable: bool, num_keys: int
) -> tuple[list[Any], list[BDim]]:
    d0 = dims[0]
    if d0 is not None and all(d == d0 for d in dims):  # batched alike: sort in place
        outs = r.sort_p.bind(*args, dimension=shift(dimension, d0), is_stable=is_stable, num_keys=num_keys)
        return list(outs), [d0] * len(outs)
    ops = [to_front(x, d, axis.size) for x, d in zip(args, dims)]
    outs = r.sort_p.bind(*ops, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return list(outs), [0] * len(outs)


batching_rules[r.sort_p] = _sort_rule
