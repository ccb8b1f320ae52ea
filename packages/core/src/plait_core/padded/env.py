"""The protocol of an environment of logical sizes (see :mod:`plait_core.padded`).

A padded value of logical type ``aval`` (whose shape may have symbolic,
*padded* dimensions) has data of ``aval``'s shape evaluated at the padded
sizes, with the logical part in front along every padded axis and the rest
unspecified.  An environment answers, for a dimension ``d``:

* :meth:`PaddedEnv.is_padded`: whether its logical size may be smaller than
  its padded size;
* :meth:`PaddedEnv.padded_dim`: its padded size (a static ``int``);
* :meth:`PaddedEnv.value`: its polynomial evaluated at the logical sizes, as
  a value of the current trace: a scalar under ``mask``; under ``vmap`` over
  piles a batched scalar, one per element (``dim_as_value``: it may be
  negative);
* :meth:`PaddedEnv.size`: its logical size as an axis has it: the value,
  never negative (a size that shrinks as the logical sizes do, ``n - 2`` of
  ``x[2:]``, is empty where it would be negative, as NumPy's slices are);

and builds on those the validity masks (:meth:`PaddedEnv.valid_along`,
:meth:`PaddedEnv.valid`) and the fill of the padding
(:meth:`PaddedEnv.fill`) that the padded rules use.

Primitives that carry sub-programs (calls, loops, ``cond``) need the
interpreter itself: :meth:`PaddedEnv.padded_jaxpr` is the one hook through
which a padded rule has an inner jaxpr interpreted on padded data, by the
interpreter that runs the rule (its recursive interpretation stays its own).
The values a rule receives and binds are in the interpreter's
*representation* of padded data: the padded data itself under ``mask``; for
the rules of sub-programs under ``vmap`` over piles, the padded data of
every element with the batch in front (or, for a value the same for every
element, unbatched).  A rule of a sub-program never looks inside that
representation beyond what these hooks give it: ``padded_jaxpr`` (the inner
jaxpr interpreted), :meth:`PaddedEnv.carried` (a loop carry in the
representation of the inner jaxpr's results), :meth:`PaddedEnv.rule_frame`
(the user's rules of a custom-rule call) and :meth:`PaddedEnv.size`
(logical sizes, which have the representation's leading dimensions).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from plait_core import dtypes, ops
from plait_core.abstract import ShapedArray, get_aval
from plait_core.dims import Dim, SymbolicDim
from plait_core.jaxpr import ClosedJaxpr
from plait_core.primitive import Primitive
from plait_core.rebound_rules import RuleFrame

__all__ = ["PaddedEnv", "shrinks"]


def shrinks(d: Dim) -> bool:
    """Whether the size ``d`` decreases as a logical size grows (a negative
    coefficient: ``n - 1``), so that its value may be negative."""
    return type(d) is SymbolicDim and any(coeff < 0 for _, coeff in d.terms)


class PaddedEnv(ABC):
    """An environment of logical sizes (subclassed by each interpreter that
    computes on padded data).  Methods run with the trace the rules bind on
    current."""

    __slots__ = ()

    #: How messages name a padded size ("symbolic" under ``mask``, "ragged" for piles).
    noun: ClassVar[str] = "padded"

    @abstractmethod
    def is_padded(self, d: Dim) -> bool:
        """Whether the logical size of ``d`` may differ from its padded size."""

    @abstractmethod
    def padded_dim(self, d: Dim) -> int:
        """The padded size of ``d``."""

    @abstractmethod
    def value(self, d: Dim, dtype: Any = None) -> Any:
        """The polynomial ``d`` at the logical sizes, as a value (default int
        dtype, or ``dtype``); negative where the polynomial is."""

    def size(self, d: Dim, dtype: Any = None) -> Any:
        """The logical size of an axis of size ``d`` as a value (default int
        dtype, or ``dtype``): :meth:`value`, at least 0."""
        v = self.value(d, dtype)
        if shrinks(d):
            v = ops.maximum(v, ops.const(v, 0))
        return v

    def padded_shape(self, shape: Sequence[Dim]) -> tuple[int, ...]:
        """A logical shape evaluated at the padded sizes."""
        return tuple(d if type(d) is int else self.padded_dim(d) for d in shape)

    def valid_vector(self, n: int, d: Dim) -> Any:
        """A boolean vector of length ``n`` (``d``'s padded size): true below
        ``d``'s logical size.  Environments memoise it."""
        dt = dtypes.default_int_dtype()
        return ops.lt(ops.iota(dt, (n,), 0), self.size(d, dt))

    def valid_along(self, shape: Sequence[int], axis: int, d: Dim) -> Any:
        """A boolean array of ``shape``: true where the index along ``axis`` is
        below the logical size of ``d``."""
        return ops.broadcast_along(self.valid_vector(shape[axis], d), shape, (axis,))

    def valid(self, aval: ShapedArray, axes: Sequence[int] | None = None) -> Any:
        """True inside the logical part of a padded value of ``aval`` (over
        ``axes``, default all); ``None`` when no such axis is padded."""
        shape = self.padded_shape(aval.shape)
        out: Any = None
        for a in range(aval.ndim) if axes is None else axes:
            d = aval.shape[a]
            if self.is_padded(d):
                m = self.valid_along(shape, a, d)
                out = m if out is None else ops.logical_and(out, m)
        return out

    def fill(self, x: Any, aval: ShapedArray, axes: Sequence[int] | None, value: Any) -> Any:
        """``x`` (padded data of ``aval``) with its padding along ``axes``
        (default all) set to ``value`` (a scalar constant or a scalar value of
        ``aval``'s dtype); ``x`` itself when no such axis is padded."""
        valid = self.valid(aval, axes)
        if valid is None:
            return x
        xa = get_aval(x)
        return ops.select(valid, x, ops.full(xa.shape, value, xa.dtype, xa.weak_type))

    def fill_rows(self, x: Any, aval: ShapedArray, axes: Sequence[int], value: Any) -> Any:
        """:meth:`fill` of ``x``'s padding along ``axes`` only in the rows whose
        other padded axes are logical: what a reduction over ``axes`` reads
        into a logical result.  The rows of the padding keep their (finite)
        data, so a reduction gives them a finite result even where they have
        no logical entry along ``axes`` (a maximum's identity, ``-inf``, would
        make ``x - max(x)`` infinite there: NaN in a derivative taken outside)."""
        along = self.valid(aval, axes)
        if along is None:
            return x
        rest = self.valid(aval, [a for a in range(aval.ndim) if a not in axes])
        keep = along if rest is None else ops.logical_or(along, ops.logical_not(rest))
        xa = get_aval(x)
        return ops.select(keep, x, ops.full(xa.shape, value, xa.dtype, xa.weak_type))

    def sums_as_zero(self, x: Any, aval: ShapedArray, axes: Sequence[int]) -> bool:
        """Whether a sum or a contraction along ``axes`` may read ``x`` (padded
        data of ``aval``) as it is, without filling its padding along them with
        0: the padding is known to hold 0 there, in every position whose other
        padded axes are logical, wherever the logical entries summed with it are
        finite (where one is not, the sum is not finite either: NaN may then
        stand for an infinity), and finite elsewhere.  Stronger than nothing, so
        the default says no; an environment that tracks what padding holds
        (piles) answers from what it knows."""
        return False

    # -- what only the interpreter knows ---------------------------------------

    def unsupported(self, prim: Primitive, avals: Sequence[ShapedArray], why: str) -> Exception:
        """The error for an equation ``prim`` of operand types ``avals`` that
        padded data cannot compute: ``why`` continues a sentence whose subject
        is the primitive ("has a window along the ... axis")."""
        types = ", ".join(a.str_short() for a in avals)
        return NotImplementedError(f"{prim.name} {why} (operands {types})")

    def padded_jaxpr(self, closed: ClosedJaxpr, like: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[Any]]:
        """``closed`` (a jaxpr of logical types) interpreted on padded data by
        this env's interpreter: a const-free jaxpr over ``(*lead, *inputs)``
        returning its results' padded data, and the ``lead`` values to pass
        (hoisted constants, then the logical sizes it reads).  ``like`` are the
        types of the data that will be passed for ``closed``'s inputs (in the
        interpreter's representation)."""
        raise NotImplementedError(f"{type(self).__name__} does not interpret sub-programs")

    def carried(self, x: Any, aval: ShapedArray) -> Any:
        """``x`` (padded data of ``aval``) in the representation of the results
        of :meth:`padded_jaxpr`'s jaxprs, as a loop carry must be."""
        return x

    def rule_frame(self, body: ClosedJaxpr, lead: Sequence[Any], like: Sequence[ShapedArray]) -> RuleFrame[Any]:
        """The :class:`~plait_core.rebound_rules.RuleFrame` of a custom-rule call
        bound again around ``body`` (from :meth:`padded_jaxpr`) with ``lead``."""
        raise NotImplementedError(f"{type(self).__name__} does not re-bind custom-rule calls")
