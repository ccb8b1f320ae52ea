"""Staging Python functions into jaxprs: ``make_jaxpr``, ``eval_shape``.

The staging trace records every primitive bound while the function runs as an
equation of a jaxpr.  Its tracers point at the jaxpr atom that holds their
value.  Constants met on the way become literals (scalars) or constvars
(arrays, and values of enclosing transformations, which are constants here).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core import explicit_sharding as _explicit
from plait_core import source_info as _source_info
from plait_core import vma as _vma
from plait_core.abstract import ShapedArray, ShapeDtypeStruct, get_aval, to_numpy
from plait_core.axes import extend_axis_env
from plait_core.config import config
from plait_core.jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from plait_core.primitive import Primitive
from plait_core.sharding import NamedSharding, explicit_state
from plait_core.trace import Trace, Tracer, transformation
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

_SOURCE_STATE = _source_info.state()
_NO_SOURCE_INFO = _source_info.NO_SOURCE_INFO

_PY_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


class StagingTracer(Tracer):
    """A value being staged: its abstract value and the atom that will hold it."""

    __slots__ = ("atom", "aval")

    def __init__(self, trace: StagingTrace, aval: ShapedArray, atom: Atom) -> None:
        self._trace = trace
        self.aval = aval  # type: ignore[misc]
        self.atom = atom


class StagingTrace(Trace):
    """Builds a jaxpr from the primitives bound while it is current."""

    __slots__ = ("_const_ids", "_name_base", "constvals", "constvars", "eqns", "invars")

    def __init__(self, parent: Trace | None = None) -> None:
        super().__init__(parent)
        # Equations are named relative to the name stack staging began under.
        self._name_base = _source_info.current_name_stack()
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self.constvars: list[Var] = []
        self.constvals: list[Any] = []
        self._const_ids: dict[int, Var] = {}

    def describe(self) -> str:
        return "staging to a jaxpr"

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        """A fresh input of the jaxpr."""
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, aval, var)

    def const_atom(self, x: Any, prim: Primitive | None) -> Atom:
        """The atom for a value that is not one of this trace's tracers."""
        t = type(x)
        if t in _PY_SCALARS:
            return Literal(x, get_aval(x))
        if isinstance(x, Tracer):
            self.check_foreign_tracer(x, prim)
        elif isinstance(x, np.generic) or (t is np.ndarray and x.shape == ()):
            val = to_numpy(x)
            return Literal(val, ShapedArray((), val.dtype, False))
        var = self._const_ids.get(id(x))
        if var is None:
            where = f"argument of {prim.name}" if prim is not None else "value"
            if prim is not None and not isinstance(x, Tracer):
                where = f"an argument of {prim.name}"
            aval = get_aval(x, where) if not isinstance(x, Tracer) else x.aval
            var = Var(aval)
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            self.constvals.append(x)
        return var

    def to_atom(self, x: Any) -> Atom:
        """The atom holding ``x`` (one of our tracers, or a constant)."""
        if type(x) is StagingTracer and x._trace is self:
            return x.atom
        return self.const_atom(x, None)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        atoms: list[Atom] = []
        avals: list[ShapedArray] = []
        for x in args:
            if type(x) is StagingTracer and x._trace is self:
                atoms.append(x.atom)
                avals.append(x.aval)
            else:
                a = self.const_atom(x, prim)
                atoms.append(a)
                avals.append(a.aval)
        if _vma.active or explicit_state.active:
            if _vma.active and (prim in _vma.vma_rules or any(a.vma for a in avals)):
                return self._process_varying(prim, args, atoms, avals, params)
            if explicit_state.active and _explicit.needs_typing(prim, avals):
                return self._process_explicit(prim, atoms, avals, params)
        out = prim.abstract_eval(*avals, **params)
        if prim.fold_literals and all(type(a) is Literal for a in atoms):
            value = prim.impl(*[to_numpy(a.val) for a in atoms], **params)  # type: ignore[union-attr]
            if np.shape(value) == ():
                return StagingTracer(self, out, Literal(np.asarray(value, out.dtype), out))
        if prim.multiple_results:
            return self._record(prim, atoms, out, params)
        # One result, the commonest equation: _record's work inline (a call less
        # per equation; make_jaxpr of a 1000-step chain is mostly this path).
        info = _SOURCE_STATE.info
        if info is not _NO_SOURCE_INFO:
            info = info.relative_to(self._name_base)
        var = Var(out)
        self.eqns.append(JaxprEqn(prim, atoms, [var], params, info))
        return StagingTracer(self, out, var)

    def _record(self, prim: Primitive, atoms: list[Atom], out: Any, params: dict[str, Any]) -> Any:
        """Append the equation of ``prim`` with results of type ``out``; its tracers."""
        info = _SOURCE_STATE.info  # source_info.current() without the call: once per equation
        if info is not _NO_SOURCE_INFO:
            info = info.relative_to(self._name_base)
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(JaxprEqn(prim, atoms, outvars, params, info))
            return [StagingTracer(self, v.aval, v) for v in outvars]
        var = Var(out)
        self.eqns.append(JaxprEqn(prim, atoms, [var], params, info))
        return StagingTracer(self, out, var)

    def _process_varying(
        self, prim: Primitive, args: Sequence[Any], atoms: list[Atom], avals: list[ShapedArray], params: dict[str, Any]
    ) -> Any:
        """``process_primitive`` inside a ``shard_map`` body with varying values
        (:mod:`plait_core.vma`): operands of this trace that vary over fewer mesh
        axes than the others are cast with ``pvary`` first, and the results carry
        their varying axes."""
        rule = _vma.vma_rules.get(prim)
        union = frozenset().union(*(a.vma for a in avals))
        if rule is not None:
            casts, vmas = rule(*avals, **params)
        elif prim.family in _vma.no_insertion:
            casts, vmas = [], None
        else:
            casts, vmas = [union - a.vma for a in avals], None
        if any(casts):
            pvary = _vma.pvary_primitive()
            for k, (x, missing) in enumerate(zip(args, casts)):
                if missing and type(x) is StagingTracer and x._trace is self:
                    cast = self.process_primitive(pvary, [x], {"axes": tuple(sorted(missing, key=str))})
                    atoms[k], avals[k] = cast.atom, cast.aval
        out = prim.abstract_eval(*avals, **params)
        if vmas is None:
            vmas = [union | r.vma for r in (out if prim.multiple_results else [out])]
        out = _vma.with_vma(out, vmas, prim.multiple_results)
        return self._record(prim, atoms, out, params)

    def _process_explicit(
        self, prim: Primitive, atoms: list[Atom], avals: list[ShapedArray], params: dict[str, Any]
    ) -> Any:
        """``process_primitive`` with operands typed by explicit shardings
        (:mod:`plait_core.explicit_sharding`): the results get their types by the
        primitive's sharding rule, and each is followed by a ``sharding_constraint``
        of its type so that XLA lays it out so."""
        out, mesh = _explicit.type_results(prim, avals, params, prim.abstract_eval(*avals, **params))
        results = list(out) if prim.multiple_results else [out]
        outvars = [Var(a) for a in results]
        self.eqns.append(JaxprEqn(prim, atoms, list(outvars), params))
        if mesh is not None and prim.family != "sharding":
            constraint = _explicit.constraint_primitive()
            for k, v in enumerate(outvars):
                s = v.aval._sharding
                laid = Var(v.aval)
                sharding = NamedSharding(mesh, s.spec if s is not None else None)
                self.eqns.append(JaxprEqn(constraint, [v], [laid], {"sharding": sharding}))
                outvars[k] = laid
        tracers = [StagingTracer(self, v.aval, v) for v in outvars]
        return tracers if prim.multiple_results else tracers[0]

    def to_closed_jaxpr(self, outs: Sequence[Any]) -> ClosedJaxpr:
        """Finish: the closed jaxpr whose outputs are ``outs``."""
        out_atoms = [self.to_atom(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, out_atoms, self.eqns)
        return ClosedJaxpr(jaxpr, self.constvals)


def stage_primitive(prim: Primitive, in_avals: Sequence[ShapedArray], params: dict[str, Any]) -> ClosedJaxpr:
    """The jaxpr of one application of ``prim`` to values of ``in_avals``, as
    staging records it (with the results' explicit-sharding types and layout
    constraints): what the eager backend runs for one operation on values typed
    by explicit shardings."""
    trace = StagingTrace()
    with transformation(trace):
        args = [trace.new_arg(a) for a in in_avals]
        out = prim.bind(*args, **params)
        return trace.to_closed_jaxpr(list(out) if prim.multiple_results else [out])


def check_tracing_allowed(what: str) -> None:
    """``RuntimeError`` while ``config.no_tracing`` is on: ``what`` would be traced."""
    if config.no_tracing:
        raise RuntimeError(
            f"tracing {what} to a program, but no_tracing is set "
            "(plait.no_tracing(False) or config.update('jax_no_tracing', False) allows it)"
        )


def trace_to_jaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """Stage ``fun`` (flat: arrays in, a sequence of arrays out) into a closed jaxpr.
    While ``config.no_tracing`` is on (``plait.no_tracing()``) this is a ``RuntimeError``."""
    check_tracing_allowed("a Python function (the body of a transformation, loop or branch)")
    trace = StagingTrace()
    with transformation(trace):
        args = [trace.new_arg(a) for a in in_avals]
        outs = fun(*args)
        if not isinstance(outs, (list, tuple)):
            raise TypeError(f"trace_to_jaxpr: the function must return a list or tuple, got {type(outs).__name__}")
        return trace.to_closed_jaxpr(outs)


def shaped_abstractify(x: Any, where: str = "argument") -> ShapedArray:
    """The abstract value a traced input takes: arrays and scalars by
    :func:`get_aval`; ``ShapeDtypeStruct`` and anything with shape and dtype
    by those."""
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    try:
        return get_aval(x, where)
    except TypeError:
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype), False)
        raise


def check_output_leaves(leaves: Sequence[Any], tree: PyTreeDef, what: str) -> None:
    """Every output leaf must be an array, scalar or traced value."""
    for k, x in enumerate(leaves):
        if isinstance(x, Tracer):
            continue
        try:
            get_aval(x)
        except TypeError:
            raise TypeError(
                f"{what}: output leaf {k} of the returned tree {tree} has type {type(x).__name__}, "
                "which is not an array"
            ) from None


def _normalize_static_argnums(static_argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    out = []
    for n in nums:
        m = n + nargs if n < 0 else n
        if not 0 <= m < nargs:
            raise ValueError(f"static_argnums {n} is out of range for a call with {nargs} positional arguments")
        out.append(m)
    return tuple(sorted(set(out)))


class TracedFunction:
    """The result of staging a Python function with pytree inputs and outputs."""

    __slots__ = ("closed_jaxpr", "in_tree", "out_tree")

    def __init__(self, closed_jaxpr: ClosedJaxpr, in_tree: PyTreeDef, out_tree: PyTreeDef) -> None:
        self.closed_jaxpr = closed_jaxpr
        self.in_tree = in_tree
        self.out_tree = out_tree


def trace_pytree_function(
    fun: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    static_argnums: Sequence[int] = (),
    what: str = "make_jaxpr",
) -> TracedFunction:
    """Stage ``fun(*args, **kwargs)`` with pytree inputs and outputs.  Positions
    in ``static_argnums`` are passed through as Python values."""
    check_tracing_allowed(f"{getattr(fun, '__qualname__', None) or fun!r} for {what}")
    static = set(static_argnums)
    dyn_args = [a for i, a in enumerate(args) if i not in static]
    flat, in_tree = tree_flatten((tuple(dyn_args), kwargs))
    in_avals = [shaped_abstractify(x, f"{what} argument leaf {i}") for i, x in enumerate(flat)]
    out_tree_box: list[PyTreeDef] = []

    def flat_fun(*tracers: Any) -> list[Any]:
        dargs, kw = tree_unflatten(in_tree, tracers)
        it = iter(dargs)
        full = [args[i] if i in static else next(it) for i in range(len(args))]
        out = fun(*full, **kw)
        leaves, out_tree = tree_flatten(out)
        check_output_leaves(leaves, out_tree, what)
        out_tree_box.append(out_tree)
        return leaves

    closed = trace_to_jaxpr(flat_fun, in_avals)
    return TracedFunction(closed, in_tree, out_tree_box[0])


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Sequence[tuple[str, int]] | None = None,
    return_shape: bool = False,
) -> Callable[..., Any]:
    """Return a function that stages ``fun`` on example arguments and returns
    its :class:`ClosedJaxpr` (print it to read the program).

    Arguments may be arrays, scalars or ``ShapeDtypeStruct``s, in any pytree;
    ``static_argnums`` are passed to ``fun`` as Python values.  ``axis_env``
    binds named axes (``[("i", 4)]``) so collectives can be staged.  With
    ``return_shape=True`` it also returns the output's ``ShapeDtypeStruct`` tree.
    """

    @functools.wraps(fun)
    def staged(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_static_argnums(static_argnums, len(args))
        with extend_axis_env(list(axis_env or ())):
            traced = trace_pytree_function(fun, args, kwargs, nums, "make_jaxpr")
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in traced.closed_jaxpr.out_avals]
            return traced.closed_jaxpr, tree_unflatten(traced.out_tree, shapes)
        return traced.closed_jaxpr

    return staged


# eval_shape's traces, per function (weakly) and argument signature, as jit caches its own.
_eval_shape_cache: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The argument structure and each leaf's type (weak types included), or
    ``None`` when a leaf has no abstract value (the call is then not cached)."""
    leaves, tree = tree_flatten((args, kwargs))
    try:
        avals = tuple((tuple(a.shape), a.dtype, a.weak_type) for a in map(get_aval, leaves))
        key = (tree, avals)
        hash(key)
    except TypeError:
        return None
    return key


def _structs_as_placeholders(fun: Callable[..., Any], given: dict[int, ShapeDtypeStruct]) -> Callable[..., Any]:
    """``fun`` returning a placeholder array in place of each ``ShapeDtypeStruct``
    leaf of its result, which ``given`` records by leaf position."""

    @functools.wraps(fun)
    def placeholders(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = tree_flatten(fun(*args, **kwargs))
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, ShapeDtypeStruct):
                given[i] = leaf
                leaves[i] = np.zeros((), np.bool_)
        return tree_unflatten(tree, leaves)

    return placeholders


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes ``fun(*args, **kwargs)`` would return, as a pytree of
    ``ShapeDtypeStruct``, computed without doing the work.  A ``ShapeDtypeStruct``
    that ``fun`` itself returns is an abstract value and is returned as is (as in
    JAX: lineax describes its outputs so).  As JAX (and ``jit``), the trace is cached: a second call with arguments of the same structure,
    shapes, dtypes and weak types does not run ``fun`` again."""
    key = _signature(args, kwargs)
    try:
        per_fun = _eval_shape_cache.get(fun) if key is not None else None
    except TypeError:  # an unhashable or non-weakref-able callable: not cached
        per_fun, key = None, None
    if per_fun is not None and key in per_fun:
        out_tree, shapes = per_fun[key]
        return tree_unflatten(out_tree, shapes)  # a new tree each call: callers may mutate theirs
    given: dict[int, ShapeDtypeStruct] = {}
    traced = trace_pytree_function(_structs_as_placeholders(fun, given), args, kwargs, (), "eval_shape")
    shapes = [given[i] if i in given else ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
              for i, a in enumerate(traced.closed_jaxpr.out_avals)]
    if key is not None:
        with contextlib.suppress(TypeError):  # a callable without weak references: not cached
            _eval_shape_cache.setdefault(fun, {})[key] = (traced.out_tree, shapes)
    return tree_unflatten(traced.out_tree, shapes)
