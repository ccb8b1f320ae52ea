"""Library functions made of several primitives, run eagerly as one program (issue 26).

A function such as ``numpy.linalg.solve`` binds a dozen primitives.  Called
outside any transformation, each of them would be evaluated on its own: with
a compiling eager backend (plait-dispatch) that is one small compiled program
per primitive and signature.  A function marked with :func:`staged_when_eager`
is instead staged whole into a jaxpr and called through ``closed_call``, which
such a backend compiles once per signature, as JAX's own library functions are
``jit``-compiled.

* **When.**  Only while staging is switched on (:func:`set_eager_staging`: the
  compiling backend does so when installed; core's NumPy backend gains nothing
  from it), and only when the values are eager: no transformation is active,
  or only transformations that evaluate as they go (``grad``, ``jvp``,
  ``vmap`` called outside ``jit``: the call is then differentiated or batched
  as a ``jit`` call would be, and reaches the backend as one program, as JAX's
  jitted library functions do).  Inside a transformation that stages a
  program (``jit``, ``make_jaxpr``, a loop's body) a marked function runs as
  it is written, so staged programs are unchanged; so it does while an option
  that changes how eager operations run is set (``disable_jit``,
  ``no_execution``, a default device, ``no_tracing``, explicit sharding, rank
  promotion other than ``"allow"``, whose warnings would be given once instead
  of per call), and for operands with symbolic or ragged sizes.
* **Signature.**  The arguments are flattened as a pytree; leaves that are
  arrays (NumPy arrays and scalars, the array types registered with core, and
  the tracers of the transformations around the call) are the program's
  operands, keyed by abstract value (so a loop over changing NumPy scalars
  compiles once); every other leaf (a Python scalar, a string, a dtype, ...)
  is static, keyed by type and value.
  The x64 flag and the dtype-promotion mode are part of the key.  A call with
  an unhashable static leaf runs operation by operation.
* **Values that must be concrete.**  A signature whose staging needs the
  value of an array (a :class:`ConcretizationTypeError` while staging) is
  remembered and runs operation by operation from then on, exactly as
  before; any other error raised while staging is the function's own error
  and propagates.  A signature whose program is at most one operation
  without a body (``matmul`` of two matrices is one ``dot_general``) also
  runs operation by operation: a call would compile the same program and
  cost more per use.
* **Results.**  The outputs are the staged program's: the same types (weak
  types included) and structure as operation by operation.  Marked functions
  return arrays (or pytrees of them).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

import numpy as np

from plait_core.abstract import ShapedArray, get_aval, is_symbolic_shape, registered_array_types
from plait_core.config import config
from plait_core.errors import ConcretizationTypeError
from plait_core.jaxpr import ClosedJaxpr, Jaxpr
from plait_core.partial_eval import PartialEvalTrace
from plait_core.primitives.calls import closed_call_p, hoist_consts
from plait_core.sharding import explicit_state
from plait_core.staging import StagingTrace, check_output_leaves, trace_to_jaxpr
from plait_core.trace import EvalTrace, Trace, Tracer, current_trace, is_eager
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["eager_staging_enabled", "is_staged_when_eager", "set_eager_staging", "staged_when_eager"]

F = TypeVar("F", bound=Callable[..., Any])

_enabled = [False]
_MAX_SIGNATURES = 64
"""Staged programs kept per function (least recently used go first)."""


def set_eager_staging(on: bool) -> bool:
    """Switch the staging of marked functions called eagerly on or off;
    returns the previous setting.  A compiling eager backend switches it on
    when installed and off when uninstalled."""
    prev = _enabled[0]
    _enabled[0] = bool(on)
    return prev


def eager_staging_enabled() -> bool:
    """Whether marked functions called eagerly run as one staged program."""
    return _enabled[0]


class _Staged:
    """One signature's program: the const-free body, its constants, the output structure."""

    __slots__ = ("body", "consts", "out_tree")

    def __init__(self, body: ClosedJaxpr, consts: list[Any], out_tree: PyTreeDef) -> None:
        self.body = body
        self.consts = consts
        self.out_tree = out_tree


_OP_BY_OP = object()
"""The cache entry of a signature whose staging needs concrete values."""

_FLOATS = (float, complex, np.floating, np.complexfloating)
_NUMPY_ARRAYS = (np.ndarray, np.number, np.bool_)


def _static_key(x: Any) -> Hashable:
    """A static leaf as a key: its type and value; floats by their ``repr``
    so that ``0.0`` and ``-0.0`` differ and a NaN finds itself."""
    if isinstance(x, _FLOATS):
        return (type(x), repr(x))
    return (type(x), x)


def _quiet_options() -> bool:
    """True when no option that changes how eager operations run is set."""
    c = config
    return not (
        c.guarded or c.no_tracing or explicit_state.active or c.numpy_rank_promotion != "allow"
    )


def staged_when_eager(fun: F) -> F:
    """Mark ``fun`` (a library function built of several primitives) to run,
    when called eagerly, as one staged program per signature (see the module's
    docstring).  Inside transformations, and while staging is off, ``fun``
    runs as written."""
    cache: OrderedDict[Hashable, Any] = OrderedDict()
    name = getattr(fun, "__name__", "composite")

    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _enabled[0] or not _quiet_options():
            return fun(*args, **kwargs)
        if is_eager():
            return _call(fun, name, cache, args, kwargs, None)
        chain = _eager_rooted()
        if chain is None:
            return fun(*args, **kwargs)
        return _call(fun, name, cache, args, kwargs, chain)

    wrapper.__plait_staged_when_eager__ = True  # type: ignore[attr-defined]
    return cast(F, wrapper)


def is_staged_when_eager(fun: Any) -> bool:
    """Whether ``fun`` was marked with :func:`staged_when_eager`."""
    return getattr(fun, "__plait_staged_when_eager__", False) is True


def _eager_rooted() -> frozenset[Trace] | None:
    """The traces between the current one and eager evaluation when no trace
    among them stages a program (``jit``, ``make_jaxpr``: their programs stay
    as written); the linearisation of an eager ``grad`` (a partial-evaluation
    trace over eager values) counts as eager.  ``None`` otherwise."""
    chain: list[Trace] = []
    t: Trace | None = current_trace()
    while t is not None:
        if type(t) is EvalTrace:
            return frozenset(chain)
        if isinstance(t, StagingTrace) and type(t) is not PartialEvalTrace:
            return None
        chain.append(t)
        t = t.parent
    return None


def _call(
    fun: Callable[..., Any],
    name: str,
    cache: OrderedDict[Hashable, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    chain: frozenset[Trace] | None,
) -> Any:
    leaves, treedef = tree_flatten((args, kwargs))
    array_types = registered_array_types()
    operands: list[Any] = []
    avals: list[ShapedArray] = []
    dynamic: list[bool] = []
    key_parts: list[Any] = [treedef, config.x64_enabled, config.numpy_dtype_promotion]
    for x in leaves:
        if isinstance(x, Tracer):
            # A tracer of a transformation around this call (not ragged or
            # symbolic) is an operand; any other (a leaked one, one of an
            # unrelated transformation) is for the function to report.
            if chain is None or x._trace not in chain or is_symbolic_shape(x.aval.shape):
                return fun(*args, **kwargs)
            operands.append(x)
            avals.append(x.aval)
            dynamic.append(True)
            key_parts.append(x.aval)
        elif isinstance(x, (_NUMPY_ARRAYS, array_types)):
            try:
                aval = get_aval(x)
            except TypeError:  # an array of strings or objects: the function says what is wrong
                return fun(*args, **kwargs)
            operands.append(x)
            avals.append(aval)
            dynamic.append(True)
            key_parts.append(aval)
        else:
            dynamic.append(False)
            key_parts.append(_static_key(x))
    key = tuple(key_parts)
    try:
        entry = cache.get(key)
    except TypeError:  # an unhashable static argument
        return fun(*args, **kwargs)
    if entry is None:
        entry = _stage(fun, treedef, leaves, dynamic, avals)
        cache[key] = entry
        if len(cache) > _MAX_SIGNATURES:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    if entry is _OP_BY_OP:
        return fun(*args, **kwargs)
    staged = cast(_Staged, entry)
    outs = closed_call_p.bind(*staged.consts, *operands, call_jaxpr=staged.body, name=name, jit_info=None)
    return tree_unflatten(staged.out_tree, outs)


def _has_body(params: dict[str, Any]) -> bool:
    """Whether an equation's params hold a jaxpr (a call, a custom rule, a
    loop): one such equation runs many operations eagerly."""
    for v in params.values():
        for x in v if isinstance(v, (tuple, list)) else (v,):
            if isinstance(x, (ClosedJaxpr, Jaxpr)):
                return True
    return False


def _stage(
    fun: Callable[..., Any], treedef: PyTreeDef, leaves: list[Any], dynamic: list[bool], avals: list[ShapedArray]
) -> Any:
    """Stage ``fun`` with the dynamic leaves abstracted; ``_OP_BY_OP`` when
    staging needs one of their values."""
    static = [None if d else x for x, d in zip(leaves, dynamic)]
    out_trees: list[PyTreeDef] = []

    def flat(*xs: Any) -> list[Any]:
        it = iter(xs)
        full = [next(it) if d else s for s, d in zip(static, dynamic)]
        a, k = tree_unflatten(treedef, full)
        out_leaves, out_tree = tree_flatten(fun(*a, **k))
        check_output_leaves(out_leaves, out_tree, f"the library function {getattr(fun, '__name__', fun)}")
        out_trees.append(out_tree)
        return out_leaves

    try:
        closed = trace_to_jaxpr(flat, avals)
    except ConcretizationTypeError:
        return _OP_BY_OP
    eqns = closed.jaxpr.eqns
    if not eqns or (len(eqns) == 1 and not _has_body(eqns[0].params)):
        return _OP_BY_OP  # one operation (or none): a call would only add to it
    body, consts = hoist_consts(closed)
    return _Staged(body, consts, out_trees[0])
