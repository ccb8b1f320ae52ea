"""Forward mode: the JVP trace and its tracers.

A :class:`JVPTracer` carries a primal value and its tangent (a value of the
parent level, or a symbolic :class:`~plait_autodiff.tangents.Zero`).  The
:class:`JVPTrace` interprets a primitive by looking up its rule in
:data:`~plait_autodiff.registries.jvp_rules` and running it with the parent
trace current; when every tangent is zero it simply binds the primitive on the
parent.  Values that are not its own tracers are constants to it (zero
tangent), so nested differentiation never confuses the tangents of different
levels.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from plait_autodiff.jaxpr_util import eval_jaxpr
from plait_autodiff.registries import jvp_rules
from plait_autodiff.tangents import Zero, instantiate, is_float0, to_tangent_type
from plait_core import ClosedJaxpr, Trace, Tracer, dtypes, get_aval, set_current_trace, transformation
from plait_core.abstract import ShapedArray
from plait_core.config import config
from plait_core.custom_derivatives import closure_differentiation_exception
from plait_core.errors import ConcretizationTypeError, UnexpectedTracerError
from plait_core.primitive import Primitive
from plait_core.staging import trace_to_jaxpr
from plait_core.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "jvp_flat",
    "jvp_jaxpr",
    "unpack_output",
]


class JVPTracer(Tracer):
    """A value under forward-mode differentiation: ``primal`` and ``tangent``."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def to_concrete_value(self) -> Any:
        """The primal's concrete value (so Python control flow on primal values works)."""
        p = self.primal
        if isinstance(p, Tracer):
            return p.to_concrete_value()
        return p

    # A Python float or a NumPy array of a differentiated value would silently
    # drop its derivative (grad(lambda x: float(x) * x) would miss a term), so,
    # as in JAX, those conversions are errors; bool(), int() and indexing stay
    # allowed, since discrete values carry no derivative.
    def _no_derivative(self, what: str) -> None:
        if dtypes.is_inexact(self.aval.dtype):
            raise ConcretizationTypeError(
                f"{what} of a value being differentiated ({self.aval.str_short()}) would drop its derivative, "
                "so it is not allowed under jvp/grad: keep computing with plait.numpy, or wrap the value in "
                "plait.lax.stop_gradient first if its derivative should be zero"
            )

    def __float__(self) -> float:
        self._no_derivative("float()")
        return super().__float__()

    def __complex__(self) -> complex:
        self._no_derivative("complex()")
        return super().__complex__()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self._no_derivative("numpy.asarray()")
        return super().__array__(dtype, copy)


class JVPTrace(Trace):
    """Interprets primitives on (primal, tangent) pairs."""

    __slots__ = ()

    def describe(self) -> str:
        return "forward-mode differentiation (jvp)"

    def lift(self, primal: Any, tangent: Any) -> Any:
        """A tracer of this trace, or the primal itself when the tangent is zero."""
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)

    def unpack(self, x: Any, prim: Primitive | None = None) -> tuple[Any, Any]:
        """``(primal, tangent)`` of an argument (constants have zero tangents)."""
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer):
            self.check_foreign_tracer(x, prim)
        return x, None

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        primals: list[Any] = []
        tangents: list[Any] = []
        nonzero = False
        for x in args:
            p, t = self.unpack(x, prim)
            primals.append(p)
            tangents.append(t)
            if t is not None:
                nonzero = True
        parent = self.parent
        assert parent is not None
        with set_current_trace(parent):
            if not nonzero:
                return prim.bind(*primals, **params)
            tangents = [Zero.from_primal_value(p) if t is None else t for p, t in zip(primals, tangents)]
            rule = jvp_rules[prim]
            primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            _check_rule_outputs(prim, primal_out, tangent_out)
            return [self.lift(p, t) for p, t in zip(primal_out, tangent_out)]
        _check_rule_outputs(prim, [primal_out], [tangent_out])
        return self.lift(primal_out, tangent_out)

    def process_custom_derivative_call(self, fun: Any, args: tuple[Any, ...]) -> Any:
        """Outside ``jit`` (every primal concrete, as under ``grad`` on arrays)
        a ``custom_jvp`` rule, or a ``custom_vjp`` forward rule, runs in Python
        on the primal values, as in JAX, so ``if x > 0`` works in it; otherwise
        (and inside a differentiated ``checkpoint``, whose forward pass must stay
        recomputable) the call is staged (``NotImplemented``)."""
        if remat_depth():
            return NotImplemented
        leaves, tree = tree_flatten(args)
        pairs = [self.unpack(x) for x in leaves]
        primals = [p for p, _ in pairs]
        if any(isinstance(p, Tracer) and p.to_concrete_value() is None for p in primals):
            return NotImplemented
        tangents = [None if t is None or type(t) is Zero else t for _, t in pairs]
        primal_args = tuple(tree_unflatten(tree, primals))
        parent = self.parent
        assert parent is not None
        if all(t is None for t in tangents):
            # Nothing of this trace flows in through the arguments; the staged call
            # checks for what flows in through closures.
            return NotImplemented
        with set_current_trace(parent):
            try:
                ran = fun.jvp_on_values(primal_args, tangents)
            except UnexpectedTracerError as err:
                # Only a closure can bring this trace's values into the rules.
                kind = "custom_jvp" if hasattr(fun, "defjvp") else "custom_vjp"
                raise closure_differentiation_exception(kind, fun.fun, str(err)) from err
        if ran is None:
            return NotImplemented
        out_tree, outs, out_tangents = ran
        lifted = [self.lift(p, Zero.from_primal_value(p) if t is None else t) for p, t in zip(outs, out_tangents)]
        return tree_unflatten(out_tree, lifted)


def _check_rule_outputs(prim: Primitive, primals: Sequence[Any], tangents: Sequence[Any]) -> None:
    """Catch a rule returning tangents of the wrong type (a bug in a rule)."""
    if len(primals) != len(tangents):
        raise AssertionError(f"jvp rule of {prim.name}: {len(primals)} primal outputs but {len(tangents)} tangents")
    for k, (p, t) in enumerate(zip(primals, tangents)):
        expected = to_tangent_type(get_aval(p))
        got = t.aval if type(t) is Zero else get_aval(t)
        if got.dtype != expected.dtype or len(got.shape) != len(expected.shape):
            raise AssertionError(
                f"jvp rule of {prim.name}: output {k} has tangent type {got.str_short()} but its primal "
                f"{get_aval(p).str_short()} needs {expected.str_short()}"
            )


def unpack_output(trace: JVPTrace, x: Any) -> tuple[Any, Any]:
    """``(primal, tangent)`` of an output of a function run under ``trace``."""
    if type(x) is JVPTracer and x._trace is trace:
        return x.primal, x.tangent
    return x, Zero.from_primal_value(x)


def _zero_if_float0(t: Any) -> Any:
    if type(t) is Zero:
        return t
    aval = t.aval if isinstance(t, Tracer) else get_aval(t)
    return Zero(aval) if is_float0(aval) else t


def jvp_flat(
    fun: Callable[..., Sequence[Any]], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """Run a flat function under forward mode.  ``tangents`` may hold
    :class:`Zero`; returned tangents may too.  A ``float0`` tangent (of an
    integer or boolean input) given as a value is a zero, as in JAX: the
    function sees the primal itself there, and no rule ever meets it."""
    trace = JVPTrace()
    with transformation(trace):
        ins = [trace.lift(p, _zero_if_float0(t)) for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        pairs = [unpack_output(trace, o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


# ---------------------------------------------------------------------------
# Whether a checkpoint's body is being differentiated (custom_vjp's optimize_remat)


class _Remat(threading.local):
    def __init__(self) -> None:
        self.depth = 0


_remat = _Remat()


def remat_depth() -> int:
    """How many ``checkpoint`` bodies are being differentiated around this point."""
    return _remat.depth


@contextmanager
def differentiating_remat() -> Iterator[None]:
    """Mark the JVP of a ``checkpoint`` body (rules may then prefer
    recomputation-friendly forms)."""
    _remat.depth += 1
    try:
        yield
    finally:
        _remat.depth -= 1


# ---------------------------------------------------------------------------
# JVP of a jaxpr (for higher-order primitives)

_jvp_jaxpr_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, tuple[ClosedJaxpr, list[bool]]]] = (
    weakref.WeakKeyDictionary()
)


def jvp_jaxpr(
    closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate_outs: bool | Sequence[bool]
) -> tuple[ClosedJaxpr, list[bool]]:
    """The forward-mode version of ``closed``.

    The result takes ``(*primals, *tangents of the nonzero inputs)`` and
    returns ``(*primal outputs, *tangents of the nonzero outputs)``; the
    second result flags the nonzero outputs (those in ``instantiate_outs``
    always are).  Results are cached per jaxpr (the jaxpr must be const-free
    for its result to be cached)."""
    nz = tuple(bool(b) for b in nonzeros)
    n_out = len(closed.out_avals)
    inst = (bool(instantiate_outs),) * n_out if isinstance(instantiate_outs, bool) else tuple(instantiate_outs)
    key = (nz, inst, config.x64_enabled, remat_depth())
    per_jaxpr = _jvp_jaxpr_cache.get(closed)
    if per_jaxpr is not None and key in per_jaxpr:
        return per_jaxpr[key]
    in_avals = closed.in_avals
    tangent_avals = [to_tangent_type(a) for a, z in zip(in_avals, nz) if z]
    out_nz: list[bool] = []

    def fun(*args: Any) -> list[Any]:
        primals, given = list(args[: len(in_avals)]), iter(args[len(in_avals) :])
        tangents = [next(given) if z else Zero(to_tangent_type(a)) for a, z in zip(in_avals, nz)]
        outs, out_tangents = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), primals, tangents)
        kept = []
        for t, force in zip(out_tangents, inst):
            nonzero = force or (type(t) is not Zero and not is_float0(t.aval if type(t) is Zero else get_aval(t)))
            out_nz.append(nonzero)
            if nonzero:
                kept.append(instantiate(t))
        return [*outs, *kept]

    result = trace_to_jaxpr(fun, [*in_avals, *tangent_avals])
    out = (result, out_nz)
    if not any(isinstance(c, Tracer) for c in result.consts) and not any(isinstance(c, Tracer) for c in closed.consts):
        _jvp_jaxpr_cache.setdefault(closed, {})[key] = out
    return out
