"""Buckets: ``vmap`` over piles whose lengths are static, by groups of similar lengths.

A pile built with ``static_lengths=True`` carries its lengths in its static
structure.  Padded to its longest element, a batch of lengths 8 to 125 spends
most of an attention layer's work on padding (the work grows with the square
of the padded length).  Knowing the lengths while tracing, ``vmap`` sorts the
elements by length, cuts them into a few *buckets* of neighbouring lengths
and maps the function over each bucket separately, each padded only to its
own longest element; the results are put back in the elements' order.  The
program holds one copy of the mapped function per bucket.

How many buckets: the cost model of :mod:`plait_batching.bucket_cost` cuts
the sorted lengths into at most :data:`MAX_BUCKETS` contiguous runs; one
bucket means the ordinary ``vmap``.

A pile built with ``static_lengths="plan"`` carries only a coarse plan
(:class:`~plait_batching.length_plan.LengthPlan`: per bucket, how many of
the sorted elements and the size it is padded to) and keeps its lengths as
leaves, traced under ``jit``: the elements' order is then computed while
running (a stable sort of the lengths, longest first, and gathers of the
mapped arguments and of the results), so one compiled program serves every
batch of that plan.  Its buckets are never full (their lengths are not
known), and every pile mapped must share the one lengths value (the same
traced value, or equal concrete lengths), else the piles are mapped whole.
Concrete lengths that do not fit the plan (a pile rebuilt from other leaves)
are a ``ValueError``; traced ones are the builder's claim.

Buckets are made only where they keep ``vmap``'s meaning: every pile mapped
carries the same static lengths, the other mapped arguments are arrays, every
``out_axes`` entry is an integer, ``None`` or ``pile_axis``, and no
``axis_name`` is given (a collective over the mapped axis must see every
element at once).  Otherwise ``vmap`` maps the pile as a whole.

Errors name the pile's lengths, not a bucket's: when a bucket raises, the
whole pile is traced without buckets and its error is raised.  A bucket
the function cannot take narrow or full (a size that shrinks, as
``x[1:]``'s ``n - 1``, is negative at an empty bucket's padded size 0; a
primitive with a rule for piles but no batching rule cannot compute a full
bucket as a dense batch) is computed as the pile is instead: at the pile's
padded size, full only if the pile is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_batching.bucket_cost import BUCKET_OVERHEAD, MAX_BUCKETS, split_sorted
from plait_batching.length_plan import LengthPlan
from plait_batching.pile import Pile, PileAxis
from plait_batching.specs import Spec, SpecLeaf, is_axis, match_groups
from plait_batching.storage import concrete as _concrete
from plait_core import lax
from plait_core.tree_util import tree_flatten, tree_unflatten

__all__ = ["BUCKET_OVERHEAD", "MAX_BUCKETS", "BucketPlan", "plan_buckets", "run_buckets", "split_sorted"]

class BucketPlan:
    """The buckets of one ``vmap`` call: the bounds of each bucket among the
    sorted elements (longest first), each bucket's padded size (the first
    keeps the pile's, so results have the shapes ``vmap`` gives without
    buckets), and, for exact static lengths, the lengths and the elements'
    order (static); for a :class:`~plait_batching.length_plan.LengthPlan`
    the order is computed while running (``order`` is ``None``)."""

    __slots__ = ("bounds", "inverse", "lengths", "order", "widths")

    def __init__(self, lengths: tuple[int, ...] | None, order: np.ndarray | None, bounds: list[tuple[int, int]],
                 widths: list[int | None]) -> None:  # fmt: skip
        self.lengths, self.order, self.bounds, self.widths = lengths, order, bounds, widths
        self.inverse = None if order is None else np.argsort(order).astype(np.int32)

    def __repr__(self) -> str:
        sizes = [b - a for a, b in self.bounds]
        return f"BucketPlan({len(sizes)} buckets of {sizes} elements, padded to {self.widths})"


def plan_buckets(
    leaves: Sequence[SpecLeaf], specs: Sequence[Spec], out_axes: Any, axis_name: Any
) -> BucketPlan | None:  # fmt: skip
    """The buckets of a ``vmap`` call over ``leaves``, or ``None`` when it maps
    as a whole (no pile with static lengths or a plan, a case this module
    leaves alone, or one bucket is cheapest).  A ``ValueError`` when a
    pile's concrete lengths do not fit its plan."""
    piles = [leaf.value for leaf, s in zip(leaves, specs) if s is not None and type(leaf.value) is Pile]
    if not piles or axis_name is not None:
        return None
    lengths = piles[0].static_lengths
    if lengths is None or any(p.static_lengths != lengths for p in piles):
        return None
    if isinstance(lengths, LengthPlan):
        if len(lengths.buckets) < 2 or not _one_lengths(piles):
            return None
    elif len(lengths) < 2:
        return None
    for leaf, s in zip(leaves, specs):
        if s is not None and type(leaf.value) is not Pile and not is_axis(s):
            return None  # another vmappable type: mapped as a whole
    outs = tree_flatten(out_axes, is_leaf=lambda x: x is None)[0]
    if not all(o is None or is_axis(o) or isinstance(o, PileAxis) for o in outs):
        return None
    if isinstance(lengths, LengthPlan):
        return _from_length_plan(lengths, piles[0])
    padded = min(int(p.max_length) for p in piles)
    order = np.asarray(sorted(range(len(lengths)), key=lambda i: -lengths[i]), np.int32)
    bounds = split_sorted([lengths[i] for i in order], padded)
    if len(bounds) < 2:
        return None
    widths: list[int | None] = [None] + [lengths[int(order[a])] for a, _ in bounds[1:]]
    return BucketPlan(lengths, order, bounds, widths)


def _one_lengths(piles: list[Pile]) -> bool:
    """Whether the piles share one lengths value (the same value, or equal concrete lengths)."""
    first = piles[0].lengths
    if all(p.lengths is first for p in piles):
        return True
    conc = [_concrete(p.lengths) for p in piles]
    head = conc[0]
    return head is not None and all(c is not None and np.array_equal(c, head) for c in conc)


def _from_length_plan(plan: LengthPlan, pile: Pile) -> BucketPlan:
    """The buckets of a plan; concrete lengths are checked against it."""
    conc = _concrete(pile.lengths)
    why = None if conc is None else plan.misfit(conc)
    if conc is not None and why is not None:
        raise ValueError(
            f"vmap: a pile's lengths {np.array2string(conc)} do not fit its plan {plan!r} ({why}); a plan is made "
            "from the lengths when the pile is built (static_lengths='plan'), so a pile rebuilt from other "
            "lengths (tree_unflatten) must be built anew"
        )
    widths: list[int | None] = [None] + [b for _, b in plan.buckets[1:]]
    return BucketPlan(None, None, plan.starts(), widths)


def _bucket_leaf(
    value: Any, spec: Spec, plan: BucketPlan, sorted_value: Any, k: int, narrow: bool
) -> Any:  # fmt: skip
    """Bucket ``k``'s part of an argument (``sorted_value``: the argument with
    its elements in the plan's order; for a pile, its data and the lengths of
    each bucket): if ``narrow``, padded to the bucket's width and full when
    its (static) lengths all are; else padded and full as the pile is."""
    if spec is None:
        return value
    a, c = plan.bounds[k]
    width = plan.widths[k] if narrow else None
    if type(value) is Pile:
        data_all, bucket_lengths = sorted_value
        data = lax.slice_in_dim(data_all, a, c, axis=0)
        if width is not None:
            for ax in value.ragged_axes:
                data = lax.slice_in_dim(data, 0, width, axis=1 + ax)
        padded = int(data.shape[1 + value.ragged_axes[0]])
        if plan.order is None:  # a plan: the lengths are not static; at most the bucket's padded size
            most = (c - a) * padded
            capacity = most if value.capacity is None else min(most, value.capacity)
            full = False if narrow else value.full
        else:
            assert plan.lengths is not None
            static = tuple(plan.lengths[int(i)] for i in plan.order[a:c])
            capacity = sum(static)
            # A bucket of a pile stored packed stays masked (not full), so that its results keep its lengths
            # value and are stored packed again (_merge_piles); a full bucket's results get new lengths.
            every = narrow and value.storage == "padded" and all(n == padded for n in static)
            full = every if narrow else value.full
        return Pile._make(data, bucket_lengths[k], value.ragged_axis, value.layout, capacity, full)
    return lax.slice_in_dim(sorted_value, a, c, axis=int(spec))


def run_buckets(
    plan: BucketPlan, leaves: Sequence[SpecLeaf], specs: Sequence[Spec], in_tree: Any, out_axes: Any,
    call: Callable[[tuple[Any, ...], dict[str, Any]], Any], whole: Callable[[], Any],
) -> Any:  # fmt: skip
    """Map ``call`` (``vmap`` of the function, without buckets) over each
    bucket of ``plan`` and put the results back in the elements' order.

    An error raised in a bucket would name that bucket's lengths (and, for
    an error that only some lengths cause, may not be the error the whole
    pile meets first): ``whole`` (the ``vmap`` of the whole pile, without
    buckets) is then traced so that its error, naming the pile's lengths,
    is the one raised; where the whole pile maps, the bucket's error is."""
    try:
        return _run(plan, leaves, specs, in_tree, out_axes, call)
    except Exception as err:
        error = err
    whole()  # outside the handler, so that its error does not chain the bucket's
    raise error


def _order(plan: BucketPlan, lengths: Any) -> tuple[Any, Any, Any]:
    """The elements' order (longest first, ties in their order), its inverse
    and the sorted lengths: static for exact lengths, computed from the
    (traced) lengths for a plan."""
    if plan.order is not None:
        return plan.order, plan.inverse, pnp.take(lengths, plan.order, axis=0)
    index = lax.iota(np.int32, int(lengths.shape[0]))
    negated, order = lax.sort((-lax.convert_element_type(lengths, np.int32), index), num_keys=1)
    inverse = lax.sort((order, index), num_keys=1)[1]
    return order, inverse, -negated


def _run(
    plan: BucketPlan, leaves: Sequence[SpecLeaf], specs: Sequence[Spec], in_tree: Any, out_axes: Any,
    call: Callable[[tuple[Any, ...], dict[str, Any]], Any],
) -> Any:  # fmt: skip
    first = next(leaf.value for leaf, spec in zip(leaves, specs) if spec is not None and type(leaf.value) is Pile)
    order, inverse, sorted_lengths = _order(plan, first.lengths)

    def cut(lengths: Any) -> list[Any]:
        return [lax.slice_in_dim(lengths, a, c, axis=0) for a, c in plan.bounds]

    # A plan's piles share one lengths value, so one lengths value per bucket serves them all (traced lengths
    # match by identity inside vmap); with exact static lengths each pile keeps its own lengths value, as it
    # does mapped whole (two traced lengths values are two ragged sizes there).
    shared = cut(sorted_lengths)
    sorted_values: list[Any] = []
    packed: list[tuple[list[Any], Pile]] = []  # the buckets' lengths of each pile stored packed, and the pile
    for leaf, spec in zip(leaves, specs):
        v = leaf.value
        if spec is None:
            sorted_values.append(None)
        elif type(v) is Pile:
            own = shared if plan.order is None or v is first else cut(pnp.take(v.lengths, order, axis=0))
            sorted_values.append((pnp.take(v.data, order, axis=0), own))
            if v.storage == "packed":
                packed.append((own, v))
        else:
            sorted_values.append(pnp.take(v, order, axis=int(spec)))

    def bucket(k: int, narrow: bool) -> Any:
        parts = zip(leaves, specs, sorted_values)
        vals = [_bucket_leaf(leaf.value, spec, plan, sv, k, narrow) for leaf, spec, sv in parts]
        args, kwargs = tree_unflatten(in_tree, vals)
        return call(args, kwargs)

    outs = []
    for k in range(len(plan.bounds)):
        try:
            outs.append(bucket(k, True))
        except Exception:
            # What the whole pile computes, a bucket may not: a size that shrinks
            # (x[1:] has n - 1 entries) is negative at an empty bucket's padded
            # size 0, not at the pile's, where the short elements' sizes clip to
            # 0; a full bucket computes as a dense batch, with batching rules a
            # primitive with only a rule for piles lacks.  Such a bucket is
            # computed as the pile is: at its padded size, full only if it is.
            outs.append(bucket(k, False))
    return _combine(outs, out_axes, inverse, packed)


def _combine(outs: list[Any], out_axes: Any, inverse: Any, packed: list[tuple[list[Any], Pile]]) -> Any:
    """The buckets' results as one result, elements in their original order;
    a pile of the ragged size of a pile stored packed (in every bucket) is
    stored packed in that pile's capacity, as ``vmap`` returns it unbucketed."""
    per = [match_groups(out_axes, o, "the output", "out_axes") for o in outs]
    spec_tree = per[0][1]
    results = []
    for j, (spec, first, _) in enumerate(per[0][0]):
        subs = [p[0][j][1] for p in per]
        if spec is None:
            results.append(first)
            continue
        is_pile = isinstance(spec, PileAxis)
        flats = [tree_flatten(s, is_leaf=(lambda x: type(x) is Pile) if is_pile else None) for s in subs]
        merged = [
            _merge_piles([f[0][i] for f in flats], inverse, packed) if is_pile
            else _merge_arrays([f[0][i] for f in flats], int(spec), inverse)
            for i in range(len(flats[0][0]))
        ]  # fmt: skip
        results.append(tree_unflatten(flats[0][1], merged))
    return results[0] if spec_tree is None else tree_unflatten(spec_tree, results)


def _merge_arrays(parts: list[Any], spec: int, inverse: Any) -> Any:
    axis = spec % len(parts[0].shape)
    return pnp.take(pnp.concatenate(parts, axis=axis), inverse, axis=axis)


def _merge_piles(parts: list[Pile], inverse: Any, packed: list[tuple[list[Any], Pile]]) -> Pile:
    """Piles of the buckets as one pile: each padded to the first bucket's
    padded size along the ragged axes, stacked, and put back in order."""
    first = parts[0]
    shape = first.data.shape
    datas = []
    for p in parts:  # the batch axis keeps each bucket's size; the others grow to the first's
        pads = [(0, 0)] + [(0, int(shape[k]) - int(p.data.shape[k])) for k in range(1, len(shape))]
        datas.append(pnp.pad(p.data, pads) if any(hi for _, hi in pads) else p.data)
    data = pnp.take(pnp.concatenate(datas, axis=0), inverse, axis=0)
    lengths = pnp.take(pnp.concatenate([p.lengths for p in parts], axis=0), inverse, axis=0)
    full = all(p.full for p in parts) and all(p.data.shape == shape for p in parts)
    caps = [p.capacity for p in parts]
    capacity = sum(c for c in caps if c is not None) if all(c is not None for c in caps) else None
    merged = Pile._make(data, lengths, first.ragged_axis, first.layout, capacity, full)
    for bucket_lengths, pile in packed:
        if isinstance(merged.ragged_axis, int) and all(p.lengths is n for p, n in zip(parts, bucket_lengths)):
            return merged.with_storage("packed", capacity=pile.capacity)
    return merged
