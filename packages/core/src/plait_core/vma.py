"""Varying manual axes: which mesh axes a value inside ``shard_map`` varies over.

Inside the body of a ``shard_map`` with ``check_vma`` (the default), every
value's type records the mesh axes it *varies* over (``ShapedArray.vma``): an
argument split over axis ``x`` varies over ``x``; a replicated argument varies
over none (it is *invariant*: equal on every device).  Staging keeps the sets
up to date, so that

* an operation mixing an invariant operand with a varying one first casts the
  invariant one to varying with ``pvary`` (an equation of its own: on values
  the identity, but its transpose is a ``psum``, which is what makes the
  gradient with respect to a replicated parameter the sum over devices);
* collectives say how they change the set (``psum`` over ``x`` makes a value
  invariant over ``x``, ``axis_index`` varies over its axis ...), through the
  rules they register in :data:`vma_rules`;
* ``shard_map`` can refuse an ``out_specs`` entry that claims a value is
  replicated over an axis it varies over, instead of silently keeping one
  device's piece.

Outside ``shard_map`` every set is empty and none of this runs.  This module
holds only the registries (the kernel); the ``pvary`` primitive and the
collectives' rules live with the collectives and register here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.primitive import Primitive

__all__ = ["VmaRule", "active", "no_insertion", "pvary_primitive", "register_pvary", "tracking", "vma_rules", "with_vma"]

VmaRule = Callable[..., tuple[Sequence[frozenset[Any]], Sequence[frozenset[Any]]]]
"""``rule(*in_avals, **params) -> (casts, out_vmas)``: per operand, the axes to
cast it to varying over first (``pvary``), and per result, its varying axes."""

vma_rules: dict[Primitive, VmaRule] = {}
"""Primitives that say themselves how they treat varying axes (the collectives and
``pvary``); every other primitive casts its operands to the union of their axes."""

no_insertion: set[str] = {"call", "control_flow", "sharding", "callback"}
"""Families whose operands keep their own varying axes (the bodies they carry were
traced with them); their results vary over the union of the operands' axes and
those the body's results already have."""

_pvary: list[Primitive] = []

active: list[frozenset[Any]] = []
"""The mesh axes of the ``shard_map`` bodies (with ``check_vma``) being traced now,
innermost last; staging tracks varying axes only while it is not empty."""


def register_pvary(prim: Primitive) -> None:
    """Install the primitive that casts an invariant value to a varying one
    (``pvary[axes]``); called once by the collectives' module."""
    _pvary[:] = [prim]


def pvary_primitive() -> Primitive:
    """The ``pvary`` primitive (registered by :mod:`plait_core.primitives.collectives`)."""
    if not _pvary:
        raise RuntimeError("plait_core.vma: pvary is not registered (import plait_core.primitives.collectives)")
    return _pvary[0]


def with_vma(out: Any, vmas: Sequence[frozenset[Any]], multiple: bool) -> Any:
    """The abstract results ``out`` with their varying axes set to ``vmas``."""
    if multiple:
        return [a if a.vma == v else a.update(vma=v) for a, v in zip(out, vmas)]
    a: ShapedArray = out
    return a if a.vma == vmas[0] else a.update(vma=vmas[0])


@contextlib.contextmanager
def tracking(axes: frozenset[Any] | None) -> Iterator[None]:
    """Track varying axes over ``axes`` while tracing (``None``: do not, e.g. for a
    ``shard_map`` with ``check_vma=False``, whose body keeps JAX's unchecked
    semantics)."""
    if axes is None:
        yield
        return
    active.append(axes)
    try:
        yield
    finally:
        active.pop()
