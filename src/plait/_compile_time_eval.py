"""The trace of ``ensure_compile_time_eval`` blocks, with JAX 0.10.2's meaning.

Inside ``with plait.ensure_compile_time_eval():`` an operation on concrete
values runs at once, even under ``jit`` (its result is concrete, so Python
can branch on it), and an operation that takes a traced value is staged into
the transformation the value belongs to, exactly as outside the block (JAX
binds it on the operands' trace; equinox and diffrax compute error flags on
traced values inside such blocks).  :class:`CompileTimeEvalTrace` does that:
it is an eager trace whose primitives with tracer operands are bound on the
innermost of those tracers' traces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core.primitive import Primitive
from plait_core.trace import EvalTrace, Trace, Tracer, set_current_trace

__all__ = ["CompileTimeEvalTrace"]


def _innermost(traces: Sequence[Trace]) -> Trace:
    """The trace of ``traces`` nested inside all the others (each is an
    enclosing transformation of the one found, or the same)."""
    best = traces[0]
    for t in traces[1:]:
        p = t.parent
        while p is not None and p is not best:
            p = p.parent
        if p is best:
            best = t
    return best


class CompileTimeEvalTrace(EvalTrace):
    """Evaluate concrete operations now; stage those on tracers where the tracers live."""

    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        traces = [a._trace for a in args if isinstance(a, Tracer)]
        if traces:
            owner = _innermost(traces)
            if owner.alive:
                with set_current_trace(owner):
                    return prim.bind(*args, **params)
        return super().process_primitive(prim, args, params)

    def describe(self) -> str:
        return "ensure_compile_time_eval"
