"""The primitive a library defines the JAX way, as a primitive of plait's language.

:class:`Primitive` is a :class:`plait_core.Primitive` of the family
``"extension"``: jaxprs hold it, every trace interprets it, and each
interpreter finds its rules in its own registry.  What JAX spells as methods
of the primitive is kept here:

* ``def_impl(f)``: what ``bind`` runs outside every transformation, called
  with the operands as given (as JAX's evaluation does), its result returned
  as ``f`` returns it;
* ``def_abstract_eval(f)`` / ``def_effectful_abstract_eval(f)``: the result
  types, given the operands' ``ShapedArray``\\ s and the params.  ``f`` may
  return anything with ``shape`` and ``dtype`` (a ``ShapedArray``, a
  ``ShapeDtypeStruct``), a sequence of them for ``multiple_results``;
* ``lowerings``: per platform (``None`` for all), what
  ``plait.interpreters.mlir.register_lowering`` registered.

The rules of the interpreters (``plait.interpreters.ad``, ``batching``,
``mlir``) are registered by those modules; so that a primitive made before
any rule is registered still has a rule of last resort everywhere (one that
says which registration is missing, or follows the ``lower_fun`` function
for ``mask`` and piles), each interpreter adapter adds a hook to
:data:`on_new_primitive`, run for every primitive made.

Extension primitives are not in core's catalog (JAX lets two primitives share
a name, and the catalog's coverage tests are about core's own primitives).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from plait_core import Primitive as CorePrimitive
from plait_core import ShapedArray, Trace, current_trace, dtypes, set_current_trace
from plait_core.dce import effect_rules
from plait_core.jaxpr import JaxprEqn
from plait_core.trace import EvalTrace, Tracer, check_eager_operands

__all__ = ["FAMILY", "Primitive", "as_shaped", "innermost_trace", "is_extension", "on_new_primitive"]

#: The family of every primitive made with :class:`Primitive`.
FAMILY = "extension"

#: Functions called with each new :class:`Primitive` (the interpreter adapters'
#: rules of last resort).
on_new_primitive: list[Callable[[Primitive], None]] = []


class _PrimitiveType(type):
    """The class of :class:`Primitive`: as JAX's ``jax.extend.core.Primitive`` is
    the class of every primitive, ``isinstance(lax.add_p, Primitive)`` is True
    for plait's own primitives too (equinox type-checks primitives so).  Whether
    a primitive was made the JAX way is :func:`is_extension`."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is Primitive:
            return isinstance(obj, CorePrimitive)
        return type.__instancecheck__(cls, obj)


def is_extension(prim: Any) -> TypeGuard[Primitive]:
    """Whether ``prim`` was made with :class:`Primitive` (or a subclass), i.e. is
    a library's primitive rather than one of plait's own."""
    return issubclass(type(prim), Primitive)


class Primitive(CorePrimitive, metaclass=_PrimitiveType):
    """A primitive defined the JAX way (``jax.extend.core.Primitive``).

    ``Primitive(name)`` makes it; set ``multiple_results = True`` for one whose
    ``bind`` returns a list; give it ``def_impl`` and ``def_abstract_eval``;
    register its transformation rules with ``plait.interpreters.ad``,
    ``batching`` and ``mlir``.  As in JAX, every primitive (plait's own too)
    is an instance of this class for ``isinstance``."""

    #: JAX's flags of special primitives; an extension primitive is none of them.
    call_primitive = False
    map_primitive = False
    ref_primitive = False
    ref_allocating = False
    skip_canonicalization = False

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"Primitive: the name must be a string, got {type(name).__name__}")
        # Not CorePrimitive.__init__: that one enters core's catalog.
        self.name = name
        self.family = FAMILY
        self.multiple_results = False
        self.fold_literals = False
        self.identity = None
        self.impl = _missing("implementation", "def_impl", name)
        self.abstract_eval = _missing("abstract evaluation rule", "def_abstract_eval", name)
        #: What ``def_abstract_eval`` was given (``None`` before).
        self.user_abstract_eval: Callable[..., Any] | None = None
        #: Whether that rule also returns effects (``def_effectful_abstract_eval``).
        self.effectful = False
        #: Per platform (``None``: every platform), the lowering registered.
        self.lowerings: dict[str | None, Any] = {}
        for hook in on_new_primitive:
            hook(self)

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive to ``args`` on the current trace; outside every
        transformation, run the function given to :meth:`def_impl`.

        As in JAX, an operand traced by a transformation still running while
        evaluation is eager (inside ``ensure_compile_time_eval`` under ``jit``:
        equinox's ``error_if`` does this) makes the primitive apply on that
        transformation's trace (the innermost one among the operands')."""
        trace = current_trace()
        if type(trace) is EvalTrace:
            owner = innermost_trace(args, alive_only=True)
            if owner is None:
                check_eager_operands(self, args)  # a leaked tracer is an error
                return self.impl(*args, **params)
            with set_current_trace(owner):
                return owner.process_primitive(self, args, params)
        return trace.process_primitive(self, args, params)

    def bind_with_trace(self, trace: Trace, args: Sequence[Any], *rest: Any) -> Any:
        """Apply the primitive to ``args`` on ``trace`` (JAX's ``(trace, args,
        avals, params)`` or ``(trace, args, params)``: the params come last)."""
        if len(rest) not in (1, 2) or not isinstance(rest[-1], dict):
            raise TypeError(
                f"{self.name}.bind_with_trace(trace, args, [avals,] params): the params dict comes last"
            )
        with set_current_trace(trace):
            return self.bind(*args, **rest[-1])

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """Set what ``bind`` runs eagerly (decorator); it receives the operands
        and the params."""
        _check_callable(self, impl, "def_impl")
        self.impl = impl
        return impl

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the abstract evaluation rule (decorator): ``rule(*avals, **params)``
        returns the result's type (anything with ``shape`` and ``dtype``), a
        sequence of them for a ``multiple_results`` primitive."""
        _check_callable(self, rule, "def_abstract_eval")
        self.user_abstract_eval = rule
        self.effectful = False
        effect_rules.pop(self, None)
        self.abstract_eval = self._abstract_eval
        return rule

    def def_effectful_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """As :meth:`def_abstract_eval` for a rule returning ``(types, effects)``.
        An equation with effects is kept by dead-code elimination even when none
        of its results is used (plait has no effect types: every non-empty
        ``effects`` counts as one effect)."""
        _check_callable(self, rule, "def_effectful_abstract_eval")
        self.user_abstract_eval = rule
        self.effectful = True
        effect_rules[self] = self._has_effects
        self.abstract_eval = self._abstract_eval
        return rule

    def _call_rule(self, avals: Sequence[Any], params: dict[str, Any]) -> tuple[Any, Any]:
        rule = self.user_abstract_eval
        assert rule is not None
        out = rule(*avals, **params)
        if not self.effectful:
            return out, ()
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(
                f"the effectful abstract evaluation rule of {self.name} must return (types, effects), "
                f"got {type(out).__name__}"
            )
        return out[0], out[1]

    def _abstract_eval(self, *avals: Any, **params: Any) -> Any:
        out, _ = self._call_rule(avals, params)
        if not self.multiple_results:
            return as_shaped(out, f"the abstract evaluation rule of {self.name}")
        if not isinstance(out, (list, tuple)):
            raise TypeError(
                f"the abstract evaluation rule of {self.name} must return a sequence of types, since "
                f"{self.name}.multiple_results is True; got {type(out).__name__}"
            )
        return [
            as_shaped(o, f"result {i} of the abstract evaluation rule of {self.name}")
            for i, o in enumerate(out)
        ]

    def _has_effects(self, eqn: JaxprEqn) -> bool:
        _, effects = self._call_rule([a.aval for a in eqn.invars], eqn.params)
        return bool(effects)

    def __repr__(self) -> str:
        return self.name


def innermost_trace(args: Sequence[Any], alive_only: bool = False) -> Trace | None:
    """Of the traces of the tracers among ``args`` (those still running, with
    ``alive_only``), the innermost: the one with the most enclosing traces;
    ``None`` when there is none."""
    best: Trace | None = None
    best_depth = -1
    for x in args:
        if isinstance(x, Tracer) and (x._trace.alive or not alive_only):
            depth, t = 0, x._trace.parent
            while t is not None:
                depth, t = depth + 1, t.parent
            if depth > best_depth:
                best, best_depth = x._trace, depth
    return best


def as_shaped(x: Any, what: str) -> ShapedArray:
    """``x`` (a ``ShapedArray``, or anything with ``shape`` and ``dtype``) as a
    ``ShapedArray`` of a canonical dtype; a ``TypeError`` naming ``what`` else."""
    if type(x) is ShapedArray and x.dtype == dtypes.canonicalize_dtype(x.dtype):
        return x
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None or isinstance(x, type):
        raise TypeError(f"{what} must return a ShapedArray (or an object with shape and dtype), got {x!r}")
    weak = bool(getattr(x, "weak_type", False))
    return ShapedArray(tuple(shape), dtypes.canonicalize_dtype(dtype), weak)


def _missing(what: str, method: str, name: str) -> Callable[..., Any]:
    def rule(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"the primitive {name} has no {what}: give it one with {name}.{method}(...)"
        )

    return rule


def _check_callable(prim: Primitive, f: Any, method: str) -> None:
    if not callable(f):
        raise TypeError(f"{prim.name}.{method} takes a function, got {type(f).__name__}")
