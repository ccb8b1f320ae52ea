"""Which axis names a jaxpr's collectives use.

A higher-order primitive none of whose operands is batched can still depend
on the vmap: its body may call ``psum`` or ``axis_index`` over the vmap's
axis.  :func:`params_use_axis` finds out, looking into nested bodies; the
answer per closed jaxpr is memoised (closed jaxprs are immutable).
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from typing import Any

from plait_core import ClosedJaxpr, Jaxpr
from plait_core.primitives.collectives import axis_names

#: Params of collectives that name axes.
_AXIS_PARAMS = ("axes", "axis_name")

_memo: weakref.WeakKeyDictionary[ClosedJaxpr, frozenset[Hashable]] = weakref.WeakKeyDictionary()


def jaxpr_axis_names(jaxpr: Jaxpr) -> frozenset[Hashable]:
    """Every axis name a collective in ``jaxpr`` (or a body nested in it) uses."""
    names: set[Hashable] = set()
    for eqn in jaxpr.eqns:
        if eqn.primitive.family == "collective":
            for k in _AXIS_PARAMS:
                if k in eqn.params:
                    names.update(axis_names(eqn.params[k]))
        for p in eqn.params.values():
            names.update(_param_axis_names(p))
    return frozenset(names)


def _closed_axis_names(closed: ClosedJaxpr) -> frozenset[Hashable]:
    hit = _memo.get(closed)
    if hit is None:
        hit = _memo[closed] = jaxpr_axis_names(closed.jaxpr)
    return hit


def _param_axis_names(p: Any) -> frozenset[Hashable]:
    if isinstance(p, ClosedJaxpr):
        return _closed_axis_names(p)
    if isinstance(p, Jaxpr):
        return jaxpr_axis_names(p)
    if isinstance(p, tuple):
        out: frozenset[Hashable] = frozenset()
        for q in p:
            if isinstance(q, (ClosedJaxpr, Jaxpr, tuple)):
                out = out | _param_axis_names(q)
        return out
    return frozenset()


def params_use_axis(p: Any, name: Hashable) -> bool:
    """Whether the param value ``p`` (a closed jaxpr or a tuple of them) uses
    the axis ``name`` in a collective."""
    return name in _param_axis_names(p)
