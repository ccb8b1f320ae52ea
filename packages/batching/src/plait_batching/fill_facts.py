"""What the padding of a ragged value holds, carried through the equations
that keep it: so that a sum or a contraction along a ragged axis need not
fill a padding that already sums as zero.

A ragged tracer's :attr:`~plait_batching.trace.BatchTracer.filled` maps a
ragged axis to what its padding along that axis holds: a finite constant
(recorded by a fill, see :func:`~plait_batching.ragged.record_fill`), or
one of two facts this module derives:

* :data:`CONST`: the value does not vary along the axis (it was broadcast
  along it), so its padding there repeats the logical entries;
* :data:`SUMS_AS_ZERO`: the padding along the axis holds 0 wherever the
  other ragged axes are logical and the logical entries along the axis are
  finite, and is finite elsewhere (the fact
  :meth:`~plait_core.padded.env.PaddedEnv.sums_as_zero` asks about);
* :data:`FINITE`: the padding along the axis is finite (a maximum's result,
  whose padding core keeps finite: :mod:`plait_core.padded.reductions`).

Only exact constants count as fills (:func:`~plait_batching.ragged.is_filled`
compares them with ``==``), so neither fact is ever taken for one: a result
returned from the ``vmap`` is filled with zeros as before.

The facts pass through ``stop_gradient``, ``copy``, ``expand_dims`` and
``broadcast_in_dim`` (an axis broadcast from size 1 becomes :data:`CONST`),
and ``div`` makes :data:`SUMS_AS_ZERO`: ``a / b`` along a ragged axis ``k``
where ``a``'s padding along ``k`` is 0 (or sums as zero), ``b`` is
:data:`CONST` along ``k`` and holds a nonzero finite constant in its padding
along every other ragged axis, one of which has ``k``'s size.  That is a
softmax's weights, ``e / sum(e)`` (the sum's result has its padding filled
with 1, see :mod:`plait_core.padded.reductions`): in a logical row the
padding is ``0 / b``, 0 unless ``b`` is 0 or NaN, and then the row's logical
entries are ``a / b``, not finite; a logical row is never empty along ``k``
(another of its axes has ``k``'s size, so the element's length is at least
1); in a row of the padding it is ``a / 1``, finite.  The contraction of
attention's weights with its values then fills only the values
(:mod:`plait_core.padded.linalg`), and the derivative of the contraction
needs no mask on the weights' cotangent, which XLA fuses with the softmax's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_batching.ragged import env_of, fill_key
from plait_batching.trace import BatchTrace, BatchTracer
from plait_core import Primitive
from plait_core.dims import Dim, InconclusiveDimensionOperation
from plait_core.primitives import ad_helpers as adh
from plait_core.primitives import structural as st
from plait_core.primitives.elementwise import div_p

__all__ = ["CONST", "FINITE", "SUMS_AS_ZERO", "sums_as_zero", "with_facts"]

#: The value does not vary along the axis (see the module doc).
CONST = ("const",)
#: The padding along the axis sums as zero (see the module doc).
SUMS_AS_ZERO = ("sums as zero",)
#: The padding along the axis is finite (see the module doc).
FINITE = ("finite",)

Rule = Callable[[BatchTrace, Primitive, Sequence[Any], dict[str, Any]], Any]


def _facts(trace: BatchTrace, x: Any) -> dict[int, Any]:
    if type(x) is BatchTracer and x._trace is trace and x.filled:
        return x.filled
    return {}


def sums_as_zero(x: BatchTracer, axes: Sequence[int]) -> bool:
    """Whether the padding of the ragged tracer ``x`` along every axis of
    ``axes`` holds 0 or sums as zero (see the module doc)."""
    known = x.filled or {}
    zero = fill_key(0, x.aval.dtype)
    return bool(axes) and all(a in known and (known[a] is SUMS_AS_ZERO or known[a] == zero) for a in axes)


def _moved(facts: dict[int, Any], where: Callable[[int], int | None]) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for a, k in facts.items():
        b = where(a)
        if b is not None:
            out[b] = k
    return out


def _derive(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], out: BatchTracer, params: dict[str, Any]
) -> dict[int, Any]:
    env = env_of(trace)
    shape = out.aval.shape
    if prim in (adh.stop_gradient_p, st.copy_p):
        return dict(_facts(trace, args[0]))
    if prim is st.expand_dims_p:
        ndim = len(shape)
        new = sorted(d % ndim for d in params["dimensions"])
        kept = [a for a in range(ndim) if a not in new]
        return _moved(_facts(trace, args[0]), lambda a: kept[a])
    if prim is st.broadcast_in_dim_p:
        x = args[0]
        dims = params["broadcast_dimensions"]
        facts: dict[int, Any] = {}
        xshape = x.aval.shape if type(x) is BatchTracer and x._trace is trace else None
        for a, k in _facts(trace, x).items():
            if xshape is not None and _same(xshape[a], shape[dims[a]]):
                facts[dims[a]] = k
        for b, d in enumerate(shape):
            if env.is_ragged(d) and (
                b not in dims or (xshape is not None and not _same(xshape[dims.index(b)], d))
            ):
                facts[b] = CONST
        return facts
    if prim is div_p:
        num, den = _facts(trace, args[0]), _facts(trace, args[1])
        ragged = [ax for ax, d in enumerate(shape) if env.is_ragged(d)]
        zero = fill_key(0, out.aval.dtype)
        derived: dict[int, Any] = {}
        for k in ragged:
            others = [q for q in ragged if q != k]
            if (
                k in num and (num[k] is SUMS_AS_ZERO or num[k] == zero)
                and den.get(k) is CONST
                and others
                and any(_same(shape[q], shape[k]) for q in others)
                and all(_nonzero_constant(den.get(q)) for q in others)
            ):  # fmt: skip
                derived[k] = SUMS_AS_ZERO
        return derived
    return {}


def _same(d: Dim, e: Dim) -> bool:
    """Whether two sizes are the same polynomial (an inconclusive comparison says no)."""
    try:
        return bool(d == e)
    except InconclusiveDimensionOperation:
        return False


def _nonzero_constant(key: Any) -> bool:
    return isinstance(key, (int, float, complex)) and not isinstance(key, bool) and key != 0


def with_facts(rule: Rule) -> Rule:
    """``rule`` (a ragged rule of a passthrough primitive) with what the
    padding of its result holds derived from its operands' (see the module doc)."""

    def wrapped(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        out = rule(trace, prim, args, params)
        if prim in _PROPAGATES and type(out) is BatchTracer and out.ragged:
            facts = _derive(trace, prim, args, out, params)
            if facts:
                out.filled = facts
        return out

    wrapped.__name__ = getattr(rule, "__name__", "ragged_rule")
    return wrapped


_PROPAGATES = frozenset({adh.stop_gradient_p, st.copy_p, st.expand_dims_p, st.broadcast_in_dim_p, div_p})
