"""The protocol of an environment of logical sizes (see :mod:`plait_core.padded`).

A padded value of logical type ``aval`` (whose shape may have symbolic,
*padded* dimensions) has data of ``aval``'s shape evaluated at the padded
sizes, with the logical part in front along every padded axis and the rest
unspecified.  An environment answers, for a dimension ``d``:

* :meth:`PaddedEnv.is_padded`: whether its logical size may be smaller than
  its padded size;
* :meth:`PaddedEnv.padded_dim`: its padded size (a static ``int``);
* :meth:`PaddedEnv.size`: its logical size as a value of the current trace:
  a scalar under ``mask``; under ``vmap`` over piles a batched scalar, one
  per element;

and builds on those the validity masks (:meth:`PaddedEnv.valid_along`,
:meth:`PaddedEnv.valid`) and the fill of the padding
(:meth:`PaddedEnv.fill`) that the padded rules use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from plait_core import dtypes, ops
from plait_core.abstract import ShapedArray, get_aval
from plait_core.dims import Dim

__all__ = ["PaddedEnv"]


class PaddedEnv(ABC):
    """An environment of logical sizes (subclassed by each interpreter that
    computes on padded data).  Methods run with the trace the rules bind on
    current."""

    __slots__ = ()

    @abstractmethod
    def is_padded(self, d: Dim) -> bool:
        """Whether the logical size of ``d`` may differ from its padded size."""

    @abstractmethod
    def padded_dim(self, d: Dim) -> int:
        """The padded size of ``d``."""

    @abstractmethod
    def size(self, d: Dim, dtype: Any = None) -> Any:
        """The logical size of ``d`` as a value (default int dtype, or ``dtype``)."""

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
