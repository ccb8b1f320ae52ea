"""``jax.interpreters.partial_eval``: partial evaluation, as libraries call it.

:class:`PartialVal` is JAX's pair ``(aval, const)``: ``known(value)`` is
``(None, value)``, ``unknown(aval)`` is ``(aval, None)`` (libraries unpack it
as a tuple).  :func:`trace_to_jaxpr_nounits` runs a
:class:`~plait.extend.linear_util.WrappedFun` (or a plain function) on
partially known inputs with plait-core's partial evaluation
(``plait_core.trace_to_jaxpr_partial``): what depends only on known inputs is
computed now, the rest is staged.  ``dce_jaxpr`` is core's dead-code
elimination.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.extend.linear_util import WrappedFun
from plait_core import Jaxpr, ShapedArray, dce_jaxpr
from plait_core.partial_eval import PartialVal as CorePartialVal
from plait_core.partial_eval import trace_to_jaxpr_partial
from plait_core.staging import StagingTracer

__all__ = ["DynamicJaxprTracer", "JaxprTracer", "PartialVal", "dce_jaxpr", "trace_to_jaxpr_nounits"]

#: The tracers of a staged program (plait's staging and partial evaluation share one tracer type).
DynamicJaxprTracer = StagingTracer
JaxprTracer = StagingTracer


class PartialVal(tuple[Any, Any]):
    """``(aval, const)``: a known value (``aval`` is ``None``) or an unknown one of type ``aval``."""

    __slots__ = ()

    def __new__(cls, xs: tuple[Any, Any]) -> PartialVal:
        aval, const = xs
        if (aval is None) == (const is None) and const is not None:
            raise ValueError("a PartialVal is known (aval None) or unknown (const None), not both")
        return super().__new__(cls, (aval, const))

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        """A value known now."""
        return cls((None, const))

    @classmethod
    def unknown(cls, aval: ShapedArray) -> PartialVal:
        """A value known later, of abstract value ``aval``."""
        if aval is None:
            raise TypeError("PartialVal.unknown takes an abstract value, got None")
        return cls((aval, None))

    def is_known(self) -> bool:
        """Whether the value is known."""
        return self[0] is None

    def get_known(self) -> Any:
        """The known value, or ``None``."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> Any:
        """The abstract value of an unknown value (of a known one: its value's)."""
        return self[0]

    def __repr__(self) -> str:
        return f"PartialVal.known({self[1]!r})" if self[0] is None else f"PartialVal.unknown({self[0]!r})"


def trace_to_jaxpr_nounits(
    fun: WrappedFun | Callable[..., Sequence[Any]],
    pvals: Sequence[PartialVal],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Run the flat function ``fun`` on the partially known inputs ``pvals``.
    Returns the jaxpr of the unknown part (its invars are the unknown inputs,
    its constvars the values it needs from the known part), one
    :class:`PartialVal` per output (known outputs with their values), and the
    values of those constants.  ``instantiate`` makes outputs unknown."""
    call = fun.call_wrapped if isinstance(fun, WrappedFun) else fun
    core_pvals = []
    for i, pv in enumerate(pvals):
        if not (isinstance(pv, tuple) and len(pv) == 2):
            raise TypeError(f"trace_to_jaxpr_nounits: input {i} is not a PartialVal (aval, const): {pv!r}")
        aval, const = pv
        core_pvals.append(CorePartialVal.known(const) if aval is None else CorePartialVal.unknown(aval))
    closed, outs = trace_to_jaxpr_partial(lambda *xs: list(call(*xs)), core_pvals, instantiate)
    out_pvals = [PartialVal.known(o.value) if o.aval is None else PartialVal.unknown(o.aval) for o in outs]
    return closed.jaxpr, out_pvals, list(closed.consts)
