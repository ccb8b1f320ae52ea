"""``jax.extend.core``: defining primitives, and the jaxpr types, the JAX way.

:class:`Primitive` is the class of primitives that libraries define (see
``docs/extending.md``): a primitive of plait's language whose rules are given
through :mod:`plait.interpreters`.  The jaxpr classes are plait-core's own
(``ClosedJaxpr``, ``Jaxpr``, ``JaxprEqn``, ``Var``, ``Literal``), and
:mod:`.primitives` names every primitive of plait's catalog as ``<name>_p``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import plait.interpreters  # registers the rules of last resort every new Primitive gets
from plait.core import DropVar
from plait.extend._primitive import Primitive, innermost_trace
from plait.extend.core import primitives as primitives
from plait_batching.trace import BatchTrace
from plait_core import (
    ClosedJaxpr,
    InconclusiveDimensionOperation,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    ShapedArray,
    Trace,
    Var,
    check_jaxpr,
    concrete_or_error,
    current_trace,
    dtypes,
    get_aval,
    jaxpr_as_fun,
)
from plait_core import set_current_trace as _set_current_trace
from plait_core.axes import bound_axis_names
from plait_core.jaxpr import sub_jaxprs
from plait_core.staging import StagingTrace
from plait_core.trace import Tracer

__all__ = [
    "ClosedJaxpr",
    "DropVar",
    "Effect",
    "Effects",
    "InconclusiveDimensionOperation",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTypeError",
    "Literal",
    "Primitive",
    "TraceTag",
    "Var",
    "check_jaxpr",
    "concrete_or_error",
    "find_top_trace",
    "gensym",
    "get_opaque_trace_state",
    "jaxpr_as_fun",
    "jaxprs_in_params",
    "mapped_aval",
    "new_jaxpr_eqn",
    "no_effects",
    "primal_dtype_to_tangent_dtype",
    "primitives",
    "set_current_trace",
    "subjaxprs",
    "take_current_trace",
    "unmapped_aval",
    "unsafe_am_i_under_a_jit_DO_NOT_USE",
    "unsafe_am_i_under_a_vmap_DO_NOT_USE",
    "unsafe_get_axis_names_DO_NOT_USE",
    "valid_jaxtype",
]


class Effect:
    """The base class of effects (what ``def_effectful_abstract_eval`` rules return
    in their set of effects).  plait has no effect types: any effect keeps an
    equation alive through dead-code elimination."""


#: A set of effects.
Effects = frozenset
#: The empty set of effects.
no_effects: frozenset[Effect] = frozenset()


class TraceTag:
    """An identity token (JAX tags each transformation's traces with one)."""

    __slots__ = ("__weakref__",)


class _OpaqueTraceState:
    """The current trace, compared by identity (``get_opaque_trace_state``)."""

    __slots__ = ("_trace",)

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _OpaqueTraceState) and other._trace is self._trace

    def __hash__(self) -> int:
        return id(self._trace)

    def __repr__(self) -> str:
        return f"<trace state: {self._trace.describe()}>"


def get_opaque_trace_state(convention: str | None = None) -> _OpaqueTraceState:
    """An object equal to another made under the same current trace (the same
    transformation, or eager evaluation in this thread) and to no other.
    ``convention`` (the caller's name in JAX) changes nothing."""
    return _OpaqueTraceState(current_trace())


class _TakenTrace(Trace):
    __slots__ = ()

    def process_primitive(self, prim: Any, args: Any, params: Any) -> Any:
        raise RuntimeError(f"{prim.name} was bound while the current trace was taken (take_current_trace)")

    def describe(self) -> str:
        return "no trace (taken by take_current_trace)"


@contextmanager
def take_current_trace() -> Iterator[Trace]:
    """Yield the current trace; inside the block no trace is current, so a
    primitive bound there is a ``RuntimeError`` until a trace is set again."""
    trace = current_trace()
    with _set_current_trace(_TakenTrace(trace)):
        yield trace


@contextmanager
def set_current_trace(trace: Trace, check_leaks: bool = False) -> Iterator[Trace]:
    """Make ``trace`` current inside the block (``check_leaks`` changes nothing:
    plait reports leaked tracers when they are used)."""
    with _set_current_trace(trace):
        yield trace


def mapped_aval(size: Any, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """``aval`` without its axis ``axis`` (of size ``size``); ``None``: ``aval``."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"mapped_aval: axis {axis} out of range for {aval.str_short()}")
    axis %= len(shape)
    if shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size {shape[axis]}, not {size}")
    del shape[axis]
    return aval.update(shape=tuple(shape))


def unmapped_aval(
    size: Any, axis: int | None, aval: ShapedArray, explicit_mesh_axis: Any = None
) -> ShapedArray:
    """``aval`` with a new axis of size ``size`` at ``axis``; ``None``: ``aval``."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    if not -len(shape) - 1 <= axis <= len(shape):
        raise ValueError(f"unmapped_aval: axis {axis} out of range for {aval.str_short()}")
    shape.insert(axis % (len(shape) + 1), size)
    return aval.update(shape=tuple(shape))


def primal_dtype_to_tangent_dtype(dtype: Any) -> Any:
    """The dtype of tangents of values of ``dtype`` (``float0`` for integers and booleans)."""
    d = dtypes.canonicalize_dtype(dtype)
    return d if dtypes.is_inexact(d) else dtypes.float0


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` is a value plait's operations take (an array, a scalar, a tracer)."""
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def new_jaxpr_eqn(
    invars: list[Any], outvars: list[Var], primitive: Any, params: dict[str, Any], effects: Any = no_effects,
    source_info: Any = None, ctx: Any = None,
) -> JaxprEqn:  # fmt: skip
    """An equation ``outvars = primitive[params] invars`` (effects, source
    information and context are not recorded by plait)."""
    return JaxprEqn(primitive, list(invars), list(outvars), dict(params))


def jaxprs_in_params(params: dict[str, Any]) -> Iterator[Jaxpr]:
    """The jaxprs held in equation params (in closed jaxprs, tuples and lists too)."""
    stack = list(params.values())
    while stack:
        p = stack.pop(0)
        if isinstance(p, ClosedJaxpr):
            yield p.jaxpr
        elif isinstance(p, Jaxpr):
            yield p
        elif isinstance(p, (tuple, list)):
            stack[:0] = list(p)


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs held in the params of ``jaxpr``'s equations (one level down)."""
    for eqn in jaxpr.eqns:
        yield from sub_jaxprs(eqn)


def gensym(suffix: str = "") -> Callable[[ShapedArray], Var]:
    """A maker of fresh jaxpr variables: ``gensym()(aval)`` is a new ``Var``."""
    return Var


def find_top_trace(xs: Any) -> Trace:
    """The innermost trace among those of the tracers in ``xs`` (the current
    trace when there is none: plait's values outside tracers are constants to
    every trace)."""
    top = innermost_trace(list(xs))
    return current_trace() if top is None else top


def _enclosing(kind: type) -> bool:
    t: Trace | None = current_trace()
    while t is not None:
        if isinstance(t, kind):
            return True
        t = t.parent
    return False


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    """Whether the code runs while being staged to a program (``jit``, ``make_jaxpr``, ...)."""
    return _enclosing(StagingTrace)


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    """Whether the code runs under ``vmap``."""
    return _enclosing(BatchTrace)


def unsafe_get_axis_names_DO_NOT_USE() -> tuple[Any, ...]:
    """The names of the mapped axes bound around the code, outermost first."""
    return bound_axis_names()
