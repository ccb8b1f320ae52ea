"""What masking knows of the sizes while it runs.

Every named size has a *padded* value, a Python ``int`` read off the padded
inputs, and a *logical* value, an integer scalar given by the user in
``logical_env`` (concrete, traced by ``jit`` or batched by ``vmap``).  A
masked value's abstract value has the logical, symbolic shape; its data has
that shape evaluated at the padded sizes, with the logical part in front
along every axis.

:class:`MaskEnv` turns dimensions into padded ints and logical values, and
makes the masks (``iota < n``) the rules use to fill padding: it is the
:class:`~plait_core.padded.PaddedEnv` of ``mask``, whose logical sizes are
scalars.  It caches what it builds, so a rule that needs the mask of ``n``
twice stages it once.  It interprets the sub-programs of core's padded rules
by masking them (:func:`~plait_masking.trace.mask_jaxpr`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from plait_core import ClosedJaxpr, Primitive, dtypes, ops
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, SymbolicDim, UnboundDimensionError
from plait_core.padded import PaddedEnv
from plait_core.padded.env import shrinks
from plait_core.primitives import elementwise as ew

if TYPE_CHECKING:
    from plait_masking.rules.custom_calls import MaskFrame

__all__ = ["MaskEnv", "is_ragged"]


def is_ragged(d: Dim) -> bool:
    """Whether a dimension's logical size may differ from its padded size
    (it mentions a named size)."""
    return isinstance(d, SymbolicDim) and not d.is_constant


class MaskEnv(PaddedEnv):
    """Padded sizes (ints) and logical sizes (integer scalars) of the named sizes."""

    __slots__ = ("_sizes", "_valid", "logical", "padded")

    noun = "symbolic"

    def __init__(self, padded: Mapping[str, int], logical: Mapping[str, Any]) -> None:
        self.padded = dict(padded)
        self.logical = dict(logical)
        self._sizes: dict[Any, Any] = {}
        self._valid: dict[tuple[int, Dim], Any] = {}

    @property
    def names(self) -> list[str]:
        """The named sizes, sorted (the order sub-jaxprs receive their values in)."""
        return sorted(self.logical)

    def logical_values(self) -> list[Any]:
        """The logical values of :attr:`names`, in that order."""
        return [self.logical[n] for n in self.names]

    def rebind(self, values: Sequence[Any]) -> MaskEnv:
        """The same padded sizes with new logical values for :attr:`names`
        (used inside a staged sub-jaxpr, where they are its inputs)."""
        return MaskEnv(self.padded, dict(zip(self.names, values)))

    # -- what core's padded rules ask of the interpreter ----------------------

    def unsupported(self, prim: Primitive, avals: Sequence[ShapedArray], why: str) -> Exception:
        types = ", ".join(a.str_short() for a in avals)
        return NotImplementedError(f"mask: {prim.name} {why} (operands {types})")

    def padded_jaxpr(self, closed: ClosedJaxpr, like: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[Any]]:
        from plait_masking.trace import mask_jaxpr  # the interpreter, which imports this module

        return mask_jaxpr(self, closed)

    def rule_frame(self, body: ClosedJaxpr, lead: Sequence[Any], like: Sequence[ShapedArray]) -> MaskFrame:
        from plait_masking.rules.custom_calls import MaskFrame

        return MaskFrame(self, body.in_avals[: len(lead)])

    # -- padded sizes ---------------------------------------------------------

    def is_padded(self, d: Dim) -> bool:
        return is_ragged(d)

    def padded_dim(self, d: Dim) -> int:
        """The padded size of a dimension."""
        if type(d) is int:
            return d
        if isinstance(d, SymbolicDim):
            try:
                value = d.evaluate(self.padded)
            except UnboundDimensionError as e:
                raise ValueError(
                    f"mask: the dimension {d} uses a size that is not named in in_shapes ({e})"
                ) from None
            return int(value)
        return int(d)

    def padded_aval(self, aval: ShapedArray) -> ShapedArray:
        """The abstract value of the padded data of a masked value of ``aval``."""
        return ShapedArray(self.padded_shape(aval.shape), aval.dtype, aval.weak_type)

    # -- logical sizes --------------------------------------------------------

    def value(self, d: Dim, dtype: Any = None) -> Any:
        """The polynomial ``d`` at the logical sizes: a Python ``int`` for a
        constant dimension, else an integer scalar (default int dtype, or
        ``dtype``) computed from the logical sizes with ``add`` and ``mul``."""
        if not is_ragged(d):
            value: Any = int(d)
            return value if dtype is None else np.asarray(value, dtype)
        value = self._sizes.get(d)
        if value is None:
            value = self._sizes[d] = self._evaluate(d)  # type: ignore[arg-type]
        return value if dtype is None else ops.as_dtype(value, np.dtype(dtype))

    def size(self, d: Dim, dtype: Any = None) -> Any:
        """The logical size of an axis of size ``d``: :meth:`value`, at least 0
        (memoised)."""
        if not shrinks(d):
            return self.value(d, dtype)
        key = ("size", d)
        value = self._sizes.get(key)
        if value is None:
            value = self._sizes[key] = super().size(d)
        return value if dtype is None else ops.as_dtype(value, np.dtype(dtype))

    def _evaluate(self, d: SymbolicDim) -> Any:
        dt = dtypes.default_int_dtype()
        total: Any = None
        for mono, coeff in d.terms:
            term: Any = None
            for name, power in mono:
                try:
                    base = self.logical[name]
                except KeyError:
                    raise ValueError(
                        f"mask: the dimension {d} uses the size {name!r}, which has no logical value"
                    ) from None
                for _ in range(power):
                    term = base if term is None else ew.mul_p.bind(term, base)
            if term is None:
                term = np.asarray(coeff, dt)
            elif coeff != 1:
                term = ew.mul_p.bind(term, np.asarray(coeff, dt))
            total = term if total is None else ew.add_p.bind(total, term)
        return np.asarray(0, dt) if total is None else total

    # -- validity masks -------------------------------------------------------

    def valid_vector(self, n: int, d: Dim) -> Any:
        """``iota(n) < size(d)``, staged once per ``(n, d)``."""
        key = (n, d)
        vec = self._valid.get(key)
        if vec is None:
            vec = self._valid[key] = super().valid_vector(n, d)
        return vec
