"""The jaxpr IR: a typed, closed, first-order program.

A :class:`Jaxpr` has ``constvars``, ``invars``, a list of equations
``outvars = prim[params] invars`` and ``outvars``.  A :class:`ClosedJaxpr`
pairs a jaxpr with the values of its constvars; higher-order primitives carry
closed jaxprs in their params, hashed by identity so they can key caches.

This module also holds the evaluator (:func:`eval_jaxpr`, which binds every
equation on the current trace, so evaluating a jaxpr under a transformation
transforms it), the type checker (:func:`check_jaxpr`) and the stable
pretty-printer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np

from plait_core.abstract import ShapedArray
from plait_core.primitive import Primitive
from plait_core.source_info import NO_SOURCE_INFO, SourceInfo


class Var:
    """A variable of a jaxpr: defined once, typed by its abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in an equation."""

    __slots__ = ("aval", "val")

    def __init__(self, val: Any, aval: ShapedArray) -> None:
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({_format_literal(self.val)})"


Atom: TypeAlias = Var | Literal


class Effect:
    """The one kind of effect plait tracks (an equation DCE must keep: a host
    callback with side effects, an effectful library primitive, or a call whose
    body holds one); what ``JaxprEqn.effects`` holds for such an equation."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Effect"


#: The effects of an equation with effects (plait has no finer effect types).
EFFECTS: frozenset[Effect] = frozenset({Effect()})

#: Whether an equation has effects: :func:`plait_core.dce.has_effects`, put here by
#: that module when it is imported (it imports this one, so this one cannot import it).
effects_query: list[Callable[[JaxprEqn], bool]] = []


class JaxprEqn:
    """One equation: ``outvars = primitive[params] invars``; ``source_info``
    holds the name stack it was staged under (:mod:`plait_core.source_info`)."""

    __slots__ = ("invars", "outvars", "params", "primitive", "source_info")

    def __init__(
        self, primitive: Primitive, invars: list[Atom], outvars: list[Var], params: dict[str, Any],
        source_info: SourceInfo = NO_SOURCE_INFO,
    ) -> None:  # fmt: skip
        self.primitive = primitive
        self.invars = invars
        self.outvars = outvars
        self.params = params
        self.source_info = source_info

    @property
    def effects(self) -> frozenset[Effect]:
        """JAX's ``eqn.effects``: empty for an equation without effects, else
        :data:`EFFECTS` (plait has one kind of effect: the equation stays in a
        jaxpr even when its results are unused)."""
        return EFFECTS if effects_query and effects_query[0](self) else frozenset()

    def replace(self, **changes: Any) -> JaxprEqn:
        """A copy with some fields replaced."""
        return JaxprEqn(
            changes.get("primitive", self.primitive),
            changes.get("invars", self.invars),
            changes.get("outvars", self.outvars),
            changes.get("params", self.params),
            changes.get("source_info", self.source_info),
        )

    def __repr__(self) -> str:
        return pp_eqn(self, _Namer())


class Jaxpr:
    """A first-order program with explicit constants, inputs and outputs."""

    __slots__ = ("constvars", "eqns", "invars", "outvars")

    def __init__(self, constvars: list[Var], invars: list[Var], outvars: list[Atom], eqns: list[JaxprEqn]) -> None:
        self.constvars = constvars
        self.invars = invars
        self.outvars = outvars
        self.eqns = eqns

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with the values of its constvars.  Hashed by identity."""

    __slots__ = ("__weakref__", "consts", "jaxpr")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(consts)} constants")
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[JaxprEqn]:
        return self.jaxpr.eqns

    def __call__(self, *args: Any) -> list[Any]:
        """Evaluate on the current trace (same as :func:`eval_closed_jaxpr`)."""
        return eval_jaxpr(self.jaxpr, self.consts, *args)

    def __str__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__


def closed_jaxpr_from(jaxpr: Jaxpr) -> ClosedJaxpr:
    """Close a jaxpr that has no constvars."""
    if jaxpr.constvars:
        raise ValueError("closed_jaxpr_from: the jaxpr has constvars; pass their values to ClosedJaxpr")
    return ClosedJaxpr(jaxpr, [])


# ---------------------------------------------------------------------------
# Evaluation


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluate ``jaxpr`` by binding each equation on the current trace."""
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} inputs, got {len(args)}")
    env: dict[Var, Any] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    for eqn in jaxpr.eqns:
        ins = [env[a] if type(a) is Var else literal_value(a) for a in eqn.invars]  # type: ignore[arg-type]
        out = eqn.primitive.bind(*ins, **eqn.params)
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, out):
                env[v] = x
        else:
            env[eqn.outvars[0]] = out
    return [env[a] if type(a) is Var else literal_value(a) for a in jaxpr.outvars]  # type: ignore[arg-type]


_PY_SCALARS = (bool, int, float, complex)


def literal_value(lit: Literal) -> Any:
    """The value to bind for a literal.  A weakly typed literal held as a NumPy
    scalar (a folded conversion such as a weak ``bfloat16`` constant) is bound
    through a weak ``convert_element_type``, which staging folds back into a weak
    literal: so re-staging a jaxpr keeps its weak types."""
    val = lit.val
    if lit.aval.weak_type and type(val) not in _PY_SCALARS:
        return _weak_convert[0].bind(val, new_dtype=lit.aval.dtype, weak_type=True)
    return val


_weak_convert: list[Any] = []
"""``convert_element_type``, registered by the primitives' layer (it is defined above
this module): :func:`literal_value` binds it."""


def register_convert_element_type(prim: Any) -> None:
    """Install the ``convert_element_type`` primitive for :func:`literal_value`."""
    _weak_convert[:] = [prim]


def eval_closed_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    """Evaluate a closed jaxpr on the current trace."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    """A Python function that evaluates ``closed`` (and so can be traced again)."""

    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    return fun


# ---------------------------------------------------------------------------
# Type checking


class JaxprTypeError(TypeError):
    """A jaxpr is ill-formed: an undefined variable or a type mismatch."""


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Check that every variable is defined once before use and that every
    equation's output types agree with its primitive's abstract evaluation.
    Sub-jaxprs in params are checked too.  Raises :class:`JaxprTypeError`."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    namer = _Namer()
    defined: set[Var] = set()

    def define(v: Var, where: str) -> None:
        namer(v)
        if v in defined:
            raise JaxprTypeError(f"variable {namer(v)} is defined twice ({where})")
        defined.add(v)

    def read(a: Atom, where: str) -> ShapedArray:
        if type(a) is Literal:
            return a.aval
        if a not in defined:
            raise JaxprTypeError(f"variable {namer(a)} is used before it is defined ({where})")
        return a.aval

    for v in jaxpr.constvars:
        define(v, "constvars")
    for v in jaxpr.invars:
        define(v, "invars")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i}: {pp_eqn(eqn, namer)}"
        in_avals = [read(a, where) for a in eqn.invars]
        for p in eqn.params.values():
            for sub in _sub_jaxprs(p):
                check_jaxpr(sub)
        try:
            out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except Exception as e:
            raise JaxprTypeError(f"{where}: abstract evaluation failed: {e}") from e
        outs = list(out) if eqn.primitive.multiple_results else [out]
        if len(outs) != len(eqn.outvars):
            raise JaxprTypeError(f"{where}: {len(outs)} results expected, {len(eqn.outvars)} outvars")
        for expected, v in zip(outs, eqn.outvars):
            if not expected.same_type(v.aval):
                raise JaxprTypeError(
                    f"{where}: outvar {namer(v)} has type {v.aval.str_short()} but "
                    f"{eqn.primitive.name} produces {expected.str_short()}"
                )
            define(v, where)
    for a in jaxpr.outvars:
        read(a, "outvars")


def _sub_jaxprs(p: Any) -> list[Jaxpr]:
    if isinstance(p, ClosedJaxpr):
        return [p.jaxpr]
    if isinstance(p, Jaxpr):
        return [p]
    if isinstance(p, tuple):
        return [j for q in p for j in _sub_jaxprs(q)]
    return []


def sub_jaxprs(eqn: JaxprEqn) -> list[Jaxpr]:
    """The jaxprs carried in an equation's params."""
    return [j for p in eqn.params.values() for j in _sub_jaxprs(p)]


# ---------------------------------------------------------------------------
# Pretty-printing


class _Namer:
    """Names variables a, b, ..., z, ba, bb, ... in order of first appearance."""

    def __init__(self) -> None:
        self.names: dict[Var, str] = {}

    def __call__(self, v: Atom) -> str:
        if type(v) is Literal:
            return _format_literal(v.val)
        name = self.names.get(v)  # type: ignore[arg-type]
        if name is None:
            name = self.names[v] = _nth_name(len(self.names))  # type: ignore[index]
        return name

    def binder(self, v: Var) -> str:
        return f"{self(v)}:{v.aval.str_short()}"


def _nth_name(i: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    s = ""
    while True:
        s = letters[i % 26] + s
        i //= 26
        if i == 0:
            return s


def _format_literal(val: Any) -> str:
    v = val.item() if isinstance(val, (np.ndarray, np.generic)) else val
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _format_param(value: Any, indent: int) -> str:
    if isinstance(value, ClosedJaxpr):
        return _pp_jaxpr_lines(value.jaxpr, _Namer(), indent + 2)
    if isinstance(value, Jaxpr):
        return _pp_jaxpr_lines(value, _Namer(), indent + 2)
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, tuple) and any(isinstance(x, (ClosedJaxpr, Jaxpr)) for x in value):
        return "(\n" + "\n".join(" " * (indent + 2) + _format_param(x, indent + 2).lstrip() for x in value) + "\n" + " " * indent + ")"
    if callable(value) and hasattr(value, "__name__"):
        return str(value.__name__)
    return repr(value)


def pp_eqn(eqn: JaxprEqn, namer: _Namer, indent: int = 0) -> str:
    """One equation as text."""
    ins = " ".join(namer(a) for a in eqn.invars)
    outs = " ".join(namer.binder(v) for v in eqn.outvars) or "_"
    params = ""
    if eqn.params:
        items = ", ".join(
            f"{k}={_format_param(v, indent + 4)}" for k, v in sorted(eqn.params.items()) if v is not None
        )
        params = f"[{items}]" if items else ""
    return f"{outs} = {eqn.primitive.name}{params} {ins}".rstrip()


def _pp_jaxpr_lines(jaxpr: Jaxpr, namer: _Namer, indent: int) -> str:
    pad = " " * indent
    consts = " ".join(namer.binder(v) for v in jaxpr.constvars)
    ins = " ".join(namer.binder(v) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {ins}. let" if consts else f"{{ lambda ; {ins}. let"
    lines = [head]
    for eqn in jaxpr.eqns:
        lines.append(pad + "    " + pp_eqn(eqn, namer, indent + 4))
    outs = " ".join(namer(a) for a in jaxpr.outvars)
    lines.append(pad + f"  in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}")
    return "\n".join(lines)


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    """The jaxpr as stable, readable text (variables named in order of appearance)."""
    return _pp_jaxpr_lines(jaxpr, _Namer(), 0)
