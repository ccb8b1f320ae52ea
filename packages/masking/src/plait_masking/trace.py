"""The masking interpreter: tracers with a logical shape and padded data.

A :class:`MaskTracer` stands for an array of a *logical*, symbolic shape
(``(n, 3)``): its ``aval`` says so, so user code reading ``x.shape[0]`` gets
the polynomial ``n``.  Its ``val`` is the *padded* data, a value of the
parent trace whose shape is the logical shape evaluated at the padded sizes;
the logical part sits in front along every axis and the rest is unspecified.

Values whose shape is concrete are not wrapped: they are the same padded or
not, so they are plain values of the parent trace (constants to this one).

:meth:`MaskTrace.process_primitive` computes the logical result type with
the primitive's abstract evaluation and the padded result with the
primitive's masking rule, run with the parent trace current.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_core import ClosedJaxpr, Primitive, ShapedArray, Trace, Tracer, get_aval, set_current_trace
from plait_core.dims import SymbolicDim
from plait_core.jaxpr import eval_jaxpr
from plait_core.primitives.control_flow import convert_constvars
from plait_core.staging import trace_to_jaxpr
from plait_core.trace import transformation
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules

__all__ = ["MaskTrace", "MaskTracer", "eval_masked", "mask_jaxpr", "stage_masked"]

#: Families whose primitives always go through their rule (their params hold jaxprs).
_HIGHER_ORDER = frozenset({"control_flow", "call"})


def has_symbolic(shape: Sequence[Any]) -> bool:
    """Whether a shape has a symbolic dimension."""
    return any(type(d) is SymbolicDim for d in shape)


def _mentions_symbolic(value: Any) -> bool:
    if type(value) is SymbolicDim:
        return True
    if isinstance(value, tuple):
        return any(_mentions_symbolic(v) for v in value)
    return False


class MaskTracer(Tracer):
    """A masked value: padded data ``val`` standing for a value of the logical ``aval``."""

    __slots__ = ("_aval", "val")

    def __init__(self, trace: MaskTrace, val: Any, aval: ShapedArray) -> None:
        self._trace = trace
        self.val = val
        self._aval = aval

    @property
    def aval(self) -> ShapedArray:
        """The logical abstract value (symbolic shape)."""
        return self._aval


class MaskTrace(Trace):
    """Interprets primitives on masked values; one per ``mask`` call and per
    masked sub-jaxpr."""

    __slots__ = ("env",)

    def __init__(self, env: MaskEnv, parent: Trace | None = None) -> None:
        super().__init__(parent)
        self.env = env

    def describe(self) -> str:
        sizes = ", ".join(f"{k}<={v}" for k, v in sorted(self.env.padded.items()))
        return f"mask over the sizes {sizes}" if sizes else "mask"

    def wrap(self, val: Any, aval: ShapedArray) -> Any:
        """A value of this trace: a tracer when ``aval``'s shape is symbolic."""
        return MaskTracer(self, val, aval) if has_symbolic(aval.shape) else val

    def unwrap(self, x: Any) -> Any:
        """The padded data of a value of this trace."""
        if type(x) is MaskTracer and x._trace is self:
            return x.val
        if isinstance(x, Tracer):
            self.check_foreign_tracer(x)
        return x

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        vals: list[Any] = []
        avals: list[ShapedArray] = []
        masked = False
        for x in args:
            if type(x) is MaskTracer and x._trace is self:
                vals.append(x.val)
                avals.append(x._aval)
                masked = True
            else:
                if isinstance(x, Tracer):
                    self.check_foreign_tracer(x, prim)
                vals.append(x)
                avals.append(get_aval(x, f"an argument of {prim.name}"))
        parent = self.parent
        assert parent is not None
        if not masked and prim.family not in _HIGHER_ORDER and not _mentions_symbolic(tuple(params.values())):
            with set_current_trace(parent):
                return prim.bind(*vals, **params)
        out_avals = prim.abstract_eval(*avals, **params)
        rule = masking_rules[prim]
        with set_current_trace(parent):
            out = rule(self.env, vals, avals, **params)
        if prim.multiple_results:
            return [self._result(prim, v, a) for v, a in zip(out, out_avals)]
        return self._result(prim, out, out_avals)

    def _result(self, prim: Primitive, val: Any, aval: ShapedArray) -> Any:
        got = get_aval(val)
        expected = self.env.padded_shape(aval.shape)
        if tuple(got.shape) != expected or got.dtype != aval.dtype:
            raise AssertionError(
                f"plait_masking: the masking rule of {prim.name} made padded data {got.str_short()} for the "
                f"logical result {aval.str_short()}, but {ShapedArray(expected, aval.dtype).str_short()} "
                "was due (a bug in plait_masking)"
            )
        return self.wrap(val, aval)


def eval_masked(env: MaskEnv, closed: ClosedJaxpr, padded_args: Sequence[Any]) -> list[Any]:
    """Evaluate the logical jaxpr ``closed`` on padded data: the padded data of
    its results (its input types are the logical types of the arguments)."""
    trace = MaskTrace(env)
    with transformation(trace):
        ins = [trace.wrap(v, a) for v, a in zip(padded_args, closed.in_avals)]
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
        return [trace.unwrap(o) for o in outs]


def stage_masked(
    env: MaskEnv, fun: Callable[..., list[Any]], in_avals: Sequence[ShapedArray]
) -> tuple[ClosedJaxpr, list[Any]]:
    """Stage ``fun(sub_env, *padded)`` into a const-free jaxpr over
    ``(*logical sizes, *padded)``; returns it and the values to pass in front of
    the padded operands (its hoisted constants, then ``env``'s logical sizes).

    ``sub_env`` is ``env`` with the logical sizes bound to the jaxpr's inputs,
    so values of the enclosing traces never leak into the staged body."""
    size_avals = [get_aval(v).strip_weak_type() for v in env.logical_values()]
    k = len(size_avals)

    def flat(*args: Any) -> list[Any]:
        return fun(env.rebind(args[:k]), *args[k:])

    closed = trace_to_jaxpr(flat, size_avals + [env.padded_aval(a) for a in in_avals])
    body, consts = convert_constvars(closed)
    return body, consts + env.logical_values()


def mask_jaxpr(env: MaskEnv, closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """The padded counterpart of a logical jaxpr: a const-free jaxpr over
    ``(*leading, *padded inputs)`` returning the padded outputs, and the
    ``leading`` values to pass (see :func:`stage_masked`)."""

    def fun(sub: MaskEnv, *padded: Any) -> list[Any]:
        return eval_masked(sub, closed, padded)

    return stage_masked(env, fun, closed.in_avals)
