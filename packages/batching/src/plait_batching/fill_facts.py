"""What the padding of a ragged value holds, carried through the equations
that keep it: so that a softmax over a ragged axis reads its scores filled
once, and a sum or a contraction along that axis need not fill again.

A ragged tracer's :attr:`~plait_batching.trace.BatchTracer.filled` maps a
ragged axis to what its padding along that axis holds: a finite constant
(recorded by a fill, see :func:`~plait_batching.ragged.record_fill`), or
one of two facts this module derives:

* :data:`CONST`: the value does not vary along the axis (it was broadcast
  along it), so its padding there repeats the logical entries;
* :data:`SUMS_AS_ZERO`: the padding along the axis holds 0 wherever the
  other ragged axes are logical and the logical entries along the axis are
  finite, and is finite elsewhere (the fact
  :meth:`~plait_core.padded.env.PaddedEnv.sums_as_zero` asks about: a sum
  or contraction along the axis may read it as it is; where a logical entry
  is not finite the sum is not finite either, and NaN may then stand for an
  infinity).

Only exact constants count as fills (:func:`~plait_batching.ragged.is_filled`
compares them with ``==``), so neither fact is ever taken for one: a result
returned from the ``vmap`` is filled with zeros as before.

A tracer's :attr:`~plait_batching.trace.BatchTracer.derived` holds what is
known of its values beyond its padding, for the steps of a softmax
``e = exp(x - max(x)); e / sum(e)`` along a ragged axis ``k``:

1. the maximum fills ``x``'s padding along ``k`` with ``-inf`` in the rows
   whose other ragged axes are logical (core's
   :meth:`~plait_core.padded.env.PaddedEnv.fill_rows`): that data is ``x``'s
   :class:`Alt` (never its data: the padding is not finite), and the
   maximum's result is tagged :class:`MaxOf` it (the tag passes through
   ``stop_gradient``, ``copy``, ``expand_dims`` and ``broadcast_in_dim``);
2. ``x - c`` with ``c`` the maximum of ``x``'s Alt broadcast along ``k``
   (:data:`CONST` there) gets the Alt ``alt - c``, whose padding is ``-inf``
   in the logical rows (NaN only in a row whose maximum is ``-inf`` or NaN,
   whose logical entries are then not finite either); a row of the padding
   keeps finite data minus its own maximum;
3. ``exp`` of a value with such an Alt computes from it: its padding is 0 in
   the logical rows, it sums as zero along ``k`` (where ``k``'s size is the
   size of another ragged axis, so a logical row is never empty along ``k``),
   and it is tagged :class:`RowsOfOne`: every row along ``k`` has an entry 1
   (``exp(0)``, at its maximum) and none above, or is NaN;
4. the sum along ``k`` of a :class:`RowsOfOne` value needs no fill and is
   tagged :class:`AtLeastOne` (passed on as :class:`MaxOf` is);
5. ``a / b`` along ``k`` where ``a``'s padding sums as zero and ``b`` is
   :data:`CONST` along ``k`` and :class:`AtLeastOne`: the result sums as zero
   along ``k`` (``0 / b`` in the logical rows, finite elsewhere).

So the scores are filled once, the exponentials and the weights not at all,
and attention's ``weights @ values`` fills only the values
(:mod:`plait_core.padded.linalg`): the program of a softmax masked by hand,
whose derivative XLA fuses the same way.  A row of the padding, and every
row of an element of length 0, computes from finite data (no ``-inf``
there), so a derivative taken outside the ``vmap`` stays finite.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_batching.ragged import env_of, fill_key
from plait_batching.trace import BatchTrace, BatchTracer
from plait_core import Primitive, Tracer
from plait_core.dims import Dim, InconclusiveDimensionOperation
from plait_core.primitives import ad_helpers as adh
from plait_core.primitives import reductions as red
from plait_core.primitives import structural as st
from plait_core.primitives.elementwise import div_p, exp_p, sub_p

__all__ = [
    "CONST", "SUMS_AS_ZERO", "Alt", "AtLeastOne", "MaxOf", "RowsOfOne", "alt_of", "record_alt", "sums_as_zero",
    "tag_reduction", "with_facts",
]  # fmt: skip

#: The value does not vary along the axis (see the module doc).
CONST = ("const",)
#: The padding along the axis sums as zero (see the module doc).
SUMS_AS_ZERO = ("sums as zero",)

Rule = Callable[[BatchTrace, Primitive, Sequence[Any], dict[str, Any]], Any]


class Derived:
    """What is known of a tracer's values while its data is ``source``."""

    __slots__ = ("source",)

    def __init__(self, source: Any) -> None:
        self.source = source


class Alt(Derived):
    """Other data for a tracer, its padding along ``axes`` ``-inf`` in the
    logical rows; ``shifted``: minus its maximum along ``axes``.  ``tracer()``
    makes it (once) as a tracer of the same element type."""

    __slots__ = ("_made", "_make", "axes", "shifted")

    def __init__(self, source: Any, axes: tuple[int, ...], make: Callable[[], BatchTracer], shifted: bool) -> None:
        super().__init__(source)
        self.axes, self._make, self.shifted = axes, make, shifted
        self._made: BatchTracer | None = None

    def tracer(self) -> BatchTracer:
        if self._made is None:
            self._made = self._make()
        return self._made


class MaxOf(Derived):
    """The maximum of ``alt`` along its axes (broadcast back along them, or not)."""

    __slots__ = ("alt",)

    def __init__(self, source: Any, alt: Alt) -> None:
        super().__init__(source)
        self.alt = alt


class RowsOfOne(Derived):
    """Every row along ``axes`` has an entry 1 and none above 1 (or is NaN)."""

    __slots__ = ("axes",)

    def __init__(self, source: Any, axes: tuple[int, ...]) -> None:
        super().__init__(source)
        self.axes = axes


class AtLeastOne(Derived):
    """Every entry is at least 1, or NaN."""

    __slots__ = ()


def _derived(trace: BatchTrace, x: Any) -> Derived | None:
    if type(x) is not BatchTracer or x._trace is not trace or x.derived is None:
        return None
    known: Derived = x.derived
    return known if known.source is x.val else None


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


def _is_neg_inf(value: Any) -> bool:
    if isinstance(value, Tracer):
        return False
    v = np.asarray(value)
    return v.dtype.kind == "f" and bool(np.isneginf(v))


def alt_of(x: BatchTracer, axes: Sequence[int], value: Any) -> Alt | None:
    """``x``'s :class:`Alt` when it is the fill of ``value`` along ``axes``."""
    known = _derived(x._trace, x)
    if type(known) is Alt and not known.shifted and known.axes == tuple(axes) and _is_neg_inf(value):
        return known
    return None


def record_alt(x: BatchTracer, filled: Any, axes: Sequence[int], value: Any) -> None:
    """Remember ``filled`` (``x``'s data with its padding along the ragged
    ``axes`` set to ``value`` in the logical rows) as ``x``'s :class:`Alt`
    when ``value`` is ``-inf`` (a maximum's fill); ``x``'s data stays."""
    if not axes or not _is_neg_inf(value) or _derived(x._trace, x) is not None:
        return  # what is known of x already stays
    trace, bdim, aval = x._trace, x.bdim, x.aval
    x.derived = Alt(x.val, tuple(axes), lambda: BatchTracer(trace, filled, bdim, aval), shifted=False)


def tag_reduction(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any], out: Any) -> None:
    """Tag the result ``out`` of a maximum of a value with an :class:`Alt`
    (:class:`MaxOf`) or of a sum of a :class:`RowsOfOne` value
    (:class:`AtLeastOne`) along the same axes (steps 1 and 4)."""
    if prim not in (red.reduce_max_p, red.reduce_sum_p) or type(out) is not BatchTracer or not out.ragged:
        return
    known = _derived(trace, args[0])
    if known is None:
        return
    env = env_of(trace)
    x = args[0]
    axes = tuple(a for a in params["axes"] if env.is_ragged(x.aval.shape[a]))
    if prim is red.reduce_max_p and type(known) is Alt and not known.shifted and known.axes == axes:
        out.derived = MaxOf(out.val, known)
    elif prim is red.reduce_sum_p and type(known) is RowsOfOne and known.axes == axes:
        out.derived = AtLeastOne(out.val)


def _moved(facts: dict[int, Any], where: Callable[[int], int | None]) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for a, k in facts.items():
        b = where(a)
        if b is not None:
            out[b] = k
    return out


def _same(d: Dim, e: Dim) -> bool:
    """Whether two sizes are the same polynomial (an inconclusive comparison says no)."""
    try:
        return bool(d == e)
    except InconclusiveDimensionOperation:
        return False


def _nonzero_constant(key: Any) -> bool:
    return isinstance(key, (int, float, complex)) and not isinstance(key, bool) and key != 0


def _shape_facts(trace: BatchTrace, prim: Primitive, args: Sequence[Any], out: BatchTracer, params: dict[str, Any]) -> dict[int, Any]:
    """The facts of a result of ``stop_gradient``, ``copy``, ``expand_dims`` or ``broadcast_in_dim``."""
    env = env_of(trace)
    shape = out.aval.shape
    x = args[0]
    if prim in (adh.stop_gradient_p, st.copy_p):
        return dict(_facts(trace, x))
    if prim is st.expand_dims_p:
        ndim = len(shape)
        new = sorted(d % ndim for d in params["dimensions"])
        kept = [a for a in range(ndim) if a not in new]
        return _moved(_facts(trace, x), lambda a: kept[a])
    dims = params["broadcast_dimensions"]
    facts: dict[int, Any] = {}
    xshape = x.aval.shape if type(x) is BatchTracer and x._trace is trace else None
    for a, k in _facts(trace, x).items():
        if xshape is not None and _same(xshape[a], shape[dims[a]]):
            facts[dims[a]] = k
    for b, d in enumerate(shape):
        if env.is_ragged(d) and (b not in dims or (xshape is not None and not _same(xshape[dims.index(b)], d))):
            facts[b] = CONST
    return facts


def _div_facts(trace: BatchTrace, args: Sequence[Any], out: BatchTracer) -> dict[int, Any]:
    """Step 5 (and its variant with a divisor whose padding rows hold a nonzero constant)."""
    env = env_of(trace)
    shape = out.aval.shape
    num, den = _facts(trace, args[0]), _facts(trace, args[1])
    at_least_one = type(_derived(trace, args[1])) is AtLeastOne
    ragged = [ax for ax, d in enumerate(shape) if env.is_ragged(d)]
    zero = fill_key(0, out.aval.dtype)
    derived: dict[int, Any] = {}
    for k in ragged:
        others = [q for q in ragged if q != k]
        if not (k in num and (num[k] is SUMS_AS_ZERO or num[k] == zero) and den.get(k) is CONST):
            continue
        if at_least_one or (
            others
            and any(_same(shape[q], shape[k]) for q in others)
            and all(_nonzero_constant(den.get(q)) for q in others)
        ):
            derived[k] = SUMS_AS_ZERO
    return derived


_SHAPES = frozenset({adh.stop_gradient_p, st.copy_p, st.expand_dims_p, st.broadcast_in_dim_p})


def _increasing(prim: Primitive, params: dict[str, Any]) -> bool:
    """Whether the shape primitive keeps the order of the axes."""
    if prim is not st.broadcast_in_dim_p:
        return True
    dims: tuple[int, ...] = params["broadcast_dimensions"]
    return all(a < b for a, b in itertools.pairwise(dims))


def with_facts(rule: Rule) -> Rule:
    """``rule`` (a ragged rule of a passthrough primitive) with what is known
    of its result derived from its operands' (see the module doc)."""

    def wrapped(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        if prim is exp_p:
            shifted = _exp_of_alt(trace, rule, args, params)
            if shifted is not None:
                return shifted
        out = rule(trace, prim, args, params)
        if type(out) is not BatchTracer or not out.ragged:
            return out
        if prim in _SHAPES:
            facts = _shape_facts(trace, prim, args, out, params)
            known = _derived(trace, args[0])
            if type(known) in (MaxOf, AtLeastOne) and _increasing(prim, params):
                out.derived = MaxOf(out.val, known.alt) if type(known) is MaxOf else AtLeastOne(out.val)
        elif prim is div_p:
            facts = _div_facts(trace, args, out)
        else:
            facts = {}
            if prim is sub_p:
                _shift_alt(trace, rule, args, params, out)
        if facts:
            out.filled = facts
        return out

    wrapped.__name__ = getattr(rule, "__name__", "ragged_rule")
    return wrapped


def _shift_alt(trace: BatchTrace, rule: Rule, args: Sequence[Any], params: dict[str, Any], out: BatchTracer) -> None:
    """Step 2: ``x - c`` with ``c`` the maximum of ``x``'s :class:`Alt`
    broadcast along its axes gets the Alt ``alt - c``."""
    x, c = args
    alt = _derived(trace, x)
    top = _derived(trace, c)
    if type(alt) is not Alt or alt.shifted or type(top) is not MaxOf or top.alt is not alt:
        return
    facts = _facts(trace, c)
    if not all(facts.get(k) is CONST for k in alt.axes):
        return

    def make() -> BatchTracer:
        shifted = rule(trace, sub_p, [alt.tracer(), c], params)
        assert type(shifted) is BatchTracer
        return shifted

    out.derived = Alt(out.val, alt.axes, make, shifted=True)


def _exp_of_alt(trace: BatchTrace, rule: Rule, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Step 3: ``exp(x)`` computed from ``x``'s shifted :class:`Alt`, where
    each of its axes has the size of another ragged axis; ``None`` otherwise."""
    (x,) = args
    alt = _derived(trace, x)
    if type(alt) is not Alt or not alt.shifted:
        return None
    env = env_of(trace)
    shape = x.aval.shape
    ragged = [q for q, d in enumerate(shape) if env.is_ragged(d)]
    if not all(any(q != k and _same(shape[q], shape[k]) for q in ragged) for k in alt.axes):
        return None
    out = rule(trace, exp_p, [alt.tracer()], params)
    if type(out) is not BatchTracer or not out.ragged:
        return None
    out.filled = dict.fromkeys(alt.axes, SUMS_AS_ZERO)
    out.derived = RowsOfOne(out.val, alt.axes)
    return out
